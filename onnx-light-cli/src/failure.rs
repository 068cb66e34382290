//! What a failed command prints, and its exit status: 2 for a usage error (a flag's
//! value, a combination of arguments, no passphrase to be had), as clap's own errors, and
//! 1 for everything else. Library errors are worded from their kind and typed fields,
//! never from their text: where the library's message names one of its options
//! (`alignment`, `max_memory`, ...), the tool says its flag (`--align`, `--max-memory`).

use std::error::Error as StdError;
use std::fmt;
use std::process::ExitCode;

use onnx_light::{Error, ErrorKind, Limit};

/// An error in the arguments themselves, found after clap accepted them.
#[derive(Debug)]
pub struct Usage(String);

impl fmt::Display for Usage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl StdError for Usage {}

/// A usage error saying `message`, as the boxed error the commands return.
pub fn usage(message: impl Into<String>) -> Box<dyn StdError> {
    Box::new(Usage(message.into()))
}

/// The flag (or, for the passphrase, the input) a library option is set from, for the
/// options the tool sets from its arguments.
fn flag(option: &str) -> Option<&'static str> {
    Some(match option {
        "alignment" => "--align",
        "max_file_size" => "--max-file-size",
        "external_data.location" => "--external-data",
        "num_threads" => "--threads",
        "passphrase" => "passphrase",
        _ => return None,
    })
}

/// What a limit bounds, with the flag that lifts it where there is one.
fn limit_name(limit: Limit) -> &'static str {
    match limit {
        Limit::MaxMemory => "decoded size (--max-memory)",
        Limit::MaxModelSize => "model size",
        Limit::MaxTensorSize => "tensor size",
        Limit::NestingDepth => "nesting depth",
        Limit::Aliasing => "external data aliasing (--allow-aliasing)",
        other => other.what(),
    }
}

/// Where a library error happened, as its message says it after the kind's words: the
/// tensor, the field path, the byte offset and the file.
fn whereabouts(e: &Error) -> String {
    let mut at = String::new();
    if let Some(t) = e.tensor() {
        at.push_str(&format!(" (tensor `{t}`)"));
    }
    let path = e.path_string();
    if !path.is_empty() {
        at.push_str(&format!(" in {path}"));
    }
    if let Some(offset) = e.offset() {
        at.push_str(&format!(" at byte offset {offset}"));
    }
    if let Some(file) = e.file() {
        at.push_str(&format!(" ({})", file.display()));
    }
    at
}

/// The message of a library error whose own message names a library option or function,
/// in the tool's words; `None` when the library's message is right as it is.
fn reworded(e: &Error) -> Option<String> {
    let what = match e.kind() {
        ErrorKind::InvalidOption { name, reason } => format!("invalid {}: {reason}", flag(name)?),
        ErrorKind::LimitExceeded {
            which,
            limit,
            actual,
        } => format!(
            "{} of {actual} bytes exceeds the limit of {limit} bytes",
            limit_name(*which)
        ),
        // The kind's words leave out the library option; the hint gives the flag.
        ErrorKind::InvalidExternalData { .. } if e.limit() == Some(Limit::Aliasing) => {
            e.kind().to_string()
        }
        ErrorKind::EncryptedInput { format } => {
            format!("the input is an encrypted model ({format}); decrypt it first")
        }
        // A save refuses a data file name taken by a file it may not replace with this
        // kind, and only that (`SerializeOptions::replace_data_files`).
        ErrorKind::Io(std::io::ErrorKind::AlreadyExists) => "a data file of that name already \
             exists and is not the data of an earlier save to this path (another model's?)"
            .to_string(),
        _ => return None,
    };
    Some(what + &whereabouts(e))
}

