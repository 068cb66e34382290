//! The Python message objects: a `Message` is a strong reference to a shared root (the
//! top-level Rust message behind a mutex) plus the path from that root to the message it
//! stands for. Reads and writes lock the root and walk the path, so a view can never
//! dangle: if the model object is dropped the view keeps the root alive. A view whose
//! path goes through a list element follows that element as protobuf's objects do: when
//! the list changes, the views of later elements shift, and the view of a removed element
//! (or of one inside it) takes the element with it, as a message of its own.
//! `docs/design/python-views.md` explains the choice.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, Weak};

use pyo3::exceptions::{
    PyAttributeError, PyIndexError, PyRecursionError, PyRuntimeError, PyTypeError, PyValueError,
};
use pyo3::prelude::*;
use pyo3::sync::MutexExt;
use pyo3::types::{PyBytes, PyDict, PyList, PyRange, PySlice, PyTuple, PyType};

use crate::errors::{to_py_err, Failure};
use crate::reflect::{
    descriptor, height, message_names, new_message, Convert, Named, Reflect, RepeatedMessageCell,
    Slot, Sub, Value, MAX_NESTING,
};
use crate::text::format_message;
use onnx_light::io;
use onnx_light::onnx::{GraphProto, Model, TensorProto};

/// The top-level message that views point into.
pub struct Root {
    msg: Mutex<Box<dyn Reflect>>,
    /// Set for a model loaded structure-only until its weights are read: the first
    /// operation that needs tensor bytes fetches them all ([`ViewRef::fetch_weights`]).
    weights_on_disk: AtomicBool,
    /// The places of live views whose path goes through a list element, for moving them
    /// when that list changes (dead ones are dropped at the next change).
    tracked: Mutex<Tracked>,
}

/// The tracked places of a root. Views die without telling their root, so dead entries
/// are dropped whenever the list has doubled since the last sweep.
#[derive(Default)]
struct Tracked {
    places: Vec<Weak<Mutex<Place>>>,
    sweep_at: usize,
}

impl Tracked {
    fn push(&mut self, place: Weak<Mutex<Place>>) {
        self.places.push(place);
        if self.places.len() >= self.sweep_at {
            self.places.retain(|w| w.strong_count() > 0);
            self.sweep_at = (2 * self.places.len()).max(1024);
        }
    }
}

/// Locks `m`; a poisoned lock (a panic while it was held) still holds valid data: every
/// mutation here leaves it well-formed at each step.
fn lock<T: ?Sized>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Root {
    pub fn new(msg: Box<dyn Reflect>) -> Arc<Root> {
        Arc::new(Root {
            msg: Mutex::new(msg),
            weights_on_disk: AtomicBool::new(false),
            tracked: Mutex::new(Tracked::default()),
        })
    }

    /// Locks the root message, from a section detached from Python (GIL released).
    pub fn lock(&self) -> MutexGuard<'_, Box<dyn Reflect>> {
        lock(&self.msg)
    }

    /// Locks the root message from code attached to Python: the GIL is released while
    /// waiting, so that the thread holding the lock can take the GIL to finish (a lock
    /// taken while holding the GIL would deadlock against it).
    pub fn lock_attached(&self) -> MutexGuard<'_, Box<dyn Reflect>> {
        match self.msg.try_lock() {
            Ok(guard) => guard,
            Err(std::sync::TryLockError::Poisoned(e)) => e.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => {
                Python::attach(|py| self.msg.lock_py_attached(py))
                    .unwrap_or_else(|e| e.into_inner())
            }
        }
    }

    /// Before the list `field` of the message at `owner` changes: views of elements that
    /// go away take their element along (each becomes a root of its own, shared by every
    /// view into it), and views of elements after an insertion or removal shift.
    /// `list` is that field, borrowed from the message the caller has locked.
    fn relocate(
        self: &Arc<Self>,
        list: &mut dyn RepeatedMessageCell<'_>,
        owner: &[Step],
        field: &'static str,
        change: Change<'_>,
    ) {
        let mut tracked = lock(&self.tracked);
        let mut detached: Vec<(usize, Arc<Root>)> = Vec::new();
        let mut keep = Vec::with_capacity(tracked.places.len());
        for weak in tracked.places.drain(..) {
            let Some(place) = weak.upgrade() else {
                continue;
            };
            let mut p = lock(&place);
            let d = owner.len();
            let j = match p.path.get(d) {
                Some(&Step::Index(f, j)) if f == field && p.path[..d] == *owner => j,
                _ => {
                    drop(p);
                    keep.push(weak);
                    continue;
                }
            };
            let moved = match change {
                Change::Insert(i) if j >= i => Some(j + 1),
                Change::Remove(i) if j > i => Some(j - 1),
                Change::Remove(i) if j == i => None,
                Change::Clear => None,
                Change::Permute(new_index) => new_index.get(j).copied(),
                _ => Some(j),
            };
            if let Some(k) = moved {
                if k != j {
                    let mut path = p.path.to_vec();
                    path[d] = Step::Index(field, k);
                    p.path = path.into();
                }
                drop(p);
                keep.push(weak);
                continue;
            }
            // The element goes away: the view moves into it, now a root of its own.
            let root = match detached.iter().find(|(k, _)| *k == j) {
                Some((_, r)) => r.clone(),
                None => {
                    let Some(elem) = list.take(j) else {
                        drop(p);
                        keep.push(weak);
                        continue;
                    };
                    let r = Root::new(elem);
                    detached.push((j, r.clone()));
                    r
                }
            };
            let rest = p.path[d + 1..].into();
            p.move_to(root, rest, weak);
        }
        tracked.sweep_at = (2 * keep.len()).max(1024);
        tracked.places = keep;
    }

    /// Before the message at `at` (borrowed as `m`) is cleared or replaced as a whole:
    /// every view inside one of its list elements takes that element along, as in
    /// [`Root::relocate`]. Views of its singular sub-messages stay where they are.
    fn detach_under(self: &Arc<Self>, m: &mut dyn Reflect, at: &[Step]) {
        let mut tracked = lock(&self.tracked);
        let mut detached: Vec<(Vec<Step>, Arc<Root>)> = Vec::new();
        let mut keep = Vec::with_capacity(tracked.places.len());
        for weak in tracked.places.drain(..) {
            let Some(place) = weak.upgrade() else {
                continue;
            };
            let mut p = lock(&place);
            let d = at.len();
            let first_index = p
                .path
                .iter()
                .skip(d)
                .position(|s| matches!(s, Step::Index(..)));
            let k = match first_index {
                Some(k) if p.path.len() > d && p.path[..d] == *at => d + k,
                _ => {
                    drop(p);
                    keep.push(weak);
                    continue;
                }
            };
            let key = &p.path[..=k];
            let root = match detached.iter().find(|(prefix, _)| prefix[..] == *key) {
                Some((_, r)) => r.clone(),
                None => {
                    let Step::Index(field, j) = p.path[k] else {
                        unreachable!("found as an index step")
                    };
                    let taken = match navigate(m, &p.path[d..k], false) {
                        Ok(Some(owner)) => match owner.slot(field) {
                            Some(Slot::RepeatedMessage(mut c)) => c.take(j),
                            _ => None,
                        },
                        _ => None,
                    };
                    let Some(elem) = taken else {
                        drop(p);
                        keep.push(weak);
                        continue;
                    };
                    let r = Root::new(elem);
                    detached.push((key.to_vec(), r.clone()));
                    r
                }
            };
            let rest = p.path[k + 1..].into();
            p.move_to(root, rest, weak);
        }
        tracked.sweep_at = (2 * keep.len()).max(1024);
        tracked.places = keep;
    }

    /// Whether a live view points inside a list element below `at`.
    fn tracks_under(&self, at: &[Step]) -> bool {
        lock(&self.tracked).places.iter().any(|w| {
            w.upgrade().is_some_and(|p| {
                let p = lock(&p);
                p.path.len() > at.len() && p.path[..at.len()] == *at
            })
        })
    }

    fn track(&self, place: &Arc<Mutex<Place>>) {
        lock(&self.tracked).push(Arc::downgrade(place));
    }
}

