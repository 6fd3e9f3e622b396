//! The input layer: where bytes become [`Trace`]s of [`Attempt`]s.
//!
//! [`source`] names and opens inputs (files, folders, stdin, gzip/zstd,
//! Inspect's `.eval` archives; [`mapped`] reads plain JSONL files through a
//! memory map), [`binary`] tells binary data from text,
//! [`sniff`] tells a file's layout, [`format`] is the type of the registry
//! of input formats (what a format is, what its reader makes of a record)
//! and [`formats`] the registry (the list: which one a record is, and its
//! reader), [`ours`] recognises mirotrace's own outputs as not traces, [`reader`] streams lines and documents into
//! traces, [`error`] says why an input was skipped or cut short, and
//! each input format has its own module: [`native`] (the attempt-per-line
//! format), [`chat`] (message lists wherever they sit: Chat Completions,
//! Anthropic content blocks, MiroFlow, tau-bench), [`tasklog`] (MiroThinker
//! task logs), [`atif`] (ATIF trajectories), [`inspect`] (Inspect AI
//! logs), [`openhands`] (OpenHands event streams), [`swe_agent`] (SWE-agent
//! and mini-swe-agent trajectories), [`claude_code`] (Claude Code sessions)
//! [`otel`] (OpenTelemetry GenAI / OpenInference spans, OTLP or plain
//! JSON), [`openhands_v1`] (OpenHands V1 events and LLM completion logs)
//! and [`tau2`] (tau2-bench results). [`calls`]
//! turns other harnesses' tool-call shapes into the one the parser reads,
//! [`usage`] their token counts and task results, and [`attribution`]
//! decides which model made each attempt, for every format.
//! Every reader but the native and task-log ones marks its attempts
//! [`Attempt::native_tools`]: see docs/input-formats.md.

pub mod atif;
pub mod attribution;
pub mod binary;
pub mod calls;
pub mod chat;
pub mod claude_code;
pub mod clock;
pub mod error;
pub mod format;
pub mod formats;
pub mod inspect;
pub mod join;
pub mod mapped;
pub mod native;
pub mod openhands;
pub mod openhands_v1;
pub mod otel;
pub mod ours;
pub mod reader;
pub mod recording;
pub mod sniff;
pub mod source;
pub mod swe_agent;
pub mod tasklog;
pub mod tau2;
pub mod usage;

pub use crate::model::{Attempt, Finish, Origin, ToolResult, Trace};
pub use error::{NoAttempt, ReadError};
pub use formats::InputFormat;
pub use native::MAX_REMEMBERED_PROMPT_BYTES;
pub use reader::{BadLine, NotTraces, Record, TraceReader};
pub use source::{InputSpec, ReadOptions};
pub use tasklog::TaskLogRead;
