//! A call's options object, read for the face ([`lockstep_face::Fields`]): wasm-bindgen's JS
//! values converted, nothing checked here (which fields a call takes, and the words for a wrong
//! one, are the face's).

use js_sys::{Array, Reflect};
use lockstep_face::{Fields, Found, Kind, Value};
use wasm_bindgen::JsValue;

/// A JS options object as the face reads it.
pub(crate) struct JsFields<'a>(pub(crate) &'a JsValue);

impl Fields for JsFields<'_> {
    fn field(&self, name: &str, kind: Kind) -> Result<Option<Value>, Found> {
        if !self.0.is_object() {
            return Ok(None);
        }
        let value = Reflect::get(self.0, &JsValue::from_str(name))
            .map_err(|_| Found("a value that cannot be read"))?;
        if value.is_undefined() || value.is_null() {
            return Ok(None);
        }
        let read = match kind {
            Kind::Boolean => value.as_bool().map(Value::Boolean),
            Kind::Number => value.as_f64().map(Value::Number),
            Kind::Text => value.as_string().map(Value::Text),
            Kind::Texts => each(&value, JsValue::as_string)?.map(Value::Texts),
            Kind::Numbers => each(&value, JsValue::as_f64)?.map(Value::Numbers),
        };
        read.map(Some).ok_or_else(|| kind_of(&value))
    }
}

/// Every element of the array `value` as `convert` reads it (`None`: not an array).
fn each<T>(value: &JsValue, convert: fn(&JsValue) -> Option<T>) -> Result<Option<Vec<T>>, Found> {
    if !Array::is_array(value) {
        return Ok(None);
    }
    Array::from(value)
        .iter()
        .map(|element| convert(&element).ok_or_else(|| holding(&element)))
        .collect::<Result<_, _>>()
        .map(Some)
}

/// What `value` is, in words.
fn kind_of(value: &JsValue) -> Found {
    Found(if Array::is_array(value) {
        "an array"
    } else if value.is_function() {
        "a function"
    } else if value.is_object() {
        "an object"
    } else if value.as_bool().is_some() {
        "a boolean"
    } else if value.as_f64().is_some() {
        "a number"
    } else if value.is_string() {
        "a string"
    } else if value.is_symbol() {
        "a symbol"
    } else if value.is_bigint() {
        "a bigint"
    } else {
        "a value of another kind"
    })
}

/// An array holding `element`, in words.
fn holding(element: &JsValue) -> Found {
    Found(if element.is_undefined() {
        "an array holding undefined"
    } else if element.is_null() {
        "an array holding null"
    } else {
        match kind_of(element).0 {
            "a boolean" => "an array holding a boolean",
            "a number" => "an array holding a number",
            "a string" => "an array holding a string",
            "a function" => "an array holding a function",
            "an object" | "an array" => "an array holding an object",
            _ => "an array holding a value of another kind",
        }
    })
}