/// How a list changes, for [`Root::relocate`].
#[derive(Clone, Copy)]
enum Change<'a> {
    Insert(usize),
    Remove(usize),
    Clear,
    /// The element at index `i` moves to `new_index[i]`.
    Permute(&'a [usize]),
}

/// Where a view points: a root and the path from it.
pub struct Place {
    root: Arc<Root>,
    path: Arc<[Step]>,
}

impl Place {
    /// Points this place (known to its old root as `weak`) at `path` in `root`, tracked
    /// there when the path still goes through a list element.
    fn move_to(&mut self, root: Arc<Root>, path: Arc<[Step]>, weak: Weak<Mutex<Place>>) {
        if path.iter().any(|s| matches!(s, Step::Index(..))) {
            lock(&root.tracked).push(weak);
        }
        self.root = root;
        self.path = path;
    }
}

/// [`ViewRef::locked`] on a place, without a handle of its own. The root is locked
/// before the place is read again (the order every change takes: root, then places), so
/// the path read under both locks is the one a change would have left.
fn locked_place<R>(
    place: &Mutex<Place>,
    attached: bool,
    f: impl FnOnce(&mut dyn Reflect, &Arc<Root>, &Arc<[Step]>) -> R,
) -> R {
    loop {
        let root = lock(place).root.clone();
        let mut guard = if attached {
            root.lock_attached()
        } else {
            root.lock()
        };
        let path = {
            let p = lock(place);
            Arc::ptr_eq(&p.root, &root).then(|| p.path.clone())
        };
        if let Some(path) = path {
            return f(&mut **guard, &root, &path);
        }
    }
}

/// A handle on a view's place that can cross into code detached from Python.
#[derive(Clone)]
pub struct ViewRef(Arc<Mutex<Place>>);

impl ViewRef {
    /// Locks the root this view points into and runs `f` on the root message, with the
    /// root and the path. The place is read again once the lock is held: a change made
    /// under the lock (a parse replacing a list, say) may have moved the view meanwhile,
    /// and a write must land where a read would look. `attached`: the caller holds the
    /// GIL (it is released while waiting).
    pub fn locked<R>(
        &self,
        attached: bool,
        f: impl FnOnce(&mut dyn Reflect, &Arc<Root>, &Arc<[Step]>) -> R,
    ) -> R {
        locked_place(&self.0, attached, f)
    }

    /// Reads the weights a structure-only load left on disk into the model, if it has not
    /// been done: before an operation on tensor bytes or whole messages (serializing,
    /// comparing, copying, printing), so that none sees a tensor without its data.
    /// Reading the structure (names, nodes, shapes) never fetches them.
    pub fn fetch_weights(&self, attached: bool) -> PyResult<()> {
        let root = lock(&self.0).root.clone();
        if !root.weights_on_disk.load(Ordering::Acquire) {
            return Ok(());
        }
        let fetch = || -> onnx_light::Result<()> {
            let mut guard = root.lock();
            if root.weights_on_disk.load(Ordering::Acquire) {
                if let Some(model) = guard.as_any_mut().downcast_mut::<Model>() {
                    io::materialize_lazy_data(model)?;
                } else if let Some(graph) = guard.as_any_mut().downcast_mut::<GraphProto<'static>>()
                {
                    materialize_graph(graph)?;
                }
                root.weights_on_disk.store(false, Ordering::Release);
            }
            Ok(())
        };
        let done = match attached {
            true => Python::attach(|py| py.detach(fetch)),
            false => fetch(),
        };
        done.map_err(to_py_err)
    }

    /// Runs `f` on the message the view stands for, or on `None` when it is unset (and
    /// not created). Detached from Python: the caller released the GIL.
    pub fn with_detached<R>(
        &self,
        create: bool,
        f: impl FnOnce(Option<&mut dyn Reflect>) -> Result<R, Failure>,
    ) -> Result<R, Failure> {
        self.locked(false, |msg, _, path| f(navigate(msg, path, create)?))
    }
}

/// Whether a walk over tensors (`visit` calls its argument on each) meets one whose
/// payload is still on disk.
fn holds_lazy(visit: impl FnOnce(&mut dyn FnMut(&TensorProto<'static>))) -> bool {
    let mut found = false;
    visit(&mut |t| found |= t.raw_data.is_none() && t.lazy_data.is_some());
    found
}

/// Reads into `graph` every payload a structure-only load left on disk.
fn materialize_graph(graph: &mut GraphProto<'static>) -> onnx_light::Result<()> {
    let mut failed = None;
    graph.visit_tensors_mut(|_, t| {
        if failed.is_some() {
            return;
        }
        if let Some(lazy) = &t.lazy_data {
            match lazy.fetch() {
                Ok(bytes) => {
                    t.raw_data = Some(bytes);
                    t.lazy_data = None;
                }
                Err(e) => failed = Some(e.in_tensor(t.name())),
            }
        }
    });
    failed.map_or(Ok(()), Err)
}

/// One step from a message to a sub-message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// A singular message field.
    Field(&'static str),
    /// Element `index` of a repeated message field.
    Index(&'static str, usize),
}

/// Follows `path` from `msg`. With `create`, unset singular sub-messages on the way are
/// created (a write through a view sets its parents, as in protobuf); without it, an
/// unset one gives `Ok(None)`. A removed element gives `IndexError`.
pub fn navigate<'m>(
    mut msg: &'m mut dyn Reflect,
    path: &[Step],
    create: bool,
) -> PyResult<Option<&'m mut dyn Reflect>> {
    for step in path {
        let (name, index) = match *step {
            Step::Field(name) => (name, None),
            Step::Index(name, i) => (name, Some(i)),
        };
        msg = match msg.sub(name, index, create) {
            Sub::Found(m) => m,
            Sub::Unset => return Ok(None),
            Sub::NoElement => {
                return Err(PyIndexError::new_err(format!(
                    "this message was element {} of `{name}`, which no longer exists",
                    index.unwrap_or_default()
                )))
            }
            Sub::NotMessage => {
                return Err(PyValueError::new_err(format!(
                    "bad message path at `{name}`"
                )))
            }
        };
    }
    Ok(Some(msg))
}

/// The levels of messages a decode may create below a message at `path`.
fn nesting_room(path: &[Step]) -> u32 {
    MAX_NESTING.saturating_sub(path.len()) as u32
}

/// The base class of every ONNX message class.
#[pyclass(
    subclass,
    module = "onnx_light.onnx",
    name = "Message",
    weakref,
    frozen
)]
pub struct PyMessage {
    place: Arc<Mutex<Place>>,
    pub name: &'static str,
}

impl PyMessage {
    /// A new, empty root message of type `name`.
    pub fn new_root(name: &str) -> PyResult<PyMessage> {
        let msg = new_message(name)
            .ok_or_else(|| PyTypeError::new_err(format!("unknown message type {name}")))?;
        Ok(PyMessage::from_box(msg))
    }

    /// A root message holding `msg`.
    pub fn from_box(msg: Box<dyn Reflect>) -> PyMessage {
        let name = msg.proto_name();
        PyMessage::at(Root::new(msg), Arc::from(Vec::new()), name)
    }

    /// A root model whose weights a structure-only load left on disk: they are read at
    /// the first operation that needs them ([`ViewRef::fetch_weights`]).
    pub fn from_structure_only(model: Model) -> PyMessage {
        let root = Root::new(Box::new(model));
        root.weights_on_disk.store(true, Ordering::Release);
        PyMessage::at(root, Arc::from(Vec::new()), <Model as Named>::NAME)
    }

