//! Typed tensors: every ONNX element type through construction, serialization, parsing
//! and typed reads, in both the `raw_data` and the typed-field representations, and
//! against the official `onnx` package (`tests/python/typed_tensors.py`) both ways.
//!
//! * `every_dtype_round_trips_in_raw_data_and_typed_fields`: construct -> serialize ->
//!   parse (borrow, copy) -> typed read gives the values back for every data type (every
//!   bit pattern of the 8-bit and narrower float types and of f16/bf16), and both
//!   representations yield the same little-endian bytes.
//! * `tensors_we_write_are_read_identically_by_numpy_helper`: the same tensors, read by
//!   `onnx.numpy_helper.to_array`, have the same values (compared as bit patterns).
//! * `tensors_onnx_writes_are_read_identically_by_us`: tensors from
//!   `numpy_helper.from_array` and `helper.make_tensor` (typed and raw) of every data type,
//!   with float8/float4/float6 edge values (NaN, ±inf, max, saturation, -0) and odd
//!   element counts for the packed types, read back to the values onnx computed.
//! * `small_float_conversions_match_onnx`: our f32 -> float8/float4/float6/E8M0
//!   conversions give the codes onnx gives (`saturate_cast`, ml_dtypes, `to_float8e8m0`)
//!   on every code's value, every midpoint and its neighbours, specials and random bits.
//! * Zero-copy and its limits, validation errors naming the tensor, unknown data types,
//!   lazy payloads and unloaded external data.

use onnx_light_tests::scratch::Scratch;
use std::borrow::Cow;
use std::fmt::Write as _;
use std::fs;
use std::sync::Arc;

use onnx_light::onnx::*;
use onnx_light::prelude::*;
use onnx_light::tensor::*;
use onnx_light::{AlignedBuffer, ByteOwner, ErrorKind, LazyPayload, PayloadSource, SharedBytes};
use onnx_light_tests::python::{python_dir, run_python};

// ---------------------------------------------------------------------------------------
// Working directory and the Python side.

fn python(mode: &str, arg: &std::path::Path) -> String {
    let out = run_python(
        &python_dir().join("typed_tensors.py"),
        &[mode.as_ref(), arg.as_os_str()],
    );
    String::from_utf8(out.stdout).expect("the script prints UTF-8")
}

// ---------------------------------------------------------------------------------------
// Canonical values: the format `typed_tensors.py` prints (see its docstring).

trait Canon {
    fn canon(&self) -> String;
}

macro_rules! canon_decimal {
    ($($T:ty),*) => {$(impl Canon for $T { fn canon(&self) -> String { self.to_string() } })*};
}
canon_decimal!(i8, u8, i16, u16, i32, u32, i64, u64, Int4, Uint4, Int2, Uint2);

macro_rules! canon_bits {
    ($($T:ty => $w:literal),*) => {$(
        impl Canon for $T {
            fn canon(&self) -> String { format!("{:0w$x}", self.to_bits(), w = $w) }
        }
    )*};
}
canon_bits!(f32 => 8, f64 => 16, f16 => 4, bf16 => 4, Float8E4M3FN => 2, Float8E4M3FNUZ => 2,
    Float8E5M2 => 2, Float8E5M2FNUZ => 2, Float8E8M0 => 2, Float4E2M1 => 2, Float6E2M3 => 2,
    Float6E3M2 => 2);

impl Canon for bool {
    fn canon(&self) -> String {
        u8::from(*self).to_string()
    }
}

impl Canon for Complex32 {
    fn canon(&self) -> String {
        format!("{}:{}", self.re.canon(), self.im.canon())
    }
}

impl Canon for Complex64 {
    fn canon(&self) -> String {
        format!("{}:{}", self.re.canon(), self.im.canon())
    }
}

fn join<T: Canon>(values: &[T]) -> String {
    values
        .iter()
        .map(Canon::canon)
        .collect::<Vec<_>>()
        .join(",")
}

