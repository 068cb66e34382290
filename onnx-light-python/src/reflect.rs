//! Field access by protobuf name on the typed ONNX messages of `onnx-light`: each message
//! type lists its fields once (`reflect!`), and every Python operation (get, set, has,
//! clear, repeated edits, navigation to a sub-message) goes through the cells defined
//! here. Nothing here knows about views or roots; it only maps names to struct fields.

use std::any::Any;
use std::borrow::BorrowMut;
use std::marker::PhantomData;

use onnx_light::onnx::*;
use onnx_light::{
    Bytes, DecodeOptions, DecodeOwned, EnumValue, FieldKind, Message, ProtoEnum, Str,
    DEFAULT_RECURSION_LIMIT,
};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyFloat, PyInt, PyString};

/// A message type whose fields can be reached by name.
pub trait Reflect: Any + Send + Sync {
    /// The protobuf name (`onnx.ModelProto`).
    fn proto_name(&self) -> &'static str;
    /// The field called `name`, or `None` when the type has no such field.
    fn slot(&mut self, name: &str) -> Option<Slot<'_>>;
    /// The sub-message in field `name` (element `index` of a list field), created when
    /// unset and `create`: what [`slot`](Reflect::slot) gives for a message field,
    /// without building a cell, for following a view's path on every access.
    fn sub(&mut self, name: &str, index: Option<usize>, create: bool) -> Sub<'_>;
    /// The length of the list field `name`; `None` when it is not a list field.
    fn list_len(&mut self, name: &str) -> Option<usize>;
    /// The serialized bytes (protobuf's canonical encoding).
    fn encode(&self) -> onnx_light::Result<Vec<u8>>;
    /// The serialized size.
    fn byte_size(&self) -> u64;
    /// Replaces the content with the message decoded from `bytes`, with at most
    /// `recursion_limit` levels of messages below this one.
    fn decode_into(&mut self, bytes: &[u8], recursion_limit: u32) -> onnx_light::Result<()>;
    /// Resets every field.
    fn clear(&mut self);
    /// A deep copy.
    fn boxed_clone(&self) -> Box<dyn Reflect>;
    /// Field-by-field equality with another message of any type.
    fn eq_dyn(&self, other: &dyn Reflect) -> bool;
    /// Copies `other` into `self` when both have the same type.
    fn assign(&mut self, other: &dyn Reflect) -> bool;
    /// Upcast for downcasting to the concrete type.
    fn as_any(&self) -> &dyn Any;
    /// Upcast for downcasting to the concrete type.
    fn as_any_mut(&mut self) -> &mut dyn Any;
}

/// One field of a message, borrowed for one operation.
pub enum Slot<'m> {
    /// A singular scalar, string or bytes field.
    Single(Box<dyn SingleCell + 'm>),
    /// A repeated scalar, string or bytes field.
    Repeated(Box<dyn RepeatedCell + 'm>),
    /// A singular message field.
    Message(Box<dyn MessageCell<'m> + 'm>),
    /// A repeated message field.
    RepeatedMessage(Box<dyn RepeatedMessageCell<'m> + 'm>),
}

/// What [`Reflect::sub`] found.
pub enum Sub<'m> {
    /// The sub-message.
    Found(&'m mut dyn Reflect),
    /// A singular message field that is unset (and was not created).
    Unset,
    /// A list field without element `index`.
    NoElement,
    /// No message field of that name and kind (singular or list).
    NotMessage,
}

/// [`Reflect::sub`] through the field's cell, for fields without a direct rule.
fn sub_by_slot<'m>(
    m: &'m mut dyn Reflect,
    name: &str,
    index: Option<usize>,
    create: bool,
) -> Sub<'m> {
    match (m.slot(name), index) {
        (Some(Slot::Message(cell)), None) => cell.into_mut(create).map_or(Sub::Unset, Sub::Found),
        (Some(Slot::RepeatedMessage(cell)), Some(i)) => {
            cell.into_mut(i).map_or(Sub::NoElement, Sub::Found)
        }
        _ => Sub::NotMessage,
    }
}

/// [`Reflect::sub`] of a singular message field held as `H` (`M` or `Box<M>`).
fn sub_of<'m, H: BorrowMut<M> + Default, M: Reflect>(
    f: &'m mut Option<H>,
    index: Option<usize>,
    create: bool,
) -> Sub<'m> {
    if index.is_some() {
        return Sub::NotMessage;
    }
    let held = if create {
        Some(f.get_or_insert_with(H::default))
    } else {
        f.as_mut()
    };
    held.map_or(Sub::Unset, |h| Sub::Found(h.borrow_mut()))
}

/// [`Reflect::sub`] of a singular message field held in a box.
fn sub_boxed<M: Reflect + Default>(
    f: &mut Option<Box<M>>,
    index: Option<usize>,
    create: bool,
) -> Sub<'_> {
    sub_of::<Box<M>, M>(f, index, create)
}