    /// A root holding `msg`, a model or graph made from parts of one a structure-only
    /// load left weights of on disk: they are read at the first operation that needs
    /// them, as for [`from_structure_only`](Self::from_structure_only).
    pub fn from_box_lazy(msg: Box<dyn Reflect>) -> PyMessage {
        let any = msg.as_any();
        let lazy = if let Some(m) = any.downcast_ref::<Model>() {
            holds_lazy(|f| m.visit_tensors(|_, t| f(t)))
        } else if let Some(g) = any.downcast_ref::<GraphProto<'static>>() {
            holds_lazy(|f| g.visit_tensors(|_, t| f(t)))
        } else {
            false
        };
        let name = msg.proto_name();
        let root = Root::new(msg);
        root.weights_on_disk.store(lazy, Ordering::Release);
        PyMessage::at(root, Arc::from(Vec::new()), name)
    }

    /// [`ViewRef::fetch_weights`] for this view, from code attached to Python.
    fn fetch_weights(&self) -> PyResult<()> {
        self.view_ref().fetch_weights(true)
    }

    /// Whether `field` of this message holds tensor bytes a structure-only load may
    /// have left on disk.
    fn holds_weights(&self, field: &str) -> bool {
        self.name == <TensorProto<'static> as Named>::NAME && field == "raw_data"
    }

    /// A view of the message at `path` in `root`, tracked when the path goes through
    /// a list element.
    fn at(root: Arc<Root>, path: Arc<[Step]>, name: &'static str) -> PyMessage {
        let tracked = path.iter().any(|s| matches!(s, Step::Index(..)));
        let place = Arc::new(Mutex::new(Place {
            root: root.clone(),
            path,
        }));
        if tracked {
            root.track(&place);
        }
        PyMessage { place, name }
    }

    /// Another handle on the same place (it moves with this one).
    fn same(&self) -> PyMessage {
        PyMessage {
            place: self.place.clone(),
            name: self.name,
        }
    }

    /// The root and the path this view points at now.
    pub fn locate(&self) -> (Arc<Root>, Arc<[Step]>) {
        let p = lock(&self.place);
        (p.root.clone(), p.path.clone())
    }

    /// A handle on this view's place, for code detached from Python.
    pub fn view_ref(&self) -> ViewRef {
        ViewRef(self.place.clone())
    }

    /// How many messages this view is below its root.
    fn depth(&self) -> usize {
        lock(&self.place).path.len()
    }

    /// Runs `f` on the message this view stands for (created if `create`), or on an
    /// empty message of its type when it is unset and `create` is false.
    pub fn with<R>(
        &self,
        create: bool,
        f: impl FnOnce(&mut dyn Reflect) -> PyResult<R>,
    ) -> PyResult<R> {
        let mut f = Some(f);
        let found = locked_place(&self.place, true, |msg, _, path| {
            Ok::<_, PyErr>(navigate(msg, path, create)?.map(|m| f.take().expect("called once")(m)))
        })?;
        match found {
            Some(r) => r,
            None => {
                let mut empty = new_message(self.name).expect("views have known types");
                f.take().expect("not called")(&mut *empty)
            }
        }
    }

    /// Runs `f` on the message this view stands for (created if unset), with its root
    /// and path, for changes that move other views.
    fn with_place<R>(
        &self,
        f: impl FnOnce(&mut dyn Reflect, &Arc<Root>, &[Step]) -> PyResult<R>,
    ) -> PyResult<R> {
        locked_place(&self.place, true, |msg, root, path| {
            let m = navigate(msg, path, true)?.expect("created");
            f(m, root, path)
        })
    }

    /// Refuses to place a message of `height` levels `below` levels under this view when
    /// the result would nest deeper than [`MAX_NESTING`] (it could not be loaded back,
    /// and recursive walks are only bounded below that depth).
    fn check_nesting(&self, below: usize, height: usize) -> PyResult<()> {
        let depth = self.depth() + below;
        if depth + height > MAX_NESTING {
            return Err(PyRecursionError::new_err(format!(
                "messages nest at most {MAX_NESTING} levels deep (the limit of loading, as in \
                 protobuf): this would put {} levels of messages below depth {depth}",
                height.min(MAX_NESTING + 1)
            )));
        }
        Ok(())
    }

    /// Refuses `value` placed `below` levels under this view when it nests too deep.
    fn check_value_nesting(&self, below: usize, value: &mut dyn Reflect) -> PyResult<()> {
        let room = MAX_NESTING.saturating_sub(self.depth() + below);
        self.check_nesting(below, height(value, room))
    }

    /// A deep copy of the message this view stands for.
    pub fn snapshot(&self) -> PyResult<Box<dyn Reflect>> {
        self.fetch_weights()?;
        self.with(false, |m| Ok(m.boxed_clone()))
    }

    fn field_name(&self, name: &str) -> PyResult<&'static str> {
        descriptor(self.name)
            .and_then(|d| d.field_by_name(name))
            .map(|f| f.name)
            .ok_or_else(|| {
                PyAttributeError::new_err(format!(
                    "{} has no field `{name}`",
                    short_name(self.name)
                ))
            })
    }

    /// The view of a sub-message; none exists deeper than [`MAX_NESTING`].
    fn child(&self, step: Step, name: &'static str) -> PyResult<PyMessage> {
        let (root, base) = self.locate();
        if base.len() + 1 > MAX_NESTING {
            self.check_nesting(1, 0)?;
        }
        let path: Arc<[Step]> = base.iter().copied().chain([step]).collect();
        Ok(PyMessage::at(root, path, name))
    }

    /// Reads field `field` as a Python value (scalars) or a live view (messages and
    /// repeated fields).
    pub fn get(&self, py: Python<'_>, field: &'static str) -> PyResult<Py<PyAny>> {
        enum Got {
            Value(Py<PyAny>),
            Msg(&'static str),
            Repeated(Option<&'static str>),
        }
        if self.holds_weights(field) {
            self.fetch_weights()?;
        }
        let got = self.with(false, |m| match m.slot(field) {
            Some(Slot::Single(c)) => Ok(Got::Value(c.get(py)?)),
            Some(Slot::Message(c)) => Ok(Got::Msg(c.elem_name())),
            Some(Slot::Repeated(_)) => Ok(Got::Repeated(None)),
            Some(Slot::RepeatedMessage(c)) => Ok(Got::Repeated(Some(c.elem_name()))),
            None => Err(PyAttributeError::new_err(field)),
        })?;
        match got {
            Got::Value(v) => Ok(v),
            Got::Msg(name) => wrap(py, self.child(Step::Field(field), name)?),
            Got::Repeated(elem) => Ok(Py::new(
                py,
                PyRepeated {
                    owner: self.same(),
                    field,
                    elem,
                },
            )?
            .into_any()),
        }
    }

    /// Writes field `field`: scalars are converted, messages and sequences copied in.
    pub fn set(&self, field: &'static str, value: &Bound<'_, PyAny>) -> PyResult<()> {
        // Copy message values out first: `value` may be a view of this very root.
        if let Ok(other) = value.cast::<PyMessage>() {
            let mut snap = other.borrow().snapshot()?;
            self.check_value_nesting(1, &mut *snap)?;
            return self.with_place(|m, root, path| match m.slot(field) {
                Some(Slot::Message(c)) => {
                    let target = c.into_mut(true).expect("created");
                    if target.proto_name() == snap.proto_name() {
                        let mut at = path.to_vec();
                        at.push(Step::Field(field));
                        root.detach_under(target, &at);
                    }
                    if target.assign(&*snap) {
                        Ok(())
                    } else {
                        Err(type_mismatch(target.proto_name(), snap.proto_name()))
                    }
                }
                _ => Err(PyTypeError::new_err(format!(
                    "field `{field}` does not hold a message"
                ))),
            });
        }
        // Python values are converted before the model is locked: conversion runs
        // Python code (`__index__`, iterators) that may read this very model.
        match self.field_kind(field)? {
            FieldShape::Repeated | FieldShape::RepeatedMessage => {
                // Protobuf refuses this assignment; accepting it as "replace the
                // contents" is what scripts that try it mean. Every item is converted
                // first, so that a bad one changes nothing.
                let items = collect_items(value)?;
                let items = self.convert_items(field, &items)?;
                self.with_place(|m, root, path| {
                    if let Some(Slot::RepeatedMessage(mut c)) = m.slot(field) {
                        root.relocate(&mut *c, path, field, Change::Clear);
                    }
                    replace_all(m, field, items)
                })
            }
            FieldShape::Single(convert) => {
                let v = convert(value)?;
                self.with(true, |m| match m.slot(field) {
                    Some(Slot::Single(mut c)) => c.set(v),
                    _ => Err(PyAttributeError::new_err(field)),
                })
            }
            FieldShape::Message => Err(PyTypeError::new_err(format!(
                "field `{field}` holds a message; assign a message or use CopyFrom"
            ))),
        }
    }

    /// What field `field` holds, with the converter of its values: the same for every
    /// message of the type, so it is read from an empty one without locking the model.
    fn field_kind(&self, field: &'static str) -> PyResult<FieldShape> {
        static SHAPES: OnceLock<HashMap<(&'static str, &'static str), FieldShape>> =
            OnceLock::new();
        let shapes = SHAPES.get_or_init(|| {
            let mut shapes = HashMap::new();
            for name in message_names() {
                let mut empty = new_message(name).expect("listed");
                for f in descriptor(name).expect("listed").fields {
                    let shape = match empty.slot(f.name) {
                        Some(Slot::Single(c)) => FieldShape::Single(c.converter()),
                        Some(Slot::Repeated(_)) => FieldShape::Repeated,
                        Some(Slot::Message(_)) => FieldShape::Message,
                        Some(Slot::RepeatedMessage(_)) => FieldShape::RepeatedMessage,
                        None => continue,
                    };
                    shapes.insert((name, f.name), shape);
                }
            }
            shapes
        });
        shapes
            .get(&(self.name, field))
            .copied()
            .ok_or_else(|| PyAttributeError::new_err(field))
    }

    /// The items of a sequence written to the repeated field `field`, converted (and
    /// messages copied and checked for nesting) before anything is stored.
    fn convert_items(&self, field: &'static str, items: &[Bound<'_, PyAny>]) -> PyResult<Items> {
        let elem = self.with(false, |m| match m.slot(field) {
            Some(Slot::RepeatedMessage(c)) => Ok(Ok(c.elem_name())),
            Some(Slot::Repeated(c)) => Ok(Err(c.converter())),
            _ => Err(PyAttributeError::new_err(field)),
        })?;
        match elem {
            Ok(elem) => items
                .iter()
                .map(|it| {
                    let mut snap = message_value(it, elem)?;
                    self.check_value_nesting(1, &mut *snap)?;
                    Ok(snap)
                })
                .collect::<PyResult<Vec<_>>>()
                .map(Items::Messages),
            Err(convert) => items
                .iter()
                .map(convert)
                .collect::<PyResult<Vec<_>>>()
                .map(Items::Values),
        }
    }
}

