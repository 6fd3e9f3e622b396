//! `mirotrace record`: the built binary as a proxy (`--listen
//! 127.0.0.1:0`, the port read from its `listening on` line) between a raw
//! HTTP client and a small upstream server, both written here on std
//! sockets. Pass-through byte for byte, streaming frame by frame, the
//! recording's lines (docs/record.md), credentials never written, errors
//! (refused, hanging, hang-ups, a 200 MB body), and shutdown on SIGTERM.
//! Nothing here waits on a clock to decide a result: each step waits for
//! the event it needs (a line on stderr, a byte on a socket, an exit).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, ExitStatus, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::{mirotrace, scratch};

// ---- the proxy under test ------------------------------------------------

struct Proxy {
    child: Child,
    port: u16,
    /// stderr's lines after the `listening on` one, as they come.
    lines: mpsc::Receiver<String>,
    seen: Vec<String>,
}

impl Proxy {
    fn start(upstream: &str, recording: &Path, extra: &[&str]) -> Proxy {
        let mut child = mirotrace()
            .args([
                "record",
                "--upstream",
                upstream,
                "--listen",
                "127.0.0.1:0",
                "-o",
            ])
            .arg(recording)
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run mirotrace record");
        let mut err = BufReader::new(child.stderr.take().expect("stderr"));
        let mut first = String::new();
        err.read_line(&mut first).expect("stderr line");
        let port = first
            .trim_end()
            .strip_prefix("mirotrace: listening on http://127.0.0.1:")
            .unwrap_or_else(|| panic!("not the listening line: {first:?}"))
            .parse()
            .expect("a port");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in err.lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Proxy {
            child,
            port,
            lines,
            seen: Vec::new(),
        }
    }

    fn signal(&self, name: &str) {
        let ok = std::process::Command::new("kill")
            .args([format!("-{name}"), self.child.id().to_string()])
            .status()
            .expect("kill");
        assert!(ok.success());
    }

    /// Waits for a stderr line containing `text`.
    fn wait_for_line(&mut self, text: &str) {
        while !self.seen.iter().any(|l| l.contains(text)) {
            let line = self
                .lines
                .recv_timeout(Duration::from_secs(120))
                .unwrap_or_else(|_| panic!("no stderr line with {text:?}: {:?}", self.seen));
            self.seen.push(line);
        }
    }

    /// SIGTERM, then the exit status and the rest of stderr.
    fn stop(mut self) -> (ExitStatus, String) {
        self.signal("TERM");
        let status = wait_exit(&mut self.child);
        self.seen.extend(self.lines.iter());
        (status, self.seen.join("\n"))
    }
}

/// The exit status; a hang guard, not a measure: a proxy that never
/// exits fails here after two minutes instead of hanging the suite.
fn wait_exit(child: &mut Child) -> ExitStatus {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            return status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("the proxy did not exit");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Every line of the recording, parsed.
fn recording_lines(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).expect("the recording");
    assert!(text.is_empty() || text.ends_with('\n'), "{text}");
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

// ---- a small upstream ----------------------------------------------------

/// A request as the upstream received it.
#[derive(Debug, Clone)]
struct Received {
    request_line: String,
    headers: Vec<(String, String)>,
    /// The body when under 1 MB.
    body: Vec<u8>,
    body_len: u64,
    /// Whether every byte was [`pattern`]'s.
    patterned: bool,
}

impl Received {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

type Handler = dyn Fn(&mut TcpStream, &Received) + Send + Sync;

struct Upstream {
    port: u16,
    received: Arc<Mutex<Vec<Received>>>,
}

impl Upstream {
    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
}

/// Serves each connection on its own thread, request after request,
/// answering with `handler`.
fn upstream(handler: impl Fn(&mut TcpStream, &Received) + Send + Sync + 'static) -> Upstream {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let received = Arc::new(Mutex::new(Vec::new()));
    let handler: Arc<Handler> = Arc::new(handler);
    let log = received.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            let (handler, log) = (handler.clone(), log.clone());
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().expect("clone"));
                let mut writer = stream;
                while let Some(request) = read_request(&mut reader) {
                    log.lock().unwrap().push(request.clone());
                    handler(&mut writer, &request);
                }
            });
        }
    });
    Upstream { port, received }
}

fn read_head(reader: &mut impl BufRead) -> Option<(String, Vec<(String, String)>)> {
    let mut first = String::new();
    if reader.read_line(&mut first).ok()? == 0 {
        return None;
    }
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        let (n, v) = line.split_once(':')?;
        headers.push((n.trim().to_string(), v.trim().to_string()));
    }
    Some((first.trim_end().to_string(), headers))
}

fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

