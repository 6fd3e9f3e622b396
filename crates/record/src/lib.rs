//! mirotrace's recording proxy (`mirotrace record`).
//!
//! An HTTP/1.1 reverse proxy in front of one LLM API: every request, on
//! any path, goes to the upstream URL plus that path, and the upstream's
//! status, headers and body come back to the client unchanged, streamed
//! frame by frame as they arrive (Server-Sent Events included). Each call
//! is appended to a JSONL recording when it completes, one line per call,
//! in the format of docs/record.md; credentials are never written.
//!
//! The modules, bottom first (tests/layers.rs checks the order):
//! [`error`] (why the proxy stops), [`line`] (a recording line and its bodies), [`redact`] (what counts as
//! a credential), [`upstream`] (the upstream URL and what is forwarded);
//! [`writer`] (the recording file and its one writer thread); [`call`]
//! (one call: its bodies on the way through, and its line when it ends);
//! [`proxy`] (the listener, the connections, shutdown).

pub mod call;
pub mod error;
pub mod line;
pub mod proxy;
pub mod redact;
pub mod upstream;
pub mod writer;

pub use error::Error;
pub use proxy::{Options, Proxy, Shutdown, Stats, Summary};
pub use upstream::Upstream;
pub use writer::Recording;
