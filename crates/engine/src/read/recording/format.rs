//! The registry entry of recordings, and the gatherer that reads a
//! recording's lines together: a trace's calls may stand anywhere in the
//! file (lines are written as calls complete).

use std::sync::Arc;

use serde_json::Value as Json;

use super::call::{parse, CallResult, MARK};
use super::slim::{Slim, Slimmer};
use super::traces::traces;
use crate::model::{Origin, Trace};
use crate::read::format::{Format, Gather, GatherOptions};

pub const RECORDING: &Format = &Format {
    name: "recording",
    description: "a recording of `mirotrace record`",
    recognised_by: "`\"mirotrace_recording\": 1` on every line (the proxy's calls: `request`, `response`, `error`)",
    trace_per: "run: the calls sharing a `--trace-header` value (default `x-upstream-session-id`, a trailing `-<uuid>` removed); calls without it, per file",
    recognise: |obj| obj.contains_key(MARK),
    read: |_, _| {
        Err("one call of a recording on its own: a recording's calls are read together, \
             from its own file"
            .to_string())
    },
    read_text: None,
    gather: Some(|file, options| Box::new(Calls::new(file, options))),
    list: None,
    element_id: None,
    extensions: &[],
};

/// A recording's calls, held until the file ends.
pub struct Calls {
    file: Arc<str>,
    header: Arc<str>,
    calls: Vec<Slim>,
    slimmer: Slimmer,
}

impl Calls {
    pub fn new(file: Arc<str>, options: &GatherOptions) -> Calls {
        Calls {
            file,
            header: options.trace_header.clone(),
            calls: Vec::new(),
            slimmer: Slimmer::default(),
        }
    }
}

impl Gather for Calls {
    fn push(&mut self, line: u64, record: Json) -> Result<(), String> {
        let Json::Object(obj) = record else {
            return Err("not a call of a recording: not an object".into());
        };
        let origin = Origin {
            file: self.file.clone(),
            line,
        };
        let call = parse(&obj, origin, &self.header).map_err(|e| format!("recording: {e}"))?;
        // A call whose request or answer cannot be seen is a problem of
        // its line, never a guess.
        if call.api.is_model_call() {
            let unseen = match (&call.request.unreadable, &call.result) {
                (Some(why), _) | (None, CallResult::Unreadable(why)) => Some(why),
                _ => None,
            };
            if let Some(why) = unseen {
                return Err(format!(
                    "recording: call {}: {why}: not replayed",
                    call.call
                ));
            }
        }
        self.calls.push(self.slimmer.slim(call));
        Ok(())
    }

    fn finish(self: Box<Self>) -> Result<(Vec<Trace>, Vec<String>), String> {
        let (traces, problems) = traces(&self.file, &self.header, self.calls);
        Ok((
            traces,
            problems
                .into_iter()
                .map(|p| format!("recording: {p}"))
                .collect(),
        ))
    }
}
