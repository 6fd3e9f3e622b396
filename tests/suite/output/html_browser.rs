//! The HTML pages in a real browser (headless Chromium): they render with
//! no console message and no blocked or attempted load, every chart is
//! drawn with a size, a worst trace's timeline opens, a trace full of
//! `<script>` runs nothing, the page holds everything without its scripts,
//! and 1280×800 screenshots (light and dark) and the pages are kept in
//! `target/ci-artifacts/` for people to look at.
//!
//! Chromium prints every console message of the page (errors, policy
//! violations, uncaught exceptions) on stderr with `--enable-logging=stderr`;
//! the page itself also collects them into its DOM (`data-errors`), which
//! `--dump-dom` reads back. Without Chromium the tests pass with a note,
//! except under CI (`CI` set), where a missing browser is a failure.

use crate::common::html as html_common;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use html_common::*;
use mirotrace::diff::synth::{corpus, CorpusSpec};

/// One browser at a time: the machine is small and each is heavy.
static BROWSER: Mutex<()> = Mutex::new(());
const TIMEOUT: Duration = Duration::from_secs(120);

struct Browser {
    exe: PathBuf,
}

/// What a page left behind after loading.
struct Loaded {
    dom: String,
    /// The page's console messages, as Chromium logged them.
    console: Vec<String>,
}

fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0")
}

/// Chromium (`MIROTRACE_CHROMIUM`, else the first of the usual names on
/// PATH), or `None` outside CI when there is none.
fn browser() -> Option<Browser> {
    let named = std::env::var_os("MIROTRACE_CHROMIUM").map(PathBuf::from);
    let found = named.or_else(|| {
        let path = std::env::var_os("PATH")?;
        [
            "chromium",
            "chromium-browser",
            "google-chrome",
            "google-chrome-stable",
        ]
        .iter()
        .flat_map(|name| std::env::split_paths(&path).map(move |dir| dir.join(name)))
        .find(|p| p.is_file())
    });
    match found {
        Some(exe) => Some(Browser { exe }),
        None if in_ci() => {
            panic!("CI: no chromium on PATH (.ci/run installs Debian's chromium package)")
        }
        None => {
            eprintln!(
                "note: no chromium on PATH; the browser tests did not run (they must under CI)"
            );
            None
        }
    }
}

impl Browser {
    /// Runs Chromium headless on `url` with `args`; returns (stdout, stderr).
    fn run(&self, url: &str, args: &[&str]) -> (String, String) {
        let _one = BROWSER.lock().unwrap_or_else(|e| e.into_inner());
        let profile = TempDir::new("chromium-profile");
        let mut child = Command::new(&self.exe)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-extensions",
                "--disable-background-networking",
                "--disable-component-update",
                "--hide-scrollbars",
                "--enable-logging=stderr",
                "--v=0",
            ])
            .arg(format!("--user-data-dir={}", profile.0.display()))
            .args(args)
            .arg(url)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("chromium starts");
        let mut stdout = child.stdout.take().expect("stdout");
        let mut stderr = child.stderr.take().expect("stderr");
        let out_reader = std::thread::spawn(move || {
            let mut s = String::new();
            let _ = stdout.read_to_string(&mut s);
            s
        });
        let err_reader = std::thread::spawn(move || {
            let mut s = String::new();
            let _ = stderr.read_to_string(&mut s);
            s
        });
        let started = Instant::now();
        loop {
            match child.try_wait().expect("wait for chromium") {
                Some(_) => break,
                None if started.elapsed() > TIMEOUT => {
                    let _ = child.kill();
                    let _ = child.wait();
                    panic!("chromium did not finish {url} within {TIMEOUT:?}");
                }
                None => std::thread::sleep(Duration::from_millis(50)),
            }
        }
        (
            out_reader.join().unwrap_or_default(),
            err_reader.join().unwrap_or_default(),
        )
    }

    /// The DOM after load and scripts, with the console messages.
    fn load(&self, url: &str) -> Loaded {
        let (dom, log) = self.run(url, &["--dump-dom"]);
        assert!(
            dom.contains("</html>"),
            "no DOM from {url}; chromium said:\n{log}"
        );
        let console = log
            .lines()
            .filter(|l| l.contains(":CONSOLE"))
            .map(str::to_string)
            .collect();
        Loaded { dom, console }
    }

    /// A 1280×800 PNG of the top of the page.
    fn screenshot(&self, url: &str, path: &Path, dark: bool) {
        self.screenshot_sized(url, path, dark, (1280, 800));
    }

    /// A PNG of the top `size` (width, height in px) of the page.
    fn screenshot_sized(&self, url: &str, path: &Path, dark: bool, size: (u32, u32)) {
        let _ = std::fs::remove_file(path);
        let shot = format!("--screenshot={}", path.display());
        let window = format!("--window-size={},{}", size.0, size.1);
        let mut args = vec![shot.as_str(), window.as_str()];
        if dark {
            args.push("--force-dark-mode");
        }
        let (_, log) = self.run(url, &args);
        assert!(
            path.is_file(),
            "no screenshot of {url}; chromium said:\n{log}"
        );
    }
}

