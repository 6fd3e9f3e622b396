//! Verdicts as columns: Arrow record batches, written as an Arrow IPC file
//! or a Parquet file (`replay --format arrow|parquet`), so DuckDB, Polars,
//! Spark or pandas read them without parsing JSON.
//!
//! One row per attempt, in input order, with the verdict fields of
//! `replay --format jsonl` as typed columns; `calls` is a list of structs
//! whose `arguments` (and `id`) hold JSON text exactly as the JSONL writes
//! it, so values only Python's JSON can hold (`NaN`, huge integers, lone
//! surrogates) survive; so does `logged` (what a task log said of a
//! logged verdict). Columns the JSONL leaves out say where the attempt
//! came from (`agent`, `file`, `line`), `model` what produced it, and the
//! cost columns what it cost (tokens, seconds) and how its task ended.
//! The schema is [`schema`], documented in docs/columnar.md; its name and
//! version ([`SCHEMA_NAME`]) are in the schema's metadata.
//!
//! Compiled with the `arrow` feature (IPC) and the `parquet` feature.

mod batch;
mod sink;

use std::sync::{Arc, OnceLock};

use arrow_schema::{DataType, Field, Fields, Schema, SchemaRef};

pub use batch::{batch_of, VerdictColumns};
pub use sink::VerdictSink;

/// Name and version of the column layout; a change that is not only an
/// added column bumps the version.
pub const SCHEMA_NAME: &str = "mirotrace.verdicts/1";
/// Metadata key holding [`SCHEMA_NAME`].
pub const SCHEMA_KEY: &str = "mirotrace.schema";
/// Metadata key holding the version of mirotrace that wrote the file.
pub const VERSION_KEY: &str = "mirotrace.version";

/// How a columnar file is laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnarFormat {
    /// The Arrow IPC file format (Feather v2), `.arrow`.
    ArrowIpc,
    /// Apache Parquet, Snappy-compressed, `.parquet`.
    Parquet,
}

/// Writing or reading columns failed.
#[derive(Debug, thiserror::Error)]
pub enum ColumnarError {
    #[error("arrow: {0}")]
    Arrow(#[from] arrow_schema::ArrowError),
    #[cfg(feature = "parquet")]
    #[error("parquet: {0}")]
    Parquet(#[from] parquet::errors::ParquetError),
    #[error("this mirotrace was built without the `{feature}` feature (cargo build --release --features {feature})")]
    NotBuiltIn { feature: &'static str },
}

/// Verdicts as an Arrow IPC stream (what `pyarrow.ipc.open_stream` reads):
/// how the Python package hands a table over without copying it row by row.
pub fn ipc_stream<'v>(
    verdicts: impl IntoIterator<Item = &'v crate::replay::Verdict>,
) -> Result<Vec<u8>, ColumnarError> {
    let mut writer = arrow_ipc::writer::StreamWriter::try_new(Vec::new(), &schema())?;
    let mut columns = VerdictColumns::default();
    for v in verdicts {
        columns.push(v);
        if columns.rows() >= sink::BATCH_ROWS || columns.bytes() >= sink::BATCH_BYTES {
            writer.write(&columns.finish()?)?;
        }
    }
    if columns.rows() > 0 {
        writer.write(&columns.finish()?)?;
    }
    writer.finish()?;
    Ok(writer.into_inner()?)
}

/// The schema of verdict rows (see the module documentation).
pub fn schema() -> SchemaRef {
    static SCHEMA: OnceLock<SchemaRef> = OnceLock::new();
    SCHEMA
        .get_or_init(|| {
            let text = |name: &str, nullable: bool| Field::new(name, DataType::Utf8, nullable);
            let int = |name: &str, nullable: bool| Field::new(name, DataType::Int64, nullable);
            let fields = vec![
                text("trace_id", false),
                text("session", false),
                int("index", false),
                text("outcome", false),
                text("reason", true),
                int("turn", true),
                int("consecutive_rollbacks", true),
                Field::new("flags", string_list(), false),
                Field::new("calls", calls_type(), false),
                int("executed", false),
                text("source", false),
                text("error", true),
                text("logged", true),
                text("agent", false),
                text("file", false),
                int("line", false),
                text("model", true),
                // Issue 28: a replayed format error's kind, tag and offset,
                // as the JSON text of the line's `why`.
                text("why", true),
                // Issue 25: the attempt's tokens and seconds as its reader
                // found them, and its trace's task result (on every row of
                // the trace); null where the input does not record them.
                int("input_tokens", true),
                int("output_tokens", true),
                int("cached_input_tokens", true),
                Field::new("duration_s", DataType::Float64, true),
                Field::new("task_success", DataType::Boolean, true),
                Field::new("task_score", DataType::Float64, true),
                text("task_basis", true),
            ];
            let metadata = [
                (SCHEMA_KEY.to_string(), SCHEMA_NAME.to_string()),
                (
                    VERSION_KEY.to_string(),
                    env!("CARGO_PKG_VERSION").to_string(),
                ),
            ];
            let metadata: std::collections::BTreeMap<String, String> =
                metadata.into_iter().collect();
            Arc::new(Schema::new(fields).with_metadata(metadata))
        })
        .clone()
}

/// A list of non-null strings (flags, repairs).
fn string_list() -> DataType {
    DataType::List(Arc::new(Field::new("item", DataType::Utf8, false)))
}

/// The fields of one parsed call.
fn call_fields() -> Fields {
    Fields::from(vec![
        Field::new("server_name", DataType::Utf8, false),
        Field::new("tool_name", DataType::Utf8, false),
        Field::new("arguments", DataType::Utf8, false),
        Field::new("id", DataType::Utf8, true),
        Field::new("json", DataType::Utf8, false),
        Field::new("repairs", string_list(), false),
        // What json_repair fixed, for arguments on the `repaired` path
        // (null on the others, as the line leaves `fixes` out).
        Field::new("fixes", string_list(), true),
    ])
}

fn call_item() -> Arc<Field> {
    Arc::new(Field::new("item", DataType::Struct(call_fields()), false))
}

fn calls_type() -> DataType {
    DataType::List(call_item())
}
