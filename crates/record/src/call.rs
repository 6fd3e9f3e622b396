//! One call on its way through: the request's and the response's bodies
//! pass frame by frame (each frame forwarded as soon as it arrives, a copy
//! kept up to `--max-body`), and when the call ends — the response's last
//! frame, an error, a timeout, a client that hung up — its line goes to
//! the writer, once.

use std::error::Error as StdError;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context as TaskContext, Poll};
use std::time::{Duration, Instant, SystemTime};

use bytes::Bytes;
use http::HeaderMap;
use http_body::{Body, Frame, SizeHint};
use hyper::body::Incoming;
use tokio::time::Sleep;

use crate::line::{self, CallError, Captured, ErrorKind, Headers, Line};
use crate::redact;
use crate::writer::Sink;

/// The error type of the bodies passed on.
pub type BoxError = Box<dyn StdError + Send + Sync>;

/// Running counts, read by the progress line and the summary.
#[derive(Debug, Default)]
pub struct Stats {
    /// Calls finished (and queued for the recording).
    pub calls: AtomicU64,
    /// Calls that ended with an `error`.
    pub errors: AtomicU64,
    /// Body bytes passed, both ways.
    pub bytes: AtomicU64,
    /// Calls started and not finished.
    pub in_flight: AtomicU64,
}

/// What every call shares.
pub struct Context {
    pub sink: Sink,
    pub upstream: String,
    pub max_body: usize,
    pub stats: Arc<Stats>,
}

struct Head {
    headers: Headers,
    redacted: Vec<String>,
    encoding: Option<String>,
}

/// Headers as recorded, credentials left out and named.
fn recorded(map: &HeaderMap) -> Head {
    let mut headers = Vec::new();
    let mut redacted = Vec::new();
    for name in map.keys() {
        let n = name.as_str().to_string();
        if redact::is_credential_header(&n) {
            redacted.push(n);
            continue;
        }
        let values = map
            .get_all(name)
            .iter()
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
            .collect();
        headers.push((n, values));
    }
    let encoding = map
        .get(http::header::CONTENT_ENCODING)
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
    Head {
        headers: Headers(headers),
        redacted,
        encoding,
    }
}

struct State {
    number: u64,
    started_wall: SystemTime,
    started: Instant,
    method: String,
    path: String,
    query: Option<String>,
    request: Head,
    request_body: Captured,
    request_error: Option<String>,
    /// The client's body while it is being passed on, so a call that
    /// fails before its response can still read (and record) the rest.
    request_slot: Option<Slot>,
    first_byte: Option<Duration>,
    response: Option<(u16, Head)>,
    response_body: Captured,
    done: bool,
}

/// One call's shared state (the request body, the response body and the
/// handler each hold it).
#[derive(Clone)]
pub struct Call {
    state: Arc<Mutex<State>>,
    ctx: Arc<Context>,
}

