//! File-to-file encryption and decryption with bounded memory: a few windows of chunks
//! are in memory at a time, so files larger than RAM go through. Outputs are written
//! atomically: to a temporary file that is renamed over the target only once
//! everything succeeded (for decryption: once every chunk authenticated). A model
//! whose weights are in external files is encrypted with them, inline.

use std::fs::File;
use std::path::Path;

use super::decrypt::Opened;
use super::encrypt::EncryptingWriter;
use super::format::EncryptionFormat;
use super::model::save_encrypted;
use super::options::{DecryptOptions, EncryptOptions};
use super::passphrase::Passphrase;
use super::source::{FileSource, Reported, Source};
use super::workers::Workers;
use crate::error::{Error, Result};
use crate::io::atomic::SizeLimited;
use crate::io::{load_with, write_atomically, NoHook, ParseOptions, SharedProgress};

/// A reader that tells `progress` the bytes read through it.
struct Reading<'a, R> {
    inner: R,
    progress: Option<&'a SharedProgress>,
}

impl<R: std::io::Read> std::io::Read for Reading<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        if let Some(p) = self.progress {
            p.advance(n as u64);
        }
        Ok(n)
    }
}

/// Opens an input without blocking on a FIFO or device (only regular files are read).
fn open(path: &Path) -> Result<File> {
    crate::io::open::open_regular(path).map_err(|e| Error::io(e, Some(path)))
}

/// Whether `path` is an ONNX model with a tensor whose data is in an external file.
/// Only the structure is read; input that does not decode as a model refers to none.
fn refers_to_external_data(path: &Path) -> bool {
    let probe = ParseOptions::default()
        .structure_only(true)
        .load_external_data(false)
        .num_threads(1);
    load_with(path, &probe).is_ok_and(|model| {
        let mut any = false;
        model.visit_tensors(|_, t| any |= t.is_external());
        any
    })
}

/// Encrypts the file `src` into `dst`, so that `dst` is all it takes to get `src` back.
///
/// When `src` is an ONNX model whose tensors keep their data in external files, the
/// model is loaded with that data (held in memory) and encrypted with every tensor
/// inline: the weights are encrypted too, and decrypting gives one self-contained
/// model. Any other input, a model without external data or bytes that are not a
/// model, is encrypted byte for byte, streaming: memory stays at a few windows (a
/// window is four chunks per thread, at least eight; `docs/design/encryption-formats.md`),
/// whatever the file's size.
///
/// # Errors
/// `InvalidOption` for invalid options or an empty passphrase; I/O errors naming the
/// file; for a model with external data, the errors of loading it (a missing or
/// refused data file, naming the tensor). On error `dst` is left as it was.
///
/// # Examples
/// ```no_run
/// use onnx_light::crypto::{self, EncryptOptions, Passphrase};
/// let passphrase = Passphrase::new(std::env::var("MODEL_KEY").unwrap());
/// crypto::encrypt_file("model.onnx", "model.onnx.enc", &passphrase, &EncryptOptions::default())?;
/// # Ok::<(), onnx_light::Error>(())
/// ```
pub fn encrypt_file(
    src: impl AsRef<Path>,
    dst: impl AsRef<Path>,
    passphrase: &Passphrase,
    options: &EncryptOptions,
) -> Result<()> {
    let (src, dst) = (src.as_ref(), dst.as_ref());
    options.validate()?;
    let input = open(src)?;
    // A regular file, not a directory or a pipe.
    let len = FileSource::new(&input, src)?.len();
    if refers_to_external_data(src) {
        // Loading the model and its data is reported too, before its encryption.
        let parse = ParseOptions {
            progress: options.progress.clone(),
            ..ParseOptions::default().num_threads(options.num_threads)
        };
        let model = load_with(src, &parse)?;
        return save_encrypted(&model, dst, passphrase, options);
    }
    if let Some(progress) = &options.progress {
        progress.expect(len);
    }
    write_atomically(dst, &NoHook, true, false, |file| {
        let mut out = SizeLimited::new(file);
        let mut writer =
            EncryptingWriter::new(&mut out, passphrase, options).map_err(|e| e.in_file(dst))?;
        let mut reading = Reading {
            inner: &input,
            progress: options.progress.as_ref(),
        };
        writer
            .write_from(&mut reading, src)
            .map_err(|e| with_path(e, src, dst))?;
        writer.finish().map_err(|e| e.in_file(dst))?;
        Ok(())
    })
    .map(|_| ())
}

