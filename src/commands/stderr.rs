//! Lines for the user on stderr. A failed write to stderr (`2>/dev/full`,
//! a closed terminal) is ignored: `eprintln!` would panic and turn the
//! run's exit code into 101, and the exit code is the part of the contract
//! a script relies on. `clippy::print_stderr` is denied crate-wide so every
//! message goes through here.
//!
//! Messages name files, trace ids and keys from the input, so every one is
//! made safe here, in one place, as the tables are
//! ([`crate::render::visible`]): control and bidi characters are shown as
//! escapes (a file named `ESC ] 0 ; … BEL` does not retitle the terminal),
//! and a line feed inside a message starts an indented line, so no name
//! can forge a line of its own (`mirotrace: …`).

use std::fmt::Display;
use std::io::Write;

use crate::render::visible::visible;

/// Writes `mirotrace: {message}` and a newline, made [`safe`]; never panics.
pub fn say(message: impl Display) {
    let text = safe(&message.to_string());
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "mirotrace: {text}");
}

/// Writes text that is already laid out (an argument error), its control
/// and bidi characters escaped; never panics.
pub fn write_escaped(text: &str) {
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(visible(text).as_bytes());
}

/// One message as it may reach a terminal: control and bidi characters
/// escaped, each line after the first indented by two spaces.
pub fn safe(message: &str) -> String {
    visible(message.trim_end_matches('\n')).replace('\n', "\n  ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terminal_controls_and_forged_lines_are_defused() {
        let name = "a\u{1b}]0;owned\u{7}\u{1b}[2Jb.jsonl";
        let shown = safe(&format!("{name}: no such file"));
        assert!(
            !shown.contains('\u{1b}') && !shown.contains('\u{7}'),
            "{shown}"
        );
        assert!(
            shown.starts_with("a\\e]0;owned\\u{7}\\e[2Jb.jsonl"),
            "{shown}"
        );
        let forged = safe("x\nmirotrace: all good\n");
        assert_eq!(forged, "x\n  mirotrace: all good");
        assert_eq!(safe("x\u{202e}y"), "x\\u{202e}y");
    }
}