fn url(path: &Path) -> String {
    format!("file://{}", path.display())
}

/// The value of `name="…"` on the element whose tag starts with `tag`.
fn attribute(dom: &str, tag: &str, name: &str) -> Option<String> {
    let at = dom.find(tag)?;
    let end = at + dom[at..].find('>')?;
    let element = &dom[at..end];
    let key = format!("{name}=\"");
    let start = element.find(&key)? + key.len();
    let len = element[start..].find('"')?;
    Some(element[start..start + len].to_string())
}

/// Loads a page and checks what every page must hold: no console message,
/// nothing collected by its guard, its policy in force, its self-check
/// run, and every chart drawn (marks and a size).
fn assert_clean(browser: &Browser, page: &Path, expected_charts: &[&str]) -> Loaded {
    let source = std::fs::read_to_string(page).expect("page");
    let loaded = browser.load(&url(page));
    let dom = &loaded.dom;
    let name = page.display();
    assert!(
        loaded.console.is_empty(),
        "{name}: console messages:\n{}",
        loaded.console.join("\n")
    );
    assert_eq!(
        attribute(dom, "<html", "data-errors").as_deref(),
        Some("0"),
        "{name}: errors collected by the page"
    );
    let policy = attribute(
        dom,
        "<meta http-equiv=\"Content-Security-Policy\"",
        "content",
    )
    .expect("the policy");
    assert!(
        policy.starts_with("default-src 'none';"),
        "{name}: {policy}"
    );
    let status = "<output id=\"mirotrace-status\"";
    assert_eq!(
        attribute(dom, status, "data-ready").as_deref(),
        Some("yes"),
        "{name}: the page's script ran"
    );
    let ids = chart_ids(&source);
    assert_eq!(
        attribute(dom, status, "data-charts"),
        Some(ids.len().to_string()),
        "{name}: charts in the DOM"
    );
    assert_eq!(
        attribute(dom, status, "data-empty-charts").as_deref(),
        Some(""),
        "{name}: charts without marks or size"
    );
    for id in expected_charts {
        assert!(
            ids.iter().any(|i| i == id),
            "{name}: chart {id} missing (has {ids:?})"
        );
    }
    loaded
}

struct Pages {
    dir: TempDir,
    analyze: PathBuf,
    grouped: PathBuf,
    diff: PathBuf,
    diff_grouped: PathBuf,
}

/// The folder the pages' inputs are written to: a long path, as a CI
/// checkout's or a fresh clone's target directory makes it, so that file
/// names and labels that hold it must fit a phone too (issue 41).
/// Words with no break opportunity (no `-` or `_`) are the hard case.
const LONG_DIR: &str = "acheckoutwhosefoldernameisaslongasrunnersmakethem/\
anotherlevelofnestingfortherunsofthisrelease/runs20261203modelcomparison";

