//! `TryFrom<i32>` for the schema's enums, so that `DataType::try_from(1)` needs no trait
//! import (the trait's own `from_i32` keeps working).

use std::fmt;

use super::{
    AttributeType, DataLocation, DataType, OperatorStatus, OptionalDataType, SequenceDataType,
    Version,
};
use crate::ProtoEnum;

/// A number that is not a declared value of an enum: the error of `E::try_from(i32)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct UnknownEnumValue {
    /// The enum's protobuf name, e.g. `onnx.TensorProto.DataType`.
    pub enum_name: &'static str,
    /// The number given.
    pub value: i32,
}

impl fmt::Display for UnknownEnumValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} is not a value of {}", self.value, self.enum_name)
    }
}

impl std::error::Error for UnknownEnumValue {}

macro_rules! try_from_i32 {
    ($($E:ty),*) => {$(
        impl TryFrom<i32> for $E {
            type Error = UnknownEnumValue;

            fn try_from(value: i32) -> Result<Self, UnknownEnumValue> {
                <$E as ProtoEnum>::from_i32(value).ok_or(UnknownEnumValue {
                    enum_name: <$E as ProtoEnum>::NAME,
                    value,
                })
            }
        }

        impl From<$E> for i32 {
            fn from(e: $E) -> i32 {
                e.to_i32()
            }
        }
    )*};
}

try_from_i32!(
    DataType,
    DataLocation,
    AttributeType,
    Version,
    OperatorStatus,
    SequenceDataType,
    OptionalDataType
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn try_from_gives_the_variant_or_names_the_enum() {
        assert_eq!(DataType::try_from(7), Ok(DataType::Int64));
        assert_eq!(i32::from(DataType::Bfloat16), 16);
        let err = DataType::try_from(99).unwrap_err();
        assert_eq!(err.value, 99);
        assert_eq!(
            err.to_string(),
            "99 is not a value of onnx.TensorProto.DataType"
        );
        assert_eq!(SequenceDataType::try_from(4), Ok(SequenceDataType::Map));
        assert!(AttributeType::try_from(-1).is_err());
    }
}
