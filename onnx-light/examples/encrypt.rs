//! Encrypt a model with a passphrase and load it back. The default format is
//! authenticated: a wrong passphrase or a modified byte is an error, not a wrong model.
//!
//!     ONNX_PASSPHRASE=... cargo run --example encrypt -- in.onnx out.onnxc
//!
//! Without arguments it encrypts a sample model with a demonstration passphrase.

use onnx_light::crypto::{self, EncryptOptions, Passphrase};
use onnx_light::io;
use onnx_light::onnx::*;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<std::path::PathBuf> = std::env::args_os().skip(1).map(Into::into).collect();
    let (model, output): (Model, _) = match args.as_slice() {
        [input, output] => (io::load(input)?, output.clone()),
        [] => {
            let dir =
                std::env::temp_dir().join(format!("onnx-light-encrypt-{}", std::process::id()));
            std::fs::create_dir_all(&dir)?;
            (sample()?, dir.join("sample.onnxc"))
        }
        _ => return Err("usage: encrypt IN OUT".into()),
    };
    let passphrase = Passphrase::new(
        std::env::var("ONNX_PASSPHRASE").unwrap_or_else(|_| "demonstration only".into()),
    );
    crypto::save_encrypted(&model, &output, &passphrase, &EncryptOptions::default())?;

    let back = crypto::load_encrypted(&output, &passphrase)?;
    assert!(back.is_authenticated());
    assert_eq!(back.model, model);
    match crypto::load_encrypted(&output, &Passphrase::new("not the passphrase")) {
        Err(e) => println!("wrong passphrase refused: {e}"),
        Ok(_) => return Err("a wrong passphrase was accepted".into()),
    }
    println!("wrote {}", output.display());
    Ok(())
}

fn sample() -> Result<Model, Box<dyn std::error::Error>> {
    let mut g = GraphProto::named("sample");
    g.initializer
        .push(TensorProto::from_slice("w", [3], &[1.0f32, 2.0, 3.0])?);
    Ok(ModelProto::new(g, vec![OperatorSetIdProto::new("", 21)]))
}
