//! One level below a verdict's reason: *which* failed call, invented tool,
//! tool error or repeated query it was (issue 28, docs/metrics.md,
//! "Mistakes"). Decided once, where the replay decides the verdict, and
//! carried on it as `why` (like a format error's [`super::format_error::FormatWhy`]).
//!
//! | reason | kinds |
//! |---|---|
//! | `llm_failed` | `empty_text`, `unsupported_finish:<finish_reason>` (`(empty)` for `""`), `error:<class>` ([`ErrorClass`]), `parser_raised:<exception type>` |
//! | `unknown_tool` | `<called name>~<nearest tool of the session's prompt>`; `<name>@wrong_server` when the prompt lists the name (under a server the call did not name); the name alone when the prompt lists no tool |
//! | `tool_error` | the error's first line, tool name kept, numbers, ids, paths and quoted strings masked ([`error_class`]) |
//! | `duplicate_query` | `after_success`, `after_empty`, `after_error`: how the first run of the query went; `after_rolled_back` when every earlier run was made in attempts the layer rolled back (the layer's doing, not the model's; also on a duplicate let through at the limit); `after_unknown` when only a log showed it ran and the step log cannot say |
//!
//! Kinds that come from trace text (a finish reason, a tool name, an
//! error line) are shortened to [`MAX_KIND_CHARS`] characters.
//!
//! A `tool_error` or `llm_failed` cause also says whose failure it is
//! ([`Owner`]): the environment's (timeouts, rate limits, 5xx, refused or
//! reset connections, DNS, an unreachable sandbox, credentials) or else the
//! model's (bad arguments, an invented path or id, an empty or cut reply).
//! The rules are [`Owner::of_error`]'s, decided here once for every view.

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::Regex;

use super::Reason;

/// Longest kind kept (characters); longer ones are cut, with `…`.
pub const MAX_KIND_CHARS: usize = 80;

/// Longest text quoted in a `why` (characters).
const MAX_TEXT_CHARS: usize = 200;

/// The cause of a verdict whose reason (or outcome, for `llm_failed`) is
/// not a format error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cause {
    LlmFailed(FailCause),
    UnknownTool {
        /// The name the call used.
        tool: String,
        /// The nearest tool the session's prompt lists, with its edit
        /// distance (0: the prompt lists it, under another server).
        nearest: Option<(String, usize)>,
    },
    ToolError {
        class: String,
        /// The error's first line, as the tool gave it (shortened).
        line: String,
        /// Whose failure it is, read from the whole first line.
        owner: Owner,
    },
    DuplicateQuery {
        after: After,
        /// The line of the attempt that first made the query, when known.
        first_line: Option<u64>,
    },
}

/// Why a call to the LLM gave nothing the loop could use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FailCause {
    /// The response's text was empty.
    EmptyText,
    /// A `finish_reason` the client does not accept (its value).
    UnsupportedFinish(String),
    /// The client raised: the error text's class and its first line.
    Error { class: ErrorClass, text: String },
    /// The tool-call parser raised: the exception type and message.
    ParserRaised { exception: String, text: String },
}

/// The class of an LLM client's error text, tested in this order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorClass {
    ContextLength,
    RateLimit,
    Timeout,
    Connection,
    Auth,
    ServerError,
    BadRequest,
    Other,
}

impl ErrorClass {
    pub const ALL: [ErrorClass; 8] = [
        ErrorClass::ContextLength,
        ErrorClass::RateLimit,
        ErrorClass::Timeout,
        ErrorClass::Connection,
        ErrorClass::Auth,
        ErrorClass::ServerError,
        ErrorClass::BadRequest,
        ErrorClass::Other,
    ];

