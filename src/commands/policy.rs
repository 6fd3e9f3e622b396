//! `mirotrace policy`: print the documented default policy (upstream's
//! behaviour), a starting point for `--policy FILE`.

use std::io::Write;
use std::path::Path;

use super::Status;
use crate::output::{is_broken_pipe, Output, OutputError};
use crate::policy::DEFAULT_POLICY_TOML;

pub fn run(output: Option<&Path>) -> Result<Status, String> {
    let mut out = Output::open(output).map_err(|e| e.to_string())?;
    if let Err(e) = out.write_all(DEFAULT_POLICY_TOML.as_bytes()) {
        if is_broken_pipe(&e) {
            return Ok(Status::Ok);
        }
        return Err(format!("writing output failed: {e}"));
    }
    match out.finish() {
        Ok(()) => Ok(Status::Ok),
        Err(OutputError::Write(e)) if is_broken_pipe(&e) => Ok(Status::Ok),
        Err(e) => Err(e.to_string()),
    }
}