/// [`Reflect::sub`] of a list field of messages.
fn sub_in<M: Reflect>(f: &mut [M], index: Option<usize>) -> Sub<'_> {
    match index {
        Some(i) => f
            .get_mut(i)
            .map_or(Sub::NoElement, |m| Sub::Found(m as &mut dyn Reflect)),
        None => Sub::NotMessage,
    }
}

/// A Python value converted for one field, ready to be stored. Conversion runs Python
/// code (`__index__`, `__float__`, ...) that may read the very model being written, so it
/// happens before the model is locked, and storing it runs no Python code.
pub struct Value(Box<dyn Any + Send>);

/// Converts a Python value for a field of one Rust type.
pub type Convert = fn(&Bound<'_, PyAny>) -> PyResult<Value>;

fn convert<T: PyScalar + Send + 'static>(value: &Bound<'_, PyAny>) -> PyResult<Value> {
    Ok(Value(Box::new(T::from_py(value)?)))
}

impl Value {
    /// The value as the `T` its converter made; a value converted for another field type
    /// (the field changed type between conversion and storing) is a `TypeError`.
    fn into<T: 'static>(self) -> PyResult<T> {
        self.0
            .downcast::<T>()
            .map(|b| *b)
            .map_err(|_| PyTypeError::new_err("the value was converted for another field type"))
    }
}

/// How many levels of messages may nest below a root message: the limit a load applies
/// by default (and protobuf's), so that whatever the API builds can be loaded back.
/// Every recursive walk (equality, copies, encoding, printing) stays well within the
/// stack at this depth.
pub const MAX_NESTING: usize = DEFAULT_RECURSION_LIMIT as usize;

/// The levels of messages set below `m` (0 when it holds no message), counted up to
/// `cap + 1` (deeper content stops the walk there).
pub fn height(m: &mut dyn Reflect, cap: usize) -> usize {
    if cap == 0 {
        // Any sub-message at all is one level too many.
        return usize::from(holds_a_message(m));
    }
    let Some(desc) = descriptor(m.proto_name()) else {
        return 0;
    };
    let mut deepest = 0;
    for f in desc.fields {
        if !matches!(f.kind, FieldKind::Message(_) | FieldKind::Map(..)) {
            continue;
        }
        let below = match m.slot(f.name) {
            Some(Slot::Message(c)) => c.into_mut(false).map(|sub| height(sub, cap - 1)),
            Some(Slot::RepeatedMessage(mut c)) => (0..c.len())
                .filter_map(|i| c.reborrow(i).map(|sub| height(sub, cap - 1)))
                .max(),
            _ => None,
        };
        if let Some(h) = below {
            deepest = deepest.max(h + 1);
            if deepest > cap {
                break;
            }
        }
    }
    deepest
}

fn holds_a_message(m: &mut dyn Reflect) -> bool {
    let Some(desc) = descriptor(m.proto_name()) else {
        return false;
    };
    desc.fields.iter().any(|f| match m.slot(f.name) {
        Some(Slot::Message(mut c)) => c.has(),
        Some(Slot::RepeatedMessage(c)) => c.len() > 0,
        _ => false,
    })
}

/// A singular non-message field.
pub trait SingleCell {
    fn get(&self, py: Python<'_>) -> PyResult<Py<PyAny>>;
    /// How Python values are converted for this field.
    fn converter(&self) -> Convert;
    /// Stores a value made by [`SingleCell::converter`].
    fn set(&mut self, value: Value) -> PyResult<()>;
    fn has(&self) -> bool;
    fn clear(&mut self);
    fn text(&self) -> String;
}

/// A repeated non-message field.
pub trait RepeatedCell {
    fn len(&self) -> usize;
    fn get(&self, py: Python<'_>, index: usize) -> PyResult<Py<PyAny>>;
    /// How Python values are converted for this field's elements.
    fn converter(&self) -> Convert;
    /// Stores values made by [`RepeatedCell::converter`].
    fn set(&mut self, index: usize, value: Value) -> PyResult<()>;
    fn insert(&mut self, index: usize, value: Value) -> PyResult<()>;
    fn remove(&mut self, index: usize);
    fn clear(&mut self);
    fn text(&self, index: usize) -> String;
    /// Reorders the elements: the one at `order[k]` moves to `k` (`order` is a
    /// permutation of the indices).
    fn permute(&mut self, order: &[usize]);
}

/// A singular message field.
pub trait MessageCell<'m> {
    fn has(&mut self) -> bool;
    fn clear(&mut self);
    /// The message type's protobuf name.
    fn elem_name(&self) -> &'static str;
    /// The sub-message, created empty first when `create` is true.
    fn into_mut(self: Box<Self>, create: bool) -> Option<&'m mut dyn Reflect>;
}

/// A repeated message field.
pub trait RepeatedMessageCell<'m> {
    fn len(&self) -> usize;
    fn elem_name(&self) -> &'static str;
    /// Inserts a copy of `value` (which must be of the element type) at `index`.
    fn insert(&mut self, index: usize, value: Option<&dyn Reflect>) -> bool;
    fn remove(&mut self, index: usize);
    fn clear(&mut self);
    fn into_mut(self: Box<Self>, index: usize) -> Option<&'m mut dyn Reflect>;
    /// Element `index`, borrowed for as long as the cell is.
    fn reborrow(&mut self, index: usize) -> Option<&mut dyn Reflect>;
    /// Moves element `index` out (an empty message takes its place until the list
    /// changes); `None` past the end.
    fn take(&mut self, index: usize) -> Option<Box<dyn Reflect>>;
    /// Reorders the elements, moving them: the one at `order[k]` moves to `k` (`order`
    /// is a permutation of the indices).
    fn permute(&mut self, order: &[usize]);
}