    pub fn name(self) -> &'static str {
        match self {
            ErrorClass::ContextLength => "context_length",
            ErrorClass::RateLimit => "rate_limit",
            ErrorClass::Timeout => "timeout",
            ErrorClass::Connection => "connection",
            ErrorClass::Auth => "auth",
            ErrorClass::ServerError => "server_error",
            ErrorClass::BadRequest => "bad_request",
            ErrorClass::Other => "other",
        }
    }

    /// Classifies an error text by the first rule that matches its
    /// (lower-cased) words or its HTTP status (`Error code: 429`, `HTTP 503`).
    pub fn of(text: &str) -> ErrorClass {
        let t = text.to_lowercase();
        let has = |words: &[&str]| words.iter().any(|w| t.contains(w));
        // A status has digits: most error texts skip the regex.
        let status = if t.bytes().any(|b| b.is_ascii_digit()) {
            STATUS.captures(&t).and_then(|c| c[1].parse::<u16>().ok())
        } else {
            None
        };
        if has(&[
            "context length",
            "context_length",
            "maximum context",
            "too many tokens",
            "prompt is too long",
            "context window",
        ]) {
            ErrorClass::ContextLength
        } else if status == Some(429)
            || has(&["rate limit", "rate_limit", "too many requests", "quota"])
        {
            ErrorClass::RateLimit
        } else if status == Some(408) || has(&["timed out", "timeout", "deadline exceeded"]) {
            ErrorClass::Timeout
        } else if has(&[
            "connection",
            "connect error",
            "network",
            "dns",
            "unreachable",
        ]) {
            ErrorClass::Connection
        } else if matches!(status, Some(401 | 403))
            || has(&[
                "api key",
                "api_key",
                "unauthorized",
                "permission denied",
                "forbidden",
            ])
        {
            ErrorClass::Auth
        } else if status.is_some_and(|s| (500..600).contains(&s))
            || has(&[
                "overloaded",
                "internal server error",
                "service unavailable",
                "bad gateway",
            ])
        {
            ErrorClass::ServerError
        } else if status.is_some_and(|s| (400..500).contains(&s))
            || has(&["bad request", "invalid request"])
        {
            ErrorClass::BadRequest
        } else {
            ErrorClass::Other
        }
    }
}

/// A status code as clients print it: `error code: 429`, `http 503`, `status 500`.
static STATUS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?:error code|http|status(?: code)?)[:\s]\s*([1-5]\d\d)\b").expect("valid regex")
});

/// Whose failure a `tool_error` or `llm_failed` cause is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Owner {
    /// The model's: what it wrote made the call fail (bad arguments, an
    /// invented path or id, an empty, cut or unparseable reply, a context
    /// it filled).
    Model,
    /// The environment's: the tool or the LLM service failed whatever the
    /// model wrote (timeouts, rate limits, 5xx, connections, DNS, an
    /// unreachable sandbox, credentials).
    Environment,
}

impl Owner {
    pub const ALL: [Owner; 2] = [Owner::Model, Owner::Environment];

    pub fn name(self) -> &'static str {
        match self {
            Owner::Model => "model",
            Owner::Environment => "environment",
        }
    }

    /// The owner of an error text (a tool's error line or an LLM client's
    /// error), by these rules, tested on the lower-cased text:
    ///
    /// 1. an HTTP status of 401, 403, 408, 429 or 5xx (`Error code: 429`,
    ///    `HTTP 503`, `status 502`; also as the error's first word, `403
    ///    Forbidden`): environment;
    /// 2. a phrase of [`ENVIRONMENT_PHRASES`] (time-outs, rate limits,
    ///    server errors, connections, DNS, sandboxes that are gone,
    ///    credentials): environment;
    /// 3. anything else: model.
    ///
    /// Context-length errors are the model's (its transcript outgrew the
    /// window) even when the client says so with a 400.
    pub fn of_error(text: &str) -> Owner {
        let t = text.to_lowercase();
        let status = if t.bytes().any(|b| b.is_ascii_digit()) {
            STATUS
                .captures(&t)
                .or_else(|| LEADING_STATUS.captures(&t))
                .and_then(|c| c[1].parse::<u16>().ok())
        } else {
            None
        };
        if status.is_some_and(|s| matches!(s, 401 | 403 | 408 | 429 | 500..=599))
            || ENVIRONMENT_PHRASES.iter().any(|p| t.contains(p))
        {
            Owner::Environment
        } else {
            Owner::Model
        }
    }
}

