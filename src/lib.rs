//! mirotrace: replay recorded LLM agent traces through MiroThinker's
//! error-correction layer (rollback, in-place repair, tolerant parsing) and
//! report which turns would roll back and why.
//!
//! Data flows one way: [`trace`] reads input into attempts, [`pipeline`]
//! turns one attempt into parsed, repaired tool calls and detections,
//! [`replay`] runs the per-session rollback state machine and emits verdicts,
//! and [`report`] aggregates verdicts and renders them.

pub mod commands;
pub mod diff;
pub mod engine;
pub mod input;
pub mod keywords;
pub mod output;
pub mod pipeline;
pub mod policy;
pub mod pyjson;
pub mod replay;
pub mod report;
pub mod trace;