/// A Rust value held in a field, convertible to and from Python.
pub trait PyScalar: Sized + Default + Clone + Send + 'static {
    fn to_py(&self, py: Python<'_>) -> PyResult<Py<PyAny>>;
    fn from_py(value: &Bound<'_, PyAny>) -> PyResult<Self>;
    /// The value in protobuf's text format.
    fn text(&self) -> String;
}

macro_rules! numeric_scalar {
    ($($t:ty: $proto:literal),*) => {$(
        impl PyScalar for $t {
            fn to_py(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
                Ok(self.into_pyobject(py)?.into_any().unbind())
            }
            fn from_py(value: &Bound<'_, PyAny>) -> PyResult<Self> {
                value.extract::<$t>().map_err(|_| {
                    // An int too large is a ValueError, as protobuf has it (NumPy
                    // integers too: anything with `__index__`); anything that is not
                    // an int (a float included) a TypeError.
                    if value.is_instance_of::<PyInt>() || as_index(value).is_some() {
                        PyValueError::new_err(format!(
                            "value {value} is out of range for {}",
                            $proto
                        ))
                    } else {
                        PyTypeError::new_err(format!(
                            "expected an int ({}), got {}",
                            $proto,
                            type_name(value)
                        ))
                    }
                })
            }
            fn text(&self) -> String {
                self.to_string()
            }
        }
    )*};
}
numeric_scalar!(i64: "int64", i32: "int32", u64: "uint64");

/// `operator.index(value)`: the int a value stands for, when it is an integer type.
fn as_index<'py>(value: &Bound<'py, PyAny>) -> Option<Bound<'py, PyAny>> {
    if value.is_instance_of::<pyo3::types::PyBool>() || value.is_instance_of::<PyFloat>() {
        return None;
    }
    value
        .py()
        .import("operator")
        .and_then(|m| m.getattr("index"))
        .and_then(|index| index.call1((value,)))
        .ok()
}

fn type_name(value: &Bound<'_, PyAny>) -> String {
    value
        .get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "?".into())
}

impl PyScalar for f64 {
    fn to_py(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        Ok(self.into_pyobject(py)?.into_any().unbind())
    }
    fn from_py(value: &Bound<'_, PyAny>) -> PyResult<Self> {
        value
            .extract::<f64>()
            .map_err(|_| PyTypeError::new_err(format!("expected float, got {}", type_name(value))))
    }
    fn text(&self) -> String {
        format_f64(*self)
    }
}

impl PyScalar for f32 {
    fn to_py(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        Ok((*self as f64).into_pyobject(py)?.into_any().unbind())
    }
    fn from_py(value: &Bound<'_, PyAny>) -> PyResult<Self> {
        value
            .extract::<f64>()
            .map(|v| v as f32)
            .map_err(|_| PyTypeError::new_err(format!("expected float, got {}", type_name(value))))
    }
    fn text(&self) -> String {
        format_f32(*self)
    }
}

/// `printf("%.{precision}g", v)`: `precision` significant digits, trailing zeros
/// dropped, scientific notation for exponents below -4 or from `precision` up.
fn format_g(v: f64, precision: usize) -> String {
    if v.is_nan() {
        return "nan".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "inf".into() } else { "-inf".into() };
    }
    if v == 0.0 {
        return if v.is_sign_negative() {
            "-0".into()
        } else {
            "0".into()
        };
    }
    let sci = format!("{:.*e}", precision - 1, v);
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let trim = |t: &str| -> String {
        if t.contains('.') {
            t.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            t.to_string()
        }
    };
    if exp < -4 || exp >= precision as i32 {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{}e{sign}{:02}", trim(mantissa), exp.abs())
    } else {
        let decimals = (precision as i32 - 1 - exp).max(0) as usize;
        trim(&format!("{v:.decimals$}"))
    }
}

/// A float as protobuf's text format writes it: 6 significant digits when they read
/// back to the same `f32`, else 9.
fn format_f32(v: f32) -> String {
    let short = format_g(v as f64, 6);
    if short.parse::<f32>().ok() == Some(v) {
        short
    } else {
        format_g(v as f64, 9)
    }
}

/// A double as protobuf's text format writes it: 15 significant digits when they read
/// back to the same value, else 17.
fn format_f64(v: f64) -> String {
    let short = format_g(v, 15);
    if short.parse::<f64>().ok() == Some(v) {
        short
    } else {
        format_g(v, 17)
    }
}