/// The exit status for `e`: 2 for a usage error, an option the arguments set given a
/// value the library refuses among them; 1 otherwise.
pub fn exit_status(e: &(dyn StdError + 'static)) -> u8 {
    if e.is::<Usage>() {
        return 2;
    }
    match e.downcast_ref::<Error>().map(Error::kind) {
        Some(ErrorKind::InvalidOption { name, .. }) if flag(name).is_some() => 2,
        _ => 1,
    }
}

/// What `e` says after `error: `: a library error in the tool's words, anything else as
/// it says it followed by each cause it does not already say, one per line.
pub fn message(e: &(dyn StdError + 'static)) -> String {
    if let Some(said) = e.downcast_ref::<Error>().and_then(reworded) {
        // A reworded error's causes are the library's words: not repeated.
        return said;
    }
    let mut message = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        // A cause the message already says (an I/O error's text) is not repeated.
        let cause = s.to_string();
        if !message.contains(&cause) {
            message.push_str(&format!("\n  caused by: {cause}"));
        }
        source = s.source();
    }
    message
}

/// Prints `error: ...` and what to try, and gives the exit status.
pub fn report(e: &(dyn StdError + 'static)) -> ExitCode {
    eprintln!("error: {}", message(e));
    if let Some(h) = hint(e) {
        eprintln!("hint: {h}");
    }
    ExitCode::from(exit_status(e))
}

/// What to try when a load is refused by a default limit the user can raise, given an
/// encrypted model, or a save would replace another model's data. Chosen from the
/// error's kind and limit, never its words.
pub fn hint(e: &(dyn StdError + 'static)) -> Option<String> {
    let e = e.downcast_ref::<Error>()?;
    let text = match (e.limit(), e.kind()) {
        (Some(Limit::MaxMemory), _) => {
            "the model needs more memory than its size warrants; if you trust it, pass --max-memory BYTES (or none)"
        }
        (Some(Limit::Aliasing), _) => {
            "if the model shares bytes between tensors on purpose, pass --allow-aliasing"
        }
        (_, ErrorKind::EncryptedInput { .. }) => {
            let file = e.file().map_or("IN".into(), |f| f.display().to_string());
            return Some(format!(
                "for a plain model: onnx-light decrypt {file} OUT.onnx"
            ));
        }
        (_, ErrorKind::Io(std::io::ErrorKind::AlreadyExists)) => {
            "to replace that file (and break the model that uses it, if any), pass --force"
        }
        _ => return None,
    };
    Some(text.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use onnx_light::ExternalDataRule;

    fn external(reason: &str) -> Error {
        Error::new(ErrorKind::InvalidExternalData {
            location: None,
            reason: reason.into(),
            rule: ExternalDataRule::Location,
        })
    }

    #[test]
    fn hints_follow_the_limit_not_the_message() {
        let memory = Error::new(ErrorKind::LimitExceeded {
            which: Limit::MaxMemory,
            limit: 1,
            actual: 2,
        });
        assert!(hint(&memory).unwrap().contains("--max-memory"));
        // Reworded or not, an aliasing refusal gets its hint; a message that merely
        // names the option does not.
        let aliased = external("tensors share bytes").refused_by(Limit::Aliasing);
        assert!(hint(&aliased).unwrap().contains("--allow-aliasing"));
        assert_eq!(hint(&external("see allow_aliasing")), None);
        let size = Error::new(ErrorKind::LimitExceeded {
            which: Limit::MaxModelSize,
            limit: 1,
            actual: 2,
        });
        assert_eq!(hint(&size), None);
    }

    #[test]
    fn library_options_are_said_as_the_flags_that_set_them() {
        let align = Error::invalid_option("alignment", "100 is not a power of two");
        assert_eq!(
            reworded(&align).unwrap(),
            "invalid --align: 100 is not a power of two"
        );
        assert_eq!(exit_status(&align), 2);
        // An option no argument sets is the tool's mistake, said as the library says it.
        let unset = Error::invalid_option("structure_only", "needs a file");
        assert_eq!(reworded(&unset), None);
        assert_eq!(exit_status(&unset), 1);
        let memory = Error::new(ErrorKind::LimitExceeded {
            which: Limit::MaxMemory,
            limit: 1,
            actual: 2,
        })
        .in_file(std::path::Path::new("m.onnx"));
        assert_eq!(
            reworded(&memory).unwrap(),
            "decoded size (--max-memory) of 2 bytes exceeds the limit of 1 bytes (m.onnx)"
        );
        let aliased = external("tensors share bytes")
            .refused_by(Limit::Aliasing)
            .in_tensor("t0");
        assert_eq!(
            reworded(&aliased).unwrap(),
            "invalid external data: tensors share bytes (tensor `t0`)"
        );
        let taken = Error::io(
            std::io::Error::new(std::io::ErrorKind::AlreadyExists, "(replace_data_files)"),
            Some(std::path::Path::new("w.bin")),
        );
        let said = reworded(&taken).unwrap();
        assert!(
            said.ends_with("(w.bin)") && !said.contains("replace_data_files"),
            "{said}"
        );
        assert_eq!(exit_status(&taken), 1);
        assert_eq!(
            exit_status(usage("--align needs --external-data").as_ref()),
            2
        );
    }
}
