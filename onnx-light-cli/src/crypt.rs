//! `onnx-light encrypt` / `decrypt`: file to file, streaming, atomic outputs.
//!
//! The passphrase comes from `--passphrase-file`, else `ONNX_LIGHT_PASSPHRASE`, else a
//! prompt without echo on the terminal — never from a command-line argument, where
//! other users could read it in the process list.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use onnx_light::crypto::{self, DecryptOptions, EncryptOptions, EncryptionFormat, Passphrase};

use crate::progress::Progress;

/// The environment variable a passphrase may come from.
pub const PASSPHRASE_ENV: &str = "ONNX_LIGHT_PASSPHRASE";

type Failure = Box<dyn std::error::Error>;

/// The passphrase, from the first source that has one.
fn passphrase(file: Option<&Path>, confirm: bool) -> Result<Passphrase, Failure> {
    if let Some(path) = file {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read the passphrase file {}: {e}", path.display()))?;
        // One trailing newline (as editors write it) is not part of the passphrase.
        let text = text
            .strip_suffix('\n')
            .map(|t| t.strip_suffix('\r').unwrap_or(t))
            .unwrap_or(&text);
        return Ok(Passphrase::new(text.to_string()));
    }
    if let Ok(text) = std::env::var(PASSPHRASE_ENV) {
        return Ok(Passphrase::new(text));
    }
    if !std::io::stdin().is_terminal() {
        return Err(format!(
            "no passphrase: pass --passphrase-file FILE or set {PASSPHRASE_ENV} (there is no terminal to ask on)"
        )
        .into());
    }
    let first = rpassword::prompt_password("passphrase: ")?;
    if confirm {
        let second = rpassword::prompt_password("passphrase again: ")?;
        if first != second {
            return Err("the two passphrases differ".into());
        }
    }
    Ok(Passphrase::new(first))
}

fn refuse_existing(output: &Path, force: bool) -> Result<(), Failure> {
    if output.exists() && !force {
        return Err(format!(
            "{} exists; pass --force to replace it (the replacement is atomic)",
            output.display()
        )
        .into());
    }
    Ok(())
}

pub fn encrypt(
    input: &Path,
    output: &Path,
    format: &str,
    passphrase_file: Option<&PathBuf>,
    force: bool,
    progress: &Progress,
) -> Result<String, Failure> {
    let format = match format.to_ascii_lowercase().as_str() {
        "onnxae01" | "authenticated" => EncryptionFormat::OnnxAe01,
        "onnxcry1" => EncryptionFormat::OnnxCry1,
        other => return Err(format!("unknown format {other:?} (use onnxae01 or onnxcry1)").into()),
    };
    refuse_existing(output, force)?;
    let pass = passphrase(passphrase_file.map(PathBuf::as_path), true)?;
    progress.step(format!("encrypting {}", input.display()));
    crypto::encrypt_file(
        input,
        output,
        &pass,
        &EncryptOptions::default().format(format),
    )?;
    let note = if format.is_authenticated() {
        ""
    } else {
        " (ONNXCRY1 has no integrity protection: use it only for compatibility)"
    };
    Ok(format!("wrote {}{note}", output.display()))
}

pub fn decrypt(
    input: &Path,
    output: &Path,
    passphrase_file: Option<&PathBuf>,
    force: bool,
    progress: &Progress,
) -> Result<String, Failure> {
    refuse_existing(output, force)?;
    let pass = passphrase(passphrase_file.map(PathBuf::as_path), false)?;
    progress.step(format!("decrypting {}", input.display()));
    let format = crypto::decrypt_file(input, output, &pass, &DecryptOptions::default())?;
    Ok(if format.is_authenticated() {
        format!("wrote {} (authenticated)", output.display())
    } else {
        format!(
            "wrote {} (ONNXCRY1: not authenticated, integrity not verified)",
            output.display()
        )
    })
}
