//! The proxy: a listener, one task per connection (HTTP/1.1, keep-alive),
//! one upstream client with a connection pool, and shutdown.
//!
//! Shutdown ([`Shutdown::trigger`]): the listener closes, idle keep-alive
//! connections are closed at once, connections with a call in flight
//! close when it ends, and `run` returns once every call's line is
//! written.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use http::{Request, Response, StatusCode};
use hyper::body::Incoming;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio::sync::Notify;

pub use crate::call::Stats;
use crate::call::{
    message_of, Call, Context, Counted, Flushes, Pending, RequestBody, ResponseBody,
};
use crate::error::Error;
use crate::line::{CallError, ErrorKind};
use crate::upstream::{end_to_end, Upstream};
use crate::writer::{Recording, Writer};

/// How the proxy runs.
#[derive(Debug, Clone)]
pub struct Options {
    pub upstream: Upstream,
    pub listen: SocketAddr,
    /// No response head within this → 504; no body frame within this
    /// mid-body → the stream ends.
    pub timeout: Duration,
    /// Bodies up to this many bytes are stored; bigger ones pass through
    /// and are counted only.
    pub max_body: usize,
}

/// Asks a running proxy to stop (from any thread; more than once is the
/// same as once).
#[derive(Clone, Default)]
pub struct Shutdown(Arc<Notify>);

impl Shutdown {
    pub fn trigger(&self) {
        // A stored permit: a trigger before `run` waits is not lost.
        self.0.notify_one();
    }
}

/// What a run did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Summary {
    /// Calls recorded.
    pub calls: u64,
    /// Of them, calls that ended with an error.
    pub errors: u64,
    /// Body bytes passed, both ways.
    pub bytes: u64,
}

/// A bound proxy, not yet serving.
pub struct Proxy {
    runtime: tokio::runtime::Runtime,
    listener: TcpListener,
    local: SocketAddr,
    options: Options,
    recording: Recording,
    shutdown: Shutdown,
    stats: Arc<Stats>,
}

impl Proxy {
    /// Binds the listen address (port 0: a free one).
    pub fn bind(options: Options, recording: Recording) -> Result<Proxy, Error> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("proxy")
            .enable_all()
            .build()
            .map_err(Error::Runtime)?;
        let addr = options.listen;
        let bind_error = |source| Error::Bind { addr, source };
        let listener = runtime
            .block_on(TcpListener::bind(addr))
            .map_err(bind_error)?;
        let local = listener.local_addr().map_err(bind_error)?;
        Ok(Proxy {
            runtime,
            listener,
            local,
            options,
            recording,
            shutdown: Shutdown::default(),
            stats: Arc::default(),
        })
    }

    /// The address it listens on (with the port chosen for port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.local
    }

    /// Stops it.
    pub fn shutdown(&self) -> Shutdown {
        self.shutdown.clone()
    }

    /// The running counts.
    pub fn stats(&self) -> Arc<Stats> {
        self.stats.clone()
    }

    /// Serves until [`Shutdown::trigger`] (or a failed write to the
    /// recording), then finishes the calls in flight and writes their
    /// lines.
    pub fn run(self) -> Result<Summary, Error> {
        let Proxy {
            runtime,
            listener,
            local: _,
            options,
            recording,
            shutdown,
            stats,
        } = self;
        let next = recording.next_call();
        let on_failure = shutdown.clone();
        let (sink, writer) = Writer::start(recording, move || on_failure.trigger())?;
        let ctx = Arc::new(Context {
            sink: sink.clone(),
            upstream: options.upstream.shown().to_string(),
            max_body: options.max_body,
            stats: stats.clone(),
        });
        let served = runtime.block_on(async move {
            let client = client()?;
            let shared = Arc::new(Shared {
                ctx,
                client,
                upstream: options.upstream,
                timeout: options.timeout,
                next: AtomicU64::new(next),
            });
            serve(listener, shared, shutdown).await;
            Ok::<(), Error>(())
        });
        // Connections still spawned (none after a graceful shutdown) end
        // with the runtime.
        runtime.shutdown_timeout(Duration::from_secs(1));
        sink.close();
        let written = writer.join();
        served?;
        written?;
        Ok(Summary {
            calls: stats.calls.load(Ordering::Relaxed),
            errors: stats.errors.load(Ordering::Relaxed),
            bytes: stats.bytes.load(Ordering::Relaxed),
        })
    }
}

type UpstreamClient = Client<hyper_rustls::HttpsConnector<HttpConnector>, RequestBody>;

fn client() -> Result<UpstreamClient, Error> {
    let mut http = HttpConnector::new();
    http.enforce_http(false);
    http.set_nodelay(true);
    let https = hyper_rustls::HttpsConnectorBuilder::new()
        .with_tls_config(tls_config()?)
        .https_or_http()
        .enable_http1()
        .wrap_connector(http);
    Ok(Client::builder(TokioExecutor::new())
        .pool_timer(TokioTimer::new())
        // Header names go out spelled as they came (`X-Request-Id`), both
        // ways: hyper keeps each message's spelling in its extensions.
        .http1_preserve_header_case(true)
        .build(https))
}

