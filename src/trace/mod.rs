//! Reading traces: the attempt model, the native line format, streaming readers.

pub mod model;
pub mod native;
pub mod reader;

pub use model::{Attempt, Finish, Origin, ToolResult, Trace};
pub use reader::{BadLine, Record, TraceReader};