fn quote(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() + 2);
    out.push('"');
    for &b in bytes {
        match b {
            b'"' => out.push_str("\\\""),
            b'\'' => out.push_str("\\'"),
            b'\\' => out.push_str("\\\\"),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            0x20..=0x7e => out.push(b as char),
            _ => out.push_str(&format!("\\{b:03o}")),
        }
    }
    out.push('"');
    out
}

impl PyScalar for Str<'static> {
    fn to_py(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        Ok(PyString::new(py, self.as_str()).into_any().unbind())
    }
    fn from_py(value: &Bound<'_, PyAny>) -> PyResult<Self> {
        if let Ok(s) = value.cast::<PyString>() {
            return Ok(Str::from(s.extract::<String>()?));
        }
        if let Ok(b) = value.cast::<PyBytes>() {
            let text = std::str::from_utf8(b.as_bytes())
                .map_err(|e| PyValueError::new_err(format!("string field: invalid UTF-8: {e}")))?;
            return Ok(Str::from(text.to_owned()));
        }
        Err(PyTypeError::new_err(format!(
            "expected str, got {}",
            type_name(value)
        )))
    }
    fn text(&self) -> String {
        quote(self.as_str().as_bytes())
    }
}

impl PyScalar for Bytes<'static> {
    fn to_py(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        Ok(PyBytes::new(py, self.as_slice()).into_any().unbind())
    }
    /// Only `bytes` (and its subclasses, such as `numpy.bytes_`), as in protobuf: a
    /// `str`, `bytearray`, `memoryview` or array has no single right byte string (an
    /// int32 array's elements or its buffer), so it is a `TypeError`.
    fn from_py(value: &Bound<'_, PyAny>) -> PyResult<Self> {
        match value.cast::<PyBytes>() {
            Ok(b) => Ok(Bytes::from(b.as_bytes().to_vec())),
            Err(_) => Err(PyTypeError::new_err(format!(
                "expected bytes, got {}",
                type_name(value)
            ))),
        }
    }
    fn text(&self) -> String {
        quote(self.as_slice())
    }
}

impl<E: ProtoEnum> PyScalar for EnumValue<E> {
    fn to_py(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        self.raw().to_py(py)
    }
    /// A value the enum does not name is a `ValueError`, as in protobuf (ONNX's enums
    /// are closed); decoding still keeps unknown values.
    fn from_py(value: &Bound<'_, PyAny>) -> PyResult<Self> {
        if let Ok(name) = value.cast::<PyString>() {
            // As in protobuf, an enum field takes the name of a value too.
            let name = name.to_cow()?;
            return match E::VALUES.iter().find(|(n, _)| *n == name) {
                Some((_, v)) => Ok(EnumValue::from_raw(*v)),
                None => Err(PyValueError::new_err(format!(
                    "unknown enum value name: {name:?}"
                ))),
            };
        }
        let raw = i32::from_py(value).map_err(|e| {
            // An integer out of range names no value either.
            if as_index(value).is_some() {
                PyValueError::new_err(format!("unknown enum value: {value}"))
            } else {
                e
            }
        })?;
        if !E::VALUES.iter().any(|(_, v)| *v == raw) {
            return Err(PyValueError::new_err(format!("unknown enum value: {raw}")));
        }
        Ok(EnumValue::from_raw(raw))
    }
    fn text(&self) -> String {
        match E::VALUES.iter().find(|(_, v)| *v == self.raw()) {
            Some((name, _)) => (*name).to_string(),
            None => self.raw().to_string(),
        }
    }
}

/// An `Option<T>` field (proto2 optional).
struct Opt<'m, T>(&'m mut Option<T>);

impl<T: PyScalar> SingleCell for Opt<'_, T> {
    fn get(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        match self.0.as_ref() {
            Some(v) => v.to_py(py),
            None => T::default().to_py(py),
        }
    }
    fn converter(&self) -> Convert {
        convert::<T>
    }
    fn set(&mut self, value: Value) -> PyResult<()> {
        *self.0 = Some(value.into()?);
        Ok(())
    }
    fn has(&self) -> bool {
        self.0.is_some()
    }
    fn clear(&mut self) {
        *self.0 = None;
    }
    fn text(&self) -> String {
        self.0.clone().unwrap_or_default().text()
    }
}

/// A member of a oneof holding a scalar.
struct OneofScalar<'m, O, T> {
    slot: &'m mut Option<O>,
    get: fn(&O) -> Option<&T>,
    make: fn(T) -> O,
}

impl<O, T: PyScalar> SingleCell for OneofScalar<'_, O, T> {
    fn get(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        match self.slot.as_ref().and_then(self.get) {
            Some(v) => v.to_py(py),
            None => T::default().to_py(py),
        }
    }
    fn converter(&self) -> Convert {
        convert::<T>
    }
    fn set(&mut self, value: Value) -> PyResult<()> {
        *self.slot = Some((self.make)(value.into()?));
        Ok(())
    }
    fn has(&self) -> bool {
        self.slot.as_ref().and_then(self.get).is_some()
    }
    fn clear(&mut self) {
        if self.has() {
            *self.slot = None;
        }
    }
    fn text(&self) -> String {
        self.slot
            .as_ref()
            .and_then(self.get)
            .cloned()
            .unwrap_or_default()
            .text()
    }
}