/// The phrases (lower case) that make an error the environment's
/// ([`Owner::of_error`]).
pub const ENVIRONMENT_PHRASES: [&str; 43] = [
    // Time-outs.
    "timed out",
    "timeout",
    "time out",
    "deadline exceeded",
    // Rate limits and quotas.
    "rate limit",
    "rate_limit",
    "ratelimit",
    "too many requests",
    "quota",
    // The service failed.
    "internal server error",
    "service unavailable",
    "bad gateway",
    "gateway time",
    "overloaded",
    "server error",
    "temporarily unavailable",
    // Connections and names.
    "connection refused",
    "connection reset",
    "connection aborted",
    "connection closed",
    "connection error",
    "connecterror",
    "connectionerror",
    "failed to connect",
    "could not connect",
    "network is unreachable",
    "name resolution",
    "name or service not known",
    "nodename nor servname",
    "getaddrinfo",
    "dns",
    // Sandboxes and remote workers that are gone.
    "sandbox unreachable",
    "sandbox is not running",
    "sandbox not found",
    "unreachable",
    "not reachable",
    "not ready",
    // Credentials and refusals by the remote side.
    "unauthorized",
    "api key",
    "forbidden",
    // The LLM service gave up on the reply.
    "finish reason: error",
    "finish reason: abort",
    "finish_reason: error",
];

/// A status as a message's first word, after a tool's name or an error
/// prefix: `…: 429 Too Many Requests`, `503 Service Unavailable`.
static LEADING_STATUS: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?:^|: )([1-5]\d\d) [a-z]").expect("valid regex"));

/// How the first run of a repeated query went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum After {
    /// Its result was used: the model forgot it had the answer.
    Success,
    /// Its search came back empty: the model retried it.
    Empty,
    /// Its result was an error (unknown tool, tool error): retried.
    Error,
    /// Every earlier run of it was made during attempts the layer rolled
    /// back (another call of the turn failed): the model never saw its
    /// result, so asking again was no mistake of the model's; the layer's
    /// per-call cache commit caused the rollback (issue 39).
    RolledBack,
    /// Only a log said the query had run; how it went is not known.
    Unknown,
}

impl After {
    pub const ALL: [After; 5] = [
        After::Success,
        After::Empty,
        After::Error,
        After::RolledBack,
        After::Unknown,
    ];

    pub fn name(self) -> &'static str {
        match self {
            After::Success => "after_success",
            After::Empty => "after_empty",
            After::Error => "after_error",
            After::RolledBack => "after_rolled_back",
            After::Unknown => "after_unknown",
        }
    }

    /// How a call whose result the detectors judged `bad` went.
    pub fn of_result(bad: &Result<Option<Reason>, super::CallRaised>) -> After {
        match bad {
            Ok(None) => After::Success,
            Ok(Some(Reason::EmptySearch)) => After::Empty,
            Ok(Some(_)) | Err(_) => After::Error,
        }
    }
}

/// The `llm_failed` kinds without their parameter, for `diff`'s shares.
pub const FAIL_GROUPS: [&str; 4] = ["empty_text", "unsupported_finish", "error", "parser_raised"];

impl FailCause {
    /// The parser's error, `Type: message`, split at its type.
    pub fn parser(error: &str) -> FailCause {
        let first = first_line(error);
        let exception = match first.split_once(':') {
            Some((t, _)) if is_type_name(t) => t.rsplit('.').next().unwrap_or(t),
            _ => "Exception",
        };
        FailCause::ParserRaised {
            exception: shorten(exception),
            text: quote(first),
        }
    }

    /// The client's error text.
    pub fn error(error: &str) -> FailCause {
        FailCause::Error {
            class: ErrorClass::of(error),
            text: quote(first_line(error)),
        }
    }

    /// Whose failure it is: a client error by [`Owner::of_error`] (its
    /// class first: a context-length error is the model's, a rate limit,
    /// time-out, connection, credential or server error the
    /// environment's); an empty text, an unsupported finish or a reply
    /// the parser choked on are the model's.
    pub fn owner(&self) -> Owner {
        match self {
            FailCause::Error { class, text } => match class {
                ErrorClass::ContextLength => Owner::Model,
                ErrorClass::RateLimit
                | ErrorClass::Timeout
                | ErrorClass::Connection
                | ErrorClass::Auth
                | ErrorClass::ServerError => Owner::Environment,
                ErrorClass::BadRequest | ErrorClass::Other => Owner::of_error(text),
            },
            // The service stopped the reply itself.
            FailCause::UnsupportedFinish(r) if matches!(r.as_str(), "error" | "abort") => {
                Owner::Environment
            }
            FailCause::EmptyText
            | FailCause::UnsupportedFinish(_)
            | FailCause::ParserRaised { .. } => Owner::Model,
        }
    }

