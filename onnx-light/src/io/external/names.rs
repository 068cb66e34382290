//! The external-data locations a model file uses, read without decoding the model: a
//! skeleton of the ONNX messages that keeps only the paths to tensors and their
//! `external_data` entries (everything else is skipped as unknown), so a save over a
//! large model learns which names it must not overwrite at little cost.

use std::collections::HashSet;
use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::path::Path;

use rustix::fs::{openat, Mode, OFlags};

use crate::io::atomic::TargetDir;
use crate::io::open::dead_process_aside;

use crate::field::Str;
use crate::io::default_max_memory;
use crate::io::location::{location_string, validate_location};
use crate::io::open::open_regular;
use crate::io::structure::read_structure;
use crate::message::{Decode, DecodeOptions};
use crate::ProtoMessage;

#[derive(ProtoMessage, Debug, Default, Clone, PartialEq)]
struct Model<'a> {
    #[proto(7)]
    graph: Option<Graph<'a>>,
    #[proto(20)]
    training_info: Vec<TrainingInfo<'a>>,
    #[proto(25)]
    functions: Vec<Function<'a>>,
}

#[derive(ProtoMessage, Debug, Default, Clone, PartialEq)]
struct Graph<'a> {
    #[proto(1)]
    node: Vec<Node<'a>>,
    #[proto(5)]
    initializer: Vec<Tensor<'a>>,
    #[proto(15)]
    sparse_initializer: Vec<Sparse<'a>>,
}

#[derive(ProtoMessage, Debug, Default, Clone, PartialEq)]
struct TrainingInfo<'a> {
    #[proto(1)]
    initialization: Option<Graph<'a>>,
    #[proto(2)]
    algorithm: Option<Graph<'a>>,
}

#[derive(ProtoMessage, Debug, Default, Clone, PartialEq)]
struct Function<'a> {
    #[proto(7)]
    node: Vec<Node<'a>>,
}

#[derive(ProtoMessage, Debug, Default, Clone, PartialEq)]
struct Node<'a> {
    #[proto(5)]
    attribute: Vec<Attribute<'a>>,
}

#[derive(ProtoMessage, Debug, Default, Clone, PartialEq)]
struct Attribute<'a> {
    #[proto(5)]
    t: Option<Box<Tensor<'a>>>,
    #[proto(6)]
    g: Option<Box<Graph<'a>>>,
    #[proto(10)]
    tensors: Vec<Tensor<'a>>,
    #[proto(11)]
    graphs: Vec<Graph<'a>>,
    #[proto(22)]
    sparse_tensor: Option<Box<Sparse<'a>>>,
    #[proto(23)]
    sparse_tensors: Vec<Sparse<'a>>,
}

#[derive(ProtoMessage, Debug, Default, Clone, PartialEq)]
struct Sparse<'a> {
    #[proto(1)]
    values: Option<Tensor<'a>>,
    #[proto(2)]
    indices: Option<Tensor<'a>>,
}

#[derive(ProtoMessage, Debug, Default, Clone, PartialEq)]
struct Tensor<'a> {
    #[proto(13)]
    external_data: Vec<Entry<'a>>,
}

#[derive(ProtoMessage, Debug, Default, Clone, PartialEq)]
struct Entry<'a> {
    #[proto(1)]
    key: Option<Str<'a>>,
    #[proto(2)]
    value: Option<Str<'a>>,
}

/// Adds the file name of every `location` under `graph` to `names`.
fn graph_names(g: &Graph<'_>, names: &mut HashSet<String>) {
    g.initializer.iter().for_each(|t| tensor_names(t, names));
    g.sparse_initializer
        .iter()
        .for_each(|s| sparse_names(s, names));
    g.node.iter().for_each(|n| node_names(n, names));
}

fn node_names(n: &Node<'_>, names: &mut HashSet<String>) {
    for a in &n.attribute {
        a.t.iter().for_each(|t| tensor_names(t, names));
        a.tensors.iter().for_each(|t| tensor_names(t, names));
        a.g.iter().for_each(|g| graph_names(g, names));
        a.graphs.iter().for_each(|g| graph_names(g, names));
        a.sparse_tensor.iter().for_each(|s| sparse_names(s, names));
        a.sparse_tensors.iter().for_each(|s| sparse_names(s, names));
    }
}

fn sparse_names(s: &Sparse<'_>, names: &mut HashSet<String>) {
    s.values
        .iter()
        .chain(&s.indices)
        .for_each(|t| tensor_names(t, names));
}

fn tensor_names(t: &Tensor<'_>, names: &mut HashSet<String>) {
    for e in &t.external_data {
        if e.key.as_deref() == Some("location") {
            // As the save spells its own locations; a refused one names no file a save
            // could write.
            let checked = e.value.as_deref().map(|v| validate_location("", v));
            if let Some(Ok(p)) = checked {
                names.insert(location_string(&p));
            }
        }
    }
}

/// Payloads of at least this many bytes are not read to find the names.
const WEIGHTS: usize = 64;

