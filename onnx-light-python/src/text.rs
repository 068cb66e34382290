//! `repr` and `str` of messages: protobuf's text format (the format `print(model)` shows
//! with the official package), fields in declaration order.

use std::fmt::Write;

use crate::reflect::{descriptor, Reflect, Slot};

/// The text format of `msg`, one field per line.
pub fn format_message(msg: &mut dyn Reflect) -> String {
    let mut out = String::new();
    write_message(msg, 0, &mut out);
    out
}

fn write_message(msg: &mut dyn Reflect, depth: usize, out: &mut String) {
    let Some(desc) = descriptor(msg.proto_name()) else {
        return;
    };
    let pad = "  ".repeat(depth);
    for field in desc.fields {
        let name = field.name;
        let len = match msg.slot(name) {
            Some(Slot::Single(c)) => {
                if c.has() {
                    let _ = writeln!(out, "{pad}{name}: {}", c.text());
                }
                continue;
            }
            Some(Slot::Repeated(c)) => {
                for i in 0..c.len() {
                    let _ = writeln!(out, "{pad}{name}: {}", c.text(i));
                }
                continue;
            }
            Some(Slot::Message(c)) => {
                if let Some(sub) = c.into_mut(false) {
                    let _ = writeln!(out, "{pad}{name} {{");
                    write_message(sub, depth + 1, out);
                    let _ = writeln!(out, "{pad}}}");
                }
                continue;
            }
            Some(Slot::RepeatedMessage(c)) => c.len(),
            None => continue,
        };
        for i in 0..len {
            if let Some(Slot::RepeatedMessage(c)) = msg.slot(name) {
                if let Some(sub) = c.into_mut(i) {
                    let _ = writeln!(out, "{pad}{name} {{");
                    write_message(sub, depth + 1, out);
                    let _ = writeln!(out, "{pad}}}");
                }
            }
        }
    }
}