    /// `empty_text`, `unsupported_finish`, `error`, `parser_raised`.
    pub fn group(&self) -> &'static str {
        match self {
            FailCause::EmptyText => FAIL_GROUPS[0],
            FailCause::UnsupportedFinish(_) => FAIL_GROUPS[1],
            FailCause::Error { .. } => FAIL_GROUPS[2],
            FailCause::ParserRaised { .. } => FAIL_GROUPS[3],
        }
    }
}

impl Cause {
    /// The verdict reason (or, for `llm_failed`, outcome) this is a cause of.
    pub fn family(&self) -> &'static str {
        match self {
            Cause::LlmFailed(_) => "llm_failed",
            Cause::UnknownTool { .. } => Reason::UnknownTool.name(),
            Cause::ToolError { .. } => Reason::ToolError.name(),
            Cause::DuplicateQuery { .. } => Reason::DuplicateQuery.name(),
        }
    }

    /// Whose failure a `tool_error` or `llm_failed` cause is; `None` for
    /// the other families.
    pub fn owner(&self) -> Option<Owner> {
        match self {
            Cause::LlmFailed(f) => Some(f.owner()),
            Cause::ToolError { owner, .. } => Some(*owner),
            Cause::UnknownTool { .. } | Cause::DuplicateQuery { .. } => None,
        }
    }

    /// The kind counted in `mistakes.<family>` (module docs).
    pub fn kind(&self) -> String {
        match self {
            Cause::LlmFailed(f) => match f {
                FailCause::EmptyText => f.group().to_string(),
                FailCause::UnsupportedFinish(r) if r.is_empty() => format!("{}:(empty)", f.group()),
                FailCause::UnsupportedFinish(r) => format!("{}:{}", f.group(), shorten(r)),
                FailCause::Error { class, .. } => format!("{}:{}", f.group(), class.name()),
                FailCause::ParserRaised { exception, .. } => format!("{}:{exception}", f.group()),
            },
            Cause::UnknownTool { tool, nearest } => match nearest {
                // The prompt lists the tool: the call named a server that
                // does not have it.
                Some((_, 0)) => shorten(&format!("{tool}@wrong_server")),
                Some((n, _)) => shorten(&format!("{tool}~{n}")),
                None => shorten(tool),
            },
            Cause::ToolError { class, .. } => class.clone(),
            Cause::DuplicateQuery { after, .. } => after.name().to_string(),
        }
    }

    /// A short excerpt for a first example: the text the kind was read from.
    pub fn excerpt(&self) -> String {
        match self {
            Cause::LlmFailed(FailCause::EmptyText) => String::new(),
            Cause::LlmFailed(FailCause::UnsupportedFinish(r)) => quote(r),
            Cause::LlmFailed(
                FailCause::Error { text, .. } | FailCause::ParserRaised { text, .. },
            ) => text.clone(),
            Cause::UnknownTool { tool, .. } => quote(tool),
            Cause::ToolError { line, .. } => line.clone(),
            Cause::DuplicateQuery { first_line, .. } => first_line
                .map(|l| format!("first made at line {l}"))
                .unwrap_or_default(),
        }
    }

    /// The verdict line's `why` fields after `kind`, in order (`None`:
    /// null); a `tool_error` or `llm_failed` cause ends with its `owner`.
    pub fn fields(&self) -> Vec<(&'static str, Field)> {
        let mut fields = self.own_fields();
        if let Some(owner) = self.owner() {
            fields.push(("owner", Field::Text(Some(owner.name().to_string()))));
        }
        fields
    }

    fn own_fields(&self) -> Vec<(&'static str, Field)> {
        use Field::{Num, Text};
        match self {
            Cause::LlmFailed(FailCause::EmptyText) => vec![],
            Cause::LlmFailed(FailCause::UnsupportedFinish(r)) => {
                vec![("finish_reason", Text(Some(quote(r))))]
            }
            Cause::LlmFailed(FailCause::Error { text, .. }) => {
                vec![("error", Text(Some(text.clone())))]
            }
            Cause::LlmFailed(FailCause::ParserRaised { exception, text }) => vec![
                ("exception", Text(Some(exception.clone()))),
                ("error", Text(Some(text.clone()))),
            ],
            Cause::UnknownTool { tool, nearest } => vec![
                ("tool", Text(Some(quote(tool)))),
                ("nearest", Text(nearest.as_ref().map(|n| n.0.clone()))),
                ("distance", Num(nearest.as_ref().map(|n| n.1 as u64))),
            ],
            Cause::ToolError { line, .. } => vec![("error", Text(Some(line.clone())))],
            Cause::DuplicateQuery { first_line, .. } => vec![("first_line", Num(*first_line))],
        }
    }
}