/// Runs `$body` with `$T` bound to the Rust element type of `$dtype`.
macro_rules! with_type {
    ($dtype:expr, |$T:ident| $body:expr, string => $string:expr) => {
        match $dtype {
            DataType::Float => {
                type $T = f32;
                $body
            }
            DataType::Uint8 => {
                type $T = u8;
                $body
            }
            DataType::Int8 => {
                type $T = i8;
                $body
            }
            DataType::Uint16 => {
                type $T = u16;
                $body
            }
            DataType::Int16 => {
                type $T = i16;
                $body
            }
            DataType::Int32 => {
                type $T = i32;
                $body
            }
            DataType::Int64 => {
                type $T = i64;
                $body
            }
            DataType::Bool => {
                type $T = bool;
                $body
            }
            DataType::Float16 => {
                type $T = f16;
                $body
            }
            DataType::Double => {
                type $T = f64;
                $body
            }
            DataType::Uint32 => {
                type $T = u32;
                $body
            }
            DataType::Uint64 => {
                type $T = u64;
                $body
            }
            DataType::Complex64 => {
                type $T = Complex32;
                $body
            }
            DataType::Complex128 => {
                type $T = Complex64;
                $body
            }
            DataType::Bfloat16 => {
                type $T = bf16;
                $body
            }
            DataType::Float8E4M3FN => {
                type $T = Float8E4M3FN;
                $body
            }
            DataType::Float8E4M3FNUZ => {
                type $T = Float8E4M3FNUZ;
                $body
            }
            DataType::Float8E5M2 => {
                type $T = Float8E5M2;
                $body
            }
            DataType::Float8E5M2FNUZ => {
                type $T = Float8E5M2FNUZ;
                $body
            }
            DataType::Uint4 => {
                type $T = Uint4;
                $body
            }
            DataType::Int4 => {
                type $T = Int4;
                $body
            }
            DataType::Float4E2M1 => {
                type $T = Float4E2M1;
                $body
            }
            DataType::Float8E8M0 => {
                type $T = Float8E8M0;
                $body
            }
            DataType::Uint2 => {
                type $T = Uint2;
                $body
            }
            DataType::Int2 => {
                type $T = Int2;
                $body
            }
            DataType::Float6E2M3 => {
                type $T = Float6E2M3;
                $body
            }
            DataType::Float6E3M2 => {
                type $T = Float6E3M2;
                $body
            }
            DataType::String => $string,
            DataType::Undefined => panic!("no values for UNDEFINED"),
        }
    };
}

