//! Which model made each attempt: decided here, once, for every format.
//!
//! A format may name a model in two places: on one LLM call (a message's
//! or a response's `model`, a span's `gen_ai.response.model`, a native
//! line's `meta.model`) and for the whole run (a task log's
//! `env_info.llm_model_name`, Inspect's `eval.model`, an ATIF trajectory's
//! `agent.model_name`, a SWE-agent configuration, tau2's `agent_info.llm`).
//! Readers record the first on the attempt ([`Attempt::model`]) and the
//! second on the trace ([`Trace::model`]); [`settle`] then gives every
//! attempt the most specific model the trace records for it:
//!
//! 1. its own;
//! 2. else the run's;
//! 3. else the one an earlier attempt of its session named (a native
//!    trace usually names its model on its first line only);
//! 4. else the first one the trace names anywhere.
//!
//! So an attempt is without a model only when its trace names none at all
//! (`--group-by model` then falls back to the file).
//!
//! A trace's id is its record's own (a task's instance id, a session id,
//! …; each reader knows where its format keeps it). A record without one
//! is named by [`unnamed`]: its file's stem, never the path as typed, so
//! that copies of a run in two folders name their tasks alike.

use std::sync::Arc;

use crate::model::{Attempt, Origin, Trace};

/// Extensions [`file_stem`] takes off a file's name, the outer first.
const STEM_EXTENSIONS: [&str; 5] = [".gz", ".zst", ".jsonl", ".json", ".traj"];

/// A file's name without directories and known extensions (`.json`,
/// `.traj`, `.gz`, …).
pub fn file_stem(label: &str) -> String {
    let mut name = std::path::Path::new(label)
        .file_name()
        .map_or_else(|| label.to_string(), |n| n.to_string_lossy().into_owned());
    while let Some(stripped) = STEM_EXTENSIONS
        .iter()
        .find_map(|ext| name.strip_suffix(ext))
    {
        if stripped.is_empty() {
            break;
        }
        name = stripped.to_string();
    }
    name
}

/// The name of a record that has no id of its own: its file's stem, with
/// `:LINE` when the record does not start on the file's first line (the
/// lines of a JSONL file). The directories typed do not change it.
pub fn unnamed(origin: &Origin) -> String {
    let stem = file_stem(&origin.file);
    if origin.line <= 1 {
        stem
    } else {
        format!("{stem}:{}", origin.line)
    }
}

/// Gives every attempt of the trace its model (see the module's rules).
/// Cheap when every attempt names its own, and idempotent.
pub fn settle(trace: &mut Trace) {
    if trace.attempts.iter().all(|a| a.model.is_some()) {
        return;
    }
    let Some(first) = trace
        .model
        .clone()
        .or_else(|| trace.attempts.iter().find_map(|a| a.model.clone()))
    else {
        return;
    };
    // The last model each session named (sessions are few: a linear list).
    let mut last: Vec<(Arc<str>, Arc<str>)> = Vec::new();
    for a in &mut trace.attempts {
        match &a.model {
            Some(m) => match last.iter_mut().find(|(s, _)| *s == a.session) {
                Some((_, seen)) => seen.clone_from(m),
                None => last.push((a.session.clone(), m.clone())),
            },
            None => {
                let earlier = || {
                    last.iter()
                        .find(|(s, _)| *s == a.session)
                        .map(|(_, m)| m.clone())
                };
                a.model = Some(
                    trace
                        .model
                        .clone()
                        .or_else(earlier)
                        .unwrap_or_else(|| first.clone()),
                );
            }
        }
    }
}

