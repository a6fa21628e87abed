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

/// A parser's message (serde_json's, which quotes the plan's own text between backticks, as in
/// "unknown field `…`"), each backticked piece escaped and cut as [`escaped`] does, the rest
/// escaped: the message keeps its shape and its position, never the plan's raw bytes.
pub fn parser_message(message: &str) -> String {
    let mut shown = String::with_capacity(message.len().min(4 * MAX_ECHO));
    for (k, piece) in message.split('`').enumerate() {
        if k > 0 {
            shown.push('`');
        }
        if k % 2 == 1 {
            shown.push_str(&escaped(piece).to_string());
        } else {
            shown.extend(piece.chars().flat_map(char::escape_debug));
        }
    }
    shown
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

    #[test]
    fn a_parser_s_message_keeps_its_shape_and_loses_the_plan_s_bytes() {
        let field = format!("a\u{1b}[2J\u{7}{}", "z".repeat(200_000));
        let message = format!("unknown field `{field}`, expected `version` at line 1 column 9");
        let shown = parser_message(&message);
        assert!(shown.len() < 200, "{shown}");
        assert!(
            !shown.contains('\u{1b}') && !shown.contains('\u{7}'),
            "{shown}"
        );
        assert!(
            shown.starts_with("unknown field `a\\u{1b}[2J\\u{7}zz"),
            "{shown}"
        );
        assert!(
            shown.ends_with("…`, expected `version` at line 1 column 9"),
            "{shown}"
        );
    }
}