/// `name;TYPE;dims;values` read through our API.
fn canonical(t: &TensorProto<'_>) -> String {
    let dtype = t.elem_type().unwrap();
    let values = with_type!(dtype, |T| join(&t.values::<T>().unwrap()), string => t
        .strings()
        .unwrap()
        .iter()
        .map(|s| format!("s{}", hex(s)))
        .collect::<Vec<_>>()
        .join(","));
    let dims: Vec<String> = t.dims.iter().map(i64::to_string).collect();
    format!(
        "{};{};{};{values}",
        t.name(),
        dtype.onnx_name(),
        dims.join("x")
    )
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

// ---------------------------------------------------------------------------------------
// Sample values of every element type.

trait Samples: TensorElement + Canon {
    fn samples() -> Vec<Self>;
}

macro_rules! samples_from_codes {
    ($($T:ty => $n:literal),*) => {$(
        impl Samples for $T {
            // Every code, plus one more so that packed types end in a partial byte.
            fn samples() -> Vec<Self> {
                (0..=$n).map(|c: u32| <$T>::from_bits((c % $n) as u8)).collect()
            }
        }
    )*};
}
samples_from_codes!(Float8E4M3FN => 256, Float8E4M3FNUZ => 256, Float8E5M2 => 256,
    Float8E5M2FNUZ => 256, Float8E8M0 => 256, Float4E2M1 => 16, Float6E2M3 => 64,
    Float6E3M2 => 64, Int4 => 16, Uint4 => 16, Int2 => 4, Uint2 => 4);

impl Samples for f16 {
    fn samples() -> Vec<Self> {
        (0..=u16::MAX).map(f16::from_bits).collect()
    }
}

impl Samples for bf16 {
    fn samples() -> Vec<Self> {
        (0..=u16::MAX).map(bf16::from_bits).collect()
    }
}

impl Samples for f32 {
    fn samples() -> Vec<Self> {
        vec![
            0.0,
            -0.0,
            1.5,
            -2.25,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            f32::from_bits(0xFFC0_1234),
            f32::MAX,
            f32::MIN_POSITIVE,
            f32::from_bits(1),
        ]
    }
}

impl Samples for f64 {
    fn samples() -> Vec<Self> {
        vec![
            0.0,
            -0.0,
            1e300,
            -1.0 / 3.0,
            f64::INFINITY,
            f64::NAN,
            f64::from_bits(1),
        ]
    }
}

macro_rules! samples_int {
    ($($T:ty),*) => {$(
        impl Samples for $T {
            fn samples() -> Vec<Self> {
                vec![<$T>::MIN, <$T>::MAX, 0, 1, <$T>::MAX / 3, <$T>::MIN / 5]
            }
        }
    )*};
}
samples_int!(i32, i64, u32, u64);

macro_rules! samples_all {
    ($($T:ty),*) => {$(
        impl Samples for $T {
            fn samples() -> Vec<Self> {
                (<$T>::MIN..=<$T>::MAX).collect()
            }
        }
    )*};
}
samples_all!(i8, u8, i16, u16);

impl Samples for bool {
    fn samples() -> Vec<Self> {
        vec![true, false, false, true, true]
    }
}

impl Samples for Complex32 {
    fn samples() -> Vec<Self> {
        vec![
            Complex32::new(1.0, 2.0),
            Complex32::new(-0.0, f32::NAN),
            Complex32::new(f32::INFINITY, -1e-30),
        ]
    }
}

impl Samples for Complex64 {
    fn samples() -> Vec<Self> {
        vec![
            Complex64::new(1.0, 2.0),
            Complex64::new(-0.0, f64::NAN),
            Complex64::new(f64::INFINITY, -1e-300),
        ]
    }
}

/// Calls `$f::<T>()` for every element type.
macro_rules! for_each_type {
    ($f:ident) => {{
        $f::<f32>();
        $f::<u8>();
        $f::<i8>();
        $f::<u16>();
        $f::<i16>();
        $f::<i32>();
        $f::<i64>();
        $f::<bool>();
        $f::<f16>();
        $f::<f64>();
        $f::<u32>();
        $f::<u64>();
        $f::<Complex32>();
        $f::<Complex64>();
        $f::<bf16>();
        $f::<Float8E4M3FN>();
        $f::<Float8E4M3FNUZ>();
        $f::<Float8E5M2>();
        $f::<Float8E5M2FNUZ>();
        $f::<Uint4>();
        $f::<Int4>();
        $f::<Float4E2M1>();
        $f::<Float8E8M0>();
        $f::<Uint2>();
        $f::<Int2>();
        $f::<Float6E2M3>();
        $f::<Float6E3M2>();
    }};
}

/// Tensors of every element type — raw and typed, a few shapes — with the canonical form
/// of the values they were built from.
fn our_tensors() -> Vec<(TensorProto<'static>, String)> {
    fn add<T: Samples>(out: &mut Vec<(TensorProto<'static>, String)>) {
        let v = T::samples();
        let name = T::DATA_TYPE.onnx_name().to_lowercase();
        let n = v.len() as i64;
        let cases: Vec<(String, Vec<i64>, &[T], bool)> = vec![
            (format!("{name}_raw"), vec![n], &v, true),
            (format!("{name}_typed"), vec![n], &v, false),
            (format!("{name}_2d"), vec![2, 1], &v[..2], true),
            (format!("{name}_scalar"), vec![], &v[1..2], true),
            (format!("{name}_scalar_typed"), vec![], &v[1..2], false),
            (format!("{name}_empty"), vec![3, 0], &[], true),
        ];
        for (name, dims, values, raw) in cases {
            let t = if raw {
                TensorProto::from_slice(name, dims, values)
            } else {
                TensorProto::from_slice_typed(name, dims, values)
            }
            .unwrap();
            let dims: Vec<String> = t.dims.iter().map(i64::to_string).collect();
            let expected = format!(
                "{};{};{};{}",
                t.name(),
                T::DATA_TYPE.onnx_name(),
                dims.join("x"),
                join(values)
            );
            out.push((t, expected));
        }
    }
    let mut out = Vec::new();
    macro_rules! each {
        ($($T:ty),*) => {$(add::<$T>(&mut out);)*};
    }
    each!(
        f32,
        u8,
        i8,
        u16,
        i16,
        i32,
        i64,
        bool,
        f16,
        f64,
        u32,
        u64,
        Complex32,
        Complex64,
        bf16,
        Float8E4M3FN,
        Float8E4M3FNUZ,
        Float8E5M2,
        Float8E5M2FNUZ,
        Uint4,
        Int4,
        Float4E2M1,
        Float8E8M0,
        Uint2,
        Int2,
        Float6E2M3,
        Float6E3M2
    );
    let strings = ["plain", "", "ünïcödé ✓"];
    let t = TensorProto::from_strings("string", [3], strings).unwrap();
    let expected = format!(
        "string;STRING;3;{}",
        strings.map(|s| format!("s{}", hex(s.as_bytes()))).join(",")
    );
    out.push((t, expected));
    out
}

// ---------------------------------------------------------------------------------------
// Round trips.

#[test]
fn every_dtype_round_trips_in_raw_data_and_typed_fields() {
    fn check<T: Samples>() {
        let values = T::samples();
        let n = values.len() as i64;
        let raw = TensorProto::from_slice("t", [n], &values).unwrap();
        let typed = TensorProto::from_slice_typed("t", [n], &values).unwrap();
        let expected = join(&values);
        assert_eq!(raw.data_source().unwrap(), DataSource::RawData);
        assert_eq!(
            typed.data_source().unwrap(),
            DataSource::TypedField(T::DATA_TYPE.typed_field().unwrap())
        );
        assert!(typed.raw_data.is_none());
        // Both representations give the same little-endian bytes.
        assert_eq!(
            raw.raw_bytes().unwrap(),
            typed.raw_bytes().unwrap(),
            "{:?}",
            T::DATA_TYPE
        );
        assert_eq!(
            raw.raw_bytes().unwrap().len() as u64,
            raw.byte_size().unwrap()
        );
        for t in [&raw, &typed] {
            assert_eq!(join(&t.values::<T>().unwrap()), expected);
            let bytes = t.encode_to_vec().unwrap();
            let borrowed = TensorProto::decode(&bytes).unwrap();
            assert_eq!(borrowed.encode_to_vec().unwrap(), bytes);
            assert_eq!(
                join(&borrowed.values::<T>().unwrap()),
                expected,
                "{:?}",
                T::DATA_TYPE
            );
            let owned = TensorProto::decode_owned(&bytes).unwrap();
            assert_eq!(join(&owned.values::<T>().unwrap()), expected);
            let data = owned.data().unwrap();
            assert_eq!(data.elem_type(), T::DATA_TYPE);
            assert_eq!(data.element_count(), values.len());
            assert_eq!(join(&data.values::<T>().unwrap()), expected);
            assert_eq!(owned.encode_to_vec().unwrap(), bytes);
        }
        // From an iterator and a Vec, the same tensor.
        assert_eq!(
            TensorProto::from_elements("t", [n], values.iter().copied()).unwrap(),
            raw
        );
        assert_eq!(
            TensorProto::from_vec("t", [n], values.clone()).unwrap(),
            raw
        );
        // From the bytes plus the data type.
        let again = TensorProto::try_from_raw(
            "t",
            T::DATA_TYPE,
            [n],
            raw.raw_bytes().unwrap().into_owned(),
        )
        .unwrap();
        assert_eq!(join(&again.values::<T>().unwrap()), expected);
    }
    for_each_type!(check);

    let t = TensorProto::from_strings("s", [2, 1], ["a", "ü"]).unwrap();
    let parsed = TensorProto::decode_owned(&t.encode_to_vec().unwrap()).unwrap();
    let strings: Vec<&[u8]> = parsed.strings().unwrap().iter().map(|s| &s[..]).collect();
    assert_eq!(strings, [b"a".as_slice(), "ü".as_bytes()]);
    assert_eq!(parsed.byte_size().unwrap(), 3);
}

#[test]
fn tensors_we_write_are_read_identically_by_numpy_helper() {
    let dir = Scratch::new("typed-tensors-ours");
    let tensors = our_tensors();
    let mut list = String::new();
    let mut expected = Vec::new();
    for (i, (t, canon)) in tensors.iter().enumerate() {
        let file = format!("{i:03}.pb");
        fs::write(dir.0.join(&file), t.encode_to_vec().unwrap()).unwrap();
        list.push_str(&file);
        list.push('\n');
        // Our own reading agrees with what we wrote before Python is asked.
        assert_eq!(&canonical(t), canon);
        expected.push(format!("{file} {canon}"));
    }
    fs::write(dir.0.join("list.txt"), list).unwrap();
    let out = python("read", &dir.0);
    let got: Vec<&str> = out.lines().collect();
    assert_eq!(got.len(), expected.len());
    for (g, e) in got.iter().zip(&expected) {
        assert_eq!(g, e);
    }
}

#[test]
fn tensors_onnx_writes_are_read_identically_by_us() {
    let dir = Scratch::new("typed-tensors-onnx");
    python("generate", &dir.0);
    let manifest = fs::read_to_string(dir.0.join("manifest.txt")).unwrap();
    let mut seen = std::collections::BTreeSet::new();
    for line in manifest.lines() {
        let (file, expected) = line.split_once(' ').unwrap();
        let bytes = fs::read(dir.0.join(file)).unwrap();
        let borrowed = TensorProto::decode(&bytes).unwrap();
        assert_eq!(canonical(&borrowed), expected, "{file}");
        let owned = TensorProto::decode_owned(&bytes).unwrap();
        assert_eq!(canonical(&owned), expected, "{file}");
        if borrowed.elem_type().unwrap() != DataType::String {
            // The typed field and raw_data versions agree byte for byte.
            let data = borrowed.data().unwrap();
            assert_eq!(data.as_bytes(), &*owned.raw_bytes().unwrap());
        }
        seen.insert(borrowed.elem_type().unwrap().to_i32());
    }
    // Every data type onnx 1.23 has (all but UNDEFINED) was exercised.
    assert_eq!(seen.len(), DataType::ALL.len() - 1);
}

/// Every code's value, midpoints between neighbours and one ulp either side, specials
/// and pseudo-random bit patterns.
fn conversion_inputs() -> Vec<u32> {
    let mut v: Vec<u32> = Vec::new();
    /// A format's width in bits and its decoder.
    type Format = (u32, fn(u8) -> f32);
    let formats: Vec<Format> = vec![
        (8, |c| Float8E4M3FN::from_bits(c).to_f32()),
        (8, |c| Float8E4M3FNUZ::from_bits(c).to_f32()),
        (8, |c| Float8E5M2::from_bits(c).to_f32()),
        (8, |c| Float8E5M2FNUZ::from_bits(c).to_f32()),
        (8, |c| Float8E8M0::from_bits(c).to_f32()),
        (4, |c| Float4E2M1::from_bits(c).to_f32()),
        (6, |c| Float6E2M3::from_bits(c).to_f32()),
        (6, |c| Float6E3M2::from_bits(c).to_f32()),
    ];
    for (bits, decode) in formats {
        let mut values: Vec<f32> = (0..1u32 << bits)
            .map(|c| decode(c as u8))
            .filter(|x| x.is_finite())
            .collect();
        values.sort_by(f32::total_cmp);
        for w in values.windows(2) {
            let mid = ((f64::from(w[0]) + f64::from(w[1])) / 2.0) as f32;
            v.extend([
                w[0].to_bits(),
                mid.to_bits(),
                mid.to_bits() + 1,
                mid.to_bits().wrapping_sub(1),
            ]);
        }
        if let Some(&max) = values.last() {
            v.extend([
                max.to_bits() + 1,
                (max * 1.25).to_bits(),
                (max * 2.0).to_bits(),
            ]);
        }
    }
    v.extend([
        0,
        0x8000_0000,
        0x7F80_0000,
        0xFF80_0000,
        0x7FC0_0000,
        0xFFC0_0000,
        0x7F80_0001,
        0x7F7F_FFFF,
        0xFF7F_FFFF,
        1,
        0x8000_0001,
        0x0040_0000,
        0x0060_0000,
    ]);
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    for _ in 0..20_000 {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        v.push(state as u32);
    }
    v
}

/// Our conversion for each column `typed_tensors.py convert` prints, by column name.
fn our_conversion(column: &str, x: f32) -> u8 {
    let (name, flags) = column.split_once('_').unwrap_or((column, ""));
    let sat = flags.ends_with("sat");
    match name {
        "e4m3fn" => Float8E4M3FN::from_f32_with(x, sat).to_bits(),
        "e4m3fnuz" => Float8E4M3FNUZ::from_f32_with(x, sat).to_bits(),
        "e5m2" => Float8E5M2::from_f32_with(x, sat).to_bits(),
        "e5m2fnuz" => Float8E5M2FNUZ::from_f32_with(x, sat).to_bits(),
        "e2m1" => Float4E2M1::from_f32(x).to_bits(),
        "e2m3" => Float6E2M3::from_f32(x).to_bits(),
        "e3m2" => Float6E3M2::from_f32(x).to_bits(),
        "e8m0" => {
            let rounding = match flags.trim_end_matches("_sat") {
                "up" => E8M0Rounding::Up,
                "nearest" => E8M0Rounding::Nearest,
                "down" => E8M0Rounding::Down,
                other => panic!("rounding {other}"),
            };
            Float8E8M0::from_f32_with(x, sat, rounding).to_bits()
        }
        other => panic!("unknown conversion {other}"),
    }
}

#[test]
fn small_float_conversions_match_onnx() {
    let dir = Scratch::new("typed-tensors-convert");
    let inputs = conversion_inputs();
    let path = dir.0.join("inputs.txt");
    let text: String = inputs.iter().map(|b| format!("{b:08x}\n")).collect();
    fs::write(&path, text).unwrap();
    let out = python("convert", &path);
    let mut lines = out.lines();
    let columns: Vec<&str> = lines.next().unwrap().split(' ').collect();
    let mut compared = 0usize;
    for (&bits, line) in inputs.iter().zip(lines) {
        let x = f32::from_bits(bits);
        for (column, code) in columns.iter().zip(line.split(' ')) {
            let theirs = u8::from_str_radix(code, 16).unwrap();
            let ours = our_conversion(column, x);
            if x.is_nan() && matches!(*column, "e2m1" | "e2m3" | "e3m2") {
                // ml_dtypes (what make_tensor uses) turns NaN into a zero for these
                // NaN-less types; the ONNX spec says +max, which is what we do.
                let max = match *column {
                    "e2m1" => Float4E2M1::MAX.to_bits(),
                    "e2m3" => Float6E2M3::MAX.to_bits(),
                    _ => Float6E3M2::MAX.to_bits(),
                };
                assert_eq!(ours, max, "{column} NaN");
                continue;
            }
            assert_eq!(ours, theirs, "{column}: f32 {bits:#010x} ({x:e})");
            compared += 1;
        }
    }
    assert!(compared > 20_000 * columns.len(), "{compared}");
}

// ---------------------------------------------------------------------------------------
// Zero-copy and its limits.

#[test]
fn aligned_f32_raw_data_is_a_zero_copy_view() {
    let values: Vec<f32> = (0..1000).map(|i| i as f32 * 0.5).collect();
    let t = TensorProto::from_slice("w", [10, 100], &values).unwrap();
    let raw = t.raw_data.as_ref().unwrap();
    let view = t.values::<f32>().unwrap();
    let Cow::Borrowed(slice) = &view else {
        panic!("a tensor we built is aligned for its type")
    };
    assert_eq!(slice.as_ptr().cast::<u8>(), raw.as_ptr());
    assert_eq!(*slice, values.as_slice());

    // Borrowed from a parsed buffer: whenever raw_data lands aligned, no copy. Shifting
    // the message in a 64-aligned buffer puts raw_data at every offset modulo 4.
    let bytes = t.encode_to_vec().unwrap();
    let (mut viewed, mut copied) = (0, 0);
    for shift in 0..4 {
        let mut padded = vec![0u8; shift];
        padded.extend_from_slice(&bytes);
        let buffer = Bytes::aligned(&padded, 64).unwrap();
        let parsed = TensorProto::decode(&buffer[shift..]).unwrap();
        let raw = parsed.raw_data.as_ref().unwrap();
        assert!(raw.is_borrowed());
        let v = parsed.values::<f32>().unwrap();
        assert_eq!(&*v, values.as_slice());
        let aligned = (raw.as_ptr() as usize).is_multiple_of(4);
        match &v {
            Cow::Borrowed(s) => {
                assert!(aligned);
                assert_eq!(s.as_ptr().cast::<u8>(), raw.as_ptr());
                viewed += 1;
            }
            Cow::Owned(_) => {
                assert!(!aligned);
                copied += 1;
            }
        }
    }
    assert_eq!((viewed, copied), (1, 3));

    // Shared (a slice of a reference-counted owner): no copy either, also via `data()`.
    let owner: ByteOwner = Arc::new(raw.to_vec());
    let shared = TensorProto::from_raw(
        "s",
        DataType::Float,
        [1000],
        SharedBytes::whole(owner.clone()),
    );
    let Cow::Borrowed(s) = shared.values::<f32>().unwrap() else {
        panic!("shared aligned bytes are viewed")
    };
    assert_eq!(s.as_ptr().cast::<u8>(), owner.bytes().as_ptr());
    let data = shared.data().unwrap();
    assert!(data.bytes().is_borrowed());
    assert!(matches!(data.values::<f32>().unwrap(), Cow::Borrowed(_)));

    // Typed fields holding the element type itself are borrowed too.
    let typed = TensorProto::from_slice_typed("f", [1000], &values).unwrap();
    let Cow::Borrowed(s) = typed.values::<f32>().unwrap() else {
        panic!("float_data is viewed")
    };
    assert_eq!(s.as_ptr(), typed.float_data.as_ptr());
}

#[test]
fn unaligned_raw_data_is_copied_and_reported() {
    let values = [1.5f64, -0.0, f64::MAX, 3.25];
    let le: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    for offset in [1usize, 3, 4, 7] {
        let mut padded = vec![0u8; offset];
        padded.extend_from_slice(&le);
        let buffer = Bytes::aligned(&padded, 64).unwrap();
        let slice = &buffer[offset..];
        let t = TensorProto::try_from_raw("odd", DataType::Double, [2, 2], slice).unwrap();
        assert!(t.raw_data.as_ref().unwrap().is_borrowed());
        let v = t.values::<f64>().unwrap();
        assert!(
            matches!(v, Cow::Owned(_)),
            "offset {offset}: reported as a copy"
        );
        assert_eq!(join(&v), join(&values));
        let data = t.data().unwrap();
        assert!(matches!(data.values::<f64>().unwrap(), Cow::Owned(_)));
        // Single-byte types are never misaligned.
        let u = TensorProto::try_from_raw("b", DataType::Uint8, [32], slice).unwrap();
        assert!(matches!(u.values::<u8>().unwrap(), Cow::Borrowed(_)));
    }
}

// ---------------------------------------------------------------------------------------
// Validation.

fn kind(e: &onnx_light::Error) -> &ErrorKind {
    e.kind()
}

#[test]
fn payload_length_mismatch_is_an_error_naming_the_tensor() {
    let short = TensorProto::from_raw("w", DataType::Float, [3], vec![0u8; 11]);
    let e = short.values::<f32>().unwrap_err();
    assert_eq!(
        kind(&e),
        &ErrorKind::TensorDataMismatch {
            field: "raw_data",
            expected: 12,
            actual: 11
        }
    );
    assert_eq!(e.tensor(), Some("w"));
    assert!(e.to_string().contains("tensor `w`"), "{e}");
    assert!(short.raw_bytes().is_err());
    assert!(short.data().is_err());
    assert!(short.validate_data().is_err());
    let long = TensorProto::from_raw("w", DataType::Float, [3], vec![0u8; 13]);
    assert!(long.values::<f32>().is_err());

    // Packed types round up: 5 int4 take 3 bytes, not 2 or 4.
    for (len, ok) in [(2, false), (3, true), (4, false)] {
        let t = TensorProto::from_raw("q", DataType::Int4, [5], vec![0u8; len]);
        assert_eq!(t.values::<Int4>().is_ok(), ok, "{len}");
    }
    for (len, ok) in [(3, false), (4, true), (5, false)] {
        let t = TensorProto::from_raw("q", DataType::Float6E3M2, [5], vec![0u8; len]);
        assert_eq!(t.validate_data().is_ok(), ok, "{len}");
    }
    // Typed fields: the number of entries (2 int4 per int32_data entry).
    let mut t = TensorProto::from_slice_typed("q", [5], &[Int4::MIN; 5]).unwrap();
    assert_eq!(t.int32_data.len(), 3);
    t.int32_data.pop();
    let e = t.values::<Int4>().unwrap_err();
    assert_eq!(
        kind(&e),
        &ErrorKind::TensorDataMismatch {
            field: "int32_data",
            expected: 3,
            actual: 2
        }
    );
    // Data in the wrong field counts as missing.
    let mut t = TensorProto::from_slice_typed("f", [2], &[1.0f32, 2.0]).unwrap();
    t.data_type = Some(DataType::Double.to_i32());
    assert!(matches!(
        kind(&t.values::<f64>().unwrap_err()),
        ErrorKind::TensorDataMismatch {
            field: "double_data",
            ..
        }
    ));
    // A huge shape with a small payload is refused before anything is allocated.
    let huge = TensorProto::from_raw("h", DataType::Float, [1 << 40, 1 << 20], vec![0u8; 8]);
    assert!(huge.values::<f32>().is_err());
    let overflow = TensorProto::from_raw("o", DataType::Float, [i64::MAX, 4], vec![0u8; 8]);
    assert!(matches!(
        kind(&overflow.values::<f32>().unwrap_err()),
        ErrorKind::ValueOutOfRange { .. }
    ));
    let negative = TensorProto::from_raw("n", DataType::Float, [-1], vec![0u8; 4]);
    assert!(negative.values::<f32>().is_err());
    // Constructors check the shape against the values.
    let e = TensorProto::from_slice("c", [2, 2], &[1i64, 2, 3]).unwrap_err();
    assert_eq!(e.tensor(), Some("c"));
    assert!(matches!(
        kind(&e),
        ErrorKind::TensorDataMismatch {
            field: "values",
            expected: 4,
            actual: 3
        }
    ));
    assert!(TensorProto::try_from_raw("r", DataType::Int16, [3], vec![0u8; 5]).is_err());
    assert!(TensorProto::try_from_raw("r", DataType::String, [0], vec![]).is_err());
    assert!(TensorProto::from_strings("s", [3], ["a"]).is_err());
    let mut s = TensorProto::from_strings("s", [2], ["a", "b"]).unwrap();
    s.dims = vec![3];
    assert!(s.strings().is_err());
}

#[test]
fn unknown_data_type_is_an_error_on_typed_access_only() {
    let mut t = TensorProto::from_slice("u", [2], &[1.0f32, 2.0]).unwrap();
    t.data_type = Some(99);
    let bytes = t.encode_to_vec().unwrap();
    let parsed = TensorProto::decode(&bytes).unwrap();
    assert_eq!(parsed, t);
    assert_eq!(parsed.encode_to_vec().unwrap(), bytes);
    let e = parsed.values::<f32>().unwrap_err();
    assert_eq!(
        kind(&e),
        &ErrorKind::UnsupportedDataType {
            data_type: 99,
            name: None
        }
    );
    assert_eq!(e.tensor(), Some("u"));
    assert!(parsed.raw_bytes().is_err());
    assert!(parsed.values::<f32>().is_err());
    #[allow(deprecated)]
    let refused = parsed.dtype();
    assert!(refused.is_err());
    t.data_type = None; // UNDEFINED
    assert!(matches!(
        kind(&t.values::<f32>().unwrap_err()),
        ErrorKind::UnsupportedDataType {
            data_type: 0,
            name: Some("UNDEFINED")
        }
    ));
    // Asking for another element type than the tensor's.
    let t = TensorProto::from_slice("i", [1], &[7i64]).unwrap();
    assert_eq!(
        kind(&t.values::<i32>().unwrap_err()),
        &ErrorKind::ElementTypeMismatch {
            data_type: "INT64",
            requested: "INT32"
        }
    );
    assert!(t.strings().is_err());
    let s = TensorProto::from_strings("s", [1], ["x"]).unwrap();
    assert!(matches!(
        kind(&s.raw_bytes().unwrap_err()),
        ErrorKind::UnsupportedDataType {
            data_type: 8,
            name: Some("STRING")
        }
    ));
}

// ---------------------------------------------------------------------------------------
// Lazy and external data.

/// An in-memory source that hands out shared slices, like a mapped file.
struct MappedSource(ByteOwner);

impl PayloadSource for MappedSource {
    fn fetch(&self, offset: u64, len: u64) -> onnx_light::Result<Bytes<'static>> {
        let start = offset as usize;
        Bytes::shared(self.0.clone(), start..start + len as usize)
    }
    fn describe(&self) -> String {
        "memory".into()
    }
}

#[test]
fn lazy_payloads_are_fetched_and_mapped_ones_stay_zero_copy() {
    let values: Vec<f32> = (0..64).map(|i| i as f32).collect();
    let mut file = vec![0u8; 16];
    file.extend(values.iter().flat_map(|v| v.to_le_bytes()));
    let owner: ByteOwner = Arc::new(AlignedBuffer::copy_from(&file, 64).unwrap());
    let source = Arc::new(MappedSource(owner.clone()));
    let t = TensorProto {
        name: Some("lazy".into()),
        data_type: Some(DataType::Float.to_i32()),
        dims: vec![8, 8],
        lazy_data: Some(LazyPayload::new(source.clone(), 16, 256)),
        ..TensorProto::default()
    };
    assert_eq!(t.data_source().unwrap(), DataSource::Lazy);
    t.validate_data().unwrap();
    assert_eq!(&*t.values::<f32>().unwrap(), values.as_slice());
    assert_eq!(&*t.raw_bytes().unwrap(), &owner.bytes()[16..]);
    let data = t.data().unwrap();
    assert_eq!(data.source(), DataSource::Lazy);
    assert!(data.bytes().is_shared());
    let Cow::Borrowed(view) = data.values::<f32>().unwrap() else {
        panic!("a mapped, aligned payload is viewed")
    };
    assert_eq!(view.as_ptr().cast::<u8>(), owner.bytes()[16..].as_ptr());

    // A lazy payload whose recorded length does not match the shape is refused unread.
    let wrong = TensorProto {
        lazy_data: Some(LazyPayload::new(source, 16, 200)),
        ..t.clone()
    };
    let e = wrong.validate_data().unwrap_err();
    assert_eq!(e.tensor(), Some("lazy"));
    assert!(matches!(
        kind(&e),
        ErrorKind::TensorDataMismatch {
            field: "external data",
            expected: 256,
            actual: 200
        }
    ));
}

#[test]
fn external_data_that_was_not_loaded_is_reported() {
    let t = TensorProto {
        name: Some("ext".into()),
        data_type: Some(DataType::Float.to_i32()),
        dims: vec![4],
        data_location: Some(EnumValue::from_raw(DataLocation::External.to_i32())),
        external_data: vec![StringStringEntryProto::new("location", "weights.bin")],
        ..TensorProto::default()
    };
    let e = t.values::<f32>().unwrap_err();
    assert_eq!(
        kind(&e),
        &ErrorKind::ExternalDataNotLoaded {
            location: "weights.bin".into()
        }
    );
    assert_eq!(e.tensor(), Some("ext"));
    assert!(e.to_string().contains("weights.bin"), "{e}");
    // Once the bytes are attached, the same tensor reads.
    let loaded = TensorProto {
        raw_data: Some(Bytes::from(vec![0u8; 16])),
        ..t
    };
    assert_eq!(&*loaded.values::<f32>().unwrap(), &[0.0; 4]);
}

#[test]
fn metadata_shape_and_sizes_are_reported() {
    let mut t = TensorProto::from_slice("m", [2, 3], &[Float4E2M1::MAX; 6]).unwrap();
    t.metadata_props
        .push(StringStringEntryProto::new("quant", "mx"));
    assert_eq!(t.metadata().collect::<Vec<_>>(), [("quant", "mx")]);
    assert_eq!(t.shape(), [2, 3]);
    assert_eq!(t.element_count(), Some(6));
    assert_eq!(t.byte_size().unwrap(), 3);
    assert_eq!(t.elem_type().unwrap().bit_width(), Some(4));
    assert_eq!(t.elem_type().unwrap().rust_type(), Some("Float4E2M1"));
    let scalar = TensorProto::from_slice("s", [], &[1u16]).unwrap();
    assert_eq!(scalar.element_count(), Some(1));
    assert_eq!(scalar.byte_size().unwrap(), 2);
}
