//! Open enums: a field keeps any `int32` value, known to the schema or not.

use std::fmt;
use std::hash::{Hash, Hasher};
use std::marker::PhantomData;

/// A protobuf enum type. Implemented by `#[derive(ProtoEnum)]`.
pub trait ProtoEnum: Copy + Eq + fmt::Debug + Send + Sync + 'static {
    /// Fully qualified protobuf name, e.g. `onnx.TensorProto.DataLocation`.
    const NAME: &'static str;
    /// Every declared value: `(protobuf name, number)`, in declaration order.
    const VALUES: &'static [(&'static str, i32)];
    /// The enum's default: its first declared value (proto2 rule).
    const DEFAULT: i32;

    /// The variant for a number, if declared.
    fn from_i32(value: i32) -> Option<Self>;
    /// The variant's number.
    fn to_i32(self) -> i32;
    /// The variant's protobuf name.
    fn proto_name(self) -> &'static str;
}

/// The value of an enum field: any `int32`, so values added by a newer schema survive a
/// round trip. [`EnumValue::get`] gives the known variant.
pub struct EnumValue<E> {
    raw: i32,
    _enum: PhantomData<fn() -> E>,
}

impl<E: ProtoEnum> EnumValue<E> {
    /// A value from its number (known or not).
    pub const fn from_raw(raw: i32) -> Self {
        EnumValue {
            raw,
            _enum: PhantomData,
        }
    }

    /// The number as stored.
    pub const fn raw(self) -> i32 {
        self.raw
    }

    /// The declared variant, or `None` for a value this schema does not know.
    pub fn get(self) -> Option<E> {
        E::from_i32(self.raw)
    }

    /// True when the schema declares this value.
    pub fn is_known(self) -> bool {
        self.get().is_some()
    }
}

impl<E: ProtoEnum> Default for EnumValue<E> {
    fn default() -> Self {
        Self::from_raw(E::DEFAULT)
    }
}

impl<E> Clone for EnumValue<E> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<E> Copy for EnumValue<E> {}

impl<E> PartialEq for EnumValue<E> {
    fn eq(&self, other: &Self) -> bool {
        self.raw == other.raw
    }
}

impl<E> Eq for EnumValue<E> {}

impl<E> Hash for EnumValue<E> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.raw.hash(state);
    }
}

impl<E> PartialOrd for EnumValue<E> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl<E> Ord for EnumValue<E> {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.raw.cmp(&other.raw)
    }
}

impl<E: ProtoEnum> PartialEq<E> for EnumValue<E> {
    fn eq(&self, other: &E) -> bool {
        self.raw == other.to_i32()
    }
}

impl<E: ProtoEnum> From<E> for EnumValue<E> {
    fn from(e: E) -> Self {
        Self::from_raw(e.to_i32())
    }
}

impl<E: ProtoEnum> fmt::Debug for EnumValue<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.get() {
            Some(e) => write!(f, "{e:?}"),
            None => write!(f, "Unknown({})", self.raw),
        }
    }
}

impl<E: ProtoEnum> fmt::Display for EnumValue<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.get() {
            Some(e) => f.write_str(e.proto_name()),
            None => write!(f, "{}", self.raw),
        }
    }
}
