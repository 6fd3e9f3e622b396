//! Snapshots: every recorded output is an `insta` snapshot in
//! `tests/snapshots/`, the one folder, named `<module>__<name>.snap`.
//! `INSTA_UPDATE=always cargo test --test suite` rewrites the ones that
//! differ (or `cargo insta review` where cargo-insta is installed); CI
//! (`CI=true`) never writes them.
//!
//! The one exception are files the documentation shows as they are
//! (`fixtures/analyze/sample.*`, the table in docs/metrics.md): they stay
//! plain files, compared by [`doc_file`]/[`doc_section`] and rewritten under
//! the same `INSTA_UPDATE=always` (`UPDATE_SNAPSHOTS=1` is its alias).

use std::path::{Path, PathBuf};

/// `tests/snapshots/`.
pub fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots")
}

/// Asserts that `text` is snapshot `tests/snapshots/<module>__<name>.snap`.
/// `module` is the test module's short name (`"terminal"`), so the folder
/// stays flat and a file's name says which test wrote it.
pub fn assert_text(module: &str, name: &str, text: &str) {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(dir());
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    settings.bind(|| insta::assert_snapshot!(format!("{module}__{name}"), text));
}

/// Whether this run rewrites snapshots: `INSTA_UPDATE=always` (or `force`),
/// or the older `UPDATE_SNAPSHOTS=1`; never under CI.
pub fn updating() -> bool {
    if std::env::var_os("CI").is_some_and(|v| v != "false" && v != "0") {
        return false;
    }
    let insta = std::env::var("INSTA_UPDATE").unwrap_or_default();
    matches!(insta.as_str(), "always" | "force" | "1")
        || std::env::var_os("UPDATE_SNAPSHOTS").is_some()
}

/// Compares `actual` with the documentation file `path` (under the crate
/// root); rewrites it when [`updating`].
pub fn doc_file(path: &str, actual: &str) {
    let full = Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    if updating() {
        std::fs::write(&full, actual).expect("documentation file written");
        return;
    }
    let expected = std::fs::read_to_string(&full)
        .unwrap_or_else(|e| panic!("{}: {e} (INSTA_UPDATE=always writes it)", full.display()));
    if expected != actual {
        let first_diff = expected
            .lines()
            .zip(actual.lines())
            .position(|(a, b)| a != b)
            .unwrap_or_else(|| expected.lines().count().min(actual.lines().count()));
        panic!(
            "{} differs from the output at line {}:\nexpected: {:?}\nactual:   {:?}\n(INSTA_UPDATE=always rewrites it)",
            full.display(),
            first_diff + 1,
            expected.lines().nth(first_diff),
            actual.lines().nth(first_diff)
        );
    }
}

/// Compares the part of documentation file `path` between `begin` and `end`
/// with `want`; rewrites that part when [`updating`].
pub fn doc_section(path: &str, begin: &str, end: &str, want: &str) {
    let full = Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    let text = std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("{}: {e}", full.display()));
    let (head, rest) = text
        .split_once(begin)
        .unwrap_or_else(|| panic!("{path} has the begin marker {begin:?}"));
    let (current, tail) = rest
        .split_once(end)
        .unwrap_or_else(|| panic!("{path} has the end marker {end:?}"));
    if current == want {
        return;
    }
    if updating() {
        std::fs::write(&full, format!("{head}{begin}{want}{end}{tail}")).expect("write docs");
        return;
    }
    panic!("{path}'s section differs from what the code makes (INSTA_UPDATE=always rewrites it); want:\n{want}");
}
