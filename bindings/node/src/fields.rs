//! A call's options object, read for the face ([`lockstep_face::Fields`]): napi-rs's JS values
//! converted, nothing checked here (which fields a call takes, and the words for a wrong one,
//! are the face's).

use lockstep_face::{Fields, Found, Kind, Value};
use napi::bindgen_prelude::{Array, FromNapiValue, Object, Unknown};
use napi::{JsValue, ValueType};

/// A JS options object as the face reads it.
pub(crate) struct JsFields<'env>(pub(crate) Object<'env>);

impl JsFields<'_> {
    /// A field of one JS type, as `T`.
    fn one<T: FromNapiValue>(&self, name: &str) -> Result<T, Found> {
        self.0.get::<T>(name).ok().flatten().ok_or(UNREADABLE)
    }

    /// An array field whose every element is of JS type `want`, as `T`s.
    fn list<T: FromNapiValue>(&self, name: &str, want: ValueType) -> Result<Vec<T>, Found> {
        let array = self.one::<Array>(name)?;
        (0..array.len())
            .map(|i| {
                let element = array.get::<Unknown>(i).ok().flatten().ok_or(UNREADABLE)?;
                match element.get_type().map_err(|_| UNREADABLE)? {
                    kind if kind == want => array.get::<T>(i).ok().flatten().ok_or(UNREADABLE),
                    kind => Err(holding(kind)),
                }
            })
            .collect()
    }
}

impl Fields for JsFields<'_> {
    fn field(&self, name: &str, kind: Kind) -> Result<Option<Value>, Found> {
        let value = self.0.get::<Unknown>(name).map_err(|_| UNREADABLE)?;
        let Some(value) = value else { return Ok(None) };
        let found = value.get_type().map_err(|_| UNREADABLE)?;
        let array = found == ValueType::Object && value.is_array().unwrap_or(false);
        Ok(Some(match (kind, found) {
            (_, ValueType::Undefined | ValueType::Null) => return Ok(None),
            (Kind::Boolean, ValueType::Boolean) => Value::Boolean(self.one(name)?),
            (Kind::Number, ValueType::Number) => Value::Number(self.one(name)?),
            (Kind::Text, ValueType::String) => Value::Text(self.one(name)?),
            (Kind::Texts, _) if array => Value::Texts(self.list(name, ValueType::String)?),
            (Kind::Numbers, _) if array => Value::Numbers(self.list(name, ValueType::Number)?),
            _ => return Err(described(found, array)),
        }))
    }
}

/// A field whose getter threw, or that napi could not read.
const UNREADABLE: Found = Found("a value that cannot be read");

/// What a value of JS type `kind` is, in words (`array`: an object that is an array).
fn described(kind: ValueType, array: bool) -> Found {
    Found(match kind {
        ValueType::Boolean => "a boolean",
        ValueType::Number => "a number",
        ValueType::String => "a string",
        ValueType::Object if array => "an array",
        ValueType::Object => "an object",
        ValueType::Function => "a function",
        ValueType::Symbol => "a symbol",
        _ => "a value of another kind",
    })
}

/// An array holding an element of `kind`, in words.
fn holding(kind: ValueType) -> Found {
    Found(match kind {
        ValueType::Undefined => "an array holding undefined",
        ValueType::Null => "an array holding null",
        ValueType::Boolean => "an array holding a boolean",
        ValueType::Number => "an array holding a number",
        ValueType::String => "an array holding a string",
        ValueType::Object => "an array holding an object",
        ValueType::Function => "an array holding a function",
        _ => "an array holding a value of another kind",
    })
}
