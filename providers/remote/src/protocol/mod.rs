//! The wire protocol's messages, each defined once (`docs/protocol.md`): every method's
//! parameters and answer as a Rust type, which the client, the server and the suite's world
//! client all build and read, and from which the protocol's JSON Schema
//! (`docs/protocol.schema.json`, [`schema`]) is generated — the schema the Python and
//! JavaScript kits check their own messages against. A method added here and forgotten in the
//! checked-in schema fails `cargo test -p seam-remote` (`tests/schema.rs`); one in the schema
//! and not served by a kit fails that kit's tests.
//!
//! Framing (one JSON line, then the payload's bytes), ids and JSON-RPC errors are
//! [`crate::frame`] and [`crate::wire`]; content travels as payload segments named by
//! [`values::PayloadRef`].

/// Declares methods: a unit type per method implementing [`Method`], and `all`, which lists them
/// for the schema in the order given.
macro_rules! methods {
    ($($(#[$doc:meta])* $ty:ident = $name:literal, $params:ty => $answer:ty;)*) => {
        $(
            $(#[$doc])*
            #[derive(Clone, Copy, Debug)]
            pub struct $ty;

            impl $crate::protocol::Method for $ty {
                const NAME: &'static str = $name;
                type Params = $params;
                type Answer = $answer;
            }
        )*

        /// These methods, in the order declared.
        pub(super) fn all(out: &mut Vec<$crate::protocol::Call>) {
            $(out.push($crate::protocol::Call::of::<$ty>());)*
        }
    };
}

pub mod calls;
pub mod control;
mod schema;
pub mod test_control;
pub mod values;

pub use schema::schema;

use schemars::generate::SchemaGenerator;
use schemars::{JsonSchema, Schema};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// A request and its answer.
pub trait Method {
    /// The method's name on the wire.
    const NAME: &'static str;
    /// Its `params`.
    type Params: Serialize + DeserializeOwned + JsonSchema;
    /// Its `result`.
    type Answer: Serialize + DeserializeOwned + JsonSchema;
}

/// A notification: no id, no answer.
pub trait Notification {
    /// Its name on the wire.
    const NAME: &'static str;
    /// Its `params`.
    type Params: Serialize + DeserializeOwned + JsonSchema;
}

/// A method as the schema lists it.
#[derive(Clone, Copy)]
pub struct Call {
    /// Its name.
    pub name: &'static str,
    params: fn(&mut SchemaGenerator) -> Schema,
    answer: fn(&mut SchemaGenerator) -> Schema,
}

impl Call {
    fn of<M: Method>() -> Self {
        Self {
            name: M::NAME,
            params: |g| g.subschema_for::<M::Params>(),
            answer: |g| g.subschema_for::<M::Answer>(),
        }
    }
}

/// A notification as the schema lists it.
#[derive(Clone, Copy)]
pub struct Note {
    /// Its name.
    pub name: &'static str,
    params: fn(&mut SchemaGenerator) -> Schema,
}

impl Note {
    fn of<N: Notification>() -> Self {
        Self {
            name: N::NAME,
            params: |g| g.subschema_for::<N::Params>(),
        }
    }
}

/// Every method: the handshake and the checkpoint, the contract's calls, then `world/*`.
pub fn methods() -> Vec<Call> {
    let mut out = Vec::new();
    control::all(&mut out);
    calls::all(&mut out);
    test_control::all(&mut out);
    out
}

/// Every notification.
pub fn notifications() -> Vec<Note> {
    let mut out = Vec::new();
    control::notes(&mut out);
    out
}

/// A message's members as JSON (`params` or `result`).
pub fn encode<T: Serialize>(value: &T) -> Value {
    // The protocol's types are plain structs, enums, strings and numbers: nothing in them can
    // fail to serialise (no map with non-string keys, no custom serialiser).
    serde_json::to_value(value).unwrap_or(Value::Null)
}

/// A message's members read as `T`.
pub fn decode<T: DeserializeOwned>(value: &Value) -> Result<T, serde_json::Error> {
    T::deserialize(value)
}
