//! Lines for the user on stderr. A failed write to stderr (`2>/dev/full`,
//! a closed terminal) is ignored: `eprintln!` would panic and turn the
//! run's exit code into 101, and the exit code is the part of the contract
//! a script relies on. `clippy::print_stderr` is denied crate-wide so every
//! message goes through here.

use std::fmt::Display;
use std::io::Write;

/// Writes `mirotrace: {message}` and a newline; never panics.
pub fn say(message: impl Display) {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "mirotrace: {message}");
}
