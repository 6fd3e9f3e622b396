//! Recordings made by `mirotrace record` (docs/record.md): one JSON object
//! per call, marked `"mirotrace_recording": 1`. [`call`] reads a line into
//! a [`RecordedCall`] (the request as a conversation, [`request`]; the
//! answer or the failure, [`response`], streams merged by [`stream`]).

pub mod call;
pub mod request;
pub mod response;
pub mod stream;

pub use call::{parse, Answer, Api, CallResult, RecordedCall, Request, DEFAULT_TRACE_HEADER};
