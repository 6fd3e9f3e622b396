//! mirotrace: replay recorded LLM agent traces through MiroThinker's
//! error-correction layer (rollback, in-place repair, tolerant parsing) and
//! report which turns would roll back and why.
//!
//! Data flows one way, and each layer uses only the ones before it:
//! [`model`] and [`pyjson`] (the values everything shares), [`policy`],
//! [`read`] (input formats → traces of attempts), [`parse`] (tool calls
//! and their arguments), [`repair`] (in-place fixes), [`detect`] (what
//! makes a turn roll back), [`replay`] (the per-session state machine →
//! verdicts), [`crosscheck`] (a task log's verdicts against the replay's),
//! [`engine`] (the parallel driver: replay, then each command's per-trace
//! work, on the workers), [`metrics`] (every figure, defined once),
//! [`render`] (the view model and its table and Markdown back ends),
//! [`analyze`] (`analyze`'s aggregates), [`diff`], [`keywords`], [`export`]
//! (replayed traces in other tools' formats), [`html`] (`--format html`
//! pages), [`output`] (where results go)
//! and [`commands`] (one per subcommand, their shared input handling,
//! errors and exit codes). docs/architecture.md draws the layers.
//!
//! The layers up to [`metrics`] are the [`mirotrace_engine`] crate (and
//! [`pyjson`] with the json_repair port is the `json_compat` crate under
//! it); they are re-exported here under their own names, so
//! `mirotrace::metrics::…` and, in this crate, `crate::metrics::…` name them.

#![deny(clippy::print_stderr)]

pub use mirotrace_engine::{
    crosscheck, detect, engine, metrics, model, parse, policy, pyjson, read, repair, replay,
};

pub mod analyze;
#[cfg(feature = "arrow")]
pub mod columnar;
pub mod commands;
pub mod diff;
pub mod export;
pub mod html;
pub mod keywords;
pub mod output;
pub mod render;