fn read_request(reader: &mut BufReader<TcpStream>) -> Option<Received> {
    let (request_line, headers) = read_head(reader)?;
    let length: u64 = header(&headers, "content-length").map_or(0, |v| v.parse().unwrap());
    let mut body = Vec::new();
    let mut patterned = true;
    let mut got = 0u64;
    let mut buf = vec![0u8; 1 << 16];
    while got < length {
        let want = buf.len().min((length - got) as usize);
        let n = reader.read(&mut buf[..want]).ok()?;
        if n == 0 {
            return None;
        }
        patterned &= matches_pattern(got, &buf[..n]);
        if length < 1 << 20 {
            body.extend_from_slice(&buf[..n]);
        }
        got += n as u64;
    }
    Some(Received {
        request_line,
        headers,
        body,
        body_len: got,
        patterned,
    })
}

/// The bytes of a big body: byte `i` is `i % 251`.
fn pattern() -> &'static [u8] {
    static P: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
    P.get_or_init(|| (0..251 * 1024).map(|i| (i % 251) as u8).collect())
}

fn matches_pattern(offset: u64, chunk: &[u8]) -> bool {
    let p = pattern();
    let start = (offset % 251) as usize;
    chunk.chunks(p.len() - 251).enumerate().all(|(k, c)| {
        let s = (start + k * (p.len() - 251)) % 251;
        c == &p[s..s + c.len()]
    })
}

// ---- a raw client --------------------------------------------------------

struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

fn read_reply(reader: &mut impl BufRead) -> Reply {
    let (status_line, headers) = read_head(reader).expect("a response head");
    let status = status_line
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("a status");
    let mut body = Vec::new();
    if let Some(len) = header(&headers, "content-length") {
        body.resize(len.parse().unwrap(), 0);
        reader.read_exact(&mut body).expect("the body");
    } else if header(&headers, "transfer-encoding").is_some() {
        loop {
            let mut size = String::new();
            reader.read_line(&mut size).expect("chunk size");
            let size = usize::from_str_radix(size.trim(), 16).expect("hex size");
            let mut chunk = vec![0u8; size + 2];
            reader.read_exact(&mut chunk).expect("chunk");
            if size == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..size]);
        }
    } else {
        reader.read_to_end(&mut body).expect("the body");
    }
    Reply {
        status,
        headers,
        body,
    }
}

fn connect(port: u16) -> (BufReader<TcpStream>, TcpStream) {
    let stream = TcpStream::connect(("127.0.0.1", port)).expect("connect to the proxy");
    // A hang guard: a proxy that never answers fails the test.
    stream
        .set_read_timeout(Some(Duration::from_secs(120)))
        .unwrap();
    (BufReader::new(stream.try_clone().unwrap()), stream)
}

/// One request on a fresh connection.
fn exchange(port: u16, request: &[u8]) -> Reply {
    let (mut reader, mut stream) = connect(port);
    stream.write_all(request).unwrap();
    read_reply(&mut reader)
}