fn pages(tag: &str) -> Pages {
    let dir = TempDir::new(tag);
    std::fs::create_dir_all(dir.path(LONG_DIR)).expect("long folder");
    let copy = |name: &str| {
        let to = dir.path(&format!("{LONG_DIR}/{}", name.replace('/', "-")));
        std::fs::copy(fixture(name), &to).expect("copy fixture");
        to.to_str().expect("UTF-8 path").to_string()
    };
    let sample = copy("analyze/sample.jsonl");
    let (a, b) = (copy("model-a.jsonl"), copy("model-b.jsonl"));
    let base = CorpusSpec {
        tasks: 150,
        model: "base-model".into(),
        seed: 5,
        ..CorpusSpec::default()
    };
    let raised = CorpusSpec {
        model: "new-model".into(),
        seed: 6,
        refusal: 0.1,
        ..base.clone()
    };
    let base = dir.write(&format!("{LONG_DIR}/base.jsonl"), &corpus(&base));
    let raised = dir.write(&format!("{LONG_DIR}/new.jsonl"), &corpus(&raised));
    Pages {
        analyze: page_file(&dir, "analyze", &[&sample]),
        grouped: page_file(&dir, "analyze", &[&a, &b, "--group-by", "model"]),
        diff: page_file(
            &dir,
            "diff",
            &[
                "--base",
                &base,
                "--new",
                &raised,
                "--fail-on",
                "any-significant-worse",
            ],
        ),
        diff_grouped: page_file(
            &dir,
            "diff",
            &["--base", &a, "--new", &a, &b, "--group-by", "file"],
        ),
        dir,
    }
}

const ANALYZE_CHARTS: [&str; 11] = [
    "reasons",
    "outcomes",
    "by-index",
    "tools",
    "agents",
    "streaks",
    "streak-ends",
    "repairs",
    "json-paths",
    "mistakes-format_error",
    "mistakes-json_fixes",
];

#[test]
fn pages_render_with_no_console_message_and_no_load() {
    let Some(browser) = browser() else { return };
    let p = pages("render");
    assert_clean(&browser, &p.analyze, &ANALYZE_CHARTS);
    let mut grouped: Vec<&str> = ANALYZE_CHARTS.to_vec();
    grouped.extend([
        "groups-rate",
        "group-0-reasons",
        "group-1-by-index",
        "group-1-streaks",
    ]);
    assert_clean(&browser, &p.grouped, &grouped);
    assert_clean(
        &browser,
        &p.diff,
        &[
            "forest-0-rate",
            "forest-0-per_trace",
            "forest-0-rollbacks",
            "paired-0",
        ],
    );
    assert_clean(
        &browser,
        &p.diff_grouped,
        &["forest-0-rate", "forest-1-rate", "paired-1"],
    );
    // Edges: little or nothing read, nothing changed. Charts without data
    // are left out, not drawn empty.
    let broken = fixture("mixed/broken");
    // An empty input makes no page any more (exit 4, issue 15): one line,
    // one trace, is the least a page is drawn for.
    let a = fixture("model-a.jsonl");
    let one_line = std::fs::read_to_string(&a)
        .expect("fixture")
        .lines()
        .next()
        .expect("a line")
        .to_string();
    let tiny = p.dir.write("one-line.jsonl", &(one_line + "\n"));
    for (command, args) in [
        ("analyze", vec![broken.as_str()]),
        ("analyze", vec![tiny.as_str()]),
        ("diff", vec!["--base", a.as_str(), "--new", a.as_str()]),
    ] {
        assert_clean(&browser, &page_file(&p.dir, command, &args), &[]);
    }
}

/// The checks above can fail: a load the policy blocks and a script it does
/// not know are both reported, on the console and by the page.
#[test]
fn a_blocked_load_or_script_is_caught() {
    let Some(browser) = browser() else { return };
    let p = pages("control");
    let page = std::fs::read_to_string(&p.analyze).expect("page");
    let tampered = page.replacen(
        "</main>",
        "<img src=\"http://127.0.0.1:9/pixel.png\" alt=\"\"><script>document.title = 'ran';</script></main>",
        1,
    );
    let path = p.dir.path("tampered.html");
    std::fs::write(&path, tampered).expect("write");
    let loaded = browser.load(&url(&path));
    assert!(
        loaded
            .console
            .iter()
            .any(|l| l.contains("Content Security Policy")),
        "violations reach the console: {:?}",
        loaded.console
    );
    let errors: u32 = attribute(&loaded.dom, "<html", "data-errors")
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    assert!(errors >= 2, "the page collected both violations ({errors})");
    assert!(
        !loaded.dom.contains("<title>ran</title>"),
        "the unknown script did not run"
    );
}

