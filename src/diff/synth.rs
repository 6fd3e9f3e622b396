//! A seeded generator of native-format trace corpora with known rates, so
//! that `diff`'s tests and demos compare corpora whose truth is known
//! rather than hand-tuned files.
//!
//! Each task has properties shared by every model run on it (its length
//! and a difficulty factor that scales its problem rates), drawn from
//! `task_seed`; what the model does at each step is drawn from `seed`.
//! Every step is a normal tool call, or a problem (refusal, duplicate query,
//! format error, unknown tool, tool error, empty search) that may repeat
//! (`stuck`) before a normal call recovers, or a failed LLM call.

use std::io::{self, Write};

use serde_json::json;

use crate::metrics::stats::{stream_seed, SplitMix64 as Rng};

/// The system prompt of the first line: it gives the server-name repair
/// its tool → server mapping.
const SYSTEM_PROMPT: &str = "You can call the tools listed below. Put exactly one tool call at the end of a message, formatted as <use_mcp_tool> with <server_name>, <tool_name> and <arguments> (a JSON object).

# Available tools

## Server name: search_and_scrape_webpage
### Tool name: google_search
Description: Perform Google searches via Serper API and retrieve rich results.
Input JSON schema: {\"type\": \"object\", \"properties\": {\"q\": {\"type\": \"string\"}}, \"required\": [\"q\"]}
### Tool name: scrape_website
Description: Scrape the content of a website by URL.
Input JSON schema: {\"type\": \"object\", \"properties\": {\"url\": {\"type\": \"string\"}}, \"required\": [\"url\"]}

## Server name: tool-python
### Tool name: run_python_code
Description: Run Python code in a sandbox and return stdout/stderr.
Input JSON schema: {\"type\": \"object\", \"properties\": {\"code_block\": {\"type\": \"string\"}, \"sandbox_id\": {\"type\": \"string\"}}, \"required\": [\"code_block\", \"sandbox_id\"]}

# Objective

Solve the user's task step by step and wrap the final answer in \\boxed{}.";

/// The upstream refusal keyword, with its curly apostrophes.
pub const REFUSAL: &str = "I\u{2019}m sorry, but I can\u{2019}t help with that request.";

/// What to generate. Rates are per step (before the task's difficulty
/// factor), except `context_exceeded` and `crash`, which are per task.
#[derive(Debug, Clone, PartialEq)]
pub struct CorpusSpec {
    pub tasks: usize,
    /// Trace ids are `{prefix}-{index:05}`.
    pub prefix: String,
    /// Written as `meta.model` on every line.
    pub model: String,
    /// The model's draws.
    pub seed: u64,
    /// The tasks' shared properties (length, difficulty).
    pub task_seed: u64,
    /// Mean number of steps per task (each task has ½× to 1½× this).
    pub steps: usize,
    pub refusal: f64,
    pub duplicate: f64,
    pub format_error: f64,
    pub unknown_tool: f64,
    pub tool_error: f64,
    pub empty_search: f64,
    pub llm_failure: f64,
    /// Probability that a problem is repeated (a longer rollback streak).
    pub stuck: f64,
    /// Share of normal calls with a wrong server name (repaired).
    pub server_repair: f64,
    /// Share of normal calls with arguments that need json_repair.
    pub json_repair: f64,
    pub context_exceeded: f64,
    pub crash: f64,
}

impl Default for CorpusSpec {
    fn default() -> Self {
        CorpusSpec {
            tasks: 200,
            prefix: "task".into(),
            model: "model-a".into(),
            seed: 1,
            task_seed: 7,
            steps: 10,
            refusal: 0.02,
            duplicate: 0.02,
            format_error: 0.02,
            unknown_tool: 0.01,
            tool_error: 0.02,
            empty_search: 0.02,
            llm_failure: 0.02,
            stuck: 0.2,
            server_repair: 0.05,
            json_repair: 0.04,
            context_exceeded: 0.03,
            crash: 0.01,
        }
    }
}

impl CorpusSpec {
    /// Sets one field by name (`refusal`, `tasks`, `model`, …), for the
    /// command-line generator.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), String> {
        let float = || {
            value
                .parse::<f64>()
                .map_err(|_| format!("--{key}: {value:?} is not a number"))
        };
        let int = || {
            value
                .parse::<u64>()
                .map_err(|_| format!("--{key}: {value:?} is not a whole number"))
        };
        match key {
            "tasks" => self.tasks = int()? as usize,
            "steps" => self.steps = int()? as usize,
            "seed" => self.seed = int()?,
            "task-seed" => self.task_seed = int()?,
            "prefix" => self.prefix = value.to_string(),
            "model" => self.model = value.to_string(),
            "refusal" => self.refusal = float()?,
            "duplicate" => self.duplicate = float()?,
            "format-error" => self.format_error = float()?,
            "unknown-tool" => self.unknown_tool = float()?,
            "tool-error" => self.tool_error = float()?,
            "empty-search" => self.empty_search = float()?,
            "llm-failure" => self.llm_failure = float()?,
            "stuck" => self.stuck = float()?,
            "server-repair" => self.server_repair = float()?,
            "json-repair" => self.json_repair = float()?,
            "context-exceeded" => self.context_exceeded = float()?,
            "crash" => self.crash = float()?,
            _ => return Err(format!("unknown option --{key}")),
        }
        Ok(())
    }
}

#[derive(Clone, Copy)]
enum Problem {
    Refusal,
    Duplicate,
    FormatError,
    UnknownTool,
    ToolError,
    EmptySearch,
}

/// Writes one trace per task, one JSON line per attempt.
pub fn write_corpus(spec: &CorpusSpec, out: &mut impl Write) -> io::Result<()> {
    for i in 0..spec.tasks {
        for line in task_lines(spec, i) {
            writeln!(out, "{line}")?;
        }
    }
    Ok(())
}

/// The corpus as one string.
pub fn corpus(spec: &CorpusSpec) -> String {
    let mut buf = Vec::new();
    // Writing to a Vec cannot fail.
    let _ = write_corpus(spec, &mut buf);
    String::from_utf8_lossy(&buf).into_owned()
}

struct Task<'a> {
    spec: &'a CorpusSpec,
    id: String,
    rng: Rng,
    lines: Vec<String>,
    /// Queries searched successfully so far (duplicates repeat one).
    searched: Vec<String>,
    step: usize,
}

impl Task<'_> {
    fn push(&mut self, mut line: serde_json::Value) {
        line["trace_id"] = json!(self.id);
        line["meta"] = json!({"model": self.spec.model, "step": self.lines.len()});
        if self.lines.is_empty() {
            line["system_prompt"] = json!(SYSTEM_PROMPT);
        }
        self.lines.push(line.to_string());
    }

    fn call(&self, server: &str, tool: &str, args: &str) -> String {
        format!(
            "Step {}: let me use a tool.\n\n<use_mcp_tool>\n<server_name>{server}</server_name>\n<tool_name>{tool}</tool_name>\n<arguments>\n{args}\n</arguments>\n</use_mcp_tool>",
            self.step
        )
    }

    fn search_results(q: &str) -> String {
        json!({"organic": [{"title": format!("About {q}"), "link": "https://example.org/a", "snippet": "…"}]}).to_string()
    }

    /// A normal, successful call.
    fn normal(&mut self) {
        self.step += 1;
        let q = format!("{} fact {}", self.id, self.step);
        let server_repair = self.rng.unit() < self.spec.server_repair;
        let json_repair = self.rng.unit() < self.spec.json_repair;
        let trailing = if json_repair { "," } else { "" };
        let kind = self.rng.below(4);
        let (content, result) = if kind <= 1 || server_repair {
            // google_search is one of the tools whose server name is repaired.
            let server = if server_repair {
                "tool-google"
            } else {
                "search_and_scrape_webpage"
            };
            let args = format!("{{\"q\": {}{trailing}}}", json!(q));
            self.searched.push(q.clone());
            (
                self.call(server, "google_search", &args),
                Self::search_results(&q),
            )
        } else if kind == 2 {
            let args = format!(
                "{{\"url\": \"https://example.org/{}/{}\"{trailing}}}",
                self.id, self.step
            );
            (
                self.call("search_and_scrape_webpage", "scrape_website", &args),
                "Page text.".to_string(),
            )
        } else {
            let args = format!(
                "{{\"code_block\": \"print({})\", \"sandbox_id\": \"sb-1\"{trailing}}}",
                self.step
            );
            (
                self.call("tool-python", "run_python_code", &args),
                self.step.to_string(),
            )
        };
        self.push(json!({"content": content, "tool_results": [{"result": result}]}));
    }

    fn problem(&mut self, p: Problem) {
        self.step += 1;
        let line = match p {
            Problem::Refusal => json!({"content": REFUSAL}),
            Problem::FormatError => json!({"content": format!(
                "Step {}: searching.\n\n<use_mcp_tool>\n<server_name>search_and_scrape_webpage</server_name>",
                self.step
            )}),
            Problem::Duplicate => {
                let q = self.searched[self.rng.below(self.searched.len())].clone();
                let content = self.call(
                    "search_and_scrape_webpage",
                    "google_search",
                    &json!({"q": q}).to_string(),
                );
                json!({"content": content, "tool_results": [{"result": Self::search_results(&q)}]})
            }
            Problem::UnknownTool => json!({
                "content": self.call("search_and_scrape_webpage", "fetch_page", "{\"url\": \"https://example.org\"}"),
                "tool_results": [{"result": "Unknown tool: fetch_page"}],
            }),
            Problem::ToolError => json!({
                "content": self.call("search_and_scrape_webpage", "scrape_website", "{\"url\": \"https://example.org/down\"}"),
                "tool_results": [{"result": "", "error": "Error executing tool scrape_website: 502 Bad Gateway"}],
            }),
            Problem::EmptySearch => {
                let q = format!("{} obscure {}", self.id, self.step);
                json!({
                    "content": self.call("search_and_scrape_webpage", "google_search", &json!({"q": q}).to_string()),
                    "tool_results": [{"result": "{\"organic\": []}"}],
                })
            }
        };
        self.push(line);
    }
}

