//! Commands the reports suggest (`see it with: mirotrace replay …`), quoted
//! for a POSIX shell so they paste and run whatever the file name or trace
//! id holds (spaces, `|`, `$`, quotes). A word of only safe characters
//! stays bare; anything else is single-quoted, a `'` inside written as
//! `'\''`. A word holding control or bidi characters (which reports show
//! escaped, see [`super::visible`]) is written as `"$(printf '…')"` with
//! those bytes in octal, so the pasted command still names the exact id.
//! A small function rather than a crate: this is the whole rule.

use std::fmt::Write;
use std::path::Path;
use std::sync::OnceLock;

/// The program as suggested commands name it; set once by the binary.
static PROGRAM: OnceLock<String> = OnceLock::new();

/// The name suggested commands start with: how the binary was invoked
/// ([`invoked_as`]) once [`set_program`] has run, else `mirotrace`.
pub fn program() -> &'static str {
    PROGRAM.get().map_or("mirotrace", String::as_str)
}

/// Sets [`program`] (the first call wins; the binary makes it at start).
pub fn set_program(name: String) {
    let _ = PROGRAM.set(name);
}

/// How to run this program again, from how it was invoked: `argv0` as
/// typed, `cargo` when Cargo ran it (the `CARGO` variable is set), and
/// `target_dir`, the `CARGO_TARGET_DIR` it ran with, if any.
/// - a bare name (the shell found it on PATH): that name, e.g. `mirotrace`;
/// - Cargo running a build of its target directory
///   (`…/target/<profile>/<name>`, or under `target_dir`): `cargo run
///   --release --` for `release`, `cargo run --` for `debug`, `cargo run
///   --profile P --` for another profile;
/// - any other path: the path as typed (`./target/release/mirotrace`);
/// - nothing usable (empty): `mirotrace`.
pub fn invoked_as(argv0: &str, cargo: bool, target_dir: Option<&Path>) -> String {
    if argv0.is_empty() {
        return "mirotrace".into();
    }
    if !argv0.contains('/') {
        return word(argv0);
    }
    let path = Path::new(argv0);
    let profile = path.parent().filter(|dir| {
        dir.parent().is_some_and(|target| {
            target.file_name().is_some_and(|t| t == "target")
                || target_dir.is_some_and(|named| same_dir(target, named))
        })
    });
    match profile.and_then(Path::file_name).and_then(|p| p.to_str()) {
        Some("release") if cargo => "cargo run --release --".into(),
        Some("debug") if cargo => "cargo run --".into(),
        Some(other) if cargo => format!("cargo run --profile {} --", word(other)),
        _ => path_word(argv0),
    }
}

/// [`invoked_as`] for this process (its `argv[0]` and environment).
pub fn invoked() -> String {
    let argv0 = std::env::args_os().next().unwrap_or_default();
    let target_dir = std::env::var_os("CARGO_TARGET_DIR").map(std::path::PathBuf::from);
    invoked_as(
        &argv0.to_string_lossy(),
        std::env::var_os("CARGO").is_some(),
        target_dir.as_deref(),
    )
}

/// Whether two paths name one folder (as written, or once resolved: a
/// relative `CARGO_TARGET_DIR` against the binary's absolute path).
fn same_dir(a: &Path, b: &Path) -> bool {
    a == b
        || matches!(
            (std::fs::canonicalize(a), std::fs::canonicalize(b)),
            (Ok(a), Ok(b)) if a == b
        )
}

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
    Some(format!("{} replay {} {trace}", program(), path_word(file)))
}

/// How a report points at one trace's timeline: `see it with:` (the
/// command follows as a line of its own, see [`is_command`]), or, for
/// standard input, what to do instead; and the command, if any.
pub fn see_it_with(file: &str, trace_id: &str) -> (String, Option<String>) {
    match replay_trace(file, trace_id) {
        Some(command) => ("see it with:".into(), Some(command)),
        None => (
            format!(
                "the input was stdin: save it to a file to see it with {} replay FILE --trace {}",
                program(),
                word(trace_id)
            ),
            None,
        ),
    }
}

/// Whether a report line is a suggested command (it starts with
/// [`program`] and a space): such a line is broken only between words,
/// with ` \` (see [`wrap_command`]), so it still pastes and runs.
pub fn is_command(line: &str) -> bool {
    line.strip_prefix(program())
        .is_some_and(|rest| rest.starts_with(' '))
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
    fn the_program_is_named_as_it_was_invoked() {
        assert_eq!(invoked_as("mirotrace", false, None), "mirotrace");
        assert_eq!(
            invoked_as("mirotrace", true, None),
            "mirotrace",
            "on PATH under cargo"
        );
        assert_eq!(
            invoked_as("./target/release/mirotrace", false, None),
            "./target/release/mirotrace"
        );
        assert_eq!(
            invoked_as(
                "/home/me/src/mirotrace/target/release/mirotrace",
                true,
                None
            ),
            "cargo run --release --"
        );
        assert_eq!(
            invoked_as("target/debug/mirotrace", true, None),
            "cargo run --"
        );
        assert_eq!(
            invoked_as("target/bench/mirotrace", true, None),
            "cargo run --profile bench --"
        );
        assert_eq!(
            invoked_as("/opt/my tools/mirotrace", false, None),
            "'/opt/my tools/mirotrace'"
        );
        assert_eq!(
            invoked_as("/usr/local/bin/mirotrace", true, None),
            "/usr/local/bin/mirotrace"
        );
        assert_eq!(invoked_as("", false, None), "mirotrace");
        // A target directory of another name, as `CARGO_TARGET_DIR` names it.
        let custom = Some(Path::new("/tmp/builds"));
        assert_eq!(
            invoked_as("/tmp/builds/release/mirotrace", true, custom),
            "cargo run --release --"
        );
        assert_eq!(
            invoked_as("/tmp/builds/release/mirotrace", true, None),
            "/tmp/builds/release/mirotrace"
        );
        assert_eq!(
            invoked_as("/tmp/builds/release/mirotrace", false, custom),
            "/tmp/builds/release/mirotrace",
            "not run by Cargo"
        );
        assert!(is_command("mirotrace replay x"));
        assert!(!is_command("mirotrace"));
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
