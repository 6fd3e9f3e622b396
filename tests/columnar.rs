//! Columnar verdicts (`--features parquet`): Parquet and Arrow IPC files
//! read back to exactly the JSONL verdicts, row for row and byte for byte.
//!
//! The JSONL line of a row is rebuilt here, independently of the library's
//! writer, from the typed columns (JSON text columns verbatim).
#![cfg(feature = "parquet")]

use std::fs::File;
use std::io::Cursor;
use std::path::{Path, PathBuf};
use std::process::Command;

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{Array, RecordBatch};
use mirotrace::columnar::{schema, ColumnarFormat, VerdictSink, SCHEMA_KEY, SCHEMA_NAME};
use mirotrace::policy::Policy;
use mirotrace::pyjson;
use mirotrace::read::source::{expand, open_records, InputSpec, ReadOptions};
use mirotrace::read::Record;
use mirotrace::replay::{Replayer, Verdict};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures")
}

fn temp_dir(tag: &str) -> PathBuf {
    let d = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("columnar-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

/// Lines whose arguments only Python's JSON holds, a crash, a call id.
const HOSTILE: &str = concat!(
    r#"{"trace_id": "h-1", "content": "<use_mcp_tool>\n<server_name>tool-python</server_name>\n<tool_name>run_python_code</tool_name>\n<arguments>{\"code_block\": \"x\", \"n\": NaN, \"big\": 123456789012345678901234567890, \"s\": \"\\ud800 caf\\u00e9\", \"f\": -Infinity}</arguments>\n</use_mcp_tool>", "tool_results": [{"result": "ok"}]}"#,
    "\n",
    r#"{"trace_id": "h-2", "tool_calls": [{"id": "call_\u00e9", "type": "function", "function": {"name": "search_and_scrape_webpage-google_search", "arguments": "{\"q\": \"a\\nb\"}"}}], "tool_results": [{"result": "r"}]}"#,
    "\n",
    r#"{"trace_id": "h-2", "tool_calls": [{"id": 7, "type": "function", "function": {"name": "search_and_scrape_webpage-google_search", "arguments": "{\"q\": \"a\\nb\"}"}}], "tool_results": [{"result": "r"}]}"#,
    "\n",
    r#"{"trace_id": "h-3", "content": "<use_mcp_tool>\n<server_name>tool-python</server_name>\n<tool_name>run_python_code</tool_name>\n<arguments>{\"code_block\": 5, \"sandbox_id\": [1]}</arguments>\n</use_mcp_tool>"}"#,
    "\n",
);

/// Every verdict of the inputs under `paths`, in input order.
fn replay(paths: &[PathBuf]) -> Vec<Verdict> {
    let specs: Vec<InputSpec> = paths.iter().map(|p| InputSpec::Path(p.clone())).collect();
    let replayer = Replayer::new(Policy::default());
    let mut all = Vec::new();
    for spec in expand(&specs).into_iter().flatten() {
        let records = open_records(&spec, &ReadOptions::default()).expect("open");
        for record in records {
            if let Record::Trace(t) = record {
                all.extend(replayer.replay(&t));
            }
        }
    }
    all
}

fn corpus() -> Vec<Verdict> {
    let dir = temp_dir("corpus");
    let hostile = dir.join("hostile.jsonl");
    std::fs::write(&hostile, HOSTILE).expect("write");
    let verdicts = replay(&[fixtures(), hostile]);
    assert!(verdicts.len() > 300, "{}", verdicts.len());
    assert!(verdicts.iter().any(|v| v.error.is_some()), "a crash");
    assert!(
        verdicts.iter().any(|v| v.recorded.is_some()),
        "a verdict logged by a task log"
    );
    verdicts
}

fn write(verdicts: &[Verdict], format: ColumnarFormat) -> Vec<u8> {
    let mut sink = VerdictSink::new(Vec::new(), format).expect("sink");
    for v in verdicts {
        sink.push(v).expect("push");
    }
    sink.finish().expect("finish")
}

/// The file's schema (with its metadata) and its batches.
fn read_parquet(path: &Path) -> (arrow_schema::SchemaRef, Vec<RecordBatch>) {
    let file = File::open(path).expect("open parquet");
    let builder = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file)
        .expect("parquet reader");
    let schema = builder.schema().clone();
    let reader = builder.build().expect("build");
    (schema, reader.map(|b| b.expect("batch")).collect())
}

fn read_ipc(bytes: Vec<u8>) -> Vec<RecordBatch> {
    let reader = arrow_ipc::reader::FileReader::try_new(Cursor::new(bytes), None).expect("ipc");
    reader.map(|b| b.expect("batch")).collect()
}

fn json_str(s: &str) -> String {
    pyjson::dump(&pyjson::Value::str(s))
}

fn opt_int(col: &dyn Array, row: usize) -> String {
    let ints = col.as_primitive::<Int64Type>();
    if ints.is_null(row) {
        "null".into()
    } else {
        ints.value(row).to_string()
    }
}

fn names(list: &dyn Array, row: usize) -> String {
    let items = list.as_list::<i32>().value(row);
    let items = items.as_string::<i32>();
    let quoted: Vec<String> = (0..items.len())
        .map(|i| format!("\"{}\"", items.value(i)))
        .collect();
    format!("[{}]", quoted.join(", "))
}

/// The JSONL verdict line of one row.
fn jsonl_of_row(b: &RecordBatch, row: usize) -> String {
    let col = |name: &str| b.column_by_name(name).expect(name).clone();
    let text = |name: &str| {
        let c = col(name);
        let s = c.as_string::<i32>();
        (!s.is_null(row)).then(|| s.value(row).to_string())
    };
    let mut out = format!(
        "{{\"trace_id\": {}, \"session\": {}, \"index\": {}, \"outcome\": \"{}\", \"reason\": {}, \"turn\": {}, \"consecutive_rollbacks\": {}, \"flags\": {}, \"calls\": [",
        json_str(&text("trace_id").expect("trace_id")),
        json_str(&text("session").expect("session")),
        opt_int(&col("index"), row),
        text("outcome").expect("outcome"),
        text("reason").map_or("null".into(), |r| format!("\"{r}\"")),
        opt_int(&col("turn"), row),
        opt_int(&col("consecutive_rollbacks"), row),
        names(&col("flags"), row),
    );
    let calls = col("calls");
    let calls = calls.as_list::<i32>().value(row);
    let calls = calls.as_struct();
    for i in 0..calls.len() {
        let field = |name: &str| calls.column_by_name(name).expect(name).clone();
        let s = |name: &str| {
            let c = field(name);
            let s = c.as_string::<i32>();
            (!s.is_null(i)).then(|| s.value(i).to_string())
        };
        if i > 0 {
            out.push_str(", ");
        }
        out.push_str(&format!(
            "{{\"server_name\": {}, \"tool_name\": {}, \"arguments\": {}, \"id\": {}, \"json\": \"{}\", \"repairs\": {}",
            json_str(&s("server_name").expect("server")),
            json_str(&s("tool_name").expect("tool")),
            s("arguments").expect("arguments"),
            s("id").unwrap_or_else(|| "null".into()),
            s("json").expect("json"),
            names(&field("repairs"), i),
        ));
        let fixes = field("fixes");
        if !fixes.is_null(i) {
            out.push_str(&format!(", \"fixes\": {}", names(&fixes, i)));
        }
        out.push('}');
    }
    out.push_str(&format!(
        "], \"executed\": {}, \"source\": \"{}\"",
        opt_int(&col("executed"), row),
        text("source").expect("source")
    ));
    if let Some(e) = text("error") {
        out.push_str(&format!(", \"error\": {}", json_str(&e)));
    }
    if let Some(why) = text("why") {
        out.push_str(&format!(", \"why\": {why}"));
    }
    if let Some(logged) = text("logged") {
        out.push_str(&format!(", \"logged\": {logged}"));
    }
    out.push('}');
    out
}

fn lines_of(batches: &[RecordBatch]) -> Vec<String> {
    batches
        .iter()
        .flat_map(|b| (0..b.num_rows()).map(move |r| jsonl_of_row(b, r)))
        .collect()
}

fn assert_same_lines(got: &[String], verdicts: &[Verdict]) {
    assert_eq!(got.len(), verdicts.len());
    for (line, v) in got.iter().zip(verdicts) {
        assert_eq!(line, &v.to_json_line());
    }
}

#[test]
fn parquet_reads_back_to_the_jsonl_verdicts() {
    let verdicts = corpus();
    let path = temp_dir("pq").join("v.parquet");
    std::fs::write(&path, write(&verdicts, ColumnarFormat::Parquet)).expect("write");
    let (got, batches) = read_parquet(&path);
    assert_eq!(
        got.metadata().get(SCHEMA_KEY).map(String::as_str),
        Some(SCHEMA_NAME)
    );
    assert_eq!(got.fields(), schema().fields());
    assert_same_lines(&lines_of(&batches), &verdicts);
    // The extra columns say where each row came from.
    let b = &batches[0];
    let files = b.column_by_name("file").expect("file");
    let lines = b.column_by_name("line").expect("line");
    assert_eq!(files.as_string::<i32>().value(0), &*verdicts[0].origin.file);
    assert_eq!(
        lines.as_primitive::<Int64Type>().value(0),
        verdicts[0].origin.line as i64
    );
}

#[test]
fn arrow_ipc_reads_back_to_the_jsonl_verdicts() {
    let verdicts = corpus();
    let batches = read_ipc(write(&verdicts, ColumnarFormat::ArrowIpc));
    assert_eq!(batches[0].schema().fields(), schema().fields());
    assert_same_lines(&lines_of(&batches), &verdicts);
}

#[test]
fn more_rows_than_one_batch_stay_in_order() {
    let one = corpus();
    let many: Vec<Verdict> = (0..30).flat_map(|_| one.iter().cloned()).collect();
    assert!(many.len() > 8192);
    let batches = read_ipc(write(&many, ColumnarFormat::ArrowIpc));
    assert!(batches.len() > 1);
    assert_same_lines(&lines_of(&batches), &many);
}

#[test]
fn an_ipc_stream_holds_the_same_rows() {
    let verdicts = corpus();
    let bytes = mirotrace::columnar::ipc_stream(&verdicts).expect("stream");
    let reader =
        arrow_ipc::reader::StreamReader::try_new(Cursor::new(bytes), None).expect("stream reader");
    let batches: Vec<RecordBatch> = reader.map(|b| b.expect("batch")).collect();
    assert_same_lines(&lines_of(&batches), &verdicts);
}

/// The CLI: `replay --format parquet -o F` against `replay --format jsonl`.
#[test]
fn the_cli_writes_parquet_that_reads_back_to_its_jsonl() {
    let dir = temp_dir("cli");
    let input = fixtures().join("model-a.jsonl");
    let out = dir.join("v.parquet");
    let run = |args: &[&str]| {
        let o = Command::new(env!("CARGO_BIN_EXE_mirotrace"))
            .args(args)
            .output()
            .expect("run mirotrace");
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        o.stdout
    };
    let input = input.to_str().expect("utf-8 path");
    let jsonl = run(&["replay", input, "--format", "jsonl"]);
    run(&[
        "replay",
        input,
        "--format",
        "parquet",
        "-o",
        out.to_str().expect("path"),
    ]);
    let want: Vec<String> = String::from_utf8(jsonl)
        .expect("utf-8")
        .lines()
        .map(String::from)
        .collect();
    assert_eq!(lines_of(&read_parquet(&out).1), want);
}

/// Issue 25's columns: tokens, seconds and the trace's task result, as the
/// native lines record them, null where they do not.
#[test]
fn cost_and_task_result_columns_follow_the_lines() {
    use arrow_array::types::Float64Type;
    let dir = temp_dir("cost");
    let input = dir.join("cost.jsonl");
    let lines = [
        r#"{"trace_id": "c-1", "meta": {"success": false, "score": 0.25}, "content": "<use_mcp_tool>", "usage": {"input_tokens": 1200, "output_tokens": 30, "cached_input_tokens": 1000}, "duration_s": 2.5}"#,
        r#"{"trace_id": "c-1", "content": "\\boxed{1}", "usage": {"prompt_tokens": 1300, "completion_tokens": 8}, "duration_s": 0.75}"#,
        r#"{"trace_id": "c-2", "content": "\\boxed{2}", "usage": {"input_tokens": -1, "output_tokens": 5}}"#,
        r#"{"trace_id": "c-3", "meta": {"success": true}, "content": "\\boxed{3}"}"#,
    ];
    std::fs::write(&input, lines.join("\n") + "\n").expect("write");
    let verdicts = replay(&[input]);
    assert_eq!(verdicts.len(), 4);
    let path = dir.join("v.parquet");
    std::fs::write(&path, write(&verdicts, ColumnarFormat::Parquet)).expect("write");
    let (_, batches) = read_parquet(&path);
    let b = &batches[0];
    let col = |name: &str| b.column_by_name(name).expect(name).clone();
    let ints =
        |name: &str| -> Vec<Option<i64>> { col(name).as_primitive::<Int64Type>().iter().collect() };
    let floats = |name: &str| -> Vec<Option<f64>> {
        col(name).as_primitive::<Float64Type>().iter().collect()
    };
    assert_eq!(
        ints("input_tokens"),
        [Some(1200), Some(1300), None, None],
        "a negative count is unknown"
    );
    assert_eq!(ints("output_tokens"), [Some(30), Some(8), Some(5), None]);
    assert_eq!(ints("cached_input_tokens"), [Some(1000), None, None, None]);
    assert_eq!(floats("duration_s"), [Some(2.5), Some(0.75), None, None]);
    // The trace's result is repeated on each of its rows; c-2 has none.
    let success: Vec<Option<bool>> = col("task_success").as_boolean().iter().collect();
    assert_eq!(success, [Some(false), Some(false), None, Some(true)]);
    assert_eq!(floats("task_score"), [Some(0.25), Some(0.25), None, None]);
    let basis: Vec<Option<&str>> = b
        .column_by_name("task_basis")
        .expect("task_basis")
        .as_string::<i32>()
        .iter()
        .collect();
    assert_eq!(
        basis,
        [
            Some("meta.success"),
            Some("meta.success"),
            None,
            Some("meta.success")
        ]
    );
}