/// The external-data locations the model file at `path` refers to (normalized as a save
/// writes them: `sub/w.bin`); empty when there is no readable model there (then no data
/// of it can be broken by overwriting either).
pub(crate) fn names_in_use(path: &Path) -> HashSet<String> {
    let mut names = HashSet::new();
    if let Ok(file) = open_regular(path) {
        names_in(&file, path, &mut names);
    }
    names
}

/// What saves to `model_name` in `dir` left behind when their process died between
/// moving the old model file aside and renaming the new one in: the hidden
/// `.<model_name>.old-<pid>-<n>` files of processes that no longer run, and the
/// locations those models use (the data of the path's previous model, free to replace).
pub(crate) fn left_by_crashed_saves(
    dir: &TargetDir,
    model_name: &OsStr,
) -> (Vec<OsString>, HashSet<String>) {
    let mut names = HashSet::new();
    let mut files = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir.join("")) else {
        return (files, names);
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        if !dead_process_aside(&name, model_name) {
            continue;
        }
        let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
        let Ok(fd) = openat(dir.fd(), &name, flags, Mode::empty()) else {
            continue;
        };
        let file = File::from(fd);
        if file.metadata().is_ok_and(|m| m.is_file()) {
            names_in(&file, &dir.join(&name), &mut names);
            files.push(name);
        }
    }
    (files, names)
}

/// Adds the locations the model in `file` uses to `names`; nothing when it is not a
/// readable model.
fn names_in(file: &File, path: &Path, names: &mut HashSet<String>) {
    let Ok(len) = file.metadata().map(|m| m.len()) else {
        return;
    };
    // Read, never mapped (another process may truncate the file meanwhile), and without
    // the weights.
    let Ok(structure) = read_structure(file, path, len, WEIGHTS) else {
        return;
    };
    // A hostile file at the target path gets the budget any load would give it.
    let options = DecodeOptions {
        max_memory: Some(default_max_memory(len)),
        ..DecodeOptions::default()
    };
    let Ok(model) = Model::decode_with(&structure, &options) else {
        return;
    };
    model.graph.iter().for_each(|g| graph_names(g, names));
    for t in &model.training_info {
        t.initialization
            .iter()
            .chain(&t.algorithm)
            .for_each(|g| graph_names(g, names));
    }
    model
        .functions
        .iter()
        .flat_map(|f| &f.node)
        .for_each(|n| node_names(n, names));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::onnx::*;

    fn marked(name: &str, location: &str) -> TensorProto<'static> {
        let mut t = TensorProto::from_raw(name.to_string(), DataType::Uint8, [1], vec![0u8]);
        t.raw_data = None;
        t.data_location = Some(DataLocation::External.into());
        t.external_data = vec![StringStringEntryProto::new(
            "location",
            location.to_string(),
        )];
        t
    }

    /// Every place a tensor can be, each with its own data file name.
    #[test]
    fn every_tensor_site_is_found_without_decoding_the_model() {
        let mut body = GraphProto::named("body");
        body.initializer.push(marked("b", "sub/in_subgraph.bin"));
        let mut g = GraphProto::named("g");
        g.initializer.push(marked("w", "initializer.bin"));
        g.sparse_initializer.push(SparseTensorProto {
            values: Some(marked("v", "sparse_values.bin")),
            indices: Some(marked("i", "sparse_indices.bin")),
            ..SparseTensorProto::default()
        });
        g.node.push(
            NodeProto::new("If", ["c"], ["y"])
                .with_attribute(AttributeProto::tensor("t", marked("a", "attribute.bin")))
                .with_attribute(AttributeProto::graph("then_branch", body)),
        );
        let mut m = ModelProto::new(g, vec![]);
        let mut init = GraphProto::named("init");
        init.initializer.push(marked("ti", "training.bin"));
        m.training_info.push(TrainingInfoProto {
            initialization: Some(init),
            ..TrainingInfoProto::default()
        });
        let mut f = FunctionProto::default();
        f.node.push(
            NodeProto::new("Constant", Vec::<String>::new(), ["k"])
                .with_attribute(AttributeProto::tensor("value", marked("k", "function.bin"))),
        );
        m.functions.push(f);
        let dir = std::env::temp_dir().join(format!("onnx-light-names-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("m.onnx");
        std::fs::write(&path, crate::message::Message::encode_to_vec(&m).unwrap()).unwrap();
        let mut found: Vec<String> = names_in_use(&path).into_iter().collect();
        found.sort();
        assert_eq!(
            found,
            [
                "attribute.bin",
                "function.bin",
                "initializer.bin",
                "sparse_indices.bin",
                "sparse_values.bin",
                "sub/in_subgraph.bin",
                "training.bin"
            ]
        );
        assert!(names_in_use(&dir.join("missing.onnx")).is_empty());
        std::fs::write(&path, b"\xff\xff\xff").unwrap();
        assert!(names_in_use(&path).is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