/// A `Vec<T>` field of scalars, strings or bytes.
struct Rep<'m, T>(&'m mut Vec<T>);

impl<T: PyScalar> RepeatedCell for Rep<'_, T> {
    fn len(&self) -> usize {
        self.0.len()
    }
    fn get(&self, py: Python<'_>, index: usize) -> PyResult<Py<PyAny>> {
        self.0[index].to_py(py)
    }
    fn converter(&self) -> Convert {
        convert::<T>
    }
    fn set(&mut self, index: usize, value: Value) -> PyResult<()> {
        self.0[index] = value.into()?;
        Ok(())
    }
    fn insert(&mut self, index: usize, value: Value) -> PyResult<()> {
        self.0.insert(index, value.into()?);
        Ok(())
    }
    fn remove(&mut self, index: usize) {
        self.0.remove(index);
    }
    fn clear(&mut self) {
        self.0.clear();
    }
    fn text(&self, index: usize) -> String {
        self.0[index].text()
    }
    fn permute(&mut self, order: &[usize]) {
        permute(self.0, order);
    }
}

/// A type that `reflect!` describes, with its protobuf name known statically.
pub trait Named: Reflect + Default + Clone {
    const NAME: &'static str;
}

/// An `Option<M>` message field, or an `Option<Box<M>>` one (the recursive fields):
/// `H` is how the field holds its message.
struct OptMsg<'m, H, M>(&'m mut Option<H>, PhantomData<M>);

impl<'m, H: BorrowMut<M> + Default, M: Named> MessageCell<'m> for OptMsg<'m, H, M> {
    fn has(&mut self) -> bool {
        self.0.is_some()
    }
    fn clear(&mut self) {
        *self.0 = None;
    }
    fn elem_name(&self) -> &'static str {
        M::NAME
    }
    fn into_mut(self: Box<Self>, create: bool) -> Option<&'m mut dyn Reflect> {
        let held = if create {
            Some(self.0.get_or_insert_with(H::default))
        } else {
            self.0.as_mut()
        };
        held.map(|h| h.borrow_mut() as &mut dyn Reflect)
    }
}

/// A member of a oneof holding a message.
struct OneofMsg<'m, O, M> {
    slot: &'m mut Option<O>,
    get: fn(&mut O) -> Option<&mut M>,
    make: fn(M) -> O,
}

impl<'m, O, M: Named> MessageCell<'m> for OneofMsg<'m, O, M> {
    fn has(&mut self) -> bool {
        self.slot.as_mut().and_then(self.get).is_some()
    }
    fn clear(&mut self) {
        if self.has() {
            *self.slot = None;
        }
    }
    fn elem_name(&self) -> &'static str {
        M::NAME
    }
    fn into_mut(self: Box<Self>, create: bool) -> Option<&'m mut dyn Reflect> {
        let OneofMsg { slot, get, make } = *self;
        let present = slot.as_mut().and_then(get).is_some();
        if !present {
            if !create {
                return None;
            }
            *slot = Some(make(M::default()));
        }
        slot.as_mut().and_then(get).map(|m| m as &mut dyn Reflect)
    }
}

/// A `Vec<M>` message field.
struct RepMsg<'m, M>(&'m mut Vec<M>);

impl<'m, M: Named> RepeatedMessageCell<'m> for RepMsg<'m, M> {
    fn len(&self) -> usize {
        self.0.len()
    }
    fn elem_name(&self) -> &'static str {
        M::NAME
    }
    fn insert(&mut self, index: usize, value: Option<&dyn Reflect>) -> bool {
        let m = match value {
            None => M::default(),
            Some(v) => match v.as_any().downcast_ref::<M>() {
                Some(m) => m.clone(),
                None => return false,
            },
        };
        self.0.insert(index, m);
        true
    }
    fn remove(&mut self, index: usize) {
        self.0.remove(index);
    }
    fn clear(&mut self) {
        self.0.clear();
    }
    fn into_mut(self: Box<Self>, index: usize) -> Option<&'m mut dyn Reflect> {
        self.0.get_mut(index).map(|m| m as &mut dyn Reflect)
    }
    fn reborrow(&mut self, index: usize) -> Option<&mut dyn Reflect> {
        self.0.get_mut(index).map(|m| m as &mut dyn Reflect)
    }
    fn take(&mut self, index: usize) -> Option<Box<dyn Reflect>> {
        let m = self.0.get_mut(index)?;
        Some(Box::new(std::mem::take(m)))
    }
    fn permute(&mut self, order: &[usize]) {
        permute(self.0, order);
    }
}

/// Moves the element at `order[k]` of `list` to `k`; `order` is a permutation of the
/// indices (the caller checked it), so every element moves once and none is copied.
fn permute<T>(list: &mut Vec<T>, order: &[usize]) {
    let mut old: Vec<Option<T>> = list.drain(..).map(Some).collect();
    list.extend(order.iter().filter_map(|&i| old[i].take()));
}

