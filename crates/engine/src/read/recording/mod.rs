//! Recordings made by `mirotrace record` (docs/record.md): one JSON object
//! per call, marked `"mirotrace_recording": 1`. [`call`] reads a line into
//! a [`RecordedCall`] (the request as a conversation, [`request`]; the
//! answer or the failure, [`response`], streams merged by [`stream`]).
//! Read alone ([`format::RECORDING`]), a recording's calls become traces
//! ([`traces`]): each call slimmed as it is read ([`slim`]), grouped by
//! run, split into conversations with the client's retries folded
//! ([`conversation`]), each attempt built with what later requests show of
//! it ([`attempt`]).

pub mod attempt;
pub mod call;
pub mod conversation;
pub mod format;
pub mod request;
pub mod response;
pub mod slim;
pub mod stream;
pub mod traces;

#[cfg(test)]
mod tests;

pub use call::{parse, Answer, Api, CallResult, RecordedCall, Request, DEFAULT_TRACE_HEADER};
pub use format::RECORDING;
