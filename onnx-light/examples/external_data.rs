//! Save a model with its weights in external files, split at a size and aligned for
//! memory mapping, then load it back without copying the weights.
//!
//!     cargo run --example external_data -- in.onnx out_dir
//!
//! Without arguments it uses a sample model and a temporary directory.

use onnx_light::io::external::ExternalDataOptions;
use onnx_light::io::{self, ParseOptions, SerializeOptions};
use onnx_light::onnx::*;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<std::path::PathBuf> = std::env::args_os().skip(1).map(Into::into).collect();
    let (model, dir): (Model, _) = match args.as_slice() {
        [input, dir] => (io::load(input)?, dir.clone()),
        [] => (
            sample()?,
            std::env::temp_dir().join(format!("onnx-light-external-{}", std::process::id())),
        ),
        _ => return Err("usage: external_data IN OUT_DIR".into()),
    };
    std::fs::create_dir_all(&dir)?;
    let path = dir.join("model.onnx");

    // Tensors of 1 KiB or more go to weights.bin, weights.bin.1, ... (at most 1 MiB each),
    // each at a 4096-byte aligned offset.
    let external = ExternalDataOptions::new("weights.bin")
        .size_threshold(1024)
        .alignment(4096)
        .max_file_size(1 << 20);
    io::save(
        &model,
        &path,
        &SerializeOptions::default().external_data(external),
    )?;

    // No-copy: every weights file is mapped once; tensors are slices of the maps.
    #[allow(unsafe_code)]
    // SAFETY: this example wrote the model and its data files into its own directory just
    // above, and nothing truncates or rewrites them while `loaded` lives.
    let loaded = unsafe { io::load_mapped(&path, &ParseOptions::default())? };
    assert_eq!(loaded, model);
    for entry in std::fs::read_dir(&dir)? {
        let entry = entry?;
        println!(
            "{} ({} bytes)",
            entry.file_name().to_string_lossy(),
            entry.metadata()?.len()
        );
    }
    Ok(())
}

fn sample() -> Result<Model, Box<dyn std::error::Error>> {
    let mut g = GraphProto::named("sample");
    for i in 0..6 {
        let w: Vec<f32> = (0..100_000).map(|v| (v + i) as f32).collect();
        g.initializer.push(TensorProto::from_slice(
            format!("w{i}"),
            [w.len() as i64],
            &w,
        )?);
    }
    Ok(ModelProto::new(g, vec![OperatorSetIdProto::new("", 21)]))
}
