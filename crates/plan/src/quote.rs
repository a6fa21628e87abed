//! How errors echo text from a plan or a file (ids, op and dtype names, binding names): quoted,
//! escaped and at most [`MAX_ECHO`] characters, so that an id can neither drive the terminal
//! (clear it, set its title) nor flood it.

use std::fmt;

/// The most characters of a piece of text an error shows.
pub const MAX_ECHO: usize = 64;

/// `text` as an error shows it: in double quotes, control and other non-printing characters
/// escaped (`\n`, `\u{1b}`), cut after [`MAX_ECHO`] characters with `…`.
pub fn quoted(text: &str) -> Quoted<'_> {
    Quoted { text, quotes: true }
}

/// `text` escaped and cut as [`quoted`] does, without the quotes: for lists and for output a
/// user reads (`plan validate`), where plain ids stay as they are.
pub fn escaped(text: &str) -> Quoted<'_> {
    Quoted {
        text,
        quotes: false,
    }
}

/// See [`quoted`] and [`escaped`].
#[derive(Clone, Copy, Debug)]
pub struct Quoted<'a> {
    text: &'a str,
    quotes: bool,
}

impl fmt::Display for Quoted<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.quotes {
            f.write_str("\"")?;
        }
        for c in self.text.chars().take(MAX_ECHO) {
            write!(f, "{}", c.escape_debug())?;
        }
        if self.text.chars().nth(MAX_ECHO).is_some() {
            f.write_str("…")?;
        }
        if self.quotes {
            f.write_str("\"")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_escaped_and_cut() {
        assert_eq!(quoted("x").to_string(), "\"x\"");
        assert_eq!(
            quoted("a\u{1b}]0;pwned\u{7}").to_string(),
            "\"a\\u{1b}]0;pwned\\u{7}\""
        );
        assert_eq!(quoted("say \"hi\"\n").to_string(), "\"say \\\"hi\\\"\\n\"");
        let long = "y".repeat(1_000_000);
        let shown = quoted(&long).to_string();
        assert_eq!(shown.chars().count(), MAX_ECHO + 3);
        assert!(shown.ends_with("…\""));
        assert_eq!(escaped("x\ty").to_string(), "x\\ty");
    }
}