impl Call {
    /// A call numbered `number` starts, with the request's head.
    pub fn start(ctx: Arc<Context>, number: u64, parts: &http::request::Parts) -> Call {
        ctx.stats.in_flight.fetch_add(1, Ordering::Relaxed);
        let state = State {
            number,
            started_wall: SystemTime::now(),
            started: Instant::now(),
            method: parts.method.as_str().to_string(),
            path: parts.uri.path().to_string(),
            query: parts.uri.query().map(redact::query),
            request: recorded(&parts.headers),
            request_body: Captured::default(),
            request_error: None,
            request_slot: None,
            first_byte: None,
            response: None,
            response_body: Captured::default(),
            done: false,
        };
        Call {
            state: Arc::new(Mutex::new(state)),
            ctx,
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The client's body, passed on to the upstream as it arrives.
    pub fn request_body(&self, inner: Incoming) -> RequestBody {
        let slot = Arc::new(Mutex::new(Some(inner)));
        self.lock().request_slot = Some(slot.clone());
        RequestBody {
            inner: slot,
            call: self.clone(),
        }
    }

    /// After a failure before the response (refused, timed out): reads
    /// what is left of the client's body, for at most `limit`, so the
    /// record holds the request the call was for (and the client's
    /// connection stays usable).
    pub async fn drain_request(&self, limit: Duration) {
        let Some(slot) = self.lock().request_slot.take() else {
            return;
        };
        let Some(mut body) = slot.lock().unwrap_or_else(|e| e.into_inner()).take() else {
            return;
        };
        let read = async {
            while let Some(frame) = http_body_util::BodyExt::frame(&mut body).await {
                match frame {
                    Ok(frame) => {
                        if let Some(data) = frame.data_ref() {
                            self.passed_request(data);
                        }
                    }
                    Err(e) => {
                        self.lock().request_error = Some(message_of(&e));
                        break;
                    }
                }
            }
        };
        let _ = tokio::time::timeout(limit, read).await;
    }

    fn passed_request(&self, data: &Bytes) {
        let max = self.ctx.max_body;
        self.lock().request_body.push(data, max);
        self.ctx
            .stats
            .bytes
            .fetch_add(data.len() as u64, Ordering::Relaxed);
    }

    /// Why the client's body could not be read, if it could not.
    pub fn request_failed(&self) -> Option<String> {
        self.lock().request_error.clone()
    }

    /// The upstream's response head arrived.
    pub fn response_head(&self, status: u16, headers: &HeaderMap) {
        let mut s = self.lock();
        s.first_byte = Some(s.started.elapsed());
        s.response = Some((status, recorded(headers)));
    }

    fn finish(&self, error: Option<CallError>) {
        let mut s = self.lock();
        if s.done {
            return;
        }
        s.done = true;
        let stats = &self.ctx.stats;
        stats.in_flight.fetch_sub(1, Ordering::Relaxed);
        stats.calls.fetch_add(1, Ordering::Relaxed);
        if error.is_some() {
            stats.errors.fetch_add(1, Ordering::Relaxed);
        }
        let seconds = s.started.elapsed().as_secs_f64();
        let max = self.ctx.max_body;
        let upstream = self.ctx.upstream.clone();
        let request_body = std::mem::take(&mut s.request_body);
        let response_body = std::mem::take(&mut s.response_body);
        let request = std::mem::replace(
            &mut s.request,
            Head {
                headers: Headers::default(),
                redacted: Vec::new(),
                encoding: None,
            },
        );
        let response = s.response.take();
        let (number, started, first_byte) = (s.number, s.started_wall, s.first_byte);
        let (method, path, query) = (
            std::mem::take(&mut s.method),
            std::mem::take(&mut s.path),
            s.query.take(),
        );
        drop(s);
        // Decoding and serialising happen on the writer's thread.
        self.ctx.sink.send(Box::new(move || {
            Line {
                call: number,
                started,
                seconds,
                first_byte_seconds: first_byte.map(|d| d.as_secs_f64()),
                upstream,
                request: line::Request {
                    method,
                    path,
                    query,
                    headers: request.headers,
                    redacted: request.redacted,
                    bytes: request_body.bytes,
                    body: request_body.into_body(request.encoding.as_deref(), max),
                },
                response: response.map(|(status, head)| line::Response {
                    status,
                    headers: head.headers,
                    redacted: head.redacted,
                    bytes: response_body.bytes,
                    body: response_body.into_body(head.encoding.as_deref(), max),
                }),
                error,
            }
            .to_bytes()
        }));
    }
}

/// A call not finished yet: dropped unfinished (the client hung up and
/// hyper dropped the handler or the body), it is recorded as
/// `client_disconnected`.
pub struct Pending(Option<Call>);

impl Pending {
    pub fn new(call: Call) -> Pending {
        Pending(Some(call))
    }

    /// Ends the call (`None`: complete).
    pub fn finish(&mut self, error: Option<CallError>) {
        if let Some(call) = self.0.take() {
            call.finish(error);
        }
    }

    fn response_bytes(&self) -> u64 {
        self.0.as_ref().map_or(0, |c| c.lock().response_body.bytes)
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        let Some(call) = self.0.take() else {
            return;
        };
        let message = if call.lock().response.is_some() {
            format!(
                "the client hung up after {} bytes of the response",
                call.lock().response_body.bytes
            )
        } else {
            "the client hung up before the response came".to_string()
        };
        call.finish(Some(CallError {
            kind: ErrorKind::ClientDisconnected,
            message,
        }));
    }
}

type Slot = Arc<Mutex<Option<Incoming>>>;

/// The client's body on its way to the upstream.
pub struct RequestBody {
    inner: Slot,
    call: Call,
}

impl RequestBody {
    fn slot(&self) -> MutexGuard<'_, Option<Incoming>> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Body for RequestBody {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut TaskContext<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let polled = match self.slot().as_mut() {
            Some(inner) => Pin::new(inner).poll_frame(cx),
            // Taken back by `drain_request`: the exchange is over.
            None => Poll::Ready(None),
        };
        match polled {
            Poll::Ready(Some(Ok(frame))) => {
                if let Some(data) = frame.data_ref() {
                    self.call.passed_request(data);
                }
                Poll::Ready(Some(Ok(frame)))
            }
            Poll::Ready(Some(Err(e))) => {
                self.call.lock().request_error = Some(message_of(&e));
                Poll::Ready(Some(Err(Box::new(e))))
            }
            Poll::Ready(None) => Poll::Ready(None),
            Poll::Pending => Poll::Pending,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.slot().as_ref().is_none_or(Body::is_end_stream)
    }

    fn size_hint(&self) -> SizeHint {
        self.slot()
            .as_ref()
            .map_or_else(|| SizeHint::with_exact(0), Body::size_hint)
    }
}

/// The response to the client: the upstream's body passed on, or a short
/// message of the proxy's own (502, 504).
pub enum ResponseBody {
    Upstream(Box<Streamed>),
    Own(Option<Bytes>),
}

impl ResponseBody {
    /// The upstream's body, ended (`upstream`) when no frame comes for
    /// `stall`.
    pub fn upstream(inner: Incoming, pending: Pending, stall: Duration) -> ResponseBody {
        ResponseBody::Upstream(Box::new(Streamed {
            inner,
            pending,
            stall,
            timer: Box::pin(tokio::time::sleep(stall)),
            ended: false,
        }))
    }

