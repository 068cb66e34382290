//! Memory bombs: small model files that decode, load or save to far more memory than
//! their size unless the loader bounds them. Shared by the library's tests and the
//! command-line tool's, which run each through a real process and measure it.

use std::path::{Path, PathBuf};

use onnx_light::io::{self, SerializeOptions};
use onnx_light::onnx::*;
use onnx_light::prelude::*;

/// One MiB.
pub const MIB: usize = 1 << 20;

fn varint(mut v: u64) -> Vec<u8> {
    let mut out = Vec::new();
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
    out
}

/// A length-delimited field: key, length, payload.
fn len_field(number: u64, payload: &[u8]) -> Vec<u8> {
    let mut out = varint(number << 3 | 2);
    out.extend(varint(payload.len() as u64));
    out.extend_from_slice(payload);
    out
}

/// About `size` bytes of the empty message `number` repeated, each a key and a zero
/// length.
fn empty_messages(number: u64, size: usize) -> Vec<u8> {
    let one = len_field(number, &[]);
    one.repeat(size / one.len())
}

/// `ModelProto.opset_import` x (size / 2): 2 bytes each on the wire, an
/// `OperatorSetIdProto` each in memory.
pub fn empty_opset_imports(size: usize) -> Vec<u8> {
    empty_messages(8, size)
}

/// `ModelProto.functions` x (size / 3): 3 bytes each, a `FunctionProto` each in memory.
pub fn empty_functions(size: usize) -> Vec<u8> {
    empty_messages(25, size)
}

/// `ModelProto.graph.sparse_initializer` x (size / 2): 2 bytes each, a
/// `SparseTensorProto` (the largest message in the schema) each in memory.
pub fn empty_sparse_initializers(size: usize) -> Vec<u8> {
    len_field(7, &empty_messages(15, size))
}

/// `count` sparse initializers declaring a dense shape of 2^40 x 2^20, 2^30 non-zero
/// values and as many indices, each with 4 bytes of values and 8 of indices: a loader
/// that sized anything from the declared shapes would ask for petabytes.
pub fn sparse_with_huge_declared_dims(count: usize) -> Model {
    let mut g = GraphProto::named("huge-sparse");
    for i in 0..count {
        g.sparse_initializer.push(SparseTensorProto {
            values: Some(TensorProto::from_raw(
                format!("s{i}"),
                DataType::Float,
                [1 << 30],
                vec![0u8; 4],
            )),
            indices: Some(TensorProto::from_raw(
                format!("s{i}.indices"),
                DataType::Int64,
                [1 << 30, 2],
                vec![0u8; 8],
            )),
            dims: vec![1 << 40, 1 << 20],
            ..SparseTensorProto::default()
        });
    }
    ModelProto::new(g, vec![OperatorSetIdProto::new("", 21)])
}

/// A tensor whose `len` bytes are at `offset` of the external file `location`.
pub fn external_tensor(name: &str, location: &str, offset: u64, len: u64) -> TensorProto<'static> {
    TensorProto {
        name: Some(name.to_string().into()),
        data_type: Some(DataType::Uint8.to_i32()),
        dims: vec![len as i64],
        data_location: Some(DataLocation::External.into()),
        external_data: vec![
            StringStringEntryProto::new("location", location.to_string()),
            StringStringEntryProto::new("offset", offset.to_string()),
            StringStringEntryProto::new("length", len.to_string()),
        ],
        ..TensorProto::default()
    }
}

/// Writes `model.onnx` in `dir` with `tensors` initializers that all reference the same
/// `range_len` bytes at offset 0 of `data.bin` (written too, `range_len` bytes): the
/// model and its data take `range_len` bytes on disk and `tensors` x `range_len` once
/// loaded. Returns the model's path.
pub fn aliased_external(dir: &Path, tensors: usize, range_len: usize) -> PathBuf {
    std::fs::write(dir.join("data.bin"), vec![1u8; range_len]).expect("write data.bin");
    let mut g = GraphProto::named("aliased");
    for i in 0..tensors {
        g.initializer.push(external_tensor(
            &format!("t{i}"),
            "data.bin",
            0,
            range_len as u64,
        ));
    }
    let path = dir.join("model.onnx");
    io::save(
        &ModelProto::new(g, vec![OperatorSetIdProto::new("", 21)]),
        &path,
        &SerializeOptions::default(),
    )
    .expect("save the aliased model");
    path
}

/// A model whose structure is what a real graph of `blocks` x 20 nodes looks like:
/// named nodes with attributes, `value_info` with shapes for every value, a `Constant`
/// per block and a few small initializers (no large weights: the structure is what is
/// measured).
pub fn structure_heavy(blocks: usize) -> Model {
    let ops = [
        "Conv",
        "BatchNormalization",
        "Relu",
        "Add",
        "Mul",
        "Reshape",
        "Transpose",
        "Sigmoid",
        "Concat",
        "Cast",
    ];
    let mut g = GraphProto::named("structure_heavy");
    g.input.push(ValueInfoProto::tensor(
        "input",
        DataType::Float,
        [1, 64, 28, 28],
    ));
    let mut x = "input".to_string();
    for b in 0..blocks {
        let c = format!("/blocks.{b}/Constant_output_0");
        g.node.push(
            NodeProto::new("Constant", Vec::<String>::new(), [c.clone()])
                .with_name(format!("/blocks.{b}/Constant"))
                .with_attribute(AttributeProto::tensor(
                    "value",
                    TensorProto::from_raw("", DataType::Int64, [1], 7i64.to_le_bytes().to_vec()),
                )),
        );
        for (k, op) in ops.iter().cycle().take(19).enumerate() {
            let y = format!("/blocks.{b}/{op}_{k}_output_0");
            g.node.push(
                NodeProto::new(*op, [x.clone(), c.clone()], [y.clone()])
                    .with_name(format!("/blocks.{b}/{op}_{k}"))
                    .with_attribute(AttributeProto::ints("perm", vec![0, 1, 3, 2]))
                    .with_attribute(AttributeProto::float("epsilon", 1e-5)),
            );
            g.value_info.push(ValueInfoProto::tensor(
                y.clone(),
                DataType::Float,
                [1, 64, 28, 28],
            ));
            x = y;
        }
        if b % 100 == 0 {
            g.initializer.push(TensorProto::from_raw(
                format!("/blocks.{b}/weight"),
                DataType::Float,
                [64],
                vec![0u8; 256],
            ));
        }
    }
    g.output
        .push(ValueInfoProto::tensor(x, DataType::Float, [1, 64, 28, 28]));
    ModelProto::new(g, vec![OperatorSetIdProto::new("", 21)])
}
