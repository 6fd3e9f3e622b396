//! The recording proxy's benchmark (bench/record/run.sh runs it): added
//! latency per call and calls per second on loopback, through `mirotrace
//! record` against the same calls straight to the same upstream in the
//! same run, and the proxy's peak memory while a 100 MB response streams
//! through it. Not a test: it prints figures.
//!
//! usage: record_bench MIROTRACE_BINARY OUT_DIR [CALLS] [ROUNDS] [STREAM_MIB]
//! (CALLS 0: only the streamed response)
//!
//! The upstream is a tiny HTTP/1.1 server on std threads here (a fixed
//! chat-completion answer, or 100 MB of Server-Sent Events on `/stream`);
//! the client is std sockets, keep-alive, one call at a time per
//! connection. Direct and proxied runs alternate round by round, so a
//! change in the machine's load touches both.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const ANSWER: &str = r#"{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"Here is the answer to your question, in a couple of sentences, as a short reply would be."},"finish_reason":"stop"}],"usage":{"prompt_tokens":120,"completion_tokens":20,"total_tokens":140}}"#;
/// The streamed response's size (default 100 MB; the fifth argument, in MiB).
static STREAM_BYTES: std::sync::atomic::AtomicUsize =
    std::sync::atomic::AtomicUsize::new(100 << 20);

fn stream_bytes() -> usize {
    STREAM_BYTES.load(std::sync::atomic::Ordering::Relaxed)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!("usage: record_bench MIROTRACE_BINARY OUT_DIR [CALLS] [ROUNDS] [STREAM_MIB]");
        std::process::exit(2);
    }
    let bin = PathBuf::from(&args[1]);
    let out = PathBuf::from(&args[2]);
    let calls: usize = args.get(3).and_then(|a| a.parse().ok()).unwrap_or(5000);
    let rounds: usize = args.get(4).and_then(|a| a.parse().ok()).unwrap_or(3);
    if let Some(mib) = args.get(5).and_then(|a| a.parse::<usize>().ok()) {
        STREAM_BYTES.store(mib << 20, std::sync::atomic::Ordering::Relaxed);
    }
    std::fs::create_dir_all(&out).expect("out dir");
    let up = upstream();
    let body = request_body();
    if calls > 0 {
        latency_and_rate(&bin, &out, up, &body, calls, rounds);
    }
    streamed(&bin, &out, up);
}

fn latency_and_rate(bin: &Path, out: &Path, up: u16, body: &[u8], calls: usize, rounds: usize) {
    let (bin, body) = (bin.to_path_buf(), body.to_vec());

    // Latency: one connection each way, one call at a time, alternating
    // blocks of 250 calls so both see the same moments of the machine.
    let rec = out.join("latency.recording.jsonl");
    let _ = std::fs::remove_file(&rec);
    let proxy = Proxy::start(&bin, up, &rec, &[]);
    let (mut direct, mut proxied) = (Vec::new(), Vec::new());
    let (mut to_up, mut to_proxy) = (Conn::open(up), Conn::open(proxy.port));
    // Calls through the proxy, each a line of the recording.
    let mut made = 0;
    for conn in [&mut to_up, &mut to_proxy] {
        conn.calls(&body, 200);
    }
    made += 200;
    for _ in 0..rounds * calls.div_ceil(250) {
        direct.extend(to_up.calls(&body, 250));
        proxied.extend(to_proxy.calls(&body, 250));
        made += 250;
    }
    drop((to_up, to_proxy));
    // Throughput: 4 connections at once, each one call at a time.
    let (mut direct_rate, mut proxied_rate) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        direct_rate.push(rate(up, &body, 4, calls / 2));
        proxied_rate.push(rate(proxy.port, &body, 4, calls / 2));
        made += 4 * (calls / 2 + 200);
    }
    let idle_rss = status_kb(proxy.child.id(), "VmRSS:");
    let latency_hwm = status_kb(proxy.child.id(), "VmHWM:");
    let lines = proxy.stop(&rec);
    let recorded_calls = made;

    println!(
        "calls per latency run: {calls}, rounds: {rounds}, request body {} bytes, answer {} bytes",
        body.len(),
        ANSWER.len()
    );
    println!();
    println!("| one call at a time, keep-alive | p50 | p90 | p99 | mean |");
    println!("|---|---:|---:|---:|---:|");
    let (d, p) = (summary(&mut direct), summary(&mut proxied));
    println!(
        "| direct to the upstream | {} | {} | {} | {} |",
        us(d.0),
        us(d.1),
        us(d.2),
        us(d.3)
    );
    println!(
        "| through `mirotrace record` | {} | {} | {} | {} |",
        us(p.0),
        us(p.1),
        us(p.2),
        us(p.3)
    );
    println!(
        "| added by the proxy | {} | {} | {} | {} |",
        us(p.0 - d.0),
        us(p.1 - d.1),
        us(p.2 - d.2),
        us(p.3 - d.3)
    );
    println!();
    let best = |v: &[f64]| v.iter().cloned().fold(0.0, f64::max);
    println!("| 4 connections at once | calls/s (best of {rounds}) | all rounds |");
    println!("|---|---:|---|");
    println!(
        "| direct | {:.0} | {} |",
        best(&direct_rate),
        join(&direct_rate)
    );
    println!(
        "| through the proxy | {:.0} | {} |",
        best(&proxied_rate),
        join(&proxied_rate)
    );
    println!();
    println!(
        "recording: {lines} lines for the {recorded_calls} calls through the proxy; proxy RSS after them {idle_rss} kB, peak {latency_hwm} kB"
    );
    println!();
}

