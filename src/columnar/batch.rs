//! Verdicts → one Arrow record batch, column by column.

use std::sync::Arc;

use arrow_array::builder::{
    BooleanBuilder, Float64Builder, Int64Builder, ListBuilder, StringBuilder,
};
use arrow_array::{ArrayRef, ListArray, RecordBatch, StructArray};
use arrow_buffer::OffsetBuffer;

use super::{call_fields, call_item, schema, ColumnarError};
use crate::model::TaskResult;
use crate::pyjson;
use crate::replay::Verdict;

/// Column builders for a batch of verdict rows.
pub struct VerdictColumns {
    trace_id: StringBuilder,
    session: StringBuilder,
    index: Int64Builder,
    outcome: StringBuilder,
    reason: StringBuilder,
    turn: Int64Builder,
    consecutive_rollbacks: Int64Builder,
    flags: ListBuilder<StringBuilder>,
    executed: Int64Builder,
    source: StringBuilder,
    error: StringBuilder,
    logged: StringBuilder,
    agent: StringBuilder,
    file: StringBuilder,
    line: Int64Builder,
    model: StringBuilder,
    why: StringBuilder,
    cost: CostColumns,
    /// Calls per row (the list offsets of `calls`).
    calls_per_row: Vec<usize>,
    calls: CallColumns,
    rows: usize,
    /// Text bytes held so far (arguments dominate), to cut batches by size.
    bytes: usize,
    /// Reused for each call's arguments.
    scratch: String,
}

/// Issue 25: what the attempt cost and how its task ended.
#[derive(Default)]
struct CostColumns {
    input_tokens: Int64Builder,
    output_tokens: Int64Builder,
    cached_input_tokens: Int64Builder,
    duration_s: Float64Builder,
    task_success: BooleanBuilder,
    task_score: Float64Builder,
    task_basis: StringBuilder,
    /// The trace being written and its task result so far: readers put it
    /// on the trace's first attempt, the columns repeat it on its rows.
    task: Option<(Arc<str>, Option<TaskResult>)>,
}

impl CostColumns {
    fn push(&mut self, v: &Verdict) {
        let usage = v.usage.as_ref();
        let tokens = |n: Option<u64>| n.map(int);
        self.input_tokens
            .append_option(tokens(usage.and_then(|u| u.input_tokens)));
        self.output_tokens
            .append_option(tokens(usage.and_then(|u| u.output_tokens)));
        self.cached_input_tokens
            .append_option(tokens(usage.and_then(|u| u.cached_input_tokens)));
        self.duration_s.append_option(v.duration_s);
        // The trace's result is its first verdict that has one (as
        // `analyze` counts it); later rows of the trace repeat it.
        match &mut self.task {
            Some((trace, result)) if *trace == v.trace_id => {
                if result.is_none() {
                    result.clone_from(&v.task_result);
                }
            }
            task => *task = Some((v.trace_id.clone(), v.task_result.clone())),
        }
        let task = self.task.as_ref().and_then(|(_, r)| r.as_ref());
        self.task_success
            .append_option(task.and_then(|r| r.success));
        self.task_score.append_option(task.and_then(|r| r.score));
        self.task_basis.append_option(task.map(|r| &*r.basis));
    }

    fn finish(&mut self) -> [ArrayRef; 7] {
        [
            Arc::new(self.input_tokens.finish()),
            Arc::new(self.output_tokens.finish()),
            Arc::new(self.cached_input_tokens.finish()),
            Arc::new(self.duration_s.finish()),
            Arc::new(self.task_success.finish()),
            Arc::new(self.task_score.finish()),
            Arc::new(self.task_basis.finish()),
        ]
    }
}

struct CallColumns {
    server_name: StringBuilder,
    tool_name: StringBuilder,
    arguments: StringBuilder,
    id: StringBuilder,
    json: StringBuilder,
    repairs: ListBuilder<StringBuilder>,
    fixes: ListBuilder<StringBuilder>,
}

fn string_list_builder() -> ListBuilder<StringBuilder> {
    ListBuilder::new(StringBuilder::new()).with_field(Arc::new(arrow_schema::Field::new(
        "item",
        arrow_schema::DataType::Utf8,
        false,
    )))
}

impl Default for VerdictColumns {
    fn default() -> Self {
        VerdictColumns {
            trace_id: StringBuilder::new(),
            session: StringBuilder::new(),
            index: Int64Builder::new(),
            outcome: StringBuilder::new(),
            reason: StringBuilder::new(),
            turn: Int64Builder::new(),
            consecutive_rollbacks: Int64Builder::new(),
            flags: string_list_builder(),
            executed: Int64Builder::new(),
            source: StringBuilder::new(),
            error: StringBuilder::new(),
            logged: StringBuilder::new(),
            agent: StringBuilder::new(),
            file: StringBuilder::new(),
            line: Int64Builder::new(),
            model: StringBuilder::new(),
            why: StringBuilder::new(),
            cost: CostColumns::default(),
            calls_per_row: Vec::new(),
            calls: CallColumns {
                server_name: StringBuilder::new(),
                tool_name: StringBuilder::new(),
                arguments: StringBuilder::new(),
                id: StringBuilder::new(),
                json: StringBuilder::new(),
                repairs: string_list_builder(),
                fixes: string_list_builder(),
            },
            rows: 0,
            bytes: 0,
            scratch: String::new(),
        }
    }
}