#[test]
fn a_worst_trace_opens_on_its_timeline() {
    let Some(browser) = browser() else { return };
    let p = pages("timeline");
    let json = data_island(&std::fs::read_to_string(&p.analyze).expect("page"));
    let worst = &json["worst_traces"][0];
    let loaded = browser.load(&format!("{}#trace-1", url(&p.analyze)));
    let open = "<details class=\"trace\" id=\"trace-1\" open=\"\">";
    let at = loaded.dom.find(open).expect("#trace-1 is open");
    let details = &loaded.dom[at..at + loaded.dom[at..].find("</details>").expect("its end")];
    assert!(details.contains(&escape(worst["trace_id"].as_str().expect("id"))));
    let rows = details.matches("<tr class=\"o-row-").count() as u64;
    let attempts = worst["attempts"].as_u64().expect("attempts");
    assert_eq!(rows, attempts.min(200), "one timeline row per attempt");
    let rollbacks = details.matches("<tr class=\"o-row-rollback\"").count() as u64;
    assert_eq!(rollbacks, worst["rollbacks"].as_u64().expect("rollbacks"));
    // The others stay closed.
    assert!(!loaded.dom.contains("id=\"trace-2\" open"));
    assert!(loaded.console.is_empty(), "{:?}", loaded.console);
}

#[test]
fn a_hostile_trace_runs_no_script() {
    let Some(browser) = browser() else { return };
    let dir = TempDir::new("hostile-browser");
    let input = write_hostile_corpus(&dir);
    let input = input.to_str().expect("UTF-8 path");
    let analyze = page_file(&dir, "analyze", &[input, "--group-by", "model"]);
    let diff = page_file(&dir, "diff", &["--base", input, "--new", input]);
    for page in [&analyze, &diff] {
        let loaded = assert_clean(&browser, page, &[]);
        let dom = &loaded.dom;
        let html_tag = &dom[dom.find("<html").expect("html")..];
        let html_tag = &html_tag[..html_tag.find('>').expect("tag end")];
        assert!(
            !html_tag.contains("data-pwned"),
            "an injected script ran: {html_tag}"
        );
        assert_eq!(
            dom.matches("<script").count(),
            3,
            "only the page's scripts are elements"
        );
        assert_eq!(dom.matches("<style").count(), 1);
        assert!(
            !dom.contains("<img") && !dom.contains("<textarea"),
            "no injected element"
        );
    }
    let dom = browser.load(&url(&analyze)).dom;
    assert!(
        dom.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
        "the content shows as text"
    );
}

#[test]
fn screenshots_are_kept_for_people() {
    let Some(browser) = browser() else { return };
    let p = pages("screenshots");
    let out = artifacts_dir();
    for (name, page) in [("analyze", &p.analyze), ("diff", &p.diff)] {
        let kept = out.join(format!("{name}.html"));
        std::fs::copy(page, &kept).expect("keep the page");
        println!("page: {}", kept.display());
        let mut sizes = Vec::new();
        for dark in [false, true] {
            let path = out.join(format!(
                "{name}-{}.png",
                if dark { "dark" } else { "light" }
            ));
            browser.screenshot(&url(page), &path, dark);
            let png = std::fs::read(&path).expect("screenshot");
            assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "a PNG");
            let width = u32::from_be_bytes([png[16], png[17], png[18], png[19]]);
            let height = u32::from_be_bytes([png[20], png[21], png[22], png[23]]);
            assert_eq!((width, height), (1280, 800));
            assert!(
                png.len() > 20_000,
                "{} has content ({} bytes)",
                path.display(),
                png.len()
            );
            sizes.push(png.len());
            println!("screenshot: {}", path.display());
            eprintln!("screenshot: {}", path.display());
        }
        assert_ne!(
            sizes[0], sizes[1],
            "{name}: the dark scheme differs from the light one"
        );
    }
}

/// Without scripts the page still holds everything: every chart, every
/// trace, every table (only sorting, filtering and #trace-N need them).
#[test]
fn the_page_reads_without_scripts() {
    let Some(browser) = browser() else { return };
    let p = pages("no-script");
    let page = std::fs::read_to_string(&p.analyze).expect("page");
    let mut stripped = String::new();
    let mut rest = page.as_str();
    while let Some(at) = rest.find("<script>") {
        stripped.push_str(&rest[..at]);
        let end = rest[at..].find("</script>").expect("script end") + at + "</script>".len();
        rest = &rest[end..];
    }
    stripped.push_str(rest);
    assert_eq!(
        stripped.matches("<script").count(),
        1,
        "only the data island is left"
    );
    let path = p.dir.path("no-script.html");
    std::fs::write(&path, &stripped).expect("write");
    let loaded = browser.load(&url(&path));
    assert!(loaded.console.is_empty(), "{:?}", loaded.console);
    assert_eq!(chart_ids(&loaded.dom), chart_ids(&page), "every chart");
    for id in ANALYZE_CHARTS {
        assert!(
            chart_rows_or_marks(&loaded.dom, id) > 0,
            "chart {id} has marks"
        );
    }
    let traces = page.matches("<details class=\"trace\"").count();
    assert!(traces > 0);
    assert_eq!(
        loaded.dom.matches("<details class=\"trace\"").count(),
        traces
    );
}