/// Memory: a streamed SSE response through a fresh proxy.
fn streamed(bin: &Path, out: &Path, up: u16) {
    println!("| {} MiB streamed response through the proxy | bytes received | proxy peak RSS (VmHWM) | recorded |", stream_bytes() >> 20);
    println!("|---|---:|---:|---|");
    for max_body in ["32M", "1M"] {
        let rec = out.join(format!("stream-{max_body}.recording.jsonl"));
        let _ = std::fs::remove_file(&rec);
        let proxy = Proxy::start(bin, up, &rec, &["--max-body", max_body]);
        let start_rss = status_kb(proxy.child.id(), "VmRSS:");
        let got = stream(proxy.port);
        let hwm = status_kb(proxy.child.id(), "VmHWM:");
        let pid = proxy.child.id();
        let lines = proxy.stop(&rec);
        let text = std::fs::read_to_string(&rec).unwrap_or_default();
        let omitted = text.contains("\"omitted\"");
        println!(
            "| `--max-body {max_body}` (pid {pid}, RSS at start {start_rss} kB) | {got} | {hwm} kB ({:.1} MiB) | {lines} line, body {} |",
            hwm as f64 / 1024.0,
            if omitted { "omitted" } else { "stored" }
        );
        assert_eq!(got, stream_bytes(), "the whole stream");
    }
}

fn join(v: &[f64]) -> String {
    v.iter()
        .map(|r| format!("{r:.0}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn us(seconds: f64) -> String {
    format!("{:.0} µs", seconds * 1e6)
}

/// p50, p90, p99, mean.
fn summary(v: &mut [f64]) -> (f64, f64, f64, f64) {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let at = |q: f64| v[((v.len() as f64 * q) as usize).min(v.len() - 1)];
    let mean = v.iter().sum::<f64>() / v.len() as f64;
    (at(0.50), at(0.90), at(0.99), mean)
}

fn request_body() -> Vec<u8> {
    let content = "word ".repeat(180);
    format!(
        r#"{{"model":"m","messages":[{{"role":"system","content":"You are a helpful assistant."}},{{"role":"user","content":"{content}"}}],"max_tokens":512,"stream":false}}"#
    )
    .into_bytes()
}

fn request(body: &[u8]) -> Vec<u8> {
    let mut r = format!(
        "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer sk-bench\r\nContent-Type: application/json\r\nx-upstream-session-id: bench-1\r\nContent-Length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    r.extend_from_slice(body);
    r
}

/// One keep-alive connection.
struct Conn {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
}

impl Conn {
    fn open(port: u16) -> Conn {
        let stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
        stream.set_nodelay(true).unwrap();
        Conn {
            reader: BufReader::new(stream.try_clone().unwrap()),
            writer: stream,
        }
    }

    /// Per-call seconds of `n` calls, one at a time.
    fn calls(&mut self, body: &[u8], n: usize) -> Vec<f64> {
        let req = request(body);
        (0..n)
            .map(|_| {
                let t = Instant::now();
                self.writer.write_all(&req).unwrap();
                read_response(&mut self.reader);
                t.elapsed().as_secs_f64()
            })
            .collect()
    }
}

/// Per-call seconds of `n` calls on a new keep-alive connection (after 200
/// warm-up calls).
fn latencies(port: u16, body: &[u8], n: usize) -> Vec<f64> {
    let mut conn = Conn::open(port);
    conn.calls(body, 200);
    conn.calls(body, n)
}

/// Calls per second with `connections` connections, `n` calls each.
fn rate(port: u16, body: &[u8], connections: usize, n: usize) -> f64 {
    let t = Instant::now();
    let threads: Vec<_> = (0..connections)
        .map(|_| {
            let body = body.to_vec();
            std::thread::spawn(move || latencies(port, &body, n).len())
        })
        .collect();
    let total: usize = threads.into_iter().map(|t| t.join().unwrap() + 200).sum();
    total as f64 / t.elapsed().as_secs_f64()
}

/// GETs `/stream`, reads it to the end; the body's bytes.
fn stream(port: u16) -> usize {
    let stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut writer = stream;
    writer
        .write_all(b"GET /v1/stream HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .unwrap();
    read_response(&mut reader)
}

/// Reads one response (content-length or chunked); its body's length.
fn read_response(reader: &mut BufReader<TcpStream>) -> usize {
    let mut chunked = false;
    let mut length = 0usize;
    let mut line = String::new();
    reader.read_line(&mut line).unwrap();
    assert!(line.starts_with("HTTP/1.1 200"), "{line}");
    loop {
        line.clear();
        reader.read_line(&mut line).unwrap();
        let l = line.trim_end().to_ascii_lowercase();
        if l.is_empty() {
            break;
        }
        if let Some(v) = l.strip_prefix("content-length:") {
            length = v.trim().parse().unwrap();
        }
        if l.starts_with("transfer-encoding:") && l.contains("chunked") {
            chunked = true;
        }
    }
    if !chunked {
        let mut body = vec![0u8; length];
        reader.read_exact(&mut body).unwrap();
        return length;
    }
    let mut total = 0;
    let mut buf = vec![0u8; 1 << 16];
    loop {
        line.clear();
        reader.read_line(&mut line).unwrap();
        let size = usize::from_str_radix(line.trim(), 16).unwrap();
        let mut left = size + 2;
        while left > 0 {
            let n = reader.read(&mut buf[..left.min(1 << 16)]).unwrap();
            assert!(n > 0, "cut short");
            left -= n;
        }
        if size == 0 {
            return total;
        }
        total += size;
    }
}

/// The upstream: a thread per connection, keep-alive.
fn upstream() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || serve(stream));
        }
    });
    port
}