/// rustls (ring) trusting Mozilla's roots and the system's: a system
/// store that cannot be read, or a certificate in it that rustls refuses,
/// leaves Mozilla's roots.
fn tls_config() -> Result<rustls::ClientConfig, Error> {
    let mut roots = rustls::RootCertStore::empty();
    roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
    for cert in rustls_native_certs::load_native_certs().certs {
        let _ = roots.add(cert);
    }
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(|e| Error::Runtime(std::io::Error::other(e)))?
    .with_root_certificates(roots)
    .with_no_client_auth();
    Ok(config)
}

struct Shared {
    ctx: Arc<Context>,
    client: UpstreamClient,
    upstream: Upstream,
    timeout: Duration,
    next: AtomicU64,
}

async fn serve(listener: TcpListener, shared: Arc<Shared>, shutdown: Shutdown) {
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new());
    // A keep-alive connection may idle as long as its client likes.
    http.header_read_timeout(None);
    // The upstream's headers come back as they were: no `date` added,
    // names spelled as the upstream spelled them.
    http.auto_date_header(false);
    http.preserve_header_case(true);
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let stream = match accepted {
                    Ok((stream, _)) => stream,
                    // Out of file descriptors and the like: let the
                    // connections in flight end, then accept again.
                    Err(_) => {
                        tokio::time::sleep(Duration::from_millis(20)).await;
                        continue;
                    }
                };
                let _ = stream.set_nodelay(true);
                let shared = shared.clone();
                // The connection's completed flushes, which a response body
                // cut off by its upstream waits for (see `call::FLUSH_GRACE`).
                let flushes = Flushes::default();
                let io = Counted::new(TokioIo::new(stream), flushes.clone());
                let service = hyper::service::service_fn(move |req| {
                    handle(shared.clone(), flushes.clone(), req)
                });
                let connection = graceful.watch(http.serve_connection(io, service));
                tokio::spawn(async move {
                    let _ = connection.await;
                });
            }
            () = shutdown.0.notified() => break,
        }
    }
    drop(listener);
    graceful.shutdown().await;
}

async fn handle(
    shared: Arc<Shared>,
    flushes: Flushes,
    request: Request<Incoming>,
) -> Result<Response<ResponseBody>, Infallible> {
    let number = shared.next.fetch_add(1, Ordering::Relaxed);
    let (mut parts, body) = request.into_parts();
    let call = Call::start(shared.ctx.clone(), number, &parts);
    let mut pending = Pending::new(call.clone());
    let target = match shared.upstream.target(parts.uri.path(), parts.uri.query()) {
        Ok(uri) => uri,
        Err(e) => {
            let message = format!("cannot make the upstream's URL: {e}");
            return Ok(failed(&mut pending, ErrorKind::Connect, message));
        }
    };
    let mut upstream_request = Request::new(call.request_body(body));
    *upstream_request.method_mut() = parts.method.clone();
    *upstream_request.uri_mut() = target;
    *upstream_request.headers_mut() = shared.upstream.request_headers(&parts.headers);
    // The spelling of the client's header names (hyper's extension).
    *upstream_request.extensions_mut() = std::mem::take(&mut parts.extensions);
    let sent = tokio::time::timeout(shared.timeout, shared.client.request(upstream_request)).await;
    let response = match sent {
        Err(_) => {
            let message = format!(
                "no response head from the upstream within {} s (--timeout)",
                shared.timeout.as_secs_f64()
            );
            call.drain_request(shared.timeout).await;
            return Ok(failed(&mut pending, ErrorKind::Timeout, message));
        }
        Ok(Err(e)) => {
            let (kind, message) = match call.request_failed() {
                Some(why) => (
                    ErrorKind::RequestBody,
                    format!("cannot read the request's body: {why}"),
                ),
                None if e.is_connect() => (
                    ErrorKind::Connect,
                    format!("cannot connect to the upstream: {}", message_of(&e)),
                ),
                None => (
                    ErrorKind::Upstream,
                    format!(
                        "the upstream closed the exchange before its response: {}",
                        message_of(&e)
                    ),
                ),
            };
            if kind != ErrorKind::RequestBody {
                call.drain_request(shared.timeout).await;
            }
            return Ok(failed(&mut pending, kind, message));
        }
        Ok(Ok(response)) => response,
    };
    let (head, body) = response.into_parts();
    call.response_head(head.status.as_u16(), &head.headers);
    let mut out = Response::new(ResponseBody::upstream(
        body,
        pending,
        shared.timeout,
        flushes,
    ));
    *out.status_mut() = head.status;
    *out.headers_mut() = end_to_end(&head.headers);
    // The spelling of the upstream's header names.
    *out.extensions_mut() = head.extensions;
    Ok(out)
}

/// Ends the call with `error` and answers the client with the proxy's
/// own status: 504 for a timeout, 400 for an unreadable request body,
/// 502 otherwise.
fn failed(pending: &mut Pending, kind: ErrorKind, message: String) -> Response<ResponseBody> {
    let status = match kind {
        ErrorKind::Timeout => StatusCode::GATEWAY_TIMEOUT,
        ErrorKind::RequestBody => StatusCode::BAD_REQUEST,
        _ => StatusCode::BAD_GATEWAY,
    };
    let text = format!("mirotrace record: {message}\n");
    pending.finish(Some(CallError { kind, message }));
    let mut out = Response::new(ResponseBody::own(text));
    *out.status_mut() = status;
    out.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    out
}
