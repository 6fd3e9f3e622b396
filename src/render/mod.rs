//! Drawing reports: one view model ([`doc`]), drawn by a terminal-table
//! back end ([`table`]) and a Markdown back end ([`markdown`]); [`format`](mod@format)
//! writes figures and text the same way everywhere.
//!
//! The layer knows nothing of any command: `analyze`, `diff` and `keywords`
//! each build a [`Document`] from their report (their `view` modules), and
//! [`replay_trace`] builds one from a trace's verdicts. JSON is not drawn from
//! the view: it serialises the reports' figures themselves.

pub mod doc;
pub mod fit;
pub mod gates;
pub mod markdown;
pub mod replay_trace;
pub mod shell;
pub mod skipped;
pub mod table;
pub mod visible;

pub use doc::{Block, Cell, Document, Line, Section, Style, Table, Tone};
pub use table::TableStyle;

/// Figures as text; defined with the figures (the engine's `metrics`), which
/// write them into their own descriptions.
pub use mirotrace_engine::metrics::format;