fn chart_rows_or_marks(dom: &str, id: &str) -> usize {
    chart(dom, id).map_or(0, |svg| svg.matches("class=\"mark").count())
}

/// A page of the test's own (no CSP) that frames `page` at `width` px and,
/// once it has loaded, writes what it measured into its own DOM as
/// `LAYOUT {json}`: the framed page's scroll and client widths, and the
/// chart labels whose rendered size is under 9 px (font size times the
/// chart's scale). Reading the frame needs `--allow-file-access-from-files`.
fn layout_probe(dir: &TempDir, page: &Path, width: u32) -> String {
    let name = page
        .file_name()
        .and_then(|n| n.to_str())
        .expect("page name");
    let html = format!(
        r#"<!doctype html><html><body style="margin:0">
<iframe id="f" src="{name}" style="width:{width}px;height:900px;border:0"></iframe>
<pre id="out">LAYOUT pending</pre>
<script>
document.getElementById('f').addEventListener('load', () => {{
  const d = document.getElementById('f').contentDocument;
  if (!d) {{ document.getElementById('out').textContent = 'LAYOUT {{"error":"no access"}}'; return; }}
  const el = d.documentElement;
  const small = [];
  for (const t of d.querySelectorAll('svg.chart text')) {{
    const svg = t.ownerSVGElement;
    const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
    const px = parseFloat(getComputedStyle(t).fontSize) * scale;
    if (px < 9) small.push(px.toFixed(1) + 'px ' + t.textContent);
  }}
  // What sticks out past the page's width, outside any box that scrolls.
  const wide = [];
  for (const e of d.body.querySelectorAll('*')) {{
    if (e.getBoundingClientRect().right <= el.clientWidth + 0.5) continue;
    let p = e.parentElement, boxed = false;
    for (; p; p = p.parentElement) {{
      const o = getComputedStyle(p).overflowX;
      if (o === 'auto' || o === 'scroll' || o === 'hidden') {{ boxed = true; break; }}
    }}
    if (!boxed) wide.push(e.tagName.toLowerCase() + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right));
  }}
  const r = {{ scroll: el.scrollWidth, client: el.clientWidth, wide: wide.slice(0, 8), small: small.slice(0, 5), smallCount: small.length }};
  document.getElementById('out').textContent = 'LAYOUT ' + JSON.stringify(r);
}});
</script></body></html>"#
    );
    dir.write(&format!("probe-{width}-{name}"), &html)
}

#[test]
fn pages_fit_a_phone_and_keep_chart_labels_readable() {
    let Some(browser) = browser() else { return };
    let p = pages("layout");
    for page in [&p.analyze, &p.grouped, &p.diff, &p.diff_grouped] {
        for width in [390, 1280] {
            let probe = layout_probe(&p.dir, page, width);
            let (dom, log) = browser.run(
                &url(Path::new(&probe)),
                &[
                    "--dump-dom",
                    "--allow-file-access-from-files",
                    "--virtual-time-budget=5000",
                ],
            );
            let json = dom
                .split("LAYOUT ")
                .nth(1)
                .and_then(|rest| rest.split("</pre>").next())
                .unwrap_or_else(|| panic!("no measurement of {page:?}; chromium said:\n{log}"));
            let m: serde_json::Value = serde_json::from_str(&json.replace("&quot;", "\""))
                .unwrap_or_else(|e| panic!("{e}: {json}"));
            assert!(m.get("error").is_none(), "{page:?} at {width}px: {m}");
            assert_eq!(
                m["scroll"], m["client"],
                "{page:?} at {width}px scrolls sideways: {m}"
            );
            assert_eq!(
                m["smallCount"], 0,
                "{page:?} at {width}px: chart labels under 9 px: {m}"
            );
        }
    }
}