/// Decrypts the file `src` (any format, detected from its magic) into `dst`,
/// streaming: memory stays at two windows, whatever the file's size. Returns the
/// format, whose [`is_authenticated`](EncryptionFormat::is_authenticated) says whether
/// the output was verified.
///
/// `dst` appears only once all of `src` decrypted (and, for the authenticated formats,
/// verified); on any error it is left as it was and no partial output remains. The
/// output is created with mode 0600 (readable by its owner only) before any plaintext
/// is written to it; replacing an existing file keeps that file's permissions.
///
/// The output is the plaintext byte for byte, so for `ONNXCRY1` (when allowed) a
/// modified file can decrypt to different bytes without an error; the model loaders
/// ([`load_encrypted_with`](super::load_encrypted_with)) at least check that the result
/// decodes.
///
/// # Errors
/// As [`decrypt_bytes`](super::decrypt_bytes), naming `src`; I/O errors naming the file.
///
/// # Examples
/// ```no_run
/// use onnx_light::crypto::{self, DecryptOptions, Passphrase};
/// let passphrase = Passphrase::new(std::env::var("MODEL_KEY").unwrap());
/// let format = crypto::decrypt_file("model.onnx.enc", "model.onnx", &passphrase, &DecryptOptions::default())?;
/// assert!(format.is_authenticated());
/// # Ok::<(), onnx_light::Error>(())
/// ```
pub fn decrypt_file(
    src: impl AsRef<Path>,
    dst: impl AsRef<Path>,
    passphrase: &Passphrase,
    options: &DecryptOptions,
) -> Result<EncryptionFormat> {
    let (src, dst) = (src.as_ref(), dst.as_ref());
    let input = open(src)?;
    let file = FileSource::new(&input, src)?;
    let reported = options.progress.as_ref().map(|p| Reported::new(&file, p));
    let source: &dyn Source = match &reported {
        Some(r) => r,
        None => &file,
    };
    let workers = Workers::new(options.num_threads)?;
    let opened = Opened::open(source, passphrase, options).map_err(|e| e.in_file(src))?;
    // Decrypted output stays private (0600), as its temporary file is.
    write_atomically(dst, &NoHook, true, true, |file| {
        opened
            .settle(opened.decrypt_to(source, &mut SizeLimited::new(file), &workers))
            .map_err(|e| with_path(e, src, dst))
    })?;
    Ok(opened.format())
}

/// Names `dst` on I/O errors of writing and `src` on everything else.
fn with_path(e: Error, src: &Path, dst: &Path) -> Error {
    if e.file().is_some() {
        e
    } else if matches!(e.kind(), crate::ErrorKind::Io(_)) {
        e.in_file(dst)
    } else {
        e.in_file(src)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::crypto::{load_encrypted_with, MIN_ITERATIONS};
    use crate::io::external::ExternalDataOptions;
    use crate::io::progress::counting::Count;
    use crate::io::{save, SerializeOptions};
    use crate::message::Message;
    use crate::onnx::{DataType, GraphProto, ModelProto, TensorProto};

    #[test]
    fn file_encryption_and_decryption_report_every_byte() {
        let dir =
            std::env::temp_dir().join(format!("onnx-light-crypt-progress-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let mut g = GraphProto::named("g");
        let w: Vec<u8> = (0..1_200_000u32).map(|i| (i % 253) as u8).collect();
        g.initializer.push(TensorProto::from_raw(
            "w",
            DataType::Uint8,
            [w.len() as i64],
            w,
        ));
        let model = ModelProto::new(g, vec![]);
        let plain = dir.join("m.onnx");
        save(&model, &plain, &SerializeOptions::default()).unwrap();
        let plain_len = std::fs::metadata(&plain).unwrap().len();
        let pass = Passphrase::new("p");
        for format in [
            EncryptionFormat::OnnxAe01,
            EncryptionFormat::OnnxCry2,
            EncryptionFormat::OnnxCry1,
        ] {
            let enc = dir.join(format!("m.{}", format.name()));
            let count = Arc::new(Count::default());
            let options = EncryptOptions::default()
                .format(format)
                .iterations(format_iterations(format))
                .progress(count.clone());
            encrypt_file(&plain, &enc, &pass, &options).unwrap();
            assert_eq!(count.totals(), (plain_len, plain_len), "{format:?}");
            let enc_len = std::fs::metadata(&enc).unwrap().len();
            let count = Arc::new(Count::default());
            let decrypt = DecryptOptions::default()
                .allow_unauthenticated(true)
                .progress(count.clone());
            decrypt_file(&enc, dir.join("out.onnx"), &pass, &decrypt).unwrap();
            assert_eq!(count.totals(), (enc_len, enc_len), "{format:?}");
            let count = Arc::new(Count::default());
            let parse = ParseOptions::default().progress(count.clone());
            let decrypt = DecryptOptions::default().allow_unauthenticated(true);
            load_encrypted_with(&enc, &pass, &decrypt, &parse).unwrap();
            assert_eq!(count.totals(), (enc_len, enc_len), "{format:?}");
        }
        // A model with external data: its load, then the encoding encrypted.
        let split = dir.join("split.onnx");
        let ext = ExternalDataOptions::new("w.bin");
        save(
            &model,
            &split,
            &SerializeOptions::default().external_data(ext),
        )
        .unwrap();
        let count = Arc::new(Count::default());
        let options = EncryptOptions::default()
            .iterations(MIN_ITERATIONS)
            .progress(count.clone());
        encrypt_file(&split, dir.join("split.enc"), &pass, &options).unwrap();
        let loaded = std::fs::metadata(&split).unwrap().len() + 1_200_000;
        let all = loaded + model.encoded_len();
        assert_eq!(count.totals(), (all, all));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// The iterations a format accepts: its own for the fixed ones, the fewest for
    /// `ONNXAE01` (a fast test).
    fn format_iterations(format: EncryptionFormat) -> u32 {
        match format {
            EncryptionFormat::OnnxAe01 => MIN_ITERATIONS,
            other => EncryptOptions::default()
                .format(other)
                .effective_iterations(),
        }
    }
}