/// What a field holds, as far as writing Python values to it goes.
#[derive(Clone, Copy)]
enum FieldShape {
    Single(Convert),
    Repeated,
    Message,
    RepeatedMessage,
}

/// Items converted for a repeated field, ready to be stored without running Python code.
enum Items {
    Values(Vec<Value>),
    Messages(Vec<Box<dyn Reflect>>),
}

/// Replaces the contents of the repeated field `field` with `items`.
fn replace_all(m: &mut dyn Reflect, field: &'static str, items: Items) -> PyResult<()> {
    match (m.slot(field), items) {
        (Some(Slot::Repeated(mut c)), Items::Values(values)) => {
            c.clear();
            for (i, v) in values.into_iter().enumerate() {
                c.insert(i, v)?;
            }
            Ok(())
        }
        (Some(Slot::RepeatedMessage(mut c)), Items::Messages(elems)) => {
            c.clear();
            for (i, e) in elems.iter().enumerate() {
                c.insert(i, Some(&**e));
            }
            Ok(())
        }
        _ => Err(PyAttributeError::new_err(field)),
    }
}

/// The elements of an iterable, as protobuf takes them: a `str` is a sequence of
/// one-character strings and `bytes` a sequence of ints (`make_node("Relu", "x", "y")`
/// relies on it).
fn collect_items<'py>(value: &Bound<'py, PyAny>) -> PyResult<Vec<Bound<'py, PyAny>>> {
    value.try_iter()?.collect()
}

/// The protobuf name a message of another implementation declares
/// (`type(value).DESCRIPTOR.full_name`, as the `onnx` package's classes do).
fn foreign_proto_name(value: &Bound<'_, PyAny>) -> Option<String> {
    let name = value
        .get_type()
        .getattr("DESCRIPTOR")
        .and_then(|d| d.getattr("full_name"))
        .and_then(|n| n.extract::<String>())
        .ok()?;
    value
        .hasattr("SerializeToString")
        .unwrap_or(false)
        .then_some(name)
}

/// A deep copy of `value`, which must be a message of type `elem`: one of this package's,
/// or of another protobuf implementation (the `onnx` package's), read through its bytes.
fn message_value(value: &Bound<'_, PyAny>, elem: &'static str) -> PyResult<Box<dyn Reflect>> {
    let Ok(msg) = value.cast::<PyMessage>() else {
        let module = value
            .get_type()
            .module()
            .map(|m| m.to_string())
            .unwrap_or_default();
        let class = value
            .get_type()
            .name()
            .map(|n| n.to_string())
            .unwrap_or_default();
        return match foreign_proto_name(value) {
            Some(name) if name == elem => {
                let bytes = value.call_method0("SerializeToString")?;
                let bytes = bytes.cast::<PyBytes>().map_err(|_| {
                    PyTypeError::new_err(format!(
                        "{module}.{class}.SerializeToString did not return bytes"
                    ))
                })?;
                let mut m = new_message(elem).expect("a schema message");
                m.decode_into(bytes.as_bytes(), MAX_NESTING as u32)
                    .map_err(to_py_err)?;
                Ok(m)
            }
            Some(name) => Err(PyTypeError::new_err(format!(
                "expected {}, got {} ({module}.{class})",
                short_name(elem),
                short_name(&name)
            ))),
            None => Err(PyTypeError::new_err(format!(
                "expected {}, got {module}.{class}",
                short_name(elem)
            ))),
        };
    };
    let snap = msg.borrow().snapshot()?;
    if snap.proto_name() != elem {
        return Err(type_mismatch(elem, snap.proto_name()));
    }
    Ok(snap)
}

fn type_mismatch(expected: &str, got: &str) -> PyErr {
    PyTypeError::new_err(format!(
        "expected {}, got {}",
        short_name(expected),
        short_name(got)
    ))
}

/// `onnx.TensorProto.Segment` -> `Segment`.
pub fn short_name(name: &str) -> &str {
    name.rsplit('.').next().unwrap_or(name)
}

