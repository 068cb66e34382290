//! `ndarray` interop (cargo feature `ndarray`): a tensor as a [`CowArray`] — a view that
//! borrows the tensor's bytes wherever [`TensorProto::values`] can borrow them, an owned
//! array otherwise — and an array back to a tensor.

use std::borrow::Cow;

use ::ndarray::{ArrayBase, ArrayD, ArrayViewD, CowArray, Data, Dimension, IxDyn};

use super::access::TensorData;
use super::element::TensorElement;
use crate::error::{Error, ErrorKind, Result};
use crate::field::Str;
use crate::onnx::TensorProto;

fn shape_of(dims: &[i64]) -> Result<Vec<usize>> {
    dims.iter()
        .map(|&d| {
            usize::try_from(d).map_err(|_| {
                Error::new(ErrorKind::ValueOutOfRange {
                    what: "tensor dimension does not fit an ndarray shape",
                })
            })
        })
        .collect()
}

fn to_array<'t, T: Clone>(values: Cow<'t, [T]>, dims: &[i64]) -> Result<CowArray<'t, T, IxDyn>> {
    let shape = IxDyn(&shape_of(dims)?);
    let array = match values {
        Cow::Borrowed(v) => ArrayViewD::from_shape(shape, v).map(CowArray::from),
        Cow::Owned(v) => ArrayD::from_shape_vec(shape, v).map(CowArray::from),
    };
    // The values were validated against the shape, so this does not happen.
    array.map_err(|_| {
        Error::new(ErrorKind::ValueOutOfRange {
            what: "tensor shape does not fit its values",
        })
    })
}

#[cfg_attr(docsrs, doc(cfg(feature = "ndarray")))]
impl<'a> TensorProto<'a> {
    /// The values as an n-dimensional array (row-major, shape `dims`): a view when
    /// [`values`](Self::values) borrows (`CowArray::is_view`), an owned array when it
    /// copies.
    ///
    /// # Errors
    /// As [`values`](Self::values); a dimension over `usize` is
    /// [`ErrorKind::ValueOutOfRange`].
    pub fn to_ndarray<T: TensorElement>(&self) -> Result<CowArray<'_, T, IxDyn>> {
        let values = self.values::<T>()?;
        to_array(values, &self.dims).map_err(|e| e.in_tensor(self.name()))
    }

    /// A tensor holding `array`'s values in `raw_data`, in row-major order whatever the
    /// array's memory layout.
    ///
    /// # Errors
    /// [`ErrorKind::ValueOutOfRange`] for a dimension over `i64::MAX`.
    pub fn from_ndarray<T, S, D>(name: impl Into<Str<'a>>, array: &ArrayBase<S, D>) -> Result<Self>
    where
        T: TensorElement,
        S: Data<Elem = T>,
        D: Dimension,
    {
        let name = name.into();
        let dims = array
            .shape()
            .iter()
            .map(|&d| {
                i64::try_from(d).map_err(|_| {
                    Error::new(ErrorKind::ValueOutOfRange {
                        what: "array dimension over i64::MAX",
                    })
                    .in_tensor(&name)
                })
            })
            .collect::<Result<Vec<i64>>>()?;
        match array.as_slice() {
            Some(values) => TensorProto::from_slice(name, dims, values),
            None => TensorProto::from_elements(name, dims, array.iter().copied()),
        }
    }
}

#[cfg_attr(docsrs, doc(cfg(feature = "ndarray")))]
impl TensorData<'_> {
    /// The values as an n-dimensional array: a view when [`values`](Self::values)
    /// borrows, an owned array otherwise.
    ///
    /// # Errors
    /// As [`values`](Self::values).
    pub fn to_ndarray<T: TensorElement>(&self) -> Result<CowArray<'_, T, IxDyn>> {
        to_array(self.values::<T>()?, self.shape())
    }
}

#[cfg(test)]
mod tests {
    use ::ndarray::{arr2, Array3, ShapeBuilder};

    use super::*;
    use crate::tensor::Float8E4M3FN;

    #[test]
    fn aligned_raw_data_becomes_a_view_and_the_array_round_trips() {
        let a = arr2(&[[1.0f32, 2.0, 3.0], [4.0, 5.0, 6.0]]);
        let t = TensorProto::from_ndarray("a", &a).unwrap();
        assert_eq!(t.dims, [2, 3]);
        let back = t.to_ndarray::<f32>().unwrap();
        assert!(back.is_view());
        assert_eq!(
            back.as_ptr().cast::<u8>(),
            t.raw_data.as_ref().unwrap().as_ptr()
        );
        assert_eq!(back, a.into_dyn());
    }

    #[test]
    fn unaligned_or_converted_data_becomes_an_owned_array() {
        let values = [1.0f32, -2.0];
        let mut buf = vec![0u8];
        buf.extend_from_slice(bytemuck::cast_slice(&values));
        let t =
            TensorProto::try_from_raw("u", crate::onnx::DataType::Float, [2], &buf[1..]).unwrap();
        let a = t.to_ndarray::<f32>().unwrap();
        assert!(!a.is_view());
        assert_eq!(a.as_slice().unwrap(), values);

        let typed = TensorProto::from_slice_typed("t", [1, 2], &[7i16, -7]).unwrap();
        let a = typed.to_ndarray::<i16>().unwrap();
        assert!(!a.is_view());
        assert_eq!(a.shape(), [1, 2]);
    }

    #[test]
    fn a_non_standard_layout_is_written_in_row_major_order() {
        let a = Array3::from_shape_vec((2, 3, 2).f(), (0..12).map(|i| i as i64).collect()).unwrap();
        assert!(a.as_slice().is_none());
        let t = TensorProto::from_ndarray("f", &a).unwrap();
        let expected: Vec<i64> = a.iter().copied().collect();
        assert_eq!(&*t.values::<i64>().unwrap(), expected.as_slice());
        assert_eq!(t.to_ndarray::<i64>().unwrap(), a.clone().into_dyn());
        let swapped = a.view().permuted_axes([2, 0, 1]);
        let t = TensorProto::from_ndarray("p", &swapped).unwrap();
        assert_eq!(t.dims, [2, 2, 3]);
        assert_eq!(t.to_ndarray::<i64>().unwrap(), swapped.into_dyn());
    }

    #[test]
    fn scalars_and_small_float_types_work() {
        let s = ::ndarray::arr0(Float8E4M3FN::from_f32(1.5));
        let t = TensorProto::from_ndarray("s", &s).unwrap();
        assert!(t.dims.is_empty());
        let back = t.data().unwrap();
        let a = back.to_ndarray::<Float8E4M3FN>().unwrap();
        assert_eq!(a.ndim(), 0);
        assert_eq!(a.first().unwrap().to_f32(), 1.5);
    }
}
