//! `Clone`, `PartialEq` and `Debug` of the messages through which the schema nests
//! (graphs through attributes; types through sequences, maps and optionals; sequence and
//! optional values), written out instead of derived so that each level first makes sure
//! enough stack is left, continuing on a heap-allocated stack when not. A model built
//! by hand thousands of levels deep then compares, clones and prints like any other:
//! `docs/design/deep-models.md`. The derive wraps the other recursive walks it generates
//! (`into_owned`, `reborrow`) of the types marked `#[proto(nests)]` the same way.

/// Stack that must remain before a guarded level recurses further.
const RED_ZONE: usize = 256 * 1024;

/// Size of each extra stack segment.
const SEGMENT: usize = 4 * 1024 * 1024;

/// Runs `f`, on a new stack segment when less than 256 KiB of stack is left: what the
/// recursive walks of the nesting messages (`#[proto(nests)]`) call at each level.
#[inline]
pub fn guarded<R>(f: impl FnOnce() -> R) -> R {
    stacker::maybe_grow(RED_ZONE, SEGMENT, f)
}

/// The three impls for a message type, naming every field: the destructuring patterns
/// make a field added to the type without being added here a compile error.
macro_rules! stack_guarded {
    ($ty:ident { $($field:ident),* $(,)? }) => {
        impl Clone for $ty<'_> {
            fn clone(&self) -> Self {
                $crate::onnx::deep::guarded(|| {
                    let $ty { $($field),* } = self;
                    $ty { $($field: Clone::clone($field)),* }
                })
            }
        }

        impl PartialEq for $ty<'_> {
            fn eq(&self, other: &Self) -> bool {
                $crate::onnx::deep::guarded(|| {
                    let $ty { $($field: _),* } = self;
                    true $(&& self.$field == other.$field)*
                })
            }
        }

        impl ::core::fmt::Debug for $ty<'_> {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                $crate::onnx::deep::guarded(|| {
                    let $ty { $($field: _),* } = self;
                    f.debug_struct(stringify!($ty))
                        $(.field(stringify!($field), &self.$field))*
                        .finish()
                })
            }
        }
    };
}

pub(crate) use stack_guarded;