fn opt<'m, T: PyScalar + 'm>(f: &'m mut Option<T>) -> Slot<'m> {
    Slot::Single(Box::new(Opt(f)))
}
fn rep<'m, T: PyScalar + 'm>(f: &'m mut Vec<T>) -> Slot<'m> {
    Slot::Repeated(Box::new(Rep(f)))
}
fn msg<'m, M: Named>(f: &'m mut Option<M>) -> Slot<'m> {
    Slot::Message(Box::new(OptMsg::<M, M>(f, PhantomData)))
}
fn bmsg<'m, M: Named>(f: &'m mut Option<Box<M>>) -> Slot<'m> {
    Slot::Message(Box::new(OptMsg::<Box<M>, M>(f, PhantomData)))
}
fn rmsg<'m, M: Named>(f: &'m mut Vec<M>) -> Slot<'m> {
    Slot::RepeatedMessage(Box::new(RepMsg(f)))
}

/// Implements `Reflect` and `Named` for a message type from its field list, and
/// `new_message` / `MESSAGE_NAMES` over all of them.
macro_rules! reflect {
    ($( $ty:ident { $($name:literal => $kind:ident($($field:tt)+)),* $(,)? } )*) => {
        $(
            impl Named for $ty<'static> {
                const NAME: &'static str = <$ty<'static> as Message>::DESCRIPTOR.name;
            }
            impl Reflect for $ty<'static> {
                fn proto_name(&self) -> &'static str {
                    <Self as Named>::NAME
                }
                fn slot(&mut self, name: &str) -> Option<Slot<'_>> {
                    #[allow(unreachable_patterns)]
                    match name {
                        $($name => Some(reflect!(@slot self, $kind, $($field)+)),)*
                        _ => custom_slot(self as &mut dyn Any, name),
                    }
                }
                fn sub(&mut self, name: &str, index: Option<usize>, create: bool) -> Sub<'_> {
                    #[allow(unreachable_patterns)]
                    match name {
                        $($name => reflect!(@sub self, index, create, $kind, $($field)+),)*
                        _ => sub_by_slot(self, name, index, create),
                    }
                }
                fn list_len(&mut self, name: &str) -> Option<usize> {
                    #[allow(unreachable_patterns)]
                    match name {
                        $($name => reflect!(@len self, $kind, $($field)+),)*
                        _ => None,
                    }
                }
                fn encode(&self) -> onnx_light::Result<Vec<u8>> {
                    self.encode_to_vec()
                }
                fn byte_size(&self) -> u64 {
                    self.encoded_len()
                }
                fn decode_into(
                    &mut self,
                    bytes: &[u8],
                    recursion_limit: u32,
                ) -> onnx_light::Result<()> {
                    let options = DecodeOptions {
                        recursion_limit,
                        ..DecodeOptions::default()
                    };
                    *self = <$ty<'static>>::decode_owned_with(bytes, &options)?;
                    Ok(())
                }
                fn clear(&mut self) {
                    *self = Default::default();
                }
                fn boxed_clone(&self) -> Box<dyn Reflect> {
                    Box::new(self.clone())
                }
                fn eq_dyn(&self, other: &dyn Reflect) -> bool {
                    other.as_any().downcast_ref::<Self>() == Some(self)
                }
                fn assign(&mut self, other: &dyn Reflect) -> bool {
                    match other.as_any().downcast_ref::<Self>() {
                        Some(o) => {
                            *self = o.clone();
                            true
                        }
                        None => false,
                    }
                }
                fn as_any(&self) -> &dyn Any {
                    self
                }
                fn as_any_mut(&mut self) -> &mut dyn Any {
                    self
                }
            }
        )*

        /// A new empty message of the type with protobuf name `name`.
        pub fn new_message(name: &str) -> Option<Box<dyn Reflect>> {
            $(
                if name == <$ty<'static> as Named>::NAME {
                    return Some(Box::new(<$ty<'static>>::default()));
                }
            )*
            None
        }

        /// The protobuf names of every message type.
        pub fn message_names() -> Vec<&'static str> {
            vec![$(<$ty<'static> as Named>::NAME),*]
        }

        /// The descriptor of the type with protobuf name `name`.
        pub fn descriptor(name: &str) -> Option<&'static onnx_light::MessageDescriptor> {
            $(
                if name == <$ty<'static> as Named>::NAME {
                    return Some(<$ty<'static> as Message>::DESCRIPTOR);
                }
            )*
            None
        }
    };
    (@slot $s:ident, $kind:ident, $field:ident) => { $kind(&mut $s.$field) };
    (@sub $s:ident, $i:ident, $c:ident, msg, $field:ident) => { sub_of(&mut $s.$field, $i, $c) };
    (@sub $s:ident, $i:ident, $c:ident, bmsg, $field:ident) => { sub_boxed(&mut $s.$field, $i, $c) };
    (@sub $s:ident, $i:ident, $c:ident, rmsg, $field:ident) => { sub_in(&mut $s.$field, $i) };
    (@sub $s:ident, $i:ident, $c:ident, $kind:ident, $field:ident) => { Sub::NotMessage };
    (@len $s:ident, rmsg, $field:ident) => { Some($s.$field.len()) };
    (@len $s:ident, rep, $field:ident) => { Some($s.$field.len()) };
    (@len $s:ident, $kind:ident, $field:ident) => { None };
}

