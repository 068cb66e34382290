//! Multidirectional (numpy-style) broadcasting of shapes with symbolic dimensions, as
//! `onnx`'s inference computes it: sizes of 1 stretch, equal sizes stay, one symbolic
//! name (alone with 1s) stays, anything else is unknown.

use crate::onnx::{Dimension, TensorShapeProto};

/// The shape `shapes` broadcast to, or the reason they do not broadcast.
pub(super) fn broadcast(
    shapes: &[&TensorShapeProto<'_>],
) -> Result<TensorShapeProto<'static>, String> {
    let rank = shapes.iter().map(|s| s.dim.len()).max().unwrap_or(0);
    let mut out = Vec::with_capacity(rank);
    for i in 0..rank {
        let mut value: i64 = 1;
        let mut symbolic: Option<&Dimension<'_>> = None;
        let mut symbolic_count = 0;
        for s in shapes {
            let offset = rank - s.dim.len();
            if i < offset {
                continue;
            }
            let d = &s.dim[i - offset];
            match d.as_value() {
                Some(v) => {
                    if v != 1 {
                        if value != 1 && value != v {
                            return Err(format!(
                                "Incompatible dimensions for broadcasting: {value} and {v}"
                            ));
                        }
                        value = v;
                    }
                }
                None => match symbolic {
                    None => {
                        symbolic = Some(d);
                        symbolic_count = 1;
                    }
                    Some(first) if first.as_param() != d.as_param() || d.as_param().is_none() => {
                        symbolic_count += 1;
                    }
                    Some(_) => {}
                },
            }
        }
        out.push(if value != 1 || symbolic_count == 0 {
            Dimension::value(value)
        } else if symbolic_count == 1 {
            let d = symbolic.expect("counted");
            crate::IntoOwned::into_owned(crate::Reborrow::reborrow(d))
        } else {
            Dimension::unknown()
        });
    }
    Ok(super::types::shape_of(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(dims: &[&str]) -> TensorShapeProto<'static> {
        TensorShapeProto::new(dims.iter().map(|d| match d.parse::<i64>() {
            Ok(v) => Dimension::value(v),
            Err(_) if *d == "?" => Dimension::unknown(),
            Err(_) => Dimension::param(d.to_string()),
        }))
    }

    #[test]
    fn shapes_broadcast_as_numpy_with_symbols_kept_where_certain() {
        for (a, b, want) in [
            (&["2", "3"][..], &["3"][..], "[2,3]"),
            (&["n", "1"], &["1", "4"], "[n,4]"),
            (&["n", "3"], &["n", "3"], "[n,3]"),
            (&["n"], &["m"], "[?]"),
            (&["n"], &["5"], "[5]"),
            (&["1"], &["?"], "[?]"),
            (&[], &["2", "2"], "[2,2]"),
        ] {
            let got = broadcast(&[&shape(a), &shape(b)]).unwrap();
            assert_eq!(got.to_string(), want, "{a:?} {b:?}");
        }
        assert!(broadcast(&[&shape(&["2"]), &shape(&["3"])]).is_err());
    }
}