fn serve(stream: TcpStream) {
    stream.set_nodelay(true).unwrap();
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut writer = stream;
    let mut line = String::new();
    let answer = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nx-request-id: req-1\r\ncontent-length: {}\r\n\r\n{ANSWER}",
        ANSWER.len()
    );
    loop {
        line.clear();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let streaming = line.contains("/stream");
        let mut length = 0;
        loop {
            let mut h = String::new();
            if reader.read_line(&mut h).unwrap_or(0) == 0 {
                return;
            }
            let h = h.trim_end().to_ascii_lowercase();
            if h.is_empty() {
                break;
            }
            if let Some(v) = h.strip_prefix("content-length:") {
                length = v.trim().parse().unwrap();
            }
        }
        let mut body = vec![0u8; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        if !streaming {
            if writer.write_all(answer.as_bytes()).is_err() {
                return;
            }
            continue;
        }
        let _ = writer.write_all(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n",
        );
        let event = format!("data: {}\n\n", "x".repeat(16 * 1024 - 8));
        let mut sent = 0;
        while sent < stream_bytes() {
            let n = event.len().min(stream_bytes() - sent);
            let chunk = format!("{n:x}\r\n{}\r\n", &event[..n]);
            if writer.write_all(chunk.as_bytes()).is_err() {
                return;
            }
            sent += n;
        }
        let _ = writer.write_all(b"0\r\n\r\n");
    }
}

struct Proxy {
    child: Child,
    port: u16,
}

impl Proxy {
    fn start(bin: &Path, upstream: u16, rec: &Path, extra: &[&str]) -> Proxy {
        let mut child = Command::new(bin)
            .args([
                "record",
                "--upstream",
                &format!("http://127.0.0.1:{upstream}"),
            ])
            .args(["--listen", "127.0.0.1:0", "-q", "-o"])
            .arg(rec)
            .args(extra)
            .stderr(Stdio::piped())
            .spawn()
            .expect("run mirotrace record");
        let mut err = BufReader::new(child.stderr.take().unwrap());
        let mut line = String::new();
        err.read_line(&mut line).unwrap();
        let port = line
            .trim_end()
            .rsplit(':')
            .next()
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("{line}"));
        std::thread::spawn(move || {
            let _ = std::io::copy(&mut err, &mut std::io::sink());
        });
        Proxy { child, port }
    }

    /// SIGTERM; the recording's line count.
    fn stop(mut self, rec: &Path) -> usize {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let status = self.child.wait().unwrap();
        assert!(status.success(), "{status:?}");
        std::thread::sleep(Duration::from_millis(10));
        std::fs::read_to_string(rec)
            .map(|t| t.lines().count())
            .unwrap_or(0)
    }
}

fn status_kb(pid: u32, key: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix(key))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}