/// Phone-sized screenshots (390 px wide, the top 2400 px) of both pages,
/// kept beside the 1280-px ones for people to look at.
#[test]
fn phone_screenshots_are_kept_for_people() {
    let Some(browser) = browser() else { return };
    let p = pages("phone-screenshots");
    let out = artifacts_dir();
    for (name, page) in [("analyze", &p.analyze), ("diff", &p.diff)] {
        let path = out.join(format!("{name}-390.png"));
        browser.screenshot_sized(&url(page), &path, false, (390, 2400));
        let png = std::fs::read(&path).expect("screenshot");
        let width = u32::from_be_bytes([png[16], png[17], png[18], png[19]]);
        assert_eq!(width, 390, "{}", path.display());
        println!("screenshot: {}", path.display());
    }
}

/// A long tool name in a page table at 390 px wraps only after `_`, `-`,
/// `.` or `/` (issue 26: `google_s|earch` broke mid-word). The probe
/// measures each character's line in every cell that holds the name (a
/// timeline's call cells included, every `<details>` opened).
#[test]
fn a_long_tool_name_wraps_at_its_parts_on_a_phone() {
    let Some(browser) = browser() else { return };
    let dir = TempDir::new("long-name");
    const NAME: &str = "search_and_scrape_webpage.google_search-with_a_rather_long_suffix";
    let text = std::fs::read_to_string(fixture("model-a.jsonl")).expect("fixture");
    let input = dir.write("long.jsonl", &text.replace("google_search", NAME));
    let page = page_file(&dir, "analyze", &[&input]);
    let name = page.file_name().and_then(|n| n.to_str()).expect("name");
    let probe = format!(
        r#"<!doctype html><html><body style="margin:0">
<iframe id="f" src="{name}" style="width:390px;height:900px;border:0"></iframe>
<pre id="out">BREAKS pending</pre>
<script>
document.getElementById('f').addEventListener('load', () => {{
  const d = document.getElementById('f').contentDocument;
  // Every table laid out: the timelines and the report's own tables too.
  for (const e of d.querySelectorAll('details')) e.open = true;
  const cells = [...d.querySelectorAll('td, td.calls div')].filter(e =>
    (e.textContent === '{NAME}' || e.textContent.startsWith('search_and_scrape_webpage/{NAME} ')) && e.getClientRects().length);
  let wrapped = 0, at_parts = 0; const bad = [];
  for (const cell of cells) {{
    // The cell's own text: the name (a call's arguments and badges are elements).
    const texts = [...cell.childNodes].filter(n => n.nodeType === 3);
    const range = d.createRange();
    let top = null, before = '';
    for (const n of texts) {{
      for (let i = 0; i < n.length; i++) {{
        range.setStart(n, i); range.setEnd(n, i + 1);
        const r = range.getClientRects()[0];
        if (!r) continue;
        if (top !== null && r.top > top + 2) {{
          wrapped++;
          if (before === '_') at_parts++;
          const space = /\s/.test(before) || /\s/.test(n.data[i]);
          if (!space && !'_-./'.includes(before)) bad.push(before + '|' + n.data[i]);
        }}
        top = r.top; before = n.data[i];
      }}
    }}
  }}
  document.getElementById('out').textContent = 'BREAKS ' + JSON.stringify({{ cells: cells.length, wrapped, at_parts, bad }});
}});
</script></body></html>"#
    );
    let probe = dir.write("probe-long.html", &probe);
    let (dom, log) = browser.run(
        &url(Path::new(&probe)),
        &[
            "--dump-dom",
            "--allow-file-access-from-files",
            "--virtual-time-budget=5000",
        ],
    );
    let json = dom
        .split("BREAKS ")
        .nth(1)
        .and_then(|rest| rest.split("</pre>").next())
        .unwrap_or_else(|| panic!("no measurement; chromium said:\n{log}"));
    let m: serde_json::Value = serde_json::from_str(&json.replace("&quot;", "\""))
        .unwrap_or_else(|e| panic!("{e}: {json}"));
    assert!(
        m["cells"].as_u64() > Some(0),
        "no visible cell holds the name: {m}"
    );
    assert!(
        m["wrapped"].as_u64() > Some(0),
        "the name never had to wrap at 390 px: {m}"
    );
    assert_eq!(m["bad"], serde_json::json!([]), "broken mid-word: {m}");
    // A browser breaks after `-` and `/` by itself; after `_` only where the page allows it.
    assert!(
        m["at_parts"].as_u64() > Some(0),
        "never wrapped after _: {m}"
    );
}
