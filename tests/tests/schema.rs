//! The three descriptions of the ONNX schema agree: the Rust types' derive descriptors,
//! `schema/onnx.proto`, and the official `onnx` package pinned in the test environment.

use std::collections::BTreeMap;
use std::ffi::OsStr;

use onnx_light::onnx::{enum_descriptors, message_descriptors};
use onnx_light::{FieldKind, Label};
use onnx_light_tests::python::{python_dir, run_python, workspace_root};
use prost::Message as _;
use prost_types::field_descriptor_proto::{Label as PLabel, Type as PType};
use prost_types::{DescriptorProto, EnumDescriptorProto, FileDescriptorSet};

/// One field in a comparable form: `(name, type, label, type name, packed, oneof)`.
type FieldRow = (String, String, String, String, bool, String);

#[derive(Default, Debug, PartialEq)]
struct Schema {
    messages: BTreeMap<String, BTreeMap<u32, FieldRow>>,
    enums: BTreeMap<String, Vec<(String, i32)>>,
}

fn compile_schema() -> FileDescriptorSet {
    let dir = workspace_root().join("schema");
    protox::compile([dir.join("onnx.proto")], [&dir]).expect("schema/onnx.proto compiles")
}

fn from_proto(fds: &FileDescriptorSet) -> Schema {
    fn add_enum(out: &mut Schema, prefix: &str, e: &EnumDescriptorProto) {
        let values = e
            .value
            .iter()
            .map(|v| (v.name().to_string(), v.number()))
            .collect();
        out.enums.insert(format!("{prefix}{}", e.name()), values);
    }
    fn add_message(out: &mut Schema, prefix: &str, m: &DescriptorProto) {
        let name = format!("{prefix}{}", m.name());
        let mut fields = BTreeMap::new();
        for f in &m.field {
            let ty = match f.r#type() {
                PType::Double => "double",
                PType::Float => "float",
                PType::Int64 => "int64",
                PType::Uint64 => "uint64",
                PType::Int32 => "int32",
                PType::Fixed64 => "fixed64",
                PType::Fixed32 => "fixed32",
                PType::Bool => "bool",
                PType::String => "string",
                PType::Bytes => "bytes",
                PType::Uint32 => "uint32",
                PType::Sfixed32 => "sfixed32",
                PType::Sfixed64 => "sfixed64",
                PType::Sint32 => "sint32",
                PType::Sint64 => "sint64",
                PType::Enum => "enum",
                PType::Message => "message",
                PType::Group => "group",
            };
            let label = match f.label() {
                PLabel::Repeated => "repeated",
                PLabel::Required => "required",
                PLabel::Optional => "optional",
            };
            let oneof = f
                .oneof_index
                .and_then(|i| m.oneof_decl.get(i as usize))
                .map(|o| o.name().to_string())
                .unwrap_or_default();
            let packed = f.options.as_ref().is_some_and(|o| o.packed());
            fields.insert(
                f.number() as u32,
                (
                    f.name().to_string(),
                    ty.to_string(),
                    label.to_string(),
                    f.type_name().trim_start_matches('.').to_string(),
                    packed,
                    oneof,
                ),
            );
        }
        out.messages.insert(name.clone(), fields);
        for e in &m.enum_type {
            add_enum(out, &format!("{name}."), e);
        }
        for n in &m.nested_type {
            add_message(out, &format!("{name}."), n);
        }
    }
    let mut out = Schema::default();
    for file in &fds.file {
        let prefix = format!("{}.", file.package());
        for e in &file.enum_type {
            add_enum(&mut out, &prefix, e);
        }
        for m in &file.message_type {
            add_message(&mut out, &prefix, m);
        }
    }
    out
}

fn from_rust() -> Schema {
    let mut out = Schema::default();
    for d in message_descriptors() {
        let mut fields = BTreeMap::new();
        for f in d.fields {
            let (ty, type_name) = match f.kind {
                FieldKind::Message(n) => ("message".to_string(), n.to_string()),
                FieldKind::Enum(n) => ("enum".to_string(), n.to_string()),
                other => (other.to_string(), String::new()),
            };
            let label = match f.label {
                Label::Repeated => "repeated",
                Label::Optional => "optional",
                Label::Implicit => "implicit (proto3-style; the ONNX schema has none)",
            };
            let prev = fields.insert(
                f.number,
                (
                    f.name.to_string(),
                    ty,
                    label.to_string(),
                    type_name,
                    f.packed,
                    f.oneof.unwrap_or_default().to_string(),
                ),
            );
            assert!(
                prev.is_none(),
                "{} declares field {} twice",
                d.name,
                f.number
            );
        }
        let prev = out.messages.insert(d.name.to_string(), fields);
        assert!(prev.is_none(), "{} is listed twice", d.name);
    }
    for (name, values) in enum_descriptors() {
        let values = values.iter().map(|(n, v)| (n.to_string(), *v)).collect();
        out.enums.insert(name.to_string(), values);
    }
    out
}

fn diff(left_name: &str, left: &Schema, right_name: &str, right: &Schema) -> Vec<String> {
    let mut out = Vec::new();
    let names: std::collections::BTreeSet<_> =
        left.messages.keys().chain(right.messages.keys()).collect();
    for name in names {
        match (left.messages.get(name), right.messages.get(name)) {
            (Some(a), Some(b)) => {
                let numbers: std::collections::BTreeSet<_> = a.keys().chain(b.keys()).collect();
                for n in numbers {
                    if a.get(n) != b.get(n) {
                        out.push(format!(
                            "{name} field {n}: {left_name} has {:?}, {right_name} has {:?}",
                            a.get(n),
                            b.get(n)
                        ));
                    }
                }
            }
            (a, _) => out.push(format!(
                "message {name}: only in {}",
                if a.is_some() { left_name } else { right_name }
            )),
        }
    }
    let enums: std::collections::BTreeSet<_> =
        left.enums.keys().chain(right.enums.keys()).collect();
    for name in enums {
        if left.enums.get(name) != right.enums.get(name) {
            out.push(format!(
                "enum {name}: {left_name} has {:?}, {right_name} has {:?}",
                left.enums.get(name),
                right.enums.get(name)
            ));
        }
    }
    out
}

#[test]
fn rust_types_match_the_schema_folder_field_by_field() {
    let proto = from_proto(&compile_schema());
    let rust = from_rust();
    let differences = diff("the Rust types", &rust, "schema/onnx.proto", &proto);
    assert!(
        differences.is_empty(),
        "the Rust types and schema/onnx.proto disagree:\n{}",
        differences.join("\n")
    );
    assert_eq!(rust.messages.len(), 33);
    assert_eq!(rust.enums.len(), 7);
}

#[test]
fn the_schema_folder_matches_the_official_onnx_package() {
    let fds = compile_schema();
    let path = workspace_root()
        .join("target")
        .join("onnx-light-schema.fds");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, fds.encode_to_vec()).unwrap();
    // The script prints one line per difference and exits non-zero on any.
    let output = run_python(&python_dir().join("schema_check.py"), &[OsStr::new(&path)]);
    let report = String::from_utf8_lossy(&output.stdout);
    assert!(report.contains("schema/ matches onnx 1.23"), "{report}");
}

#[test]
fn every_data_type_value_up_to_float6e3m2_is_declared() {
    let (_, values) = enum_descriptors()
        .into_iter()
        .find(|(n, _)| *n == "onnx.TensorProto.DataType")
        .unwrap();
    assert_eq!(values.len(), 29);
    assert_eq!(values.last().unwrap(), &("FLOAT6E3M2", 28));
}