/// The cell of a oneof member holding a scalar (`$variant` wraps it).
macro_rules! oneof_scalar {
    ($slot:expr, $variant:path) => {
        Slot::Single(Box::new(OneofScalar {
            slot: $slot,
            get: |o| match o {
                $variant(v) => Some(v),
                _ => None,
            },
            make: $variant,
        }))
    };
}

/// The cell of a oneof member holding a message (`boxed` when the variant boxes it).
macro_rules! oneof_msg {
    ($slot:expr, $variant:path) => {
        Box::new(OneofMsg {
            slot: $slot,
            get: |o| match o {
                $variant(m) => Some(m),
                _ => None,
            },
            make: $variant,
        })
    };
    ($slot:expr, $variant:path, boxed) => {
        Box::new(OneofMsg {
            slot: $slot,
            get: |o| match o {
                $variant(m) => Some(&mut **m),
                _ => None,
            },
            make: |m| $variant(Box::new(m)),
        })
    };
}

/// The oneof members, reached through their enum.
fn custom_slot<'m>(msg: &'m mut dyn Any, name: &str) -> Option<Slot<'m>> {
    // `is` before `downcast_mut`: a failed mutable downcast would keep `msg` borrowed.
    if msg.is::<Dimension<'static>>() {
        let d = msg.downcast_mut::<Dimension<'static>>()?;
        return match name {
            "dim_value" => Some(oneof_scalar!(&mut d.value, DimensionValue::DimValue)),
            "dim_param" => Some(oneof_scalar!(&mut d.value, DimensionValue::DimParam)),
            _ => None,
        };
    }
    if msg.is::<SimpleShardedDimProto<'static>>() {
        let d = msg.downcast_mut::<SimpleShardedDimProto<'static>>()?;
        return match name {
            "dim_value" => Some(oneof_scalar!(&mut d.dim, SimpleShardedDim::DimValue)),
            "dim_param" => Some(oneof_scalar!(&mut d.dim, SimpleShardedDim::DimParam)),
            _ => None,
        };
    }
    let t = msg.downcast_mut::<TypeProto<'static>>()?;
    let slot = &mut t.value;
    Some(Slot::Message(match name {
        "tensor_type" => oneof_msg!(slot, TypeValue::TensorType),
        "sequence_type" => oneof_msg!(slot, TypeValue::SequenceType, boxed),
        "map_type" => oneof_msg!(slot, TypeValue::MapType, boxed),
        "opaque_type" => oneof_msg!(slot, TypeValue::OpaqueType),
        "sparse_tensor_type" => oneof_msg!(slot, TypeValue::SparseTensorType),
        "optional_type" => oneof_msg!(slot, TypeValue::OptionalType, boxed),
        _ => return None,
    }))
}

