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
            broken: None,
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
    /// The client's error, held back until the grace runs out (see
    /// [`REQUEST_FLUSH_GRACE`]).
    broken: Option<(BoxError, Pin<Box<Sleep>>)>,
}

/// How long the client's mid-body error is held back before it is passed
/// to hyper's client, so the upstream gets every byte the client sent.
///
/// The same dispatcher as on the client's side (see [`FLUSH_GRACE`])
/// drops the frames it has queued for the upstream when the request body
/// fails. The upstream connection comes from the client's pool, so its
/// flushes cannot be counted as the client connection's are; the error
/// waits a fixed grace instead, during which hyper flushes its buffer to
/// the upstream's socket (it does so at once unless that socket is full).
/// The client has gone by then, so nobody waits on the grace but the
/// upstream, which sees its request cut off this much later.
const REQUEST_FLUSH_GRACE: Duration = Duration::from_millis(250);

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
        let this = self.get_mut();
        if let Some((_, grace)) = &mut this.broken {
            // Waiting for hyper to write the frames ahead of the error.
            if grace.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
            return Poll::Ready(this.broken.take().map(|(e, _)| Err(e)));
        }
        let polled = match this.slot().as_mut() {
            Some(inner) => Pin::new(inner).poll_frame(cx),
            // Taken back by `drain_request`: the exchange is over.
            None => Poll::Ready(None),
        };
        match polled {
            Poll::Ready(Some(Ok(frame))) => {
                if let Some(data) = frame.data_ref() {
                    this.call.passed_request(data);
                }
                Poll::Ready(Some(Ok(frame)))
            }
            Poll::Ready(Some(Err(e))) => {
                this.call.lock().request_error = Some(message_of(&e));
                let mut grace = Box::pin(tokio::time::sleep(REQUEST_FLUSH_GRACE));
                if grace.as_mut().poll(cx).is_ready() {
                    return Poll::Ready(Some(Err(Box::new(e))));
                }
                this.broken = Some((Box::new(e), grace));
                Poll::Pending
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
    pub fn upstream(
        inner: Incoming,
        pending: Pending,
        stall: Duration,
        flushes: Flushes,
    ) -> ResponseBody {
        ResponseBody::Upstream(Box::new(Streamed {
            inner,
            pending,
            stall,
            timer: Box::pin(tokio::time::sleep(stall)),
            ended: false,
            flushes,
            broken: None,
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
    /// The client connection's flushes, to know when the frames passed
    /// before an error have been written.
    flushes: Flushes,
    /// The upstream's error, held back (see [`FLUSH_GRACE`]) until the
    /// frames passed just before it are written to the client, and the
    /// connection's flush count when it came.
    broken: Option<(BoxError, u64)>,
}

/// The longest the upstream's mid-body error is held back before it is
/// passed to hyper.
///
/// hyper's HTTP/1 dispatcher polls a response body again and again while
/// its write buffer has room, and when a poll returns `Err` it tears the
/// connection down at once, without writing what it has buffered: the
/// frames the upstream sent just before it broke off were lost (a client
/// got 141 of 799 bytes). So the error is held back: the body answers
/// `Pending`, hyper flushes its buffer (it calls `poll_flush` after every
/// `poll_write`, and polls the body again once a flush completes), and the
/// error goes once the connection reports a completed flush ([`Flushes`]:
/// hyper flushes the socket only when its buffer has been written whole),
/// usually within the same poll. The bound is for a client that has
/// stopped reading (its socket full, the flush never completing): it gets
/// the error this late rather than never; one second is far longer than
/// writing a buffer (at most hyper's ~400 KiB) to a client that reads.
const FLUSH_GRACE: Duration = Duration::from_secs(1);

/// How many times a client connection's flush has completed: hyper's
/// HTTP/1 connection flushes the socket only after writing its whole
/// write buffer, so a count that moved on means that everything queued
/// before has gone to the socket.
#[derive(Clone, Default)]
pub struct Flushes(Arc<AtomicU64>);

impl Flushes {
    fn count(&self) -> u64 {
        self.0.load(Ordering::Acquire)
    }
}

/// A client connection's I/O, counting its completed flushes.
pub struct Counted<T> {
    inner: T,
    flushes: Flushes,
}

impl<T> Counted<T> {
    pub fn new(inner: T, flushes: Flushes) -> Counted<T> {
        Counted { inner, flushes }
    }
}

impl<T: hyper::rt::Read + Unpin> hyper::rt::Read for Counted<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut TaskContext<'_>,
        buf: hyper::rt::ReadBufCursor<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<T: hyper::rt::Write + Unpin> hyper::rt::Write for Counted<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut TaskContext<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<std::io::Result<()>> {
        let flushed = Pin::new(&mut self.inner).poll_flush(cx);
        if let Poll::Ready(Ok(())) = flushed {
            self.flushes.0.fetch_add(1, Ordering::Release);
        }
        flushed
    }

    fn poll_shutdown(
        mut self: Pin<&mut Self>,
        cx: &mut TaskContext<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut TaskContext<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }
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
        if let Some((_, at)) = &s.broken {
            // Waiting for hyper to write the frames ahead of the error.
            let flushed = s.flushes.count() != *at;
            if !flushed && s.timer.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
            s.ended = true;
            return Poll::Ready(s.broken.take().map(|(e, _)| Err(e)));
        }
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
                // Recorded now; passed on after the grace (see
                // `FLUSH_GRACE`): never a clean end.
                s.pending.finish(Some(CallError {
                    kind: ErrorKind::Upstream,
                    message,
                }));
                s.broken = Some((Box::new(e), s.flushes.count()));
                let deadline = tokio::time::Instant::now() + FLUSH_GRACE;
                s.timer.as_mut().reset(deadline);
                match s.timer.as_mut().poll(cx) {
                    Poll::Pending => Poll::Pending,
                    Poll::Ready(()) => {
                        s.ended = true;
                        Poll::Ready(s.broken.take().map(|(e, _)| Err(e)))
                    }
                }
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
