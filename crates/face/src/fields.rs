//! A call's options as a front end passes them: one object (a JS object, a Python dict of
//! keyword arguments), read by field name. A binding implements [`Fields`] over its framework's
//! object and converts nothing else; which fields a call takes, what each must hold and the
//! words a wrong one is refused with are written here once, so the Node addon, the wasm module
//! (and a Python module) refuse the same options alike.

use crate::Coded;

/// What a field held instead of the kind asked for, in words for a refusal: `"a number"`,
/// `"an array holding a number"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Found(pub &'static str);

/// What a call asks a field to hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A boolean.
    Boolean,
    /// A number.
    Number,
    /// A string.
    Text,
    /// An array of strings.
    Texts,
    /// An array of numbers.
    Numbers,
}

impl Kind {
    /// The kind in words, for a refusal: `"an array of strings"`.
    fn described(self) -> &'static str {
        match self {
            Self::Boolean => "a boolean",
            Self::Number => "a number",
            Self::Text => "a string",
            Self::Texts => "an array of strings",
            Self::Numbers => "an array of numbers",
        }
    }
}

/// A field's value, of the [`Kind`] asked for.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// A boolean.
    Boolean(bool),
    /// A number.
    Number(f64),
    /// A string.
    Text(String),
    /// An array of strings.
    Texts(Vec<String>),
    /// An array of numbers.
    Numbers(Vec<f64>),
}

/// A front end's options object, read by field name.
pub trait Fields {
    /// The field `name` read as `kind`: `Ok(None)` for a field that is missing, `undefined` or
    /// `null` (`None` in Python), `Ok(Some(value))` with the [`Value`] of that kind, and
    /// `Err(Found)` naming what the field held otherwise (a getter that throws included).
    ///
    /// # Errors
    /// [`Found`]: the field holds something else, or an array holding something else.
    fn field(&self, name: &str, kind: Kind) -> Result<Option<Value>, Found>;
}

/// A Rust type a field is read as, and the [`Kind`] it asks the binding for.
pub(crate) trait FromValue: Sized {
    /// The kind asked for.
    const KIND: Kind;
    /// The value as `Self` (`None`: a value of another kind, which a binding does not give).
    fn from_value(value: Value) -> Option<Self>;
}

impl FromValue for bool {
    const KIND: Kind = Kind::Boolean;
    fn from_value(value: Value) -> Option<Self> {
        match value {
            Value::Boolean(b) => Some(b),
            _ => None,
        }
    }
}

impl FromValue for f64 {
    const KIND: Kind = Kind::Number;
    fn from_value(value: Value) -> Option<Self> {
        match value {
            Value::Number(n) => Some(n),
            _ => None,
        }
    }
}

impl FromValue for String {
    const KIND: Kind = Kind::Text;
    fn from_value(value: Value) -> Option<Self> {
        match value {
            Value::Text(t) => Some(t),
            _ => None,
        }
    }
}

impl FromValue for Vec<String> {
    const KIND: Kind = Kind::Texts;
    fn from_value(value: Value) -> Option<Self> {
        match value {
            Value::Texts(t) => Some(t),
            _ => None,
        }
    }
}

impl FromValue for Vec<f64> {
    const KIND: Kind = Kind::Numbers;
    fn from_value(value: Value) -> Option<Self> {
        match value {
            Value::Numbers(n) => Some(n),
            _ => None,
        }
    }
}

/// Reads the options of `call` (`setupBegin`, `layout`), refusing with `code` in one set of
/// words: `setupBegin: format must be a string, not a number`, `... format is missing`.
pub(crate) struct Reader<'a, F: Fields + ?Sized> {
    fields: &'a F,
    call: &'static str,
    code: &'static str,
}

impl<'a, F: Fields + ?Sized> Reader<'a, F> {
    /// A reader of `fields` for `call`, refusing with `code`.
    pub(crate) fn new(fields: &'a F, call: &'static str, code: &'static str) -> Self {
        Self { fields, call, code }
    }

    /// A field that may be absent.
    pub(crate) fn optional<T: FromValue>(&self, name: &str) -> Result<Option<T>, Coded> {
        let wanted = T::KIND.described();
        let refused = |found: &str| {
            Coded::new(
                self.code,
                format!("{}: {name} must be {wanted}, not {found}", self.call),
            )
        };
        match self.fields.field(name, T::KIND) {
            Ok(None) => Ok(None),
            // A value of another kind than asked is a binding's bug: refused, never misread.
            Ok(Some(value)) => T::from_value(value)
                .map(Some)
                .ok_or_else(|| refused("a value its binding misread")),
            Err(Found(found)) => Err(refused(found)),
        }
    }

    /// A field that must be there.
    pub(crate) fn required<T: FromValue>(&self, name: &str) -> Result<T, Coded> {
        self.optional(name)?.ok_or_else(|| {
            Coded::new(
                self.code,
                format!(
                    "{}: {name} is missing: it must be {}",
                    self.call,
                    T::KIND.described()
                ),
            )
        })
    }

    /// A boolean field, false when absent.
    pub(crate) fn flag(&self, name: &str) -> Result<bool, Coded> {
        Ok(self.optional(name)?.unwrap_or(false))
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use std::collections::BTreeMap;

    use super::{Fields, Found, Kind, Value};

    /// A field's value in [`Map`].
    #[derive(Clone, Debug)]
    pub(crate) enum V {
        B(bool),
        N(f64),
        T(&'static str),
        Ts(Vec<&'static str>),
        Ns(Vec<f64>),
    }

    /// Options as a map, read as a binding reads its object.
    #[derive(Default)]
    pub(crate) struct Map(pub(crate) BTreeMap<&'static str, V>);

    impl Map {
        pub(crate) fn with(mut self, name: &'static str, value: V) -> Self {
            self.0.insert(name, value);
            self
        }
    }

    fn kind_of(v: &V) -> Found {
        Found(match v {
            V::B(_) => "a boolean",
            V::N(_) => "a number",
            V::T(_) => "a string",
            V::Ts(_) | V::Ns(_) => "an array",
        })
    }

    impl Fields for Map {
        fn field(&self, name: &str, kind: Kind) -> Result<Option<Value>, Found> {
            let Some(v) = self.0.get(name) else {
                return Ok(None);
            };
            Ok(Some(match (kind, v) {
                (Kind::Boolean, V::B(b)) => Value::Boolean(*b),
                (Kind::Number, V::N(n)) => Value::Number(*n),
                (Kind::Text, V::T(t)) => Value::Text((*t).to_owned()),
                (Kind::Texts, V::Ts(ts)) => {
                    Value::Texts(ts.iter().map(|t| (*t).to_owned()).collect())
                }
                (Kind::Texts, V::Ns(ns)) if ns.is_empty() => Value::Texts(Vec::new()),
                (Kind::Texts, V::Ns(_)) => return Err(Found("an array holding a number")),
                (Kind::Numbers, V::Ns(ns)) => Value::Numbers(ns.clone()),
                (Kind::Numbers, V::Ts(ts)) if ts.is_empty() => Value::Numbers(Vec::new()),
                (Kind::Numbers, V::Ts(_)) => return Err(Found("an array holding a string")),
                (_, other) => return Err(kind_of(other)),
            }))
        }
    }
}
