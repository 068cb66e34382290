//! A single-file model larger than 4 GiB: written, read back in the owned and no-copy
//! modes and decoded in copy mode from memory (its payloads split across threads), and
//! checked at the end of every tensor. No u32 anywhere on the size path.
//!
//! Needs about 14 GB of free memory and 5 GB of disk under target/; it runs in the
//! normal test command (this is what users with large models rely on).

use onnx_light::io::{self, ParseOptions, SerializeOptions};
use onnx_light::onnx::*;
use onnx_light::prelude::*;
use onnx_light_tests::mapped::Load;

const GIB: usize = 1 << 30;

fn tensor(name: &str, len: usize, mark: u8) -> TensorProto<'static> {
    let mut data = vec![0u8; len];
    // Distinct bytes at the ends, where an offset truncated to 32 bits would land wrong.
    for (i, b) in data.iter_mut().rev().take(4096).enumerate() {
        *b = mark.wrapping_add(i as u8);
    }
    data[..16].copy_from_slice(&[mark; 16]);
    TensorProto::from_raw(name.to_string(), DataType::Uint8, [len as i64], data)
}

fn check_tail(t: &TensorProto<'_>, len: usize, mark: u8) {
    let raw = t.raw_data.as_deref().unwrap();
    assert_eq!(raw.len(), len, "{}", t.name());
    assert_eq!(&raw[..16], &[mark; 16]);
    for (i, b) in raw.iter().rev().take(4096).enumerate() {
        assert_eq!(
            *b,
            mark.wrapping_add(i as u8),
            "{} byte {} from the end",
            t.name(),
            i
        );
    }
}

#[test]
fn a_model_larger_than_4_gib_saves_and_loads_in_every_mode() {
    let sizes = [GIB + 12_345, 2 * GIB + 7, GIB + GIB / 2 + 3];
    let mut g = GraphProto::named("big");
    for (i, &n) in sizes.iter().enumerate() {
        g.initializer
            .push(tensor(&format!("w{i}"), n, 10 * i as u8 + 1));
    }
    let model = ModelProto::new(g, vec![OperatorSetIdProto::new("", 21)]);
    let total = model.encoded_len();
    assert!(total > 4 * GIB as u64 + GIB as u64 / 2, "{total}");

    let dir = onnx_light_tests::python::workspace_root()
        .join("target")
        .join("test-scratch");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("beyond-4gib-{}.onnx", std::process::id()));
    io::save(&model, &path, &SerializeOptions::default()).unwrap();
    drop(model);
    assert_eq!(std::fs::metadata(&path).unwrap().len(), total);

    let result = std::panic::catch_unwind(|| {
        for load in [
            Load::Mapped(ParseOptions::default()),
            Load::With(ParseOptions::default()),
        ] {
            let loaded = load.load(&path).unwrap();
            let tensors = loaded.tensors();
            for (i, &n) in sizes.iter().enumerate() {
                check_tail(tensors[i], n, 10 * i as u8 + 1);
            }
            assert_eq!(loaded.encoded_len(), total);
        }
        // Copy mode from bytes in memory: the three payload copies are split across
        // threads (a run that copies is split from 2 values); the second slice walks from
        // the run's start to its first value, over more than 2 GiB, and copies to the
        // end of the input, past 4 GiB.
        let bytes = std::fs::read(&path).unwrap();
        let copied = Model::decode_owned(&bytes).unwrap();
        drop(bytes);
        let tensors = copied.tensors();
        for (i, &n) in sizes.iter().enumerate() {
            check_tail(tensors[i], n, 10 * i as u8 + 1);
        }
        assert_eq!(copied.encoded_len(), total);
    });
    let _ = std::fs::remove_file(&path);
    if let Err(panic) = result {
        std::panic::resume_unwind(panic);
    }
}