#[pymethods]
impl PyMessage {
    #[new]
    #[pyo3(signature = (*_args, **_kwargs))]
    fn py_new(_args: &Bound<'_, PyTuple>, _kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        Err(PyTypeError::new_err(
            "Message is abstract: create a concrete type such as ModelProto()",
        ))
    }

    fn __getattr__(&self, py: Python<'_>, name: &str) -> PyResult<Py<PyAny>> {
        let field = self.field_name(name)?;
        self.get(py, field)
    }

    fn __setattr__(&self, name: &str, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let field = self.field_name(name)?;
        self.set(field, value)
    }

    #[pyo3(name = "HasField")]
    fn has_field(&self, name: &str) -> PyResult<bool> {
        let field = self.field_name(name).map_err(|_| {
            PyValueError::new_err(format!("{} has no field `{name}`", short_name(self.name)))
        })?;
        if self.holds_weights(field) {
            self.fetch_weights()?;
        }
        self.with(false, |m| match m.slot(field) {
            Some(Slot::Single(c)) => Ok(c.has()),
            Some(Slot::Message(mut c)) => Ok(c.has()),
            _ => Err(PyValueError::new_err(format!(
                "HasField: `{field}` is a repeated field"
            ))),
        })
    }

    #[pyo3(name = "ClearField")]
    fn clear_field(&self, name: &str) -> PyResult<()> {
        let field = self.field_name(name).map_err(|_| {
            PyValueError::new_err(format!("{} has no field `{name}`", short_name(self.name)))
        })?;
        self.view_ref().locked(true, |msg, root, path| {
            let Some(m) = navigate(msg, path, false)? else {
                return Ok(()); // an unset message has nothing to clear
            };
            if let Ok(Some(sub)) = navigate(m, &[Step::Field(field)], false) {
                let mut at = path.to_vec();
                at.push(Step::Field(field));
                root.detach_under(sub, &at);
            }
            match m.slot(field) {
                Some(Slot::Single(mut c)) => c.clear(),
                Some(Slot::Message(mut c)) => c.clear(),
                Some(Slot::Repeated(mut c)) => c.clear(),
                Some(Slot::RepeatedMessage(mut c)) => {
                    root.relocate(&mut *c, path, field, Change::Clear);
                    c.clear();
                }
                None => return Err(PyValueError::new_err(field)),
            }
            Ok(())
        })
    }

    #[pyo3(name = "WhichOneof")]
    fn which_oneof(&self, group: &str) -> PyResult<Option<&'static str>> {
        let desc = descriptor(self.name).expect("known type");
        let members: Vec<&'static str> = desc
            .fields
            .iter()
            .filter(|f| f.oneof == Some(group))
            .map(|f| f.name)
            .collect();
        if members.is_empty() {
            return Err(PyValueError::new_err(format!(
                "{} has no oneof `{group}`",
                short_name(self.name)
            )));
        }
        self.with(false, |m| {
            for name in members {
                let set = match m.slot(name) {
                    Some(Slot::Single(c)) => c.has(),
                    Some(Slot::Message(mut c)) => c.has(),
                    _ => false,
                };
                if set {
                    return Ok(Some(name));
                }
            }
            Ok(None)
        })
    }

    #[pyo3(name = "Clear")]
    fn clear(&self) -> PyResult<()> {
        self.view_ref().locked(true, |msg, root, path| {
            if let Some(m) = navigate(msg, path, false)? {
                root.detach_under(m, path);
                m.clear();
            }
            Ok(())
        })
    }

    #[pyo3(name = "CopyFrom")]
    fn copy_from(&self, other: &Bound<'_, PyAny>) -> PyResult<()> {
        let mut snap = message_value(other, self.name)?;
        self.check_value_nesting(0, &mut *snap)?;
        self.with_place(|m, root, path| {
            root.detach_under(m, path);
            m.assign(&*snap);
            Ok(())
        })
    }

    /// Protobuf's merge is the decode of the two encodings one after the other.
    #[pyo3(name = "MergeFrom")]
    fn merge_from(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<()> {
        let mut snap = message_value(other, self.name)?;
        self.check_value_nesting(0, &mut *snap)?;
        let view = self.view_ref();
        let done = py.detach(|| {
            view.locked(false, |msg, _, path| -> Result<(), Failure> {
                let m = navigate(msg, path, true)?.expect("created");
                let mut bytes = m.encode()?;
                bytes.extend_from_slice(&snap.encode()?);
                Ok(m.decode_into(&bytes, nesting_room(path))?)
            })
        });
        Ok(done?)
    }

    #[pyo3(name = "MergeFromString")]
    fn merge_from_string(&self, py: Python<'_>, data: &[u8]) -> PyResult<usize> {
        let view = self.view_ref();
        let len = data.len();
        py.detach(|| {
            view.locked(false, |msg, _, path| -> Result<(), Failure> {
                let m = navigate(msg, path, true)?.expect("created");
                let mut bytes = m.encode()?;
                bytes.extend_from_slice(data);
                Ok(m.decode_into(&bytes, nesting_room(path))?)
            })
        })?;
        Ok(len)
    }

    #[pyo3(name = "SerializeToString")]
    #[pyo3(signature = (**_kwargs))]
    fn serialize_to_string<'py>(
        &self,
        py: Python<'py>,
        _kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let view = self.view_ref();
        view.fetch_weights(true)?;
        let name = self.name;
        let bytes = py.detach(|| {
            view.with_detached(false, |m| {
                Ok(match m {
                    Some(m) => m.encode()?,
                    None => new_message(name).expect("known type").encode()?,
                })
            })
        })?;
        Ok(PyBytes::new(py, &bytes))
    }

    #[pyo3(name = "SerializePartialToString")]
    #[pyo3(signature = (**kwargs))]
    fn serialize_partial_to_string<'py>(
        &self,
        py: Python<'py>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        self.serialize_to_string(py, kwargs)
    }

    #[pyo3(name = "ParseFromString")]
    fn parse_from_string(&self, py: Python<'_>, data: &[u8]) -> PyResult<usize> {
        let view = self.view_ref();
        let len = data.len();
        let name = self.name;
        py.detach(|| {
            view.locked(false, |msg, root, path| -> Result<(), Failure> {
                let m = navigate(msg, path, true)?.expect("created");
                let limit = nesting_room(path);
                if !root.tracks_under(path) {
                    return Ok(m.decode_into(data, limit)?);
                }
                // Views inside the old content keep it: decode aside first, so that a
                // failed parse changes nothing.
                let mut fresh = new_message(name).expect("known type");
                fresh.decode_into(data, limit)?;
                root.detach_under(m, path);
                m.assign(&*fresh);
                Ok(())
            })
        })?;
        Ok(len)
    }

    #[classmethod]
    #[pyo3(name = "FromString")]
    fn from_string<'py>(cls: &Bound<'py, PyType>, data: &[u8]) -> PyResult<Bound<'py, PyAny>> {
        let obj = cls.call0()?;
        {
            let msg = obj.cast::<PyMessage>()?.borrow();
            msg.parse_from_string(cls.py(), data)?;
        }
        Ok(obj)
    }

    #[pyo3(name = "ByteSize")]
    fn byte_size(&self) -> PyResult<u64> {
        self.fetch_weights()?;
        self.with(false, |m| Ok(m.byte_size()))
    }

    #[pyo3(name = "IsInitialized")]
    fn is_initialized(&self) -> bool {
        true
    }

    /// The paths of required fields that are not set: none, as the ONNX schema (proto2)
    /// declares no required field.
    #[pyo3(name = "FindInitializationErrors")]
    fn find_initialization_errors(&self) -> Vec<String> {
        Vec::new()
    }

    /// Marks this message as set in its parent (a view of an unset singular field
    /// becomes a set, empty message, and so do the unset messages above it); nothing
    /// for a message that is set or a root.
    #[pyo3(name = "SetInParent")]
    fn set_in_parent(&self) -> PyResult<()> {
        self.with(true, |_| Ok(()))
    }

    /// Drops the unknown fields of this message and of every message in it (fields of
    /// a newer schema, values an enum does not declare), as protobuf's
    /// `DiscardUnknownFields()`. Views of sub-messages stay valid.
    #[pyo3(name = "DiscardUnknownFields")]
    fn discard_unknown_fields(&self, py: Python<'_>) -> PyResult<()> {
        self.fetch_weights()?;
        let view = self.view_ref();
        let name = self.name;
        let done: Result<(), Failure> = py.detach(|| {
            view.locked(false, |msg, _, path| -> Result<(), Failure> {
                let Some(m) = navigate(msg, path, false)? else {
                    return Ok(());
                };
                let desc = descriptor(name).expect("known type");
                let kept = onnx_light::formats::discard_unknown_fields(
                    &m.encode()?,
                    desc,
                    onnx_light::formats::TypeRegistry::onnx(),
                )?;
                Ok(m.decode_into(&kept, nesting_room(path))?)
            })
        });
        Ok(done?)
    }

    /// As with protobuf's upb runtime, which has no accessor for unknown fields:
    /// `NotImplementedError`.
    #[pyo3(name = "UnknownFields")]
    fn unknown_fields(&self) -> PyResult<()> {
        Err(pyo3::exceptions::PyNotImplementedError::new_err(
            "unknown field accessor",
        ))
    }

    #[pyo3(name = "ListFields")]
    fn list_fields(&self, py: Python<'_>) -> PyResult<Vec<(String, Py<PyAny>)>> {
        let desc = descriptor(self.name).expect("known type");
        if self.holds_weights("raw_data") {
            self.fetch_weights()?;
        }
        let mut out = Vec::new();
        for f in desc.fields {
            let set = self.with(false, |m| {
                Ok(match m.slot(f.name) {
                    Some(Slot::Single(c)) => c.has(),
                    Some(Slot::Message(mut c)) => c.has(),
                    Some(Slot::Repeated(c)) => c.len() > 0,
                    Some(Slot::RepeatedMessage(c)) => c.len() > 0,
                    None => false,
                })
            })?;
            if set {
                out.push((f.name.to_string(), self.get(py, f.name)?));
            }
        }
        Ok(out)
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> PyResult<bool> {
        let Ok(other) = other.cast::<PyMessage>() else {
            return Ok(false);
        };
        let snap = other.borrow().snapshot()?;
        self.fetch_weights()?;
        self.with(false, |m| Ok(m.eq_dyn(&*snap)))
    }

    fn __ne__(&self, other: &Bound<'_, PyAny>) -> PyResult<bool> {
        Ok(!self.__eq__(other)?)
    }

    /// protobuf's text format, as `str()` and `repr()` of a protobuf message give it
    /// (`onnx` replaces `repr()` of `ModelProto`, `GraphProto` and `FunctionProto`
    /// with a summary; the package's Python module does the same).
    fn __repr__(&self) -> PyResult<String> {
        self.fetch_weights()?;
        Ok(self.with(false, |m| Ok(format_message(m)))??)
    }

    fn __str__(&self) -> PyResult<String> {
        self.__repr__()
    }

    /// The message type's name, as a protobuf message instance answers `__name__`
    /// (pytest names parameters by it).
    #[getter(__name__)]
    fn type_name(&self) -> &'static str {
        short_name(self.name)
    }

    fn __copy__(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        wrap(py, PyMessage::from_box(self.snapshot()?))
    }

    fn __deepcopy__(&self, py: Python<'_>, _memo: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.__copy__(py)
    }

    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        let py = slf.py();
        let bytes = slf.borrow().serialize_to_string(py, None)?;
        let from_string = slf.get_type().getattr("FromString")?;
        PyTuple::new(
            py,
            [
                from_string.into_any(),
                PyTuple::new(py, [bytes])?.into_any(),
            ],
        )
    }

    /// The protobuf type name, e.g. `onnx.ModelProto`.
    #[getter(_proto_name)]
    fn proto_name(&self) -> &'static str {
        self.name
    }

    /// True when this object is a view into another message (not a root).
    #[getter(_is_view)]
    fn is_view(&self) -> bool {
        !self.locate().1.is_empty()
    }
}

