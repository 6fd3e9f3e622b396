//! A streaming writer of verdict rows: batches of rows go out as they fill,
//! so memory holds one batch (and, for Parquet, one row group), not the run.

use std::io::Write;

use arrow_ipc::writer::FileWriter;

use super::{schema, ColumnarError, ColumnarFormat, VerdictColumns};
use crate::replay::Verdict;

/// Rows per record batch.
pub(super) const BATCH_ROWS: usize = 8192;
/// Text bytes per record batch (a few huge arguments end a batch early).
pub(super) const BATCH_BYTES: usize = 32 << 20;
/// Rows per Parquet row group: large enough for good compression, small
/// enough that the writer's buffered row group stays well under 1 GB.
#[cfg(feature = "parquet")]
const ROW_GROUP_ROWS: usize = 128 * 1024;

enum Writer<W: Write + Send> {
    Ipc(FileWriter<W>),
    #[cfg(feature = "parquet")]
    Parquet(parquet::arrow::ArrowWriter<W>),
}

/// Writes verdicts to `W` as an Arrow IPC file or a Parquet file.
pub struct VerdictSink<W: Write + Send> {
    writer: Writer<W>,
    columns: VerdictColumns,
}

impl<W: Write + Send> VerdictSink<W> {
    /// Starts a file in `format` (the header, or nothing yet for Parquet).
    pub fn new(out: W, format: ColumnarFormat) -> Result<VerdictSink<W>, ColumnarError> {
        let writer = match format {
            ColumnarFormat::ArrowIpc => Writer::Ipc(FileWriter::try_new(out, &schema())?),
            #[cfg(feature = "parquet")]
            ColumnarFormat::Parquet => {
                use parquet::basic::Compression;
                use parquet::file::properties::WriterProperties;
                let props = WriterProperties::builder()
                    .set_compression(Compression::SNAPPY)
                    .set_max_row_group_row_count(Some(ROW_GROUP_ROWS))
                    .set_created_by(format!("mirotrace {}", env!("CARGO_PKG_VERSION")))
                    .build();
                Writer::Parquet(parquet::arrow::ArrowWriter::try_new(
                    out,
                    schema(),
                    Some(props),
                )?)
            }
            #[cfg(not(feature = "parquet"))]
            ColumnarFormat::Parquet => {
                return Err(ColumnarError::NotBuiltIn { feature: "parquet" })
            }
        };
        Ok(VerdictSink {
            writer,
            columns: VerdictColumns::default(),
        })
    }

    /// Adds one verdict; a full batch is written out.
    pub fn push(&mut self, v: &Verdict) -> Result<(), ColumnarError> {
        self.columns.push(v);
        if self.columns.rows() >= BATCH_ROWS || self.columns.bytes() >= BATCH_BYTES {
            self.flush_batch()?;
        }
        Ok(())
    }

    fn flush_batch(&mut self) -> Result<(), ColumnarError> {
        if self.columns.rows() == 0 {
            return Ok(());
        }
        let batch = self.columns.finish()?;
        match &mut self.writer {
            Writer::Ipc(w) => w.write(&batch)?,
            #[cfg(feature = "parquet")]
            Writer::Parquet(w) => w.write(&batch)?,
        }
        Ok(())
    }

    /// Writes the last rows and the footer; returns the destination.
    pub fn finish(mut self) -> Result<W, ColumnarError> {
        self.flush_batch()?;
        match self.writer {
            Writer::Ipc(mut w) => {
                w.finish()?;
                Ok(w.into_inner()?)
            }
            #[cfg(feature = "parquet")]
            Writer::Parquet(w) => Ok(w.into_inner()?),
        }
    }
}
