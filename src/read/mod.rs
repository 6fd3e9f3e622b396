//! The input layer: where bytes become [`Trace`]s of [`Attempt`]s.
//!
//! [`source`] names and opens inputs (files, folders, stdin, gzip/zstd),
//! [`sniff`] tells which format a file or line is in, [`reader`] streams
//! lines and documents into traces, and each input format has its own
//! module: [`native`] (the attempt-per-line format), [`chat`] (Chat
//! Completions transcripts), [`tasklog`] (MiroThinker task logs) and
//! [`atif`] (ATIF trajectories).

pub mod atif;
pub mod chat;
pub mod native;
pub mod reader;
pub mod sniff;
pub mod source;
pub mod tasklog;

pub use crate::model::{Attempt, Finish, Origin, ToolResult, Trace};
pub use native::MAX_REMEMBERED_PROMPT_BYTES;
pub use reader::{BadLine, Record, TraceReader};
pub use sniff::InputFormat;
pub use source::{InputSpec, ReadOptions};
pub use tasklog::TaskLogRead;