/// A repeated field of a message: a live, list-like view.
#[pyclass(module = "onnx_light.onnx", name = "RepeatedField", sequence, frozen)]
pub struct PyRepeated {
    owner: PyMessage,
    field: &'static str,
    /// The element message type, for repeated message fields.
    elem: Option<&'static str>,
}

impl PyRepeated {
    fn len(&self) -> PyResult<usize> {
        let field = self.field;
        self.owner.with(false, |m| {
            m.list_len(field)
                .ok_or_else(|| PyAttributeError::new_err(field))
        })
    }

    fn index(&self, index: isize, len: usize) -> PyResult<usize> {
        let i = if index < 0 {
            index + len as isize
        } else {
            index
        };
        if i < 0 || i as usize >= len {
            return Err(PyIndexError::new_err(format!(
                "index {index} out of range for `{}` of length {len}",
                self.field
            )));
        }
        Ok(i as usize)
    }

    fn item(&self, py: Python<'_>, i: usize) -> PyResult<Py<PyAny>> {
        match self.elem {
            Some(elem) => wrap(py, self.owner.child(Step::Index(self.field, i), elem)?),
            None => {
                let field = self.field;
                self.owner.with(false, |m| match m.slot(field) {
                    Some(Slot::Repeated(c)) if i < c.len() => c.get(py, i),
                    _ => Err(PyIndexError::new_err(format!("index {i} out of range"))),
                })
            }
        }
    }

    /// The view of element `index` (negative: from the end) of a list of messages, or
    /// `None` past its end: the length is read and the element's place made under one
    /// lock, as iteration and indexing do it for every element.
    fn element(
        &self,
        py: Python<'_>,
        index: isize,
        elem: &'static str,
    ) -> PyResult<Option<Py<PyAny>>> {
        let field = self.field;
        let found = locked_place(&self.owner.place, true, |msg, root, path| {
            let len = match navigate(msg, path, false)? {
                Some(m) => m
                    .list_len(field)
                    .ok_or_else(|| PyAttributeError::new_err(field))?,
                None => 0,
            };
            let i = if index < 0 {
                index + len as isize
            } else {
                index
            };
            if i < 0 || i as usize >= len {
                return Ok::<_, PyErr>(Err(len));
            }
            if path.len() + 1 > MAX_NESTING {
                return Err(PyRecursionError::new_err(format!(
                    "messages nest at most {MAX_NESTING} levels deep"
                )));
            }
            let step = Step::Index(field, i as usize);
            let at: Arc<[Step]> = path.iter().copied().chain([step]).collect();
            Ok(Ok((root.clone(), at)))
        })?;
        match found {
            Ok((root, path)) => Ok(Some(wrap(py, PyMessage::at(root, path, elem))?)),
            Err(_) => Ok(None),
        }
    }

    fn insert_at(&self, index: usize, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let items = self
            .owner
            .convert_items(self.field, std::slice::from_ref(value))?;
        self.insert_items(index, items)
    }

    /// Inserts converted items at `index` (clamped to the length), under one lock.
    fn insert_items(&self, index: usize, items: Items) -> PyResult<()> {
        let field = self.field;
        self.owner
            .with_place(|m, root, path| match (m.slot(field), items) {
                (Some(Slot::RepeatedMessage(mut c)), Items::Messages(elems)) => {
                    let i = index.min(c.len());
                    for (k, e) in elems.iter().enumerate() {
                        if i + k < c.len() {
                            root.relocate(&mut *c, path, field, Change::Insert(i + k));
                        }
                        c.insert(i + k, Some(&**e));
                    }
                    Ok(())
                }
                (Some(Slot::Repeated(mut c)), Items::Values(values)) => {
                    let i = index.min(c.len());
                    for (k, v) in values.into_iter().enumerate() {
                        c.insert(i + k, v)?;
                    }
                    Ok(())
                }
                _ => Err(PyAttributeError::new_err(field)),
            })
    }

    fn remove_at(&self, index: usize) -> PyResult<()> {
        let field = self.field;
        self.owner.with_place(|m, root, path| match m.slot(field) {
            Some(Slot::Repeated(mut c)) if index < c.len() => {
                c.remove(index);
                Ok(())
            }
            Some(Slot::RepeatedMessage(mut c)) if index < c.len() => {
                root.relocate(&mut *c, path, field, Change::Remove(index));
                c.remove(index);
                Ok(())
            }
            _ => Err(PyIndexError::new_err(format!("index {index} out of range"))),
        })
    }

    fn slice_indices(&self, slice: &Bound<'_, PySlice>) -> PyResult<Vec<usize>> {
        let len = self.len()?;
        let ind = slice.indices(len as isize)?;
        let mut out = Vec::with_capacity(ind.slicelength);
        let mut i = ind.start;
        for _ in 0..ind.slicelength {
            out.push(i as usize);
            i += ind.step;
        }
        Ok(out)
    }

    fn to_list<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        if self.elem.is_none() {
            // Scalars: one lock for the whole list.
            let field = self.field;
            let items = self.owner.with(false, |m| match m.slot(field) {
                Some(Slot::Repeated(c)) => (0..c.len())
                    .map(|i| c.get(py, i))
                    .collect::<PyResult<Vec<_>>>(),
                _ => Err(PyAttributeError::new_err(field)),
            })?;
            return PyList::new(py, items);
        }
        let n = self.len()?;
        let items = (0..n)
            .map(|i| self.item(py, i))
            .collect::<PyResult<Vec<_>>>()?;
        PyList::new(py, items)
    }
}

#[pymethods]
impl PyRepeated {
    fn __len__(&self) -> PyResult<usize> {
        self.len()
    }

    fn __bool__(&self) -> PyResult<bool> {
        Ok(self.len()? > 0)
    }

