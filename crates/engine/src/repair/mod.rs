//! In-place repairs of near-miss tool calls: the server-name repair from
//! the system prompt's tool list ([`server_fix`]) and the argument fixes
//! (aliases, default `sandbox_id`, [`fix_args`]). A [`Call`] is a parsed
//! call after every repair, with the repairs that fired.

pub mod fix_args;
pub mod server_fix;

use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

use crate::parse::json_repair::Fixes;
use crate::parse::JsonPath;
use crate::pyjson::Value;
pub use fix_args::ArgTables;
pub use server_fix::{ServerFixer, ToolServerMapping};

/// The repairs' tables, made once per policy for a whole run.
pub struct Repairs {
    pub server: ServerFixer,
    pub args: ArgTables,
}

impl Repairs {
    pub fn new(policy: &crate::policy::Policy) -> Repairs {
        Repairs {
            server: ServerFixer::new(policy),
            args: ArgTables::new(policy),
        }
    }
}

/// An in-place repair applied to a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Repair {
    ArgAlias,
    NoneFiltered,
    SandboxId,
    ServerName,
    ToolName,
}

impl Repair {
    pub const ALL: [Repair; 5] = [
        Repair::ServerName,
        Repair::ToolName,
        Repair::ArgAlias,
        Repair::SandboxId,
        Repair::NoneFiltered,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Repair::ArgAlias => "arg_alias",
            Repair::NoneFiltered => "none_filtered",
            Repair::SandboxId => "sandbox_id",
            Repair::ServerName => "server_name",
            Repair::ToolName => "tool_name",
        }
    }
}

/// A parsed tool call after every repair.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    pub server_name: String,
    pub tool_name: String,
    /// After `fix_tool_call_arguments`, or as parsed where that raised.
    pub arguments: Value,
    pub id: Json,
    pub json: JsonPath,
    /// What json_repair fixed, for the `repaired` path (else empty).
    pub fixes: Fixes,
    /// Sorted by name (as the verdict format requires).
    pub repairs: Vec<Repair>,
    /// `fix_tool_call_arguments` raised on these arguments (upstream crashes
    /// when the loop reaches this call).
    pub fix_error: Option<String>,
}
