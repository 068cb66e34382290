//! `onnx-light encrypt` / `decrypt`: file to file, atomic outputs.
//!
//! The passphrase comes from `--passphrase-file`, else `ONNX_LIGHT_PASSPHRASE` (removed
//! from the environment as soon as it is read, so that no child process inherits it),
//! else a prompt without echo on the terminal — never from a command-line argument,
//! where other users could read it in the process list. It is asked for before the
//! progress spinner starts, which would otherwise redraw the prompt's line.

use std::io::{IsTerminal, Read};
use std::path::{Path, PathBuf};

use onnx_light::crypto::{self, DecryptOptions, EncryptOptions, EncryptionFormat, Passphrase};
use onnx_light::io::external::ExternalDataOptions;
use onnx_light::io::{self, ParseOptions, SerializeOptions};

use crate::failure::usage;
use crate::progress::Progress;

/// The environment variable a passphrase may come from.
pub const PASSPHRASE_ENV: &str = "ONNX_LIGHT_PASSPHRASE";

type Failure = Box<dyn std::error::Error>;

/// The passphrase, from the first source that has one. Runs before any other thread
/// of this process starts, which is what makes removing the variable sound.
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
    if let Some(value) = std::env::var_os(PASSPHRASE_ENV) {
        std::env::remove_var(PASSPHRASE_ENV);
        let text = value
            .into_string()
            .map_err(|_| usage(format!("{PASSPHRASE_ENV} is not valid UTF-8")))?;
        return Ok(Passphrase::new(text));
    }
    if !std::io::stdin().is_terminal() {
        return Err(usage(format!(
            "no passphrase: pass --passphrase-file FILE or set {PASSPHRASE_ENV} (there is no terminal to ask on)"
        )));
    }
    let first = rpassword::prompt_password("passphrase: ")?;
    if confirm {
        let second = rpassword::prompt_password("passphrase again: ")?;
        if first != second {
            return Err(usage("the two passphrases differ"));
        }
    }
    Ok(Passphrase::new(first))
}

/// The format `input` is in, from its first bytes.
fn format_of(input: &Path) -> Result<EncryptionFormat, Failure> {
    let mut prefix = Vec::with_capacity(8);
    std::fs::File::open(input)
        .and_then(|f| f.take(8).read_to_end(&mut prefix))
        .map_err(|e| onnx_light::Error::io(e, Some(input)))?;
    Ok(EncryptionFormat::detect(&prefix).map_err(|e| e.in_file(input))?)
}

/// `encrypt IN OUT`: a model with external data is encrypted with its weights inline.
pub fn encrypt(
    input: &Path,
    output: &Path,
    format: &str,
    passphrase_file: Option<&PathBuf>,
    force: bool,
    quiet: bool,
) -> Result<String, Failure> {
    let format = match format.to_ascii_lowercase().as_str() {
        "onnxae01" | "authenticated" => EncryptionFormat::OnnxAe01,
        "onnxcry1" => EncryptionFormat::OnnxCry1,
        "onnxcry2" => EncryptionFormat::OnnxCry2,
        other => {
            return Err(usage(format!(
                "unknown --format {other:?} (use onnxae01, onnxcry2 or onnxcry1)"
            )))
        }
    };
    crate::refuse_existing_output(output, force)?;
    let pass = passphrase(passphrase_file.map(PathBuf::as_path), true)?;
    let progress = Progress::new(quiet);
    progress.step(format!("encrypting {}", input.display()));
    let mut options = EncryptOptions::default().format(format);
    if let Some(p) = progress.bytes() {
        options = options.progress(p);
    }
    crypto::encrypt_file(input, output, &pass, &options)?;
    drop(progress);
    let note = if format.is_authenticated() {
        ""
    } else {
        " (ONNXCRY1 has no integrity protection: use it only for compatibility)"
    };
    Ok(format!("wrote {}{note}", output.display()))
}

/// `decrypt IN OUT [--external-data NAME]`. Authenticated input without
/// `--external-data` streams to OUT byte for byte; otherwise the model is loaded (for
/// `ONNXCRY1` this checks that it decodes, with one error for every failure) and saved,
/// as one file or with its tensors in the data file NAME. `ONNXCRY1` input is accepted
/// with a warning on stderr, printed even with `--quiet`.
pub fn decrypt(
    input: &Path,
    output: &Path,
    external_data: Option<&str>,
    passphrase_file: Option<&PathBuf>,
    force: bool,
    quiet: bool,
) -> Result<String, Failure> {
    crate::refuse_existing_output(output, force)?;
    if let Some(name) = external_data {
        crate::convert::refuse_existing_data_file(output, name, false, force, &[])?;
    }
    let format = format_of(input)?;
    let pass = passphrase(passphrase_file.map(PathBuf::as_path), false)?;
    let progress = Progress::new(quiet);
    progress.step(format!("decrypting {}", input.display()));
    let strict = DecryptOptions::default();
    let format = if external_data.is_none() && format.is_authenticated() {
        let options = match progress.bytes() {
            Some(p) => strict.progress(p),
            None => strict,
        };
        crypto::decrypt_file(input, output, &pass, &options)?
    } else {
        let opened = crypto::load_encrypted_with(
            input,
            &pass,
            &strict.allow_unauthenticated(true),
            &progress.load(ParseOptions::default()),
        )?;
        progress.step(format!("writing {}", output.display()));
        // Decrypted output stays private (0600), like the temporary files it is written to.
        let mut save = progress.save(
            SerializeOptions::default()
                .owner_only(true)
                .replace_data_files(force),
        );
        if let Some(name) = external_data {
            save = save.external_data(ExternalDataOptions::new(name));
        }
        io::save(&opened.model, output, &save)?;
        opened.format
    };
    drop(progress);
    let data = match external_data {
        Some(name) => format!(" with external data {name}"),
        None => String::new(),
    };
    Ok(if format.is_authenticated() {
        format!("wrote {}{data} (authenticated)", output.display())
    } else {
        eprintln!(
            "warning: {} is ONNXCRY1, which has no integrity protection: the decrypted model was not authenticated and may have been modified",
            input.display()
        );
        format!(
            "wrote {}{data} (ONNXCRY1: not authenticated, integrity not verified)",
            output.display()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_passphrase_from_the_environment_is_removed_from_it_once_read() {
        std::env::set_var(PASSPHRASE_ENV, "from the environment");
        let got = passphrase(None, false).unwrap();
        assert_eq!(std::env::var_os(PASSPHRASE_ENV), None);
        // It is the variable's value: what it encrypts, that value decrypts.
        let options = EncryptOptions::default().iterations(crypto::MIN_ITERATIONS);
        let sealed = crypto::encrypt_bytes(b"x", &got, &options).unwrap();
        let want = Passphrase::new("from the environment");
        let opened = crypto::decrypt_bytes(&sealed, &want, &DecryptOptions::default()).unwrap();
        assert_eq!(opened.bytes, b"x");
    }
}
