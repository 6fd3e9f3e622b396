//! Reading traces: the attempt model, the input formats (native lines, chat
//! transcripts, MiroThinker task logs, ATIF), and streaming readers.

pub mod atif;
pub mod chat;
pub mod detect;
mod fields;
pub mod model;
pub mod native;
mod prompt_cache;
mod raw_scan;
pub mod reader;
mod recent;
pub mod recorded;
pub mod tasklog;

pub use detect::InputFormat;
pub use model::{Attempt, Finish, Origin, ToolResult, Trace};
pub use prompt_cache::MAX_REMEMBERED_PROMPT_BYTES;
pub use reader::{BadLine, Record, TraceReader};
pub use recorded::{Disagreement, RecordedCounts, RecordedEvent, RecordedSummary, RecordedTrace};