fn post(path: &str, extra_headers: &str, body: &[u8]) -> Vec<u8> {
    let mut r = format!(
        "POST {path} HTTP/1.1\r\nHost: localhost\r\n{extra_headers}Content-Length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    r.extend_from_slice(body);
    r
}

fn recording_path(tag: &str) -> PathBuf {
    scratch(tag).join("recording.jsonl")
}

// ---- the tests -----------------------------------------------------------

const SECRETS: [&str; 5] = [
    "sk-SECRET-bearer",
    "SECRET-api-key",
    "SECRET-cookie",
    "SECRET-query",
    "SECRET-set-cookie",
];

#[test]
fn pass_through_is_byte_for_byte_and_the_line_keeps_no_credential() {
    let answer: &[u8] =
        "{\"id\":\"c1\",  \"choices\":[{\"message\":{\"content\":\"héllo\"}}]}".as_bytes();
    let up = upstream(move |s, _| {
        let head = format!(
            "HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nx-custom: a\r\nx-custom: b\r\nset-cookie: s=SECRET-set-cookie\r\nX-RateLimit-Remaining-Tokens: 99\r\ncontent-length: {}\r\n\r\n",
            answer.len()
        );
        s.write_all(head.as_bytes()).unwrap();
        s.write_all(answer).unwrap();
    });
    let rec = recording_path("record-pass");
    let proxy = Proxy::start(&format!("{}/prefix/", up.url()), &rec, &[]);
    let body =
        br#"{"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": false}"#;
    let reply = exchange(
        proxy.port,
        &post(
            "/v1/chat/completions?key=SECRET-query&a=1",
            "Authorization: Bearer sk-SECRET-bearer\r\nx-api-key: SECRET-api-key\r\nCookie: c=SECRET-cookie\r\nX-Upstream-Session-Id: task-7-abc\r\nx-stainless-retry-count: 0\r\nConnection: keep-alive, x-hop\r\nx-hop: 1\r\nContent-Type: application/json\r\n",
            body,
        ),
    );
    // The client: the upstream's status, headers and body as they were.
    assert_eq!(reply.status, 201);
    assert_eq!(reply.body, answer);
    let mut got = reply.headers.clone();
    got.sort();
    let mut want: Vec<(String, String)> = [
        ("Content-Type", "application/json"),
        ("x-custom", "a"),
        ("x-custom", "b"),
        ("set-cookie", "s=SECRET-set-cookie"),
        ("X-RateLimit-Remaining-Tokens", "99"),
        ("content-length", &answer.len().to_string()),
    ]
    .iter()
    .map(|(n, v)| (n.to_string(), v.to_string()))
    .collect();
    want.sort();
    assert_eq!(got, want);
    // The upstream: URL + path, the credentials (they are the upstream's),
    // the host rewritten, hop-by-hop headers gone, the body unchanged.
    let seen = up.received.lock().unwrap()[0].clone();
    // Names spelled as the client spelled them.
    assert!(seen
        .headers
        .iter()
        .any(|(n, _)| n == "X-Upstream-Session-Id"));
    assert_eq!(
        seen.request_line,
        "POST /prefix/v1/chat/completions?key=SECRET-query&a=1 HTTP/1.1"
    );
    assert_eq!(
        seen.header("authorization"),
        Some("Bearer sk-SECRET-bearer")
    );
    assert_eq!(
        seen.header("host"),
        Some(format!("127.0.0.1:{}", up.port).as_str())
    );
    assert_eq!(seen.header("x-hop"), None);
    assert_eq!(seen.header("connection"), None);
    assert_eq!(seen.body, body);

    let (status, stderr) = proxy.stop();
    assert!(status.success(), "{status:?} {stderr}");
    assert!(stderr.contains("recorded 1 call (0 errors,"), "{stderr}");
    let text = std::fs::read_to_string(&rec).unwrap();
    for secret in SECRETS {
        assert!(!text.contains(secret), "{secret} in {text}");
    }
    let lines = recording_lines(&rec);
    assert_eq!(lines.len(), 1);
    let l = &lines[0];
    assert_eq!(l["mirotrace_recording"], 1);
    assert_eq!(l["call"], 1);
    assert_eq!(l["upstream"], up.url() + "/prefix");
    assert!(l["started"].as_str().unwrap().ends_with('Z'));
    assert!(l["seconds"].as_f64().unwrap() >= l["first_byte_seconds"].as_f64().unwrap());
    assert_eq!(l["error"], Value::Null);
    let req = &l["request"];
    assert_eq!(req["method"], "POST");
    assert_eq!(req["path"], "/v1/chat/completions");
    assert_eq!(req["query"], "key=REDACTED&a=1");
    assert_eq!(req["headers"]["x-upstream-session-id"], "task-7-abc");
    assert_eq!(req["headers"]["x-stainless-retry-count"], "0");
    let redacted: Vec<&str> = req["redacted"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    for name in ["authorization", "x-api-key", "cookie"] {
        assert!(redacted.contains(&name), "{redacted:?}");
        assert!(req["headers"].get(name).is_none());
    }
    assert_eq!(req["bytes"], body.len());
    assert_eq!(req["body"], serde_json::from_slice::<Value>(body).unwrap());
    let resp = &l["response"];
    assert_eq!(resp["status"], 201);
    assert_eq!(resp["headers"]["x-custom"], serde_json::json!(["a", "b"]));
    assert_eq!(resp["headers"]["x-ratelimit-remaining-tokens"], "99");
    assert_eq!(resp["redacted"], serde_json::json!(["set-cookie"]));
    assert_eq!(resp["bytes"], answer.len());
    assert_eq!(resp["body"]["choices"][0]["message"]["content"], "héllo");
}

#[test]
fn server_sent_events_pass_one_by_one_as_they_arrive() {
    let (go_tx, go_rx) = mpsc::channel::<()>();
    let go_rx = Mutex::new(go_rx);
    let up = upstream(move |s, _| {
        s.write_all(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n")
            .unwrap();
        let event = |s: &mut TcpStream, text: &str| {
            s.write_all(format!("{:x}\r\n{text}\r\n", text.len()).as_bytes())
                .unwrap();
        };
        event(s, "data: {\"n\":1}\n\n");
        // Event 2 only once the client has event 1 through the proxy.
        go_rx.lock().unwrap().recv().unwrap();
        event(s, "data: {\"n\":2}\n\n");
        event(s, "data: [DONE]\n\n");
        s.write_all(b"0\r\n\r\n").unwrap();
    });
    let rec = recording_path("record-sse");
    let proxy = Proxy::start(&up.url(), &rec, &[]);
    let (mut reader, mut stream) = connect(proxy.port);
    stream
        .write_all(&post("/v1/chat/completions", "", br#"{"stream": true}"#))
        .unwrap();
    let (status, headers) = read_head(&mut reader).unwrap();
    assert!(status.contains(" 200 "), "{status}");
    assert_eq!(header(&headers, "content-type"), Some("text/event-stream"));
    let mut received = String::new();
    let next_chunk = |reader: &mut BufReader<TcpStream>| -> Option<String> {
        let mut size = String::new();
        reader.read_line(&mut size).unwrap();
        let size = usize::from_str_radix(size.trim(), 16).unwrap();
        let mut chunk = vec![0; size + 2];
        reader.read_exact(&mut chunk).unwrap();
        (size > 0).then(|| String::from_utf8(chunk[..size].to_vec()).unwrap())
    };
    while !received.contains("\"n\":1") {
        received.push_str(&next_chunk(&mut reader).expect("event 1 before the end"));
    }
    assert!(!received.contains("\"n\":2"));
    go_tx.send(()).unwrap();
    while let Some(chunk) = next_chunk(&mut reader) {
        received.push_str(&chunk);
    }
    let whole = "data: {\"n\":1}\n\ndata: {\"n\":2}\n\ndata: [DONE]\n\n";
    assert_eq!(received, whole);
    drop(stream);
    let (status, stderr) = proxy.stop();
    assert!(status.success(), "{stderr}");
    let lines = recording_lines(&rec);
    assert_eq!(lines[0]["response"]["body_text"], whole);
    assert_eq!(lines[0]["response"]["bytes"], whole.len());
    assert_eq!(lines[0]["error"], Value::Null);
}

#[test]
fn a_gzip_response_reaches_the_client_compressed_and_the_recording_decoded() {
    let text = br#"{"choices": [{"message": {"content": "compressed"}}]}"#;
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(text).unwrap();
    let compressed = gz.finish().unwrap();
    let sent = compressed.clone();
    let up = upstream(move |s, _| {
        let head = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-encoding: gzip\r\ncontent-length: {}\r\n\r\n",
            sent.len()
        );
        s.write_all(head.as_bytes()).unwrap();
        s.write_all(&sent).unwrap();
    });
    let rec = recording_path("record-gzip");
    let proxy = Proxy::start(&up.url(), &rec, &[]);
    let reply = exchange(
        proxy.port,
        &post("/v1/x", "Accept-Encoding: br, gzip, zstd\r\n", b"{}"),
    );
    assert_eq!(reply.body, compressed);
    assert_eq!(
        up.received.lock().unwrap()[0].header("accept-encoding"),
        Some("gzip")
    );
    let (status, _) = proxy.stop();
    assert!(status.success());
    let lines = recording_lines(&rec);
    assert_eq!(
        lines[0]["response"]["body"]["choices"][0]["message"]["content"],
        "compressed"
    );
    assert_eq!(lines[0]["response"]["bytes"], compressed.len());
}

#[test]
fn a_refused_upstream_gives_502_and_a_connect_error() {
    let free = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = free.local_addr().unwrap().port();
    drop(free);
    let rec = recording_path("record-refused");
    let proxy = Proxy::start(&format!("http://127.0.0.1:{port}"), &rec, &[]);
    let reply = exchange(proxy.port, &post("/v1/chat/completions", "", b"not json"));
    assert_eq!(reply.status, 502);
    let (status, stderr) = proxy.stop();
    assert!(status.success());
    assert!(stderr.contains("(1 error,"), "{stderr}");
    let l = &recording_lines(&rec)[0];
    assert_eq!(l["error"]["kind"], "connect");
    assert!(l.get("response").is_none());
    assert!(l.get("first_byte_seconds").is_none());
    assert_eq!(l["request"]["body_text"], "not json");
}

#[test]
fn a_hanging_upstream_gives_504_and_a_timeout_error() {
    let (hold_tx, hold_rx) = mpsc::channel::<()>();
    let hold_rx = Mutex::new(hold_rx);
    // Reads the request, then answers nothing until the test ends.
    let up = upstream(move |_, _| {
        let _ = hold_rx.lock().unwrap().recv();
    });
    let rec = recording_path("record-hang");
    let proxy = Proxy::start(&up.url(), &rec, &["--timeout", "0.3"]);
    let reply = exchange(proxy.port, &post("/v1/messages", "", b"{}"));
    assert_eq!(reply.status, 504);
    let (status, _) = proxy.stop();
    assert!(status.success());
    drop(hold_tx);
    let l = &recording_lines(&rec)[0];
    assert_eq!(l["error"]["kind"], "timeout");
    assert!(l.get("response").is_none());
}

#[test]
fn a_200_mb_request_body_passes_whole_and_is_omitted() {
    const SIZE: u64 = 200 << 20;
    let up = upstream(move |s, r| {
        let answer = format!(
            "{{\"received\":{},\"patterned\":{}}}",
            r.body_len, r.patterned
        );
        let head = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
            answer.len()
        );
        s.write_all(head.as_bytes()).unwrap();
        s.write_all(answer.as_bytes()).unwrap();
    });
    let rec = recording_path("record-big");
    let proxy = Proxy::start(&up.url(), &rec, &[]);
    let (mut reader, mut stream) = connect(proxy.port);
    let head = format!(
        "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {SIZE}\r\n\r\n"
    );
    stream.write_all(head.as_bytes()).unwrap();
    let p = pattern();
    let block = &p[..p.len() / 251 * 251];
    let mut sent = 0u64;
    while sent < SIZE {
        let n = block.len().min((SIZE - sent) as usize);
        stream.write_all(&block[..n]).unwrap();
        sent += n as u64;
    }
    let reply = read_reply(&mut reader);
    assert_eq!(reply.status, 200);
    let answer: Value = serde_json::from_slice(&reply.body).unwrap();
    assert_eq!(answer["received"], SIZE);
    assert_eq!(answer["patterned"], true);
    // Memory stays bounded: the body was not held (a bound, not a timing).
    let status =
        std::fs::read_to_string(format!("/proc/{}/status", proxy.child.id())).unwrap_or_default();
    if let Some(kb) = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
    {
        assert!(kb * 1024 < SIZE / 2, "peak RSS {kb} kB");
    }
    drop(stream);
    let (status, _) = proxy.stop();
    assert!(status.success());
    let req = &recording_lines(&rec)[0]["request"];
    assert_eq!(req["bytes"], SIZE);
    assert_eq!(
        req["omitted"],
        format!("body of {SIZE} bytes is over --max-body (33554432)")
    );
    assert!(req.get("body").is_none() && req.get("body_text").is_none());
}

#[test]
fn a_client_that_hangs_up_mid_stream_is_recorded_with_what_arrived() {
    let up = upstream(move |s, _| {
        s.write_all(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n")
            .unwrap();
        // Events until the proxy stops taking them (it cancelled the
        // request when the client went); bounded so a bug fails, not hangs.
        for n in 0..20_000 {
            let text = format!("data: {{\"n\":{n}}}\n\n");
            if s.write_all(format!("{:x}\r\n{text}\r\n", text.len()).as_bytes())
                .is_err()
            {
                return;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    });
    let rec = recording_path("record-hangup");
    let proxy = Proxy::start(&up.url(), &rec, &[]);
    let (mut reader, mut stream) = connect(proxy.port);
    stream
        .write_all(&post("/v1/chat/completions", "", br#"{"stream": true}"#))
        .unwrap();
    let _ = read_head(&mut reader).unwrap();
    let mut size = String::new();
    reader.read_line(&mut size).unwrap();
    assert_ne!(size.trim(), "0");
    stream.shutdown(std::net::Shutdown::Both).unwrap();
    drop((reader, stream));
    let (status, stderr) = proxy.stop();
    assert!(status.success(), "{stderr}");
    let l = &recording_lines(&rec)[0];
    assert_eq!(l["error"]["kind"], "client_disconnected", "{l}");
    assert_eq!(l["response"]["status"], 200);
    assert!(l["response"]["body_text"]
        .as_str()
        .unwrap()
        .starts_with("data: {\"n\":0}\n\n"));
}

#[test]
fn sigterm_closes_idle_connections_finishes_the_calls_in_flight_and_exits_0() {
    let (go_tx, go_rx) = mpsc::channel::<()>();
    let go_rx = Mutex::new(go_rx);
    let up = upstream(move |s, r| {
        if r.request_line.contains("/slow") {
            go_rx.lock().unwrap().recv().unwrap();
        }
        s.write_all(
            b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}",
        )
        .unwrap();
    });
    let rec = recording_path("record-sigterm");
    let mut proxy = Proxy::start(&up.url(), &rec, &[]);
    // An idle keep-alive connection, as upstream's client leaves one.
    let (mut idle_reader, mut idle) = connect(proxy.port);
    idle.write_all(&post("/v1/fast", "", b"{}")).unwrap();
    assert_eq!(read_reply(&mut idle_reader).status, 200);
    // A call in flight: its request has reached the upstream.
    let (mut slow_reader, mut slow) = connect(proxy.port);
    slow.write_all(&post("/v1/slow", "", b"{}")).unwrap();
    while up.received.lock().unwrap().len() < 2 {
        std::thread::yield_now();
    }
    proxy.signal("TERM");
    proxy.wait_for_line("stopping");
    // The idle connection is closed by the proxy (a read timeout turns a
    // proxy that never closes it into a failure, not a hang).
    idle.set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let mut rest = Vec::new();
    match idle_reader.read_to_end(&mut rest) {
        Ok(0) => {}
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {}
        other => panic!("the idle connection was not closed: {other:?}"),
    }
    // The call in flight still gets its answer.
    go_tx.send(()).unwrap();
    assert_eq!(read_reply(&mut slow_reader).status, 200);
    let status = wait_exit(&mut proxy.child);
    assert_eq!(status.code(), Some(0));
    drop((idle, slow));
    let lines = recording_lines(&rec);
    let mut calls: Vec<u64> = lines.iter().map(|l| l["call"].as_u64().unwrap()).collect();
    calls.sort();
    assert_eq!(calls, [1, 2]);
    assert!(lines.iter().all(|l| l["error"].is_null()));
}

#[test]
fn an_existing_recording_is_refused_and_appended_to_with_append() {
    let up = upstream(|s, _| {
        s.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n")
            .unwrap();
    });
    let rec = recording_path("record-append");
    let old = "{\"mirotrace_recording\":1,\"call\":41,\"request\":{}}\n";
    std::fs::write(&rec, old).unwrap();
    let out = mirotrace()
        .args([
            "record",
            "--upstream",
            &up.url(),
            "--listen",
            "127.0.0.1:0",
            "-o",
        ])
        .arg(&rec)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--append"));
    assert_eq!(std::fs::read_to_string(&rec).unwrap(), old);
    let proxy = Proxy::start(&up.url(), &rec, &["--append", "-q"]);
    let reply = exchange(
        proxy.port,
        b"GET /v1/models HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    );
    assert_eq!(reply.status, 200);
    let (status, stderr) = proxy.stop();
    assert!(status.success());
    assert!(!stderr.contains("recorded"), "-q: {stderr}");
    let lines = recording_lines(&rec);
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[1]["call"], 42);
    assert_eq!(lines[1]["request"]["bytes"], 0);
    assert!(lines[1]["request"].get("body").is_none());
}

#[test]
fn a_bad_upstream_or_listen_address_is_a_usage_error() {
    let rec = recording_path("record-usage");
    for args in [
        vec!["--upstream", "ftp://example.com"],
        vec!["--upstream", "http://127.0.0.1:9", "--listen", "nowhere"],
        vec!["--upstream", "http://127.0.0.1:9", "--max-body", "12X"],
    ] {
        let out = mirotrace()
            .arg("record")
            .args(&args)
            .arg("-o")
            .arg(&rec)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
    }
}

#[test]
fn a_client_that_gives_up_before_the_answer_cancels_the_call() {
    let (hold_tx, hold_rx) = mpsc::channel::<()>();
    let hold_rx = Mutex::new(hold_rx);
    let up = upstream(move |_, _| {
        let _ = hold_rx.lock().unwrap().recv();
    });
    let rec = recording_path("record-gave-up");
    let proxy = Proxy::start(&up.url(), &rec, &["--timeout", "100"]);
    let (_reader, mut stream) = connect(proxy.port);
    stream
        .write_all(&post("/v1/chat/completions", "", b"{\"q\": 1}"))
        .unwrap();
    while up.received.lock().unwrap().is_empty() {
        std::thread::yield_now();
    }
    stream.shutdown(std::net::Shutdown::Both).unwrap();
    let (status, stderr) = proxy.stop();
    drop(hold_tx);
    assert!(status.success(), "{stderr}");
    let l = &recording_lines(&rec)[0];
    assert_eq!(l["error"]["kind"], "client_disconnected", "{l}");
    assert!(l.get("response").is_none());
    assert_eq!(l["request"]["body"]["q"], 1);
}

#[test]
fn a_recording_that_cannot_be_written_stops_the_proxy_with_2() {
    if !Path::new("/dev/full").exists() {
        return;
    }
    let up = upstream(|s, _| {
        s.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}")
            .unwrap();
    });
    let mut proxy = Proxy::start(&up.url(), Path::new("/dev/full"), &[]);
    // The client still gets its answer; the failed write stops the proxy.
    let reply = exchange(proxy.port, &post("/v1/x", "", b"{}"));
    assert_eq!(reply.status, 200);
    let status = wait_exit(&mut proxy.child);
    assert_eq!(status.code(), Some(2));
    proxy.seen.extend(proxy.lines.iter());
    let stderr = proxy.seen.join("\n");
    assert!(
        stderr.contains("cannot write the recording /dev/full"),
        "{stderr}"
    );
}

#[test]
fn a_second_signal_ends_the_proxy_at_once_with_128_plus_its_number() {
    let (hold_tx, hold_rx) = mpsc::channel::<()>();
    let hold_rx = Mutex::new(hold_rx);
    let up = upstream(move |s, r| {
        if r.request_line.contains("/slow") {
            let _ = hold_rx.lock().unwrap().recv();
        }
        let _ = s.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}");
    });
    let rec = recording_path("record-second-signal");
    let mut proxy = Proxy::start(&up.url(), &rec, &[]);
    assert_eq!(
        exchange(proxy.port, &post("/v1/fast", "", b"{}")).status,
        200
    );
    // Its line is written (waited for, with a hang guard).
    let deadline = Instant::now() + Duration::from_secs(120);
    while std::fs::read_to_string(&rec)
        .unwrap_or_default()
        .lines()
        .count()
        < 1
    {
        assert!(
            Instant::now() < deadline,
            "the first call's line never came"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    let (_slow_reader, mut slow) = connect(proxy.port);
    slow.write_all(&post("/v1/slow", "", b"{}")).unwrap();
    while up.received.lock().unwrap().len() < 2 {
        std::thread::yield_now();
    }
    proxy.signal("INT");
    proxy.wait_for_line("stopping");
    proxy.signal("INT");
    let status = wait_exit(&mut proxy.child);
    drop(hold_tx);
    assert_eq!(status.code(), Some(130));
    // The finished call's line is whole; the one in flight is lost.
    let lines = recording_lines(&rec);
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0]["request"]["path"], "/v1/fast");
}

/// The events an upstream that breaks off sends first: round `round`'s
/// differ in length so the cut falls at many places.
fn events_before_the_break(round: usize) -> Vec<String> {
    (0..8 + round % 13)
        .map(|n| {
            format!(
                "data: {{\"n\":{n},\"text\":\"{}\"}}\n\n",
                "x".repeat(n * 7 + round)
            )
        })
        .collect()
}

/// A chunked body's data, and whether its terminating chunk came.
fn dechunk(raw: &[u8]) -> (Vec<u8>, bool) {
    let mut data = Vec::new();
    let mut at = 0;
    while let Some(eol) = raw[at..].windows(2).position(|w| w == b"\r\n") {
        let size = std::str::from_utf8(&raw[at..at + eol]).expect("a chunk size");
        let size = usize::from_str_radix(size.trim(), 16).expect("hex size");
        if size == 0 {
            return (data, true);
        }
        let start = at + eol + 2;
        let Some(chunk) = raw.get(start..start + size) else {
            data.extend_from_slice(&raw[start..]);
            break;
        };
        data.extend_from_slice(chunk);
        at = start + size + 2;
        if at > raw.len() {
            break;
        }
    }
    (data, false)
}

#[test]
fn an_upstream_that_breaks_off_mid_body_has_every_byte_it_sent_reach_the_client() {
    // The upstream answers `POST /<round>/<one|pieces>/<chunked|length>`
    // with the round's events, written in one write or one by one, then
    // closes the connection: the body is cut off (no terminating chunk,
    // or short of its content-length).
    let up = upstream(|s, r| {
        let path: Vec<&str> = r
            .request_line
            .split(' ')
            .nth(1)
            .unwrap()
            .split('/')
            .collect();
        let round: usize = path[1].parse().unwrap();
        let events = events_before_the_break(round);
        let sent: usize = events.iter().map(String::len).sum();
        let chunked = path[3] == "chunked";
        let mut out = Vec::new();
        if chunked {
            out.extend_from_slice(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n");
        } else {
            let promised = sent + 1000;
            out.extend_from_slice(
                format!("HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {promised}\r\n\r\n").as_bytes(),
            );
        }
        let mut pieces = vec![out];
        for e in &events {
            // Each event in two pieces, as a server's stream often comes.
            let (a, b) = e.split_at(e.len() / 2);
            for piece in [a, b] {
                if chunked {
                    pieces.push(format!("{:x}\r\n{piece}\r\n", piece.len()).into_bytes());
                } else {
                    pieces.push(piece.as_bytes().to_vec());
                }
            }
        }
        if path[2] == "one" {
            let _ = s.write_all(&pieces.concat());
        } else {
            for p in pieces {
                let _ = s.write_all(&p);
                let _ = s.flush();
            }
        }
        let _ = s.shutdown(std::net::Shutdown::Both);
    });
    let rec = recording_path("record-upstream-breaks-off");
    let proxy = Proxy::start(&up.url(), &rec, &[]);
    let port = proxy.port;
    let mut cases = Vec::new();
    for round in 0..20 {
        for how in ["one", "pieces"] {
            for framing in ["chunked", "length"] {
                cases.push(format!("/{round}/{how}/{framing}"));
            }
        }
    }
    let call = |path: &str| {
        let (mut reader, mut stream) = connect(port);
        stream.write_all(&post(path, "", b"{}")).unwrap();
        let (status, headers) = read_head(&mut reader).unwrap();
        let mut raw = Vec::new();
        let mut buf = [0u8; 4096];
        // Until the proxy closes (or resets) the connection.
        while let Ok(n) = reader.read(&mut buf) {
            if n == 0 {
                break;
            }
            raw.extend_from_slice(&buf[..n]);
        }
        (path.to_string(), status, headers, raw)
    };
    // One after the other: a race at the end of a stream shows best on a
    // proxy with nothing else to do.
    let runs: Vec<_> = cases.iter().map(|path| call(path)).collect();
    for (path, status, headers, raw) in runs {
        let round: usize = path.split('/').nth(1).unwrap().parse().unwrap();
        let sent = events_before_the_break(round).concat();
        assert!(status.contains(" 200 "), "{path}: {status}");
        if path.ends_with("chunked") {
            assert_eq!(header(&headers, "transfer-encoding"), Some("chunked"));
            let (data, terminated) = dechunk(&raw);
            assert_eq!(
                String::from_utf8_lossy(&data),
                sent,
                "{path}: {} of {} bytes",
                data.len(),
                sent.len()
            );
            assert!(!terminated, "{path}: a cut-off body ended cleanly");
        } else {
            let promised = (sent.len() + 1000).to_string();
            assert_eq!(header(&headers, "content-length"), Some(promised.as_str()));
            assert_eq!(
                String::from_utf8_lossy(&raw),
                sent,
                "{path}: {} of {} bytes",
                raw.len(),
                sent.len()
            );
        }
    }
    let (status, stderr) = proxy.stop();
    assert!(status.success(), "{stderr}");
    let lines = recording_lines(&rec);
    assert_eq!(lines.len(), cases.len());
    for l in &lines {
        let path = l["request"]["path"].as_str().unwrap();
        let round: usize = path.split('/').nth(1).unwrap().parse().unwrap();
        assert_eq!(l["error"]["kind"], "upstream", "{l}");
        assert_eq!(
            l["response"]["body_text"],
            events_before_the_break(round).concat(),
            "{l}"
        );
    }
}

#[test]
fn a_client_that_breaks_off_mid_request_body_has_every_byte_it_sent_reach_the_upstream() {
    // An upstream that reads each request's body until the connection
    // closes, and reports the path, the raw body bytes, and whether the
    // head said chunked.
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let up_port = listener.local_addr().unwrap().port();
    let (got_tx, got_rx) = mpsc::channel::<(String, Vec<u8>)>();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            let got_tx = got_tx.clone();
            std::thread::spawn(move || {
                stream
                    .set_read_timeout(Some(Duration::from_secs(60)))
                    .unwrap();
                let mut reader = BufReader::new(stream);
                let Some((line, _)) = read_head(&mut reader) else {
                    return;
                };
                let mut raw = Vec::new();
                let _ = reader.read_to_end(&mut raw);
                let path = line.split(' ').nth(1).unwrap_or("").to_string();
                let _ = got_tx.send((path, raw));
            });
        }
    });
    let rec = recording_path("record-client-breaks-off");
    let proxy = Proxy::start(&format!("http://127.0.0.1:{up_port}"), &rec, &[]);
    let mut cases = Vec::new();
    for round in 0..20 {
        for how in ["one", "pieces"] {
            for framing in ["chunked", "length"] {
                cases.push((round, how, framing));
            }
        }
    }
    let port = proxy.port;
    let send = move |(round, how, framing): (usize, &str, &'static str)| {
        let path = format!("/{round}/{how}/{framing}");
        let body: Vec<u8> = events_before_the_break(round).concat().into_bytes();
        let framing_header = if framing == "chunked" {
            "Transfer-Encoding: chunked\r\n".to_string()
        } else {
            format!("Content-Length: {}\r\n", body.len() + 1000)
        };
        let mut pieces =
            vec![
                format!("POST {path} HTTP/1.1\r\nHost: localhost\r\n{framing_header}\r\n")
                    .into_bytes(),
            ];
        for piece in body.chunks(body.len() / 5 + 1) {
            if framing == "chunked" {
                let mut c = format!("{:x}\r\n", piece.len()).into_bytes();
                c.extend_from_slice(piece);
                c.extend_from_slice(b"\r\n");
                pieces.push(c);
            } else {
                pieces.push(piece.to_vec());
            }
        }
        let (_reader, mut stream) = connect(port);
        if how == "one" {
            stream.write_all(&pieces.concat()).unwrap();
        } else {
            for p in pieces {
                stream.write_all(&p).unwrap();
                stream.flush().unwrap();
            }
        }
        // Half-closed: the proxy reads the end of the body, and the
        // client could still take its answer.
        stream.shutdown(std::net::Shutdown::Write).unwrap();
        (path, framing, body)
    };
    // Eight at a time: each call's error waits out the proxy's grace.
    let mut sent_by_path = std::collections::BTreeMap::new();
    for batch in cases.chunks(8) {
        let threads: Vec<_> = batch
            .iter()
            .map(|&case| std::thread::spawn(move || send(case)))
            .collect();
        for t in threads {
            let (path, framing, body) = t.join().unwrap();
            sent_by_path.insert(path, (framing, body, None));
        }
        for _ in batch {
            let (path, raw) = got_rx
                .recv_timeout(Duration::from_secs(60))
                .expect("the upstream got the request");
            sent_by_path.get_mut(&path).expect("a path sent").2 = Some(raw);
        }
    }
    for (path, (framing, body, raw)) in &sent_by_path {
        let raw = raw.as_ref().expect("the upstream's bytes");
        let data = if *framing == "chunked" {
            let (data, terminated) = dechunk(raw);
            assert!(!terminated, "{path}: a cut-off request body ended cleanly");
            data
        } else {
            raw.clone()
        };
        assert_eq!(
            String::from_utf8_lossy(&data),
            String::from_utf8_lossy(body),
            "{path}: the upstream got {} of {} bytes",
            data.len(),
            body.len()
        );
    }
    let (status, stderr) = proxy.stop();
    assert!(status.success(), "{stderr}");
    let lines = recording_lines(&rec);
    assert_eq!(lines.len(), sent_by_path.len());
    for l in &lines {
        let path = l["request"]["path"].as_str().unwrap();
        let (_, body, _) = &sent_by_path[path];
        assert_eq!(l["request"]["bytes"], body.len(), "{l}");
        assert_eq!(l["error"]["kind"], "request_body", "{l}");
    }
}