    fn __getitem__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        if let Ok(slice) = key.cast::<PySlice>() {
            let items = self
                .slice_indices(slice)?
                .into_iter()
                .map(|i| self.item(py, i))
                .collect::<PyResult<Vec<_>>>()?;
            return Ok(PyList::new(py, items)?.into_any().unbind());
        }
        let index: isize = key.extract()?;
        if let Some(elem) = self.elem {
            return match self.element(py, index, elem)? {
                Some(item) => Ok(item),
                None => Err(PyIndexError::new_err(format!(
                    "index {index} out of range for `{}` of length {}",
                    self.field,
                    self.len()?
                ))),
            };
        }
        let i = self.index(index, self.len()?)?;
        self.item(py, i)
    }

    fn __setitem__(&self, key: &Bound<'_, PyAny>, value: &Bound<'_, PyAny>) -> PyResult<()> {
        if let Ok(slice) = key.cast::<PySlice>() {
            let indices = self.slice_indices(slice)?;
            let items = collect_items(value)?;
            let step = slice.indices(self.len()? as isize)?.step;
            if step == 1 {
                // A contiguous slice may change length: delete, then insert.
                let start = indices.first().copied().unwrap_or_else(|| {
                    slice
                        .indices(self.len().unwrap_or(0) as isize)
                        .map(|i| i.start as usize)
                        .unwrap_or(0)
                });
                // Converted first, so that a bad item changes nothing.
                let items = self.owner.convert_items(self.field, &items)?;
                for &i in indices.iter().rev() {
                    self.remove_at(i)?;
                }
                return self.insert_items(start, items);
            }
            if indices.len() != items.len() {
                return Err(PyValueError::new_err(format!(
                    "attempt to assign sequence of size {} to extended slice of size {}",
                    items.len(),
                    indices.len()
                )));
            }
            let items = self.owner.convert_items(self.field, &items)?;
            return self.set_items(&indices, items);
        }
        let index: isize = key.extract()?;
        let i = self.index(index, self.len()?)?;
        self.set_one(i, value)
    }

    fn __delitem__(&self, key: &Bound<'_, PyAny>) -> PyResult<()> {
        if let Ok(slice) = key.cast::<PySlice>() {
            let mut indices = self.slice_indices(slice)?;
            indices.sort_unstable();
            for &i in indices.iter().rev() {
                self.remove_at(i)?;
            }
            return Ok(());
        }
        let index: isize = key.extract()?;
        let i = self.index(index, self.len()?)?;
        self.remove_at(i)
    }

    /// Scalars iterate over a snapshot taken under one lock; messages are produced one
    /// view at a time, so that iterating a large graph creates no list.
    fn __iter__(slf: PyRef<'_, Self>) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        if slf.elem.is_none() {
            return Ok(slf.to_list(py)?.try_iter()?.into_any().unbind());
        }
        let it = PyRepeatedIter {
            field: PyRepeated {
                owner: slf.owner.same(),
                field: slf.field,
                elem: slf.elem,
            },
            next: 0,
        };
        Ok(Py::new(py, it)?.into_any())
    }

    fn __contains__(&self, py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<bool> {
        self.to_list(py)?.contains(value)
    }

    fn __eq__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<bool> {
        let mine = self.to_list(py)?;
        if let Ok(other) = other.cast::<PyRepeated>() {
            return mine.eq(other.borrow().to_list(py)?);
        }
        match other.try_iter() {
            Ok(it) => {
                let theirs = PyList::new(py, it.collect::<PyResult<Vec<_>>>()?)?;
                mine.eq(theirs)
            }
            Err(_) => Ok(false),
        }
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(self.to_list(py)?.repr()?.to_string())
    }

    fn append(&self, value: &Bound<'_, PyAny>) -> PyResult<()> {
        self.insert_at(usize::MAX, value)
    }

    fn extend(&self, values: &Bound<'_, PyAny>) -> PyResult<()> {
        // All items are converted before any is stored, so that a bad one changes
        // nothing (as in protobuf). Like protobuf, extending (even with nothing) marks
        // the parents as set.
        let items = self
            .owner
            .convert_items(self.field, &collect_items(values)?)?;
        self.insert_items(usize::MAX, items)
    }

    fn insert(&self, index: isize, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let len = self.len()? as isize;
        let i = if index < 0 {
            (index + len).max(0)
        } else {
            index.min(len)
        };
        self.insert_at(i as usize, value)
    }

    /// Appends a new element (message fields only), sets `fields` on it and returns it.
    #[pyo3(signature = (**fields))]
    fn add(&self, py: Python<'_>, fields: Option<&Bound<'_, PyDict>>) -> PyResult<Py<PyAny>> {
        let Some(elem) = self.elem else {
            return Err(PyTypeError::new_err(format!(
                "`{}` holds scalars: use append",
                self.field
            )));
        };
        let field = self.field;
        let index = self.owner.with(true, |m| match m.slot(field) {
            Some(Slot::RepeatedMessage(mut c)) => {
                let i = c.len();
                c.insert(i, None);
                Ok(i)
            }
            _ => Err(PyAttributeError::new_err(field)),
        })?;
        let child = self.owner.child(Step::Index(field, index), elem)?;
        if let Some(fields) = fields {
            for (k, v) in fields.iter() {
                let name = child.field_name(&k.extract::<String>()?)?;
                child.set(name, &v)?;
            }
        }
        wrap(py, child)
    }

    fn remove(&self, py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let list = self.to_list(py)?;
        let i = list.index(value)?;
        self.remove_at(i)
    }

    #[pyo3(signature = (index = -1))]
    fn pop(&self, py: Python<'_>, index: isize) -> PyResult<Py<PyAny>> {
        let i = self.index(index, self.len()?)?;
        // A popped message's view takes the element along when it is removed.
        let item = self.item(py, i)?;
        self.remove_at(i)?;
        Ok(item)
    }

    fn clear(&self) -> PyResult<()> {
        let field = self.field;
        self.owner.with_place(|m, root, path| match m.slot(field) {
            Some(Slot::Repeated(mut c)) => {
                c.clear();
                Ok(())
            }
            Some(Slot::RepeatedMessage(mut c)) => {
                root.relocate(&mut *c, path, field, Change::Clear);
                c.clear();
                Ok(())
            }
            _ => Err(PyAttributeError::new_err(field)),
        })
    }

    /// Sorts in place, as `list.sort` does (stable; `key` and `reverse` keyword-only).
    /// Views of the elements follow them to their new places.
    #[pyo3(signature = (*, key = None, reverse = false))]
    fn sort(&self, py: Python<'_>, key: Option<&Bound<'_, PyAny>>, reverse: bool) -> PyResult<()> {
        let items = self.to_list(py)?;
        let keys = match key {
            Some(key) => PyList::new(
                py,
                items
                    .iter()
                    .map(|it| key.call1((it,)))
                    .collect::<PyResult<Vec<_>>>()?,
            )?,
            None => items,
        };
        // The indices sorted by their keys: Python's own sort, so comparisons (and their
        // errors) are exactly those of `sorted`.
        let kwargs = PyDict::new(py);
        kwargs.set_item("key", keys.getattr("__getitem__")?)?;
        kwargs.set_item("reverse", reverse)?;
        let order: Vec<usize> = py
            .import("builtins")?
            .getattr("sorted")?
            .call((PyRange::new(py, 0, keys.len() as isize)?,), Some(&kwargs))?
            .extract()?;
        self.reorder(&order)
    }

    /// Reverses the order in place; views of the elements follow them.
    fn reverse(&self) -> PyResult<()> {
        let order: Vec<usize> = (0..self.len()?).rev().collect();
        self.reorder(&order)
    }

    fn index_of(&self, py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<usize> {
        self.to_list(py)?.index(value)
    }

    fn count(&self, py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<usize> {
        let list = self.to_list(py)?;
        let mut n = 0;
        for it in list.iter() {
            if it.eq(value)? {
                n += 1;
            }
        }
        Ok(n)
    }

    /// The elements as a Python list (scalars are read under one lock).
    fn tolist<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        self.to_list(py)
    }

    #[pyo3(name = "MergeFrom")]
    fn merge_from(&self, values: &Bound<'_, PyAny>) -> PyResult<()> {
        self.extend(values)
    }
}

impl PyRepeated {
    /// Moves the element at `order[k]` to `k`, for a permutation `order` computed from
    /// the list as it was; a list that changed length meanwhile (a sort key that edits
    /// it) is left alone.
    fn reorder(&self, order: &[usize]) -> PyResult<()> {
        let field = self.field;
        let changed = || PyRuntimeError::new_err(format!("`{field}` changed while sorting"));
        let mut new_index = vec![usize::MAX; order.len()];
        for (k, &i) in order.iter().enumerate() {
            new_index[i] = k;
        }
        self.owner.with_place(|m, root, path| match m.slot(field) {
            Some(Slot::Repeated(mut c)) if c.len() == order.len() => {
                c.permute(order);
                Ok(())
            }
            Some(Slot::RepeatedMessage(mut c)) if c.len() == order.len() => {
                root.relocate(&mut *c, path, field, Change::Permute(&new_index));
                c.permute(order);
                Ok(())
            }
            Some(Slot::Repeated(_) | Slot::RepeatedMessage(_)) => Err(changed()),
            _ => Err(PyAttributeError::new_err(field)),
        })
    }

    fn set_one(&self, i: usize, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let items = self
            .owner
            .convert_items(self.field, std::slice::from_ref(value))?;
        self.set_items(&[i], items)
    }

    /// Stores converted items at `indices` (one each), under one lock.
    fn set_items(&self, indices: &[usize], items: Items) -> PyResult<()> {
        let field = self.field;
        self.owner.with(true, |m| match (m.slot(field), items) {
            (Some(Slot::RepeatedMessage(mut c)), Items::Messages(elems)) => {
                for (&i, e) in indices.iter().zip(&elems) {
                    match c.reborrow(i) {
                        Some(target) => {
                            target.assign(&**e);
                        }
                        None => return Err(PyIndexError::new_err(i)),
                    }
                }
                Ok(())
            }
            (Some(Slot::Repeated(mut c)), Items::Values(values)) => {
                for (&i, v) in indices.iter().zip(values) {
                    if i >= c.len() {
                        return Err(PyIndexError::new_err(i));
                    }
                    c.set(i, v)?;
                }
                Ok(())
            }
            _ => Err(PyAttributeError::new_err(field)),
        })
    }
}

/// Iterates a repeated field by position; a field that shrinks ends the iteration.
#[pyclass(module = "onnx_light.onnx")]
pub struct PyRepeatedIter {
    field: PyRepeated,
    next: usize,
}

#[pymethods]
impl PyRepeatedIter {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&mut self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        let item = match self.field.elem {
            Some(elem) => self.field.element(py, self.next as isize, elem)?,
            None if self.next < self.field.len()? => Some(self.field.item(py, self.next)?),
            None => None,
        };
        if item.is_some() {
            self.next += 1;
        }
        Ok(item)
    }
}