/// The lines of task `i`.
fn task_lines(spec: &CorpusSpec, i: usize) -> Vec<String> {
    let id = format!("{}-{i:05}", spec.prefix);
    let mut shape = Rng::new(stream_seed(spec.task_seed, &format!("task:{i}")));
    let difficulty = 0.5 + shape.unit();
    let steps = (spec.steps as f64 * (0.5 + shape.unit())).round().max(1.0) as usize;
    let mut t = Task {
        spec,
        rng: Rng::new(stream_seed(spec.seed, &format!("model:{}:{i}", spec.model))),
        id,
        lines: Vec::new(),
        searched: Vec::new(),
        step: 0,
    };
    let problems = [
        (spec.refusal, Problem::Refusal),
        (spec.duplicate, Problem::Duplicate),
        (spec.format_error, Problem::FormatError),
        (spec.unknown_tool, Problem::UnknownTool),
        (spec.tool_error, Problem::ToolError),
        (spec.empty_search, Problem::EmptySearch),
    ];
    // The first step searches, so a duplicate always has a query to repeat.
    while t.searched.is_empty() {
        t.normal();
    }
    for _ in 1..steps {
        let mut u = t.rng.unit();
        let mut chosen = None;
        for (rate, p) in problems {
            let rate = rate * difficulty;
            if u < rate {
                chosen = Some(p);
                break;
            }
            u -= rate;
        }
        match chosen {
            Some(p) => {
                t.problem(p);
                while t.rng.unit() < spec.stuck {
                    t.problem(p);
                }
            }
            None if u < spec.llm_failure * difficulty => {
                t.push(json!({"llm_error": "upstream timeout"}));
            }
            None => {}
        }
        t.normal();
    }
    let end = t.rng.unit();
    if end < spec.context_exceeded {
        t.push(json!({"content": "Context length exceeded", "finish_reason": "length"}));
    } else if end < spec.context_exceeded + spec.crash {
        // fix_tool_call_arguments raises on a list for run_python_code.
        let content = t.call("tool-python", "run_python_code", "[\"print(1)\"]");
        t.push(json!({"content": content, "tool_results": [{"result": "1"}]}));
    } else {
        let answer = format!("The answer is \\boxed{{{}}}.", t.step);
        t.push(json!({"content": answer}));
    }
    t.lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_spec_same_corpus_and_seeds_matter() {
        let spec = CorpusSpec {
            tasks: 5,
            ..CorpusSpec::default()
        };
        assert_eq!(corpus(&spec), corpus(&spec));
        let other = CorpusSpec {
            seed: 2,
            ..spec.clone()
        };
        assert_ne!(corpus(&spec), corpus(&other));
        // The task set is the same whatever the model's seed.
        let ids = |s: &str| {
            let mut v: Vec<String> = s
                .lines()
                .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
                .filter_map(|v| v["trace_id"].as_str().map(str::to_string))
                .collect();
            v.dedup();
            v
        };
        assert_eq!(ids(&corpus(&spec)), ids(&corpus(&other)));
        assert_eq!(ids(&corpus(&spec)).len(), 5);
    }

    #[test]
    fn refusals_use_the_curly_upstream_keyword() {
        assert!(REFUSAL.contains("I\u{2019}m sorry, but I can\u{2019}t"));
        let spec = CorpusSpec {
            tasks: 20,
            refusal: 0.5,
            ..CorpusSpec::default()
        };
        assert!(corpus(&spec).contains("\\u2019") || corpus(&spec).contains('\u{2019}'));
    }

    #[test]
    fn set_parses_fields_and_rejects_unknown_ones() {
        let mut s = CorpusSpec::default();
        s.set("refusal", "0.1").expect("sets");
        s.set("model", "m2").expect("sets");
        assert_eq!((s.refusal, s.model.as_str()), (0.1, "m2"));
        assert!(s.set("refusal", "x").is_err());
        assert!(s.set("bogus", "1").is_err());
    }
}
