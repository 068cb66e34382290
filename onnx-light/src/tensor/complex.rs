//! Complex element types (`COMPLEX64`, `COMPLEX128`): a real and an imaginary part,
//! laid out as ONNX stores them (real first), so `raw_data` and the typed fields can be
//! viewed as slices of them without copying.

/// `COMPLEX64`: two `f32`, real part first. (Named by its parts' width, as in
/// `num-complex`: ONNX's `COMPLEX64` is this `Complex32`.)
#[doc(alias = "COMPLEX64")]
#[derive(Debug, Clone, Copy, PartialEq, Default, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Complex32 {
    /// The real part.
    pub re: f32,
    /// The imaginary part.
    pub im: f32,
}

/// `COMPLEX128`: two `f64`, real part first. (ONNX's `COMPLEX128` is this `Complex64`.)
#[doc(alias = "COMPLEX128")]
#[derive(Debug, Clone, Copy, PartialEq, Default, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Complex64 {
    /// The real part.
    pub re: f64,
    /// The imaginary part.
    pub im: f64,
}

impl Complex32 {
    /// `re + im·i`.
    pub const fn new(re: f32, im: f32) -> Self {
        Complex32 { re, im }
    }
}

impl Complex64 {
    /// `re + im·i`.
    pub const fn new(re: f64, im: f64) -> Self {
        Complex64 { re, im }
    }
}
