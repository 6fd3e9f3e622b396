//! `mirotrace._mirotrace`: the native half of the Python package. Every
//! function runs the mirotrace library itself (reading, replay, report) and
//! hands results over as Arrow IPC bytes or JSON text; `mirotrace/__init__.py`
//! turns those into pyarrow tables and dicts. No part of the layer is
//! re-implemented in Python.

mod rows;
mod run;

use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

pub use run::{Options, Outcome, Source};

/// What can go wrong between Python and the library.
#[derive(Debug, thiserror::Error)]
pub enum BindingError {
    /// Bad arguments or a table of the wrong shape.
    #[error("{0}")]
    Input(String),
    /// A policy file that cannot be read or parsed.
    #[error("{0}")]
    Policy(String),
    #[error("cannot start worker threads: {0}")]
    Threads(String),
    #[error(transparent)]
    Columnar(#[from] mirotrace::columnar::ColumnarError),
    #[error("reading the table failed: {0}")]
    Arrow(#[from] arrow_schema::ArrowError),
}

impl From<BindingError> for PyErr {
    fn from(e: BindingError) -> PyErr {
        match e {
            BindingError::Policy(_) | BindingError::Threads(_) => PyOSError::new_err(e.to_string()),
            _ => PyValueError::new_err(e.to_string()),
        }
    }
}

fn source(paths: Option<Vec<String>>, table: Option<&[u8]>) -> Result<Source, BindingError> {
    match (paths, table) {
        (Some(p), None) => Ok(Source::Paths(p)),
        (None, Some(t)) => Ok(Source::Table(run::read_ipc_stream(t)?)),
        _ => Err(BindingError::Input(
            "give either paths or a table of trace lines".into(),
        )),
    }
}

/// Replays `paths` (files, directories) or `table` (an Arrow IPC stream of
/// trace lines); returns (verdicts as an Arrow IPC stream, problems).
#[pyfunction]
#[pyo3(signature = (*, paths=None, table=None, policy=None, input_format="auto", threads=None, max_line_bytes=None))]
#[allow(clippy::too_many_arguments)]
fn replay<'py>(
    py: Python<'py>,
    paths: Option<Vec<String>>,
    table: Option<&[u8]>,
    policy: Option<String>,
    input_format: &str,
    threads: Option<usize>,
    max_line_bytes: Option<usize>,
) -> PyResult<(Bound<'py, PyBytes>, Vec<String>)> {
    let source = source(paths, table)?;
    let options = Options::new(policy.as_deref(), input_format, threads, max_line_bytes)?;
    let (bytes, problems) = py.detach(|| run::replay(&source, &options))?;
    Ok((PyBytes::new(py, &bytes), problems))
}

/// Replays and reports; returns (the report as `--format json` text, problems).
#[pyfunction]
#[pyo3(signature = (*, paths=None, table=None, policy=None, input_format="auto", threads=None, max_line_bytes=None, top=10, group_by=None, seed=42, iterations=1000))]
#[allow(clippy::too_many_arguments)]
fn analyze(
    py: Python<'_>,
    paths: Option<Vec<String>>,
    table: Option<&[u8]>,
    policy: Option<String>,
    input_format: &str,
    threads: Option<usize>,
    max_line_bytes: Option<usize>,
    top: usize,
    group_by: Option<String>,
    seed: u64,
    iterations: usize,
) -> PyResult<(String, Vec<String>)> {
    let source = source(paths, table)?;
    let options = Options::new(policy.as_deref(), input_format, threads, max_line_bytes)?;
    let report = run::report_options(&options, top, group_by.as_deref(), seed, iterations)?;
    let Outcome { json, problems } = py.detach(|| run::analyze(&source, &options, &report))?;
    Ok((json, problems))
}

/// The version of the mirotrace library inside.
#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

#[pymodule]
fn _mirotrace(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(replay, m)?)?;
    m.add_function(wrap_pyfunction!(analyze, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    Ok(())
}
