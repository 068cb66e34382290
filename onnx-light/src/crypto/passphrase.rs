//! The passphrase: text whose memory is wiped on drop and that never shows itself.

use std::fmt;

use zeroize::Zeroizing;

/// A passphrase. Keys are derived from its UTF-8 bytes (both formats say so, which is
/// what makes a non-ASCII passphrase interoperable). Its memory is overwritten with
/// zeros when it is dropped; `Debug` prints `Passphrase(<redacted>)` and there is no
/// `Display`, so it cannot end up in a log or an error message by accident.
///
/// # Examples
/// ```
/// use onnx_light::crypto::Passphrase;
/// let passphrase = Passphrase::new("correct horse battery staple");
/// assert_eq!(format!("{passphrase:?}"), "Passphrase(<redacted>)");
/// ```
#[derive(Clone)]
pub struct Passphrase(Zeroizing<String>);

impl Passphrase {
    /// Wraps `text`. A `String` is moved in, not copied, so no unwiped copy is left
    /// behind by this call.
    pub fn new(text: impl Into<String>) -> Self {
        Passphrase(Zeroizing::new(text.into()))
    }

    /// Whether the passphrase is the empty string (refused when encrypting).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The UTF-8 bytes keys are derived from.
    pub(crate) fn as_bytes(&self) -> &[u8] {
        self.0.as_bytes()
    }
}

impl From<String> for Passphrase {
    fn from(text: String) -> Self {
        Passphrase::new(text)
    }
}

impl From<&str> for Passphrase {
    fn from(text: &str) -> Self {
        Passphrase::new(text)
    }
}

impl fmt::Debug for Passphrase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Passphrase(<redacted>)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_never_shows_the_text() {
        let p = Passphrase::new("hunter2 ünïcödé");
        let shown = format!("{p:?} {p:#?}");
        assert!(!shown.contains("hunter2"));
        assert!(shown.contains("redacted"));
    }

    #[test]
    fn bytes_are_utf8() {
        assert_eq!(Passphrase::from("pä").as_bytes(), b"p\xc3\xa4");
    }
}