/// An integer column value; counts and indices never come near `i64::MAX`.
fn int(n: impl TryInto<i64>) -> i64 {
    n.try_into().unwrap_or(i64::MAX)
}

impl VerdictColumns {
    /// Rows added since the last [`VerdictColumns::finish`].
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Approximate bytes of text held.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Adds one verdict as a row.
    pub fn push(&mut self, v: &Verdict) {
        self.trace_id.append_value(&*v.trace_id);
        self.session.append_value(&*v.session);
        self.index.append_value(int(v.index));
        self.outcome.append_value(v.outcome.name());
        self.reason.append_option(v.reason.map(|r| r.name()));
        self.turn.append_option(v.turn);
        self.consecutive_rollbacks
            .append_option(v.consecutive_rollbacks.map(i64::from));
        for f in &v.flags {
            self.flags.values().append_value(f.name());
        }
        self.flags.append(true);
        self.executed.append_value(int(v.executed));
        self.source.append_value(v.source().name());
        self.error.append_option(v.error.as_deref());
        self.logged.append_option(v.logged_json());
        self.agent.append_value(&*v.agent);
        self.file.append_value(&*v.origin.file);
        self.line.append_value(int(v.origin.line));
        self.model.append_option(v.model.as_deref());
        self.why.append_option(v.why_json());
        self.cost.push(v);
        self.calls_per_row.push(v.calls.len());
        let c = &mut self.calls;
        for call in &v.calls {
            c.server_name.append_value(&call.server_name);
            c.tool_name.append_value(&call.tool_name);
            self.scratch.clear();
            pyjson::dump_to(&call.arguments, &mut self.scratch);
            self.bytes += self.scratch.len();
            c.arguments.append_value(&self.scratch);
            // The JSONL writes the id with serde_json; null stays null.
            match &call.id {
                serde_json::Value::Null => c.id.append_null(),
                id => c.id.append_value(id.to_string()),
            }
            c.json.append_value(call.json.name());
            for r in &call.repairs {
                c.repairs.values().append_value(r.name());
            }
            c.repairs.append(true);
            if call.json == crate::parse::JsonPath::Repaired {
                for f in call.fixes.iter() {
                    c.fixes.values().append_value(f.name());
                }
                c.fixes.append(true);
            } else {
                c.fixes.append(false);
            }
        }
        self.bytes += v.trace_id.len() + v.session.len() + v.origin.file.len() + 64;
        self.rows += 1;
    }

    /// The rows added so far as one record batch; the builders start over.
    pub fn finish(&mut self) -> Result<RecordBatch, ColumnarError> {
        let c = &mut self.calls;
        let call_columns: Vec<ArrayRef> = vec![
            Arc::new(c.server_name.finish()),
            Arc::new(c.tool_name.finish()),
            Arc::new(c.arguments.finish()),
            Arc::new(c.id.finish()),
            Arc::new(c.json.finish()),
            Arc::new(c.repairs.finish()),
            Arc::new(c.fixes.finish()),
        ];
        let calls = StructArray::try_new(call_fields(), call_columns, None)?;
        let offsets = OffsetBuffer::<i32>::from_lengths(std::mem::take(&mut self.calls_per_row));
        let calls = ListArray::try_new(call_item(), offsets, Arc::new(calls), None)?;
        let mut columns: Vec<ArrayRef> = vec![
            Arc::new(self.trace_id.finish()),
            Arc::new(self.session.finish()),
            Arc::new(self.index.finish()),
            Arc::new(self.outcome.finish()),
            Arc::new(self.reason.finish()),
            Arc::new(self.turn.finish()),
            Arc::new(self.consecutive_rollbacks.finish()),
            Arc::new(self.flags.finish()),
            Arc::new(calls),
            Arc::new(self.executed.finish()),
            Arc::new(self.source.finish()),
            Arc::new(self.error.finish()),
            Arc::new(self.logged.finish()),
            Arc::new(self.agent.finish()),
            Arc::new(self.file.finish()),
            Arc::new(self.line.finish()),
            Arc::new(self.model.finish()),
            Arc::new(self.why.finish()),
        ];
        columns.extend(self.cost.finish());
        self.rows = 0;
        self.bytes = 0;
        Ok(RecordBatch::try_new(schema(), columns)?)
    }
}

/// Verdicts as one record batch.
pub fn batch_of(verdicts: &[Verdict]) -> Result<RecordBatch, ColumnarError> {
    let mut columns = VerdictColumns::default();
    for v in verdicts {
        columns.push(v);
    }
    columns.finish()
}
