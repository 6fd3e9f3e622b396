//! What the HTML tests share: running the binary into a page, reading a
//! page's data island, keyed figures and charts, and a corpus whose every
//! field tries to inject markup.

// Each test module uses only some of these.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};

pub use super::{fixture, BIN};
/// `fixtures/`.
pub const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures");

/// A scratch directory, removed when dropped.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join(super::unique(&format!("html-{tag}")));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temp dir");
        TempDir(dir)
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }

    /// Writes `text` to `name`; returns its path as a string.
    pub fn write(&self, name: &str, text: &str) -> String {
        let path = self.path(name);
        std::fs::write(&path, text).expect("write");
        path.to_str().expect("UTF-8 path").to_string()
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs `mirotrace COMMAND ARGS… -q`; a run may skip input (3) or fire a
/// gate (1) and still write its report.
fn run(command: &str, args: &[&str], extra: &[&str]) -> std::process::Output {
    let out = Command::new(BIN)
        .arg(command)
        .args(args)
        .args(extra)
        .arg("-q")
        .output()
        .expect("mirotrace runs");
    let code = out.status.code();
    assert!(
        matches!(code, Some(0 | 1 | 3)),
        "mirotrace {command} {args:?} {extra:?} exited {code:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The `--format json` report.
pub fn run_json(_dir: &TempDir, command: &str, args: &[&str]) -> Value {
    let out = run(command, args, &["--format", "json"]);
    serde_json::from_slice(&out.stdout).expect("JSON on stdout")
}

/// The `--format html` page, written with `-o` as a user would.
pub fn run_page(dir: &TempDir, command: &str, args: &[&str]) -> String {
    let path = page_file(dir, command, args);
    std::fs::read_to_string(path).expect("the page")
}

/// Writes the page into `dir` and returns its path.
pub fn page_file(dir: &TempDir, command: &str, args: &[&str]) -> PathBuf {
    let name = format!("{command}-{:016x}.html", fingerprint(args));
    let path = dir.path(&name);
    let target = path.to_str().expect("UTF-8 path").to_string();
    run(command, args, &["--format", "html", "-o", &target]);
    path
}

fn fingerprint(args: &[&str]) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    args.hash(&mut h);
    h.finish()
}

/// The figures embedded in a page (`<script type="application/json" id="mirotrace-data">`).
pub fn data_island(page: &str) -> Value {
    let open = "<script type=\"application/json\" id=\"mirotrace-data\">";
    let start = page.find(open).expect("the data island") + open.len();
    let end = start + page[start..].find("</script>").expect("its end");
    serde_json::from_str(&page[start..end]).expect("the island is JSON")
}

/// `(key, shown text)` of every element marked `data-key="a.b"`.
pub fn keyed_figures(page: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut rest = page;
    while let Some(at) = rest.find("data-key=\"") {
        rest = &rest[at + "data-key=\"".len()..];
        let key_end = rest.find('"').expect("attribute end");
        let key = rest[..key_end].to_string();
        let text_start = rest.find('>').expect("tag end") + 1;
        let text_end = text_start + rest[text_start..].find('<').expect("text end");
        out.push((key, rest[text_start..text_end].to_string()));
        rest = &rest[text_end..];
    }
    out
}

/// The markup of the chart `id`, if the page has it.
pub fn chart<'p>(page: &'p str, id: &str) -> Option<&'p str> {
    let open = format!("<svg class=\"chart\" data-chart=\"{id}\"");
    let start = page.find(&open)?;
    let end = start + page[start..].find("</svg>")? + "</svg>".len();
    Some(&page[start..end])
}

/// Rows (mark groups) of a forest plot.
pub fn chart_rows(page: &str, id: &str) -> usize {
    chart(page, id).map_or(0, |svg| svg.matches("<g class=\"mark ").count())
}

/// Every chart id on a page, in order.
pub fn chart_ids(page: &str) -> Vec<String> {
    page.match_indices("<svg class=\"chart\" data-chart=\"")
        .map(|(at, m)| {
            let rest = &page[at + m.len()..];
            rest[..rest.find('"').expect("id end")].to_string()
        })
        .collect()
}

/// Text as the page escapes it.
pub fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

/// Markup that would run a script, close the page's style or script,
/// open a comment or load an image, if it were not escaped.
pub const PAYLOAD: &str =
    "<script>document.documentElement.setAttribute('data-pwned','1')</script>\
<script>alert(1)</script></style></script></textarea><img src=x onerror=alert(2)><!--";

fn call(name: &str, args: Value, id: &str) -> Value {
    json!({"id": id, "type": "function", "function": {"name": name, "arguments": args.to_string()}})
}

/// One trace holding [`PAYLOAD`] in every field a page shows: trace id,
/// model, session, tool name, query, model output, tool results, and the
/// file name itself. Its rollbacks: duplicate_query, format_error, refusal,
/// unknown_tool.
pub fn write_hostile_corpus(dir: &TempDir) -> PathBuf {
    let p = PAYLOAD;
    let id = format!("trace-{p}");
    let meta = json!({"model": format!("model-{p}")});
    let organic = json!({"organic": [{"title": p}]}).to_string();
    let lines = [
        json!({"trace_id": id, "meta": meta, "content": "Let me search.",
               "tool_calls": [call("google_search", json!({"q": p}), "c1")],
               "tool_results": [{"result": organic}]}),
        json!({"trace_id": id, "meta": meta, "content": "Again.",
               "tool_calls": [call("google_search", json!({"q": p}), "c2")],
               "tool_results": [{"result": "{}"}]}),
        json!({"trace_id": id, "meta": meta, "content": format!("{p} <use_mcp_tool> broken")}),
        json!({"trace_id": id, "meta": meta, "content": format!("I'm sorry, I cannot solve {p}")}),
        json!({"trace_id": id, "meta": meta, "content": "Try a tool.",
               "tool_calls": [call(&format!("tool{p}"), json!({"x": p}), "c3")],
               "tool_results": [{"error": format!("Unknown tool: {p}")}]}),
        json!({"trace_id": id, "meta": meta, "content": "Search on.",
               "tool_calls": [call("google_search", json!({"q": format!("other {p}")}), "c4")],
               "tool_results": [{"result": organic}]}),
        json!({"trace_id": id, "session": format!("agent-{p}_1"), "meta": meta, "content": "sub"}),
        json!({"trace_id": id, "meta": meta, "content": format!("Final answer {p}")}),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let path = dir.path("<script>alert(1)<script>.jsonl");
    std::fs::write(&path, text).expect("hostile corpus");
    path
}

/// Where a CI run keeps what people look at afterwards.
pub fn artifacts_dir() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target"));
    let dir = target.join("ci-artifacts");
    std::fs::create_dir_all(&dir).expect("artifact dir");
    dir
}
