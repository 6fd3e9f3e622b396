//! `export` → read back → replay gives the verdicts of the original, on a
//! generated corpus where sub-agents' system prompts map tools to other
//! servers than the main agent's (upstream's tool→server mapping is
//! process-global: a sub-agent's prompt stays in force for the main agent's
//! later calls until another prompt is set).

use mirotrace::export::atif;
use mirotrace::policy::Policy;
use mirotrace::read::{Record, Trace, TraceReader};
use mirotrace::replay::{Replayer, Verdict};

/// A small deterministic generator (xorshift), so the corpus is the same
/// on every run.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

const SERVERS: [&str; 4] = [
    "search_and_scrape_webpage",
    "tool-google-search",
    "tool-python",
    "jina_scrape_llm_summary",
];

/// A system prompt mapping the search and python tools to two servers.
fn prompt(rng: &mut Rng) -> String {
    let search = SERVERS[rng.below(4) as usize];
    let python = SERVERS[rng.below(4) as usize];
    format!(
        "## Server name: {search}\n### Tool name: google_search\n\
         ## Server name: {python}\n### Tool name: run_python_code\n\
         ## Server name: agent-browsing\n### Tool name: search_and_browse\n"
    )
}

fn call(server: &str, tool: &str, args: &str) -> String {
    format!(
        "<use_mcp_tool>\n<server_name>{server}</server_name>\n<tool_name>{tool}</tool_name>\n\
         <arguments>\n{args}\n</arguments>\n</use_mcp_tool>"
    )
}

fn line(trace: &str, session: &str, prompt: Option<&str>, content: &str, result: &str) -> String {
    let mut obj = serde_json::json!({"trace_id": trace, "session": session, "content": content});
    if let Some(p) = prompt {
        obj["system_prompt"] = p.into();
    }
    if !result.is_empty() {
        obj["tool_results"] = serde_json::json!([{ "result": result }]);
    }
    obj.to_string()
}

/// A tool call from a model that names the wrong server now and then.
fn some_call(rng: &mut Rng, n: usize) -> (String, String) {
    let server = SERVERS[rng.below(4) as usize];
    match rng.below(3) {
        0 => (
            call(
                server,
                "google_search",
                &format!("{{\"q\": \"query {n}\"}}"),
            ),
            ["{\"organic\": [{\"title\": \"t\"}]}", "{\"organic\": []}"][rng.below(2) as usize]
                .to_string(),
        ),
        1 => (
            call(
                server,
                "run_python_code",
                &format!("{{\"code\": \"print({n})\"}}"),
            ),
            "ok".to_string(),
        ),
        _ => (call(server, "python", "{\"code\": \"1\"}"), "1".to_string()),
    }
}

/// One trace: main lines, with sub-agent sessions (their own prompts)
/// launched in between, in execution order.
fn trace_lines(rng: &mut Rng, id: &str) -> Vec<String> {
    let mut out = Vec::new();
    let main_prompt = prompt(rng);
    let mut launches = 0;
    let turns = 2 + rng.below(5) as usize;
    for turn in 0..turns {
        let first = (turn == 0).then_some(main_prompt.as_str());
        if turn + 1 < turns && rng.below(2) == 0 {
            launches += 1;
            let session = format!("agent-browsing_{launches}");
            out.push(line(
                id,
                "main",
                first,
                &call(
                    "agent-browsing",
                    "search_and_browse",
                    &format!("{{\"subtask\": \"task {turn}\"}}"),
                ),
                "",
            ));
            let sub_prompt = prompt(rng);
            for k in 0..1 + rng.below(3) as usize {
                let (c, r) = some_call(rng, k);
                let p = (k == 0).then_some(sub_prompt.as_str());
                out.push(line(id, &session, p, &c, &r));
            }
            out.push(line(id, &session, None, "Found it.", ""));
        } else if turn + 1 < turns {
            let (c, r) = some_call(rng, turn);
            out.push(line(id, "main", first, &c, &r));
        } else {
            out.push(line(id, "main", first, "\\boxed{42}", ""));
        }
    }
    out
}

fn read(text: &str, file: &str) -> Vec<Trace> {
    TraceReader::new(text.as_bytes(), file.into(), 1 << 24)
        .map(|r| match r {
            Record::Trace(t) => t,
            other => panic!("{file}: unexpected {other:?}"),
        })
        .collect()
}

#[test]
fn exported_atif_replays_to_the_same_verdicts_when_sub_agents_remap_tools() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut text = String::new();
    for i in 0..300 {
        for l in trace_lines(&mut rng, &format!("t{i}")) {
            text.push_str(&l);
            text.push('\n');
        }
    }
    let replayer = Replayer::new(Policy::default());
    let lines = |vs: &[Verdict]| vs.iter().map(Verdict::to_json_line).collect::<Vec<_>>();
    let (mut verdicts, mut differing) = (0, Vec::new());
    let traces = read(&text, "corpus.jsonl");
    assert_eq!(traces.len(), 300);
    for t in &traces {
        let v = replayer.replay(t);
        let doc = serde_json::to_string(&atif::to_document(t, &v)).expect("ATIF is JSON");
        let back = read(&doc, "export.jsonl");
        assert_eq!(back.len(), 1, "{}", t.trace_id);
        let again = replayer.replay(&back[0]);
        verdicts += v.len();
        let (before, after) = (lines(&v), lines(&again));
        differing.extend(
            before
                .iter()
                .zip(&after)
                .filter(|(a, b)| a != b)
                .map(|(a, b)| format!("{a}\n{b}")),
        );
        assert_eq!(before.len(), after.len(), "{}", t.trace_id);
    }
    assert!(verdicts > 1000, "{verdicts} verdicts");
    assert!(
        differing.is_empty(),
        "{} of {verdicts} verdicts differ, e.g.\n{}",
        differing.len(),
        differing[0]
    );
}