/// Gives the run's model to the attempts of one record that name none of
/// their own: for readers whose records are grouped into traces later (a
/// chat record, a JSONL line), where [`Trace::model`] is not at hand.
pub fn give_run_model(attempts: &mut [Attempt], run: Option<&str>) {
    let Some(run) = run else {
        return;
    };
    let run: Arc<str> = Arc::from(run);
    for a in attempts.iter_mut().filter(|a| a.model.is_none()) {
        a.model = Some(run.clone());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Origin;

    fn attempt(session: &str, model: Option<&str>) -> Attempt {
        let mut a = Attempt::blank(
            Origin {
                file: "f.json".into(),
                line: 1,
            },
            "t".into(),
            session.into(),
            "main".into(),
        );
        a.model = model.map(Arc::from);
        a
    }

    fn models(t: &Trace) -> Vec<Option<&str>> {
        t.attempts.iter().map(|a| a.model.as_deref()).collect()
    }

    #[test]
    fn an_attempt_keeps_its_own_model_and_else_takes_the_runs() {
        let mut t = Trace::new(
            "t",
            vec![
                attempt("main", Some("gpt-4o-2024-08-06")),
                attempt("main", None),
                attempt("agent-x_1", None),
            ],
        );
        t.model = Some("openai/gpt-4o".into());
        settle(&mut t);
        assert_eq!(
            models(&t),
            [
                Some("gpt-4o-2024-08-06"),
                Some("openai/gpt-4o"),
                Some("openai/gpt-4o")
            ]
        );
    }

    #[test]
    fn without_a_run_model_the_sessions_last_model_then_the_traces_first() {
        let mut t = Trace::new(
            "t",
            vec![
                attempt("agent-x_1", None),
                attempt("main", Some("a")),
                attempt("agent-x_1", Some("b")),
                attempt("main", None),
                attempt("agent-x_1", None),
                attempt("main", Some("c")),
                attempt("main", None),
            ],
        );
        settle(&mut t);
        assert_eq!(
            models(&t),
            [
                Some("a"),
                Some("a"),
                Some("b"),
                Some("a"),
                Some("b"),
                Some("c"),
                Some("c")
            ]
        );
    }

    #[test]
    fn a_trace_that_names_no_model_is_left_without_one() {
        let mut t = Trace::new("t", vec![attempt("main", None), attempt("main", None)]);
        settle(&mut t);
        assert_eq!(models(&t), [None, None]);
        let mut empty = Trace::new("t", Vec::new());
        empty.model = Some("m".into());
        settle(&mut empty);
        assert!(empty.attempts.is_empty());
    }

    #[test]
    fn settling_twice_changes_nothing() {
        let mut t = Trace::new("t", vec![attempt("main", None), attempt("main", Some("m"))]);
        settle(&mut t);
        let once = t.clone();
        settle(&mut t);
        assert_eq!(t, once);
        assert_eq!(models(&t), [Some("m"), Some("m")]);
    }

    #[test]
    fn an_unnamed_record_is_named_by_its_file_not_by_the_path_typed() {
        let at = |file: &str, line| {
            unnamed(&Origin {
                file: file.into(),
                line,
            })
        };
        let name = "swe-agent__test-repo-i1.traj";
        for typed in [
            name.to_string(),
            format!("./{name}"),
            format!("runs/a/{name}"),
            format!("/home/u/runs/b/{name}"),
        ] {
            assert_eq!(at(&typed, 1), "swe-agent__test-repo-i1");
        }
        assert_eq!(at("dir/chats.jsonl.zst", 7), "chats:7");
        assert_eq!(at("dir/run.traj.json", 1), "run");
        assert_eq!(at("<stdin>", 3), "<stdin>:3");
        assert_eq!(file_stem("x/.json"), ".json");
    }

    #[test]
    fn a_records_run_model_fills_only_attempts_without_their_own() {
        let mut attempts = vec![attempt("main", Some("own")), attempt("main", None)];
        give_run_model(&mut attempts, Some("run"));
        give_run_model(&mut attempts, None);
        let got: Vec<_> = attempts.iter().map(|a| a.model.as_deref()).collect();
        assert_eq!(got, [Some("own"), Some("run")]);
    }
}
