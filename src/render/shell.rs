//! Commands the reports suggest (`see it with: mirotrace replay …`), quoted
//! for a POSIX shell so they paste and run whatever the file name or trace
//! id holds (spaces, `|`, `$`, quotes). A word of only safe characters
//! stays bare; anything else is single-quoted, a `'` inside written as
//! `'\''`. A word holding control or bidi characters (which reports show
//! escaped, see [`super::visible`]) is written as `"$(printf '…')"` with
//! those bytes in octal, so the pasted command still names the exact id.
//! A small function rather than a crate: this is the whole rule.

use std::fmt::Write;

/// `s` as one shell word.
pub fn word(s: &str) -> String {
    if s.chars().any(super::visible::hidden) {
        return printf_word(s);
    }
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:@+,%=~".contains(c));
    if plain {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// `s` as `"$(printf '…')"`: printable text as is (`%` and `\` doubled),
/// everything else as octal escapes, which POSIX printf decodes.
fn printf_word(s: &str) -> String {
    let mut format = String::new();
    for c in s.chars() {
        match c {
            '%' => format.push_str("%%"),
            '\\' => format.push_str("\\\\"),
            '\'' => format.push_str(r"'\''"),
            c if c == '\n' || super::visible::hidden(c) => {
                let mut buf = [0u8; 4];
                for b in c.encode_utf8(&mut buf).bytes() {
                    let _ = write!(format, "\\{b:03o}");
                }
            }
            c => format.push(c),
        }
    }
    format!("\"$(printf '{format}')\"")
}

/// A path as an argument: one starting with `-` would be read as an option.
fn path_word(path: &str) -> String {
    if path.starts_with('-') {
        word(&format!("./{path}"))
    } else {
        word(path)
    }
}

/// The label the readers give standard input.
pub const STDIN_LABEL: &str = "<stdin>";

/// The command that shows one trace's timeline, or `None` when the trace
/// came from standard input (there is no file to name).
pub fn replay_trace(file: &str, trace_id: &str) -> Option<String> {
    if file == STDIN_LABEL {
        return None;
    }
    let trace = if trace_id.starts_with('-') {
        word(&format!("--trace={trace_id}"))
    } else {
        format!("--trace {}", word(trace_id))
    };
    Some(format!("mirotrace replay {} {trace}", path_word(file)))
}

/// How a report points at one trace's timeline: `see it with:` (the
/// command follows as a line of its own, see [`is_command`]), or, for
/// standard input, what to do instead; and the command, if any.
pub fn see_it_with(file: &str, trace_id: &str) -> (String, Option<String>) {
    match replay_trace(file, trace_id) {
        Some(command) => ("see it with:".into(), Some(command)),
        None => (
            format!(
                "the input was stdin: save it to a file to see it with mirotrace replay FILE --trace {}",
                word(trace_id)
            ),
            None,
        ),
    }
}

/// Whether a report line is a suggested command (it starts with
/// `mirotrace `): such a line is broken only between words, with ` \`
/// (see [`wrap_command`]), so it still pastes and runs.
pub fn is_command(line: &str) -> bool {
    line.starts_with("mirotrace ")
}

/// The words of a command this module quoted: split at spaces outside
/// quotes (a quoted word may hold spaces).
fn words(command: &str) -> Vec<&str> {
    let (mut out, mut start) = (Vec::new(), 0);
    let (mut single, mut double, mut escaped) = (false, false, false);
    for (i, c) in command.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if !single => escaped = true,
            '\'' if !double => single = !single,
            '"' if !single => double = !double,
            ' ' if !single && !double => {
                if i > start {
                    out.push(&command[start..i]);
                }
                start = i + 1;
            }
            _ => {}
        }
    }
    if start < command.len() {
        out.push(&command[start..]);
    }
    out
}

/// `command` in lines of at most `max` columns where its words allow,
/// broken only between words, each broken line ending in ` \` (a shell
/// line continuation) and the next indented by `indent` spaces.
pub fn wrap_command(command: &str, max: usize, indent: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for w in words(command) {
        let width = w.chars().count();
        if !line.is_empty() && line.chars().count() + 1 + width + 2 > max {
            line.push_str(" \\");
            lines.push(std::mem::replace(&mut line, " ".repeat(indent)));
        } else if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(w);
    }
    lines.push(line);
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_quoted_when_needed() {
        assert_eq!(word("a/b.jsonl"), "a/b.jsonl");
        assert_eq!(word("it's here"), r"'it'\''s here'");
        assert_eq!(word(""), "''");
        assert_eq!(word("t|1"), "'t|1'");
        assert_eq!(word("a\u{1b}b%\r"), r#""$(printf 'a\033b%%\015')""#);
    }

    #[test]
    fn a_printf_word_names_the_exact_bytes() {
        let id = "t|0\u{1b}[31m\r'x\\y%s\u{202e}z";
        let o = std::process::Command::new("sh")
            .args(["-c", &format!("printf '%s' {}", word(id))])
            .output()
            .expect("sh");
        assert_eq!(String::from_utf8_lossy(&o.stdout), id);
    }

    #[test]
    fn a_long_command_breaks_between_words_and_still_runs() {
        let id = "t|0\u{1b}[31m 'x' y";
        let command = format!(
            "printf '%s\\n' {} {} {}",
            word("/a dir/with spaces/file.jsonl"),
            word(id),
            word("tail")
        );
        let lines = wrap_command(&command, 24, 2);
        assert!(lines.len() > 2, "{lines:?}");
        assert!(lines[..lines.len() - 1].iter().all(|l| l.ends_with(" \\")));
        let o = std::process::Command::new("sh")
            .args(["-c", &lines.join("\n")])
            .output()
            .expect("sh");
        assert_eq!(
            String::from_utf8_lossy(&o.stdout),
            format!("/a dir/with spaces/file.jsonl\n{id}\ntail\n")
        );
        assert_eq!(
            wrap_command("mirotrace replay a", 80, 2),
            ["mirotrace replay a"]
        );
    }

    #[test]
    fn stdin_is_never_suggested_as_a_file() {
        assert_eq!(replay_trace(STDIN_LABEL, "t"), None);
        let (text, command) = see_it_with(STDIN_LABEL, "t");
        assert!(text.starts_with("the input was stdin"));
        assert_eq!(command, None);
        assert_eq!(
            replay_trace("-x.jsonl", "-t").as_deref(),
            Some("mirotrace replay ./-x.jsonl --trace=-t")
        );
    }
}
