//! mirotrace's engine: every layer below the commands' output. Inputs are
//! read into traces of attempts, each attempt is parsed, repaired and
//! checked, the replay turns a session into verdicts, and the figures are
//! computed from them.
//!
//! Data flows one way, and each layer uses only the ones before it:
//! [`model`] and [`pyjson`] (the values everything shares; `pyjson` is the
//! [`json_compat`] crate's), [`policy`], [`read`] (input formats → traces
//! of attempts), [`parse`] (tool calls and their arguments, with
//! `json_compat`'s json_repair port), [`repair`] (in-place fixes),
//! [`detect`] (what makes a turn roll back), [`replay`] (the per-session
//! state machine → verdicts), [`crosscheck`] (a task log's verdicts against
//! the replay's), [`engine`] (the parallel driver: replay, then each
//! command's per-trace work, on the workers) and [`metrics`] (every figure,
//! defined once, and how figures are written as text).
//!
//! Nothing here knows the CLI crate (`mirotrace`: views, writers, commands).
//! It depends on this one, so this one cannot depend on it (Cargo refuses a
//! cycle), and an upward reference does not compile. The engine's own paths
//! resolve in a doctest:
//!
//! ```
//! use mirotrace_engine::metrics::format::pct;
//! assert_eq!(pct(1, 8), "12.5%");
//! ```
//!
//! while a CLI module, named the same way, does not:
//!
//! ```compile_fail
//! use mirotrace::render::Document;
//! ```
//!
//! docs/architecture.md draws the layers; `tests/layers.rs` checks their
//! order inside this crate.

#![deny(clippy::print_stderr)]

pub use json_compat::pyjson;

pub mod crosscheck;
pub mod detect;
pub mod engine;
pub mod metrics;
pub mod model;
pub mod parse;
pub mod policy;
pub mod read;
pub mod repair;
pub mod replay;