/// A value of a `why` field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Field {
    Text(Option<String>),
    Num(Option<u64>),
}

/// The unknown-tool cause of a call named `tool`, against the tool names
/// the session's prompt lists (nearest by edit distance; ties: the first).
pub fn unknown_tool<'a>(tool: &str, listed: impl IntoIterator<Item = &'a str>) -> Cause {
    let listed: Vec<&str> = listed.into_iter().collect();
    // Most invented calls name a listed tool under the wrong server: an
    // equal name is the nearest (distance 0, the first such), with no
    // edit distance to compute.
    let nearest = match listed.iter().find(|n| **n == tool) {
        Some(&equal) => Some((equal, 0)),
        None => listed
            .iter()
            .fold(None, |best: Option<(&str, usize)>, &name| {
                let d = strsim::levenshtein(tool, name);
                match best {
                    Some((_, b)) if b <= d => best,
                    _ => Some((name, d)),
                }
            }),
    };
    Cause::UnknownTool {
        tool: tool.to_string(),
        nearest: nearest.map(|(n, d)| (shorten(n), d)),
    }
}

/// The tool names a system prompt lists (`### Tool name:` lines, MCP-XML
/// prompts), in prompt order.
pub fn prompt_tools(system_prompt: &str) -> Vec<&str> {
    const HEADER: &str = "### Tool name:";
    static FINDER: LazyLock<memchr::memmem::Finder<'static>> =
        LazyLock::new(|| memchr::memmem::Finder::new(HEADER));
    // The headers are found, not every line walked: prompts run to kilobytes
    // and this runs for every unknown-tool verdict. A header counts where
    // it starts a line, as `lines()` then `strip_prefix` would see it.
    let bytes = system_prompt.as_bytes();
    FINDER
        .find_iter(bytes)
        .filter(|&at| at == 0 || bytes[at - 1] == b'\n')
        .filter_map(|at| {
            let rest = &system_prompt[at + HEADER.len()..];
            let line = rest.split('\n').next().unwrap_or_default();
            let tool = line.trim();
            (!tool.is_empty()).then_some(tool)
        })
        .collect()
}

/// The tool-error cause of a result whose text is `text`.
pub fn tool_error(text: &str) -> Cause {
    let line = first_line(text);
    Cause::ToolError {
        class: error_class(line),
        line: quote(line),
        owner: Owner::of_error(line),
    }
}

