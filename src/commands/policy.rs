//! `mirotrace policy`: print the documented default policy (upstream's
//! behaviour), a starting point for `--policy FILE`.

use std::path::Path;

use super::{write_report, Error, Status};
use crate::output::Output;
use crate::policy::DEFAULT_POLICY_TOML;

pub fn run(output: Option<&Path>) -> Result<Status, Error> {
    write_report(Output::open(output)?, DEFAULT_POLICY_TOML, Status::Ok)
}