    /// A message of the proxy's own.
    pub fn own(text: String) -> ResponseBody {
        ResponseBody::Own(Some(Bytes::from(text)))
    }
}

/// The upstream's body on its way to the client.
pub struct Streamed {
    inner: Incoming,
    pending: Pending,
    stall: Duration,
    timer: Pin<Box<Sleep>>,
    ended: bool,
}

impl Streamed {
    fn end(&mut self, error: Option<CallError>) {
        self.ended = true;
        self.pending.finish(error);
    }
}

impl Body for ResponseBody {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut TaskContext<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let s = match &mut *self {
            ResponseBody::Own(bytes) => {
                return Poll::Ready(bytes.take().map(|b| Ok(Frame::data(b))))
            }
            ResponseBody::Upstream(s) => s,
        };
        if s.ended {
            return Poll::Ready(None);
        }
        match Pin::new(&mut s.inner).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => {
                if let Some(data) = frame.data_ref() {
                    if let Some(call) = &s.pending.0 {
                        call.lock().response_body.push(data, call.ctx.max_body);
                        call.ctx
                            .stats
                            .bytes
                            .fetch_add(data.len() as u64, Ordering::Relaxed);
                    }
                }
                let deadline = tokio::time::Instant::now() + s.stall;
                s.timer.as_mut().reset(deadline);
                Poll::Ready(Some(Ok(frame)))
            }
            Poll::Ready(Some(Err(e))) => {
                let message = format!(
                    "the upstream broke the response after {} bytes: {}",
                    s.pending.response_bytes(),
                    message_of(&e)
                );
                s.end(Some(CallError {
                    kind: ErrorKind::Upstream,
                    message,
                }));
                Poll::Ready(Some(Err(Box::new(e))))
            }
            Poll::Ready(None) => {
                s.end(None);
                Poll::Ready(None)
            }
            Poll::Pending => {
                if s.timer.as_mut().poll(cx).is_pending() {
                    return Poll::Pending;
                }
                let message = format!(
                    "the upstream sent nothing for {} s after {} bytes of the response (--timeout)",
                    s.stall.as_secs_f64(),
                    s.pending.response_bytes()
                );
                s.end(Some(CallError {
                    kind: ErrorKind::Upstream,
                    message: message.clone(),
                }));
                Poll::Ready(Some(Err(message.into())))
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        match self {
            ResponseBody::Own(bytes) => bytes.is_none(),
            ResponseBody::Upstream(s) => s.ended,
        }
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            ResponseBody::Own(Some(b)) => SizeHint::with_exact(b.len() as u64),
            ResponseBody::Own(None) => SizeHint::with_exact(0),
            ResponseBody::Upstream(s) => s.inner.size_hint(),
        }
    }
}

impl Drop for Streamed {
    fn drop(&mut self) {
        // hyper may stop polling a body whose length it has written
        // whole: that body is complete, not cut off.
        if !self.ended && self.inner.is_end_stream() {
            self.end(None);
        }
        // Otherwise `pending` records the client's hang-up as it drops.
    }
}

/// An error and its causes, `: `-joined.
pub fn message_of(e: &(dyn StdError + 'static)) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        source = s.source();
    }
    out
}
