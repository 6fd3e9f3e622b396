//! The integration tests, in one binary (`cargo test --test suite`): one
//! link of the library instead of one per file, and one place for the
//! helpers. A test's name starts with its module path, so a slice runs with
//! a filter: `cargo test --test suite commands::diff::`. Where a new test
//! goes: tests/README.md.

/// Helpers every module shares: the binary, fixtures, corpora, scratch
/// folders, snapshots, the HTML pages and the browser.
mod common;

/// One module per command: options, exit codes and output of that command.
mod commands {
    mod analyze;
    mod attribution;
    mod diff;
    mod diff_kinds;
    mod gates;
    mod keywords;
    mod partial;
    mod policy;
    #[cfg(feature = "record")]
    mod record;
    mod replay;
    mod shared_options;
    mod small_doors;
}

/// Input formats and readers: the library's adapters, the binary on every
/// input form, other harnesses' files, task logs, ATIF, the line decoder.
mod inputs {
    mod adapters;
    mod atif_round_trip;
    mod attribution;
    mod cli_inputs;
    mod decoder;
    mod harnesses;
    mod real_writers;
    mod tasklog_reader;
    mod tasklog_truth;
}

/// Figures (`src/metrics/`): the registry, figures shared between commands,
/// cost and task results.
mod figures {
    mod causes;
    mod cost;
    mod registry;
    mod shared;
}

/// Against upstream's golden corpora and labelled corpora (`tests/data/`):
/// replay verdicts and the format-error kinds (json_repair's corpus and
/// fixes are tested in crates/json-compat).
mod conformance {
    mod format_kinds;
    mod replay;
}

/// What a reader sees: terminal widths (snapshots), HTML pages (with and
/// without a browser), trace text in Markdown, output destinations.
mod output {
    mod destinations;
    mod html;
    mod html_browser;
    mod render_safety;
    mod terminal;
}

/// Hostile and good-but-odd input, memory and time limits, properties.
mod robustness {
    mod good_data;
    mod hostile;
    mod limits;
    mod properties;
    mod round4;
}
