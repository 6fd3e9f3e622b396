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

use mirotrace::analyze::partial::Partial;
pub use run::{Options, Source};

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

fn source(
    paths: Option<Vec<String>>,
    table: Option<&[u8]>,
    files: Option<Vec<String>>,
) -> Result<Source, BindingError> {
    match (paths, table, files) {
        (Some(p), None, None) => Ok(Source::Paths(p)),
        (Some(_), None, Some(_)) => Err(BindingError::Input(
            "files= counts the inputs of a table of lines; paths count themselves".into(),
        )),
        (None, Some(t), files) => Ok(Source::Table(run::read_ipc_stream(t)?, files)),
        _ => Err(BindingError::Input(
            "give either paths or a table of trace lines".into(),
        )),
    }
}

/// Replays `paths` (files, directories) or `table` (an Arrow IPC stream of
/// trace lines); returns (verdicts as an Arrow IPC stream, problems).
#[pyfunction]
#[pyo3(signature = (*, paths=None, table=None, policy=None, input_format="auto", threads=None, max_line_bytes=None, trace_header=None))]
#[allow(clippy::too_many_arguments)]
fn replay<'py>(
    py: Python<'py>,
    paths: Option<Vec<String>>,
    table: Option<&[u8]>,
    policy: Option<String>,
    input_format: &str,
    threads: Option<usize>,
    max_line_bytes: Option<usize>,
    trace_header: Option<String>,
) -> PyResult<(Bound<'py, PyBytes>, Vec<String>)> {
    let source = source(paths, table, None)?;
    let options = Options::new(policy.as_deref(), input_format, threads, max_line_bytes)?
        .trace_header(trace_header);
    let (bytes, problems) = py.detach(|| run::replay(&source, &options))?;
    Ok((PyBytes::new(py, &bytes), problems))
}

/// A partial report (docs/partial.md): merges with others made alike.
#[pyclass(name = "Partial", module = "mirotrace._mirotrace", frozen)]
struct PyPartial {
    inner: Partial,
}

#[pymethods]
impl PyPartial {
    /// Reads a partial written by `to_bytes` or `analyze --format partial`.
    #[staticmethod]
    fn from_bytes(data: &[u8]) -> PyResult<PyPartial> {
        let inner = Partial::from_json(data, "<bytes>")
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        Ok(PyPartial { inner })
    }

    /// The partial as bytes (the `mirotrace.partial/2` JSON text).
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let text = self
            .inner
            .to_json()
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        Ok(PyBytes::new(py, text.as_bytes()))
    }

    /// Both added up; refused (ValueError) when they were made differently.
    fn merge(&self, other: &PyPartial) -> PyResult<PyPartial> {
        let mut inner = self.inner.clone();
        inner
            .merge(other.inner.clone(), "this partial", "the other")
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        Ok(PyPartial { inner })
    }

    /// The finished report in `format` (json, table, markdown, html).
    #[pyo3(signature = (format="json", threads=None))]
    fn render(&self, py: Python<'_>, format: &str, threads: Option<usize>) -> PyResult<String> {
        let inner = self.inner.clone();
        Ok(py.detach(|| run::render(inner, format, threads))?)
    }

    /// Traces it holds.
    #[getter]
    fn traces(&self) -> u64 {
        self.inner.collector.overall.tally.traces
    }
}

/// The partial report of paths or a table; returns (partial, problems).
/// `mirotrace.analyze` is this partial's report: one way in for both.
#[pyfunction]
#[pyo3(signature = (*, paths=None, table=None, files=None, policy=None, input_format="auto", threads=None, max_line_bytes=None, trace_header=None, top=mirotrace::analyze::DEFAULT_TOP, group_by=None, seed=mirotrace::analyze::DEFAULT_SEED, iterations=mirotrace::analyze::DEFAULT_ITERATIONS))]
#[allow(clippy::too_many_arguments)]
fn partial(
    py: Python<'_>,
    paths: Option<Vec<String>>,
    table: Option<&[u8]>,
    files: Option<Vec<String>>,
    policy: Option<String>,
    input_format: &str,
    threads: Option<usize>,
    max_line_bytes: Option<usize>,
    trace_header: Option<String>,
    top: usize,
    group_by: Option<String>,
    seed: u64,
    iterations: usize,
) -> PyResult<(PyPartial, Vec<String>)> {
    let source = source(paths, table, files)?;
    let options = Options::new(policy.as_deref(), input_format, threads, max_line_bytes)?
        .trace_header(trace_header);
    let report = run::report_options(&options, top, group_by.as_deref(), seed, iterations)?;
    let (inner, problems) = py.detach(|| run::partial(&source, &options, &report))?;
    Ok((PyPartial { inner }, problems))
}

/// The inputs `paths` expand to as the CLI expands them, each as
/// (label, path, read line by line), and the problems of those that cannot
/// be opened: how `mirotrace.ray` spreads a run.
#[pyfunction]
#[pyo3(signature = (paths, *, input_format="auto", max_line_bytes=None))]
#[allow(clippy::type_complexity)]
fn inputs(
    py: Python<'_>,
    paths: Vec<std::path::PathBuf>,
    input_format: &str,
    max_line_bytes: Option<usize>,
) -> PyResult<(Vec<(String, std::path::PathBuf, bool)>, Vec<String>)> {
    let options = Options::new(None, input_format, Some(1), max_line_bytes)?;
    let (listed, problems) = py.detach(|| run::inputs(&paths, &options));
    Ok((
        listed
            .into_iter()
            .map(|i| (i.label, i.path, i.by_lines))
            .collect(),
        problems,
    ))
}

/// For each row of `table` (an Arrow IPC stream of one input's lines), the
/// ordinal of the trace the library's reader puts it in (`None`: in none).
#[pyfunction]
#[pyo3(signature = (table, *, input_format="auto", max_line_bytes=None))]
fn trace_ordinals(
    py: Python<'_>,
    table: &[u8],
    input_format: &str,
    max_line_bytes: Option<usize>,
) -> PyResult<Vec<Option<u64>>> {
    let options = Options::new(None, input_format, Some(1), max_line_bytes)?;
    let batches = run::read_ipc_stream(table)?;
    Ok(py.detach(|| {
        rows::trace_ordinals(&batches, options.read.format, options.read.max_line_bytes)
    })?)
}

/// The version of the mirotrace library inside.
#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

#[pymodule]
fn _mirotrace(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(replay, m)?)?;
    m.add_function(wrap_pyfunction!(partial, m)?)?;
    m.add_function(wrap_pyfunction!(inputs, m)?)?;
    m.add_function(wrap_pyfunction!(trace_ordinals, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_class::<PyPartial>()?;
    // The report options' defaults, defined once in the library: the
    // Python signatures (mirotrace/__init__.py) take them from here.
    m.add("DEFAULT_TOP", mirotrace::analyze::DEFAULT_TOP)?;
    m.add("DEFAULT_SEED", mirotrace::analyze::DEFAULT_SEED)?;
    m.add("DEFAULT_ITERATIONS", mirotrace::analyze::DEFAULT_ITERATIONS)?;
    Ok(())
}
