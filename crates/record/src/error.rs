//! Why the proxy could not start or go on (each maps to exit code 2 in
//! the CLI: a usage or output error).

/// Why the proxy could not start or go on.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// `--upstream` is not an http:// or https:// URL with a host.
    #[error("--upstream {url:?}: {why}")]
    Upstream { url: String, why: String },
    /// The listen address could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        addr: std::net::SocketAddr,
        source: std::io::Error,
    },
    /// The recording file exists and holds something (and `--append` was
    /// not given), or holds lines that are not a recording's.
    #[error("{0}")]
    Refused(String),
    /// The recording file could not be opened, read or written.
    #[error("{what} {path}: {source}")]
    Io {
        what: &'static str,
        path: String,
        source: std::io::Error,
    },
    /// The async runtime could not start.
    #[error("cannot start the proxy's threads: {0}")]
    Runtime(std::io::Error),
}