reflect! {
    ModelProto {
        "ir_version" => opt(ir_version), "producer_name" => opt(producer_name),
        "producer_version" => opt(producer_version), "domain" => opt(domain),
        "model_version" => opt(model_version), "doc_string" => opt(doc_string),
        "graph" => msg(graph), "opset_import" => rmsg(opset_import),
        "metadata_props" => rmsg(metadata_props), "training_info" => rmsg(training_info),
        "functions" => rmsg(functions), "configuration" => rmsg(configuration),
    }
    GraphProto {
        "node" => rmsg(node), "name" => opt(name), "initializer" => rmsg(initializer),
        "doc_string" => opt(doc_string), "input" => rmsg(input), "output" => rmsg(output),
        "value_info" => rmsg(value_info), "quantization_annotation" => rmsg(quantization_annotation),
        "sparse_initializer" => rmsg(sparse_initializer), "metadata_props" => rmsg(metadata_props),
    }
    NodeProto {
        "input" => rep(input), "output" => rep(output), "name" => opt(name),
        "op_type" => opt(op_type), "attribute" => rmsg(attribute), "doc_string" => opt(doc_string),
        "domain" => opt(domain), "overload" => opt(overload), "metadata_props" => rmsg(metadata_props),
        "device_configurations" => rmsg(device_configurations),
    }
    ValueInfoProto {
        "name" => opt(name), "type" => msg(r#type), "doc_string" => opt(doc_string),
        "metadata_props" => rmsg(metadata_props),
    }
    TensorAnnotation {
        "tensor_name" => opt(tensor_name),
        "quant_parameter_tensor_names" => rmsg(quant_parameter_tensor_names),
    }
    IntIntListEntryProto { "key" => opt(key), "value" => rep(value) }
    NodeDeviceConfigurationProto {
        "configuration_id" => opt(configuration_id), "sharding_spec" => rmsg(sharding_spec),
        "pipeline_stage" => opt(pipeline_stage),
    }
    ShardingSpecProto {
        "tensor_name" => opt(tensor_name), "device" => rep(device),
        "index_to_device_group_map" => rmsg(index_to_device_group_map),
        "sharded_dim" => rmsg(sharded_dim),
    }
    ShardedDimProto { "axis" => opt(axis), "simple_sharding" => rmsg(simple_sharding) }
    SimpleShardedDimProto { "num_shards" => opt(num_shards) }
    AttributeProto {
        "name" => opt(name), "f" => opt(f), "i" => opt(i), "s" => opt(s), "t" => bmsg(t),
        "g" => bmsg(g), "floats" => rep(floats), "ints" => rep(ints), "strings" => rep(strings),
        "tensors" => rmsg(tensors), "graphs" => rmsg(graphs), "doc_string" => opt(doc_string),
        "tp" => bmsg(tp), "type_protos" => rmsg(type_protos), "type" => opt(r#type),
        "ref_attr_name" => opt(ref_attr_name), "sparse_tensor" => bmsg(sparse_tensor),
        "sparse_tensors" => rmsg(sparse_tensors),
    }
    TrainingInfoProto {
        "initialization" => msg(initialization), "algorithm" => msg(algorithm),
        "initialization_binding" => rmsg(initialization_binding),
        "update_binding" => rmsg(update_binding),
    }
    DeviceConfigurationProto {
        "name" => opt(name), "num_devices" => opt(num_devices), "device" => rep(device),
    }
    StringStringEntryProto { "key" => opt(key), "value" => opt(value) }
    OperatorSetIdProto { "domain" => opt(domain), "version" => opt(version) }
    FunctionProto {
        "name" => opt(name), "input" => rep(input), "output" => rep(output),
        "attribute" => rep(attribute), "node" => rmsg(node), "doc_string" => opt(doc_string),
        "opset_import" => rmsg(opset_import), "domain" => opt(domain),
        "attribute_proto" => rmsg(attribute_proto), "value_info" => rmsg(value_info),
        "overload" => opt(overload), "metadata_props" => rmsg(metadata_props),
    }
    TensorProto {
        "dims" => rep(dims), "data_type" => opt(data_type), "segment" => msg(segment),
        "float_data" => rep(float_data), "int32_data" => rep(int32_data),
        "string_data" => rep(string_data), "int64_data" => rep(int64_data), "name" => opt(name),
        "raw_data" => opt(raw_data), "double_data" => rep(double_data),
        "uint64_data" => rep(uint64_data), "doc_string" => opt(doc_string),
        "external_data" => rmsg(external_data), "data_location" => opt(data_location),
        "metadata_props" => rmsg(metadata_props),
    }
    Segment { "begin" => opt(begin), "end" => opt(end) }
    SparseTensorProto { "values" => msg(values), "indices" => msg(indices), "dims" => rep(dims) }
    TensorShapeProto { "dim" => rmsg(dim) }
    Dimension { "denotation" => opt(denotation) }
    TypeProto { "denotation" => opt(denotation) }
    TypeProtoTensor { "elem_type" => opt(elem_type_raw), "shape" => msg(shape) }
    TypeProtoSequence { "elem_type" => bmsg(elem_type) }
    TypeProtoMap { "key_type" => opt(key_type_raw), "value_type" => bmsg(value_type) }
    TypeProtoOptional { "elem_type" => bmsg(elem_type) }
    TypeProtoSparseTensor { "elem_type" => opt(elem_type_raw), "shape" => msg(shape) }
    TypeProtoOpaque { "domain" => opt(domain), "name" => opt(name) }
    SequenceProto {
        "name" => opt(name), "elem_type" => opt(elem_type_raw),
        "tensor_values" => rmsg(tensor_values), "sparse_tensor_values" => rmsg(sparse_tensor_values),
        "sequence_values" => rmsg(sequence_values), "map_values" => rmsg(map_values),
        "optional_values" => rmsg(optional_values),
    }
    MapProto {
        "name" => opt(name), "key_type" => opt(key_type_raw), "keys" => rep(keys),
        "string_keys" => rep(string_keys), "values" => bmsg(values),
    }
    OptionalProto {
        "name" => opt(name), "elem_type" => opt(elem_type_raw), "tensor_value" => msg(tensor_value),
        "sparse_tensor_value" => msg(sparse_tensor_value), "sequence_value" => bmsg(sequence_value),
        "map_value" => bmsg(map_value), "optional_value" => bmsg(optional_value),
    }
    OperatorProto {
        "op_type" => opt(op_type), "since_version" => opt(since_version), "status" => opt(status),
        "doc_string" => opt(doc_string),
    }
    OperatorSetProto {
        "magic" => opt(magic), "ir_version" => opt(ir_version),
        "ir_version_prerelease" => opt(ir_version_prerelease), "domain" => opt(domain),
        "opset_version" => opt(opset_version), "doc_string" => opt(doc_string),
        "ir_build_metadata" => opt(ir_build_metadata), "operator" => rmsg(operator),
        "functions" => rmsg(functions),
    }
}