/// A tool error's class: its first line without upstream's `Error
/// executing tool ` prefix, with quoted strings, URLs, paths, ids and
/// numbers masked (`<str>`, `<url>`, `<path>`, `<id>`, `<n>`) and spaces
/// collapsed, so errors that differ only in those fall together.
pub fn error_class(line: &str) -> String {
    // Each mask with what a match must contain: a line without it skips
    // the regex (this runs for every tool-error verdict).
    type Needs = fn(&str) -> bool;
    static MASKS: LazyLock<[(Regex, &str, Needs); 5]> = LazyLock::new(|| {
        let re = |p: &str| Regex::new(p).expect("valid regex");
        [
            (re(r#""[^"]*"|`[^`]*`"#), "<str>", |s| {
                s.contains(['"', '`'])
            }),
            // Not the apostrophe of "model's".
            (re(r"(^|[^\w])'[^']*'"), "${1}<str>", |s| s.contains('\'')),
            (re(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://\S+"), "<url>", |s| {
                s.contains("://")
            }),
            (
                re(r"(^|[\s:=(\[])(?:[A-Za-z]:|~|\.{1,2})?(?:[/\\][\w.\-]+)+[/\\]?"),
                "${1}<path>",
                |s| s.contains(['/', '\\']),
            ),
            (
                re(
                    r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b",
                ),
                "<id>",
                |s| s.contains('-'),
            ),
        ]
    });
    static WORDS: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"[\w-]+").expect("valid regex"));
    static NUMBERS: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"\d+(?:\.\d+)?").expect("valid regex"));
    static SPACES: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\s+").expect("valid regex"));
    // Upstream's `Error executing tool <name>: <message>`: the name is kept.
    let (tool, message) = match line.strip_prefix("Error executing tool ") {
        Some(rest) => match rest.split_once(": ") {
            Some((tool, message)) => (Some(tool), message),
            None => (None, rest),
        },
        None => (None, line),
    };
    // Each pass copies only when it changes something: this runs for every
    // tool-error verdict.
    let mut s = Cow::Borrowed(message);
    for (re, with, needs) in MASKS.iter() {
        if !needs(&s) {
            continue;
        }
        if let Cow::Owned(masked) = re.replace_all(&s, *with) {
            s = Cow::Owned(masked);
        }
    }
    // A word of 8 or more characters mixing letters and digits is an id;
    // digits elsewhere are numbers (`60s` is `<n>s`). Without a digit
    // (`char::is_numeric` is wider than `\d`) no word changes.
    if s.chars().any(char::is_numeric) {
        let words = WORDS.replace_all(&s, |c: &regex::Captures<'_>| {
            let w = &c[0];
            let digits = w.chars().any(|c| c.is_ascii_digit());
            let letters = w.chars().any(char::is_alphabetic);
            if digits && letters && w.chars().count() >= 8 {
                "<id>".to_string()
            } else if w.is_ascii() {
                // In an ASCII word (no `.`: not a word character) a number is
                // a run of digits.
                mask_ascii_numbers(w)
            } else {
                NUMBERS.replace_all(w, "<n>").into_owned()
            }
        });
        if let Cow::Owned(w) = words {
            s = Cow::Owned(w);
        }
    }
    // Only a white space other than ' ', or two in a row, changes.
    let respace = s.contains(|c: char| c.is_whitespace() && c != ' ') || s.contains("  ");
    let s = if respace {
        SPACES.replace_all(&s, " ")
    } else {
        Cow::Borrowed(&*s)
    };
    match tool {
        Some(tool) => shorten(&format!("{tool}: {}", s.trim())),
        None => shorten(s.trim()),
    }
}

/// `NUMBERS` masked in an ASCII word: each run of digits is `<n>`.
fn mask_ascii_numbers(word: &str) -> String {
    let mut out = String::with_capacity(word.len() + 2);
    let mut in_number = false;
    for c in word.chars() {
        if c.is_ascii_digit() {
            if !in_number {
                out.push_str("<n>");
            }
            in_number = true;
        } else {
            out.push(c);
            in_number = false;
        }
    }
    out
}

/// The first non-blank line of `text`, trimmed.
pub fn first_line(text: &str) -> &str {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("")
}