/// A field's attribute on its message class (protobuf's field property): reading it
/// on a message is found in the class without a failed lookup first, which would build
/// an `AttributeError` on every read; writes go through `Message.__setattr__`.
#[pyclass(module = "onnx_light.onnx", name = "_Field", frozen)]
pub struct Field {
    field: &'static str,
}

#[pymethods]
impl Field {
    fn __get__(
        slf: &Bound<'_, Self>,
        obj: Option<&Bound<'_, PyAny>>,
        _owner: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let Some(obj) = obj else {
            return Ok(slf.clone().into_any().unbind());
        };
        let msg = obj.cast::<PyMessage>()?;
        msg.borrow().get(slf.py(), slf.get().field)
    }

    fn __repr__(&self) -> String {
        format!("<field {}>", self.field)
    }
}

/// Declares one Python class per message type, subclasses of `Message`, and `wrap`,
/// which builds the right class for a view.
macro_rules! message_classes {
    ($($rust:ident => $py:literal, $proto:literal;)*) => {
        $(
            #[pyclass(extends = PyMessage, module = "onnx_light.onnx", name = $py, subclass, frozen)]
            pub struct $rust;

            #[pymethods]
            impl $rust {
                #[new]
                #[pyo3(signature = (*args, **fields))]
                fn py_new(
                    args: &Bound<'_, PyTuple>,
                    fields: Option<&Bound<'_, PyDict>>,
                ) -> PyResult<(Self, PyMessage)> {
                    if !args.is_empty() {
                        return Err(PyTypeError::new_err(concat!(
                            $py, "() takes keyword arguments only"
                        )));
                    }
                    let base = PyMessage::new_root($proto)?;
                    if let Some(fields) = fields {
                        for (k, v) in fields.iter() {
                            let name = base.field_name(&k.extract::<String>()?)?;
                            if !v.is_none() {
                                base.set(name, &v)?;
                            }
                        }
                    }
                    Ok(($rust, base))
                }
            }
        )*

        /// The Python object for `msg`: an instance of its message class.
        pub fn wrap(py: Python<'_>, msg: PyMessage) -> PyResult<Py<PyAny>> {
            let name = msg.name;
            let init = PyClassInitializer::from(msg);
            $(
                if name == $proto {
                    return Ok(Py::new(py, init.add_subclass($rust))?.into_any());
                }
            )*
            Err(PyTypeError::new_err("unknown message type"))
        }

        /// Adds every message class to `m`, each with a [`Field`] attribute per field.
        pub fn add_classes(m: &Bound<'_, PyModule>) -> PyResult<()> {
            m.add_class::<PyMessage>()?;
            m.add_class::<PyRepeated>()?;
            m.add_class::<Field>()?;
            $( m.add_class::<$rust>()?; )*
            for (name, class) in classes(m.py()) {
                let desc = descriptor(name).expect("every class has a descriptor");
                for f in desc.fields {
                    class.setattr(f.name, Field { field: f.name })?;
                }
            }
            Ok(())
        }

        /// The protobuf name and Python class of every message type.
        pub fn classes(py: Python<'_>) -> Vec<(&'static str, Bound<'_, PyType>)> {
            vec![$(($proto, py.get_type::<$rust>())),*]
        }
    };
}

message_classes! {
    PyModelProto => "ModelProto", "onnx.ModelProto";
    PyGraphProto => "GraphProto", "onnx.GraphProto";
    PyNodeProto => "NodeProto", "onnx.NodeProto";
    PyValueInfoProto => "ValueInfoProto", "onnx.ValueInfoProto";
    PyTensorAnnotation => "TensorAnnotation", "onnx.TensorAnnotation";
    PyIntIntListEntryProto => "IntIntListEntryProto", "onnx.IntIntListEntryProto";
    PyNodeDeviceConfigurationProto => "NodeDeviceConfigurationProto", "onnx.NodeDeviceConfigurationProto";
    PyShardingSpecProto => "ShardingSpecProto", "onnx.ShardingSpecProto";
    PyShardedDimProto => "ShardedDimProto", "onnx.ShardedDimProto";
    PySimpleShardedDimProto => "SimpleShardedDimProto", "onnx.SimpleShardedDimProto";
    PyAttributeProto => "AttributeProto", "onnx.AttributeProto";
    PyTrainingInfoProto => "TrainingInfoProto", "onnx.TrainingInfoProto";
    PyDeviceConfigurationProto => "DeviceConfigurationProto", "onnx.DeviceConfigurationProto";
    PyStringStringEntryProto => "StringStringEntryProto", "onnx.StringStringEntryProto";
    PyOperatorSetIdProto => "OperatorSetIdProto", "onnx.OperatorSetIdProto";
    PyFunctionProto => "FunctionProto", "onnx.FunctionProto";
    PyTensorProto => "TensorProto", "onnx.TensorProto";
    PySegment => "Segment", "onnx.TensorProto.Segment";
    PySparseTensorProto => "SparseTensorProto", "onnx.SparseTensorProto";
    PyTensorShapeProto => "TensorShapeProto", "onnx.TensorShapeProto";
    PyDimension => "Dimension", "onnx.TensorShapeProto.Dimension";
    PyTypeProto => "TypeProto", "onnx.TypeProto";
    PyTypeProtoTensor => "Tensor", "onnx.TypeProto.Tensor";
    PyTypeProtoSequence => "Sequence", "onnx.TypeProto.Sequence";
    PyTypeProtoMap => "Map", "onnx.TypeProto.Map";
    PyTypeProtoOptional => "Optional", "onnx.TypeProto.Optional";
    PyTypeProtoSparseTensor => "SparseTensor", "onnx.TypeProto.SparseTensor";
    PyTypeProtoOpaque => "Opaque", "onnx.TypeProto.Opaque";
    PySequenceProto => "SequenceProto", "onnx.SequenceProto";
    PyMapProto => "MapProto", "onnx.MapProto";
    PyOptionalProto => "OptionalProto", "onnx.OptionalProto";
    PyOperatorProto => "OperatorProto", "onnx.OperatorProto";
    PyOperatorSetProto => "OperatorSetProto", "onnx.OperatorSetProto";
}