fn is_type_name(t: &str) -> bool {
    !t.is_empty()
        && t.split('.').all(|p| {
            p.chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && p.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
}

/// `s` cut to [`MAX_KIND_CHARS`] characters.
fn shorten(s: &str) -> String {
    cut(s, MAX_KIND_CHARS)
}

/// `s` cut to the longest text a `why` quotes.
fn quote(s: &str) -> String {
    cut(s, MAX_TEXT_CHARS)
}

fn cut(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &s[..at]),
        None => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ascii_numbers_are_masked_as_the_regex_masks_them() {
        let numbers = Regex::new(r"\d+(?:\.\d+)?").expect("valid regex");
        for w in ["429", "60s", "a1b22c333", "x", "", "v2-3", "12-ab-9", "007"] {
            assert_eq!(mask_ascii_numbers(w), numbers.replace_all(w, "<n>"), "{w}");
        }
    }

    #[test]
    fn error_texts_fall_into_classes() {
        let cases = [
            ("Connection error.", ErrorClass::Connection),
            (
                "Error code: 429 - rate limit exceeded",
                ErrorClass::RateLimit,
            ),
            (
                "Error code: 500 - {'error': 'upstream model overloaded'}",
                ErrorClass::ServerError,
            ),
            (
                "Error code: 400 - This model's maximum context length is 131072 tokens",
                ErrorClass::ContextLength,
            ),
            (
                "Error code: 400 - invalid tool schema",
                ErrorClass::BadRequest,
            ),
            ("Request timed out.", ErrorClass::Timeout),
            ("asyncio.TimeoutError after 600s", ErrorClass::Timeout),
            (
                "Error code: 401 - Incorrect API key provided",
                ErrorClass::Auth,
            ),
            ("slow down", ErrorClass::Other),
        ];
        for (text, want) in cases {
            assert_eq!(ErrorClass::of(text), want, "{text}");
        }
    }

    #[test]
    fn tool_errors_are_masked_into_classes() {
        let cases = [
            (
                "Error executing tool run_python_code: sandbox not reachable",
                "run_python_code: sandbox not reachable",
            ),
            (
                "Error executing tool run_python_code: timeout after 60s\nTraceback",
                "run_python_code: timeout after <n>s",
            ),
            (
                "Error executing tool google_search: timeout after 60 s",
                "google_search: timeout after <n> s",
            ),
            (
                "Error executing tool scrape: 404 for https://x.org/a?b=1",
                "scrape: <n> for <url>",
            ),
            (
                "Error executing tool read: no such file /tmp/a/b.txt",
                "read: no such file <path>",
            ),
            (
                "Error executing tool read: no such file 'notes.md'",
                "read: no such file <str>",
            ),
            (
                "Error executing tool e2b: sandbox 3f2a9c1e-0b1d-4e5f-8a9b-123456789abc gone",
                "e2b: sandbox <id> gone",
            ),
        ];
        for (text, want) in cases {
            assert_eq!(error_class(first_line(text)), want, "{text}");
        }
        // Errors that differ only in masked parts share a class.
        assert_eq!(
            error_class("Error executing tool x: HTTP 503 after 3 retries"),
            error_class("Error executing tool x: HTTP 502 after 5 retries")
        );
    }

    /// The headers found are the ones a walk over `lines()` finds.
    #[test]
    fn prompt_tools_are_the_lines_that_start_with_the_header() {
        let by_lines = |p: &str| -> Vec<String> {
            p.lines()
                .filter_map(|l| l.strip_prefix("### Tool name:"))
                .map(str::trim)
                .filter(|t| !t.is_empty())
                .map(String::from)
                .collect()
        };
        for prompt in [
            "### Tool name: first\n## Server name: s\n### Tool name:  second  \r\n",
            "x ### Tool name: not_at_a_line_start\n### Tool name:\n### Tool name:   \n",
            "\r\n### Tool name: after_crlf\r\n### Tool name: last_without_newline",
            "### Tool name: ### Tool name: doubled\n### Tool name:\u{3000}wide\u{3000}\n",
            "",
        ] {
            assert_eq!(prompt_tools(prompt), by_lines(prompt), "{prompt:?}");
        }
    }

    #[test]
    fn the_nearest_listed_tool_is_named() {
        let prompt =
            "## Server name: s\n### Tool name: google_search\n### Tool name: scrape_website\n";
        let tools = prompt_tools(prompt);
        assert_eq!(tools, ["google_search", "scrape_website"]);
        let c = unknown_tool("web_search", tools.iter().copied());
        assert_eq!(c.kind(), "web_search~google_search");
        let c = unknown_tool("scrape_website", tools.iter().copied());
        assert_eq!(
            c.kind(),
            "scrape_website@wrong_server",
            "listed: distance 0"
        );
        assert_eq!(unknown_tool("x", []).kind(), "x");
    }

    #[test]
    fn owners_follow_the_documented_rules() {
        use Owner::{Environment, Model};
        let cases: &[(&str, Owner)] = &[
            ("Error executing tool run: Connection refused", Environment),
            (
                "Error executing tool x: ConnectError: [Errno -2] Name or service not known",
                Environment,
            ),
            (
                "Error executing tool x: Request timed out after 60s",
                Environment,
            ),
            (
                "Error executing tool x: HTTP 503 Service Unavailable",
                Environment,
            ),
            ("Error executing tool x: Error code: 429", Environment),
            ("Error executing tool x: status 502", Environment),
            (
                "Error executing tool run_python_code: Sandbox unreachable",
                Environment,
            ),
            ("Error executing tool x: 401 Unauthorized", Environment),
            (
                "Error executing tool scrape_website: 403 Forbidden",
                Environment,
            ),
            ("Error executing tool g: 429 Too Many Requests", Environment),
            ("Error executing tool g: sandbox not reachable", Environment),
            (
                "Error validating tool call: terminal session is not ready",
                Environment,
            ),
            ("F", Model),
            // The model's: bad arguments, invented paths and ids.
            (
                "Error executing tool x: HTTP 404 not found: /no/such/file",
                Model,
            ),
            (
                "Error: flight HAT030 not available on date 2024-05-16",
                Model,
            ),
            (
                "Error executing tool x: missing required argument 'q'",
                Model,
            ),
            ("Error executing tool x: status 400", Model),
        ];
        for (text, owner) in cases {
            assert_eq!(Owner::of_error(text), *owner, "{text}");
            assert_eq!(tool_error(text).owner(), Some(*owner), "{text}");
        }
        // Failed calls: by class first, then the text rules.
        assert_eq!(FailCause::error("context length exceeded").owner(), Model);
        assert_eq!(
            FailCause::error("Error code: 429 - rate limited").owner(),
            Environment
        );
        assert_eq!(FailCause::error("Request timed out.").owner(), Environment);
        assert_eq!(
            FailCause::error("bad request: invalid schema").owner(),
            Model
        );
        assert_eq!(FailCause::EmptyText.owner(), Model);
        assert_eq!(
            FailCause::error("Unsupported finish reason: abort").owner(),
            Environment
        );
        assert_eq!(
            FailCause::error("Unsupported finish reason: content_filter").owner(),
            Model
        );
        assert_eq!(
            FailCause::UnsupportedFinish("error".into()).owner(),
            Environment
        );
        assert_eq!(
            FailCause::UnsupportedFinish("content_filter".into()).owner(),
            Model
        );
        assert_eq!(FailCause::parser("ValueError: x").owner(), Model);
        // Other causes have none; a tool error's owner ends its `why`.
        let unknown = unknown_tool("x", ["y"]);
        assert_eq!(unknown.owner(), None);
        assert!(unknown.fields().iter().all(|(k, _)| *k != "owner"));
        let fields = tool_error("Error executing tool x: timeout").fields();
        assert_eq!(
            fields.last(),
            Some(&("owner", Field::Text(Some("environment".into()))))
        );
    }

    #[test]
    fn failed_calls_name_their_cause() {
        let p = FailCause::parser("AttributeError: output items are not objects");
        assert_eq!(Cause::LlmFailed(p).kind(), "parser_raised:AttributeError");
        let e = FailCause::error("Error code: 429 - rate limit exceeded\nmore");
        assert_eq!(Cause::LlmFailed(e.clone()).kind(), "error:rate_limit");
        assert_eq!(
            Cause::LlmFailed(e).excerpt(),
            "Error code: 429 - rate limit exceeded"
        );
        let f = FailCause::UnsupportedFinish("content_filter".into());
        assert_eq!(
            Cause::LlmFailed(f).kind(),
            "unsupported_finish:content_filter"
        );
        let long = "x".repeat(500);
        let k = Cause::LlmFailed(FailCause::UnsupportedFinish(long)).kind();
        assert_eq!(
            k.chars().count(),
            "unsupported_finish:".len() + MAX_KIND_CHARS + 1
        );
    }

    #[test]
    fn why_objects_carry_the_kind() {
        let c = Cause::DuplicateQuery {
            after: After::Empty,
            first_line: Some(3),
        };
        assert_eq!(c.kind(), "after_empty");
        assert_eq!(c.fields(), vec![("first_line", Field::Num(Some(3)))]);
    }
}
