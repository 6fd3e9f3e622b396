//! Duplicate query: a call whose query this session already ran. The layer
//! rolls the attempt back (or lets the duplicate through at the limit).
//!
//! Upstream: `core/tool_executor.py` `get_query_str_from_tool_call` (the
//! query fingerprint, [`query_fingerprint`]) and `core/orchestrator.py`
//! `_check_duplicate_query` (the lookup: a count above zero is a duplicate,
//! [`QueryCache::lookup`]) with `_record_query` (the count,
//! [`QueryCache::record`]). The cache is per session and per tool; upstream
//! matches fingerprints exactly. Near duplicates (same query once case,
//! whitespace and punctuation are folded, [`near_duplicate_key`]) are ours:
//! reported, never rolled back, unless the policy's `duplicate_match` is
//! `normalized`, which makes the fold the cache key.

use foldhash::{HashMap, HashSet};

use super::cause::After;
use super::{CallRaised, Reason};
use crate::policy::{MatchMode, Policy};
use crate::pyjson::{PyStr, Value};

/// The reason this detector reports.
pub const REASONS: [Reason; 1] = [Reason::DuplicateQuery];

/// The arguments upstream's fingerprint of a tool's calls is made of;
/// `None` for a tool without one (its calls are never duplicate queries).
pub fn fingerprint_keys(tool_name: &str) -> Option<&'static [&'static str]> {
    Some(match tool_name {
        "search_and_browse" => &["subtask"],
        "google_search" => &["q"],
        "sogou_search" => &["Query"],
        "scrape_website" => &["url"],
        "scrape_and_extract_info" => &["url", "info_to_extract"],
        _ => return None,
    })
}

/// Upstream's duplicate-query fingerprint (`get_query_str_from_tool_call`):
/// `None` for tools without one.
pub fn query_fingerprint(tool_name: &str, arguments: &Value) -> Result<Option<PyStr>, CallRaised> {
    let Some(keys) = fingerprint_keys(tool_name) else {
        return Ok(None);
    };
    let Value::Dict(args) = arguments else {
        return Err(CallRaised(format!(
            "AttributeError: '{}' object has no attribute 'get'",
            arguments.type_name()
        )));
    };
    let mut q = PyStr::from(tool_name);
    for key in keys {
        q.push('_');
        match args.get(&PyStr::from(*key)) {
            None => {}
            Some(Value::Str(s)) => q.push_pystr(s),
            Some(other) => {
                return Err(CallRaised(format!(
                    "TypeError: can only concatenate str (not \"{}\") to str",
                    other.type_name()
                )))
            }
        }
    }
    Ok(Some(q))
}

/// The cache key for a fingerprint under the policy's duplicate mode.
pub fn cache_key(fingerprint: &PyStr, policy: &Policy) -> PyStr {
    match policy.duplicate_match {
        MatchMode::Exact => fingerprint.clone(),
        MatchMode::Normalized => PyStr::from(near_duplicate_key(fingerprint)),
    }
}

/// Case, whitespace and punctuation folded: two fingerprints with the same
/// key are the "same query" to a human, though upstream's exact match differs.
/// Punctuation (quotes of every style included) is dropped, whitespace runs
/// become one space, letters are lowercased; one pass, one allocation.
pub fn near_duplicate_key(fingerprint: &PyStr) -> String {
    if let Some(ascii) = fingerprint.ascii_bytes() {
        return fold_ascii(ascii);
    }
    fold_chars(&fingerprint.to_string_lossy())
}

/// [`fold_chars`] for ASCII text, a byte at a time.
fn fold_ascii(text: &[u8]) -> String {
    // Bytes in, bytes out: every byte is ASCII, so no char is encoded.
    let mut out: Vec<u8> = Vec::with_capacity(text.len());
    let mut pending_space = false;
    for &b in text {
        // `char::is_whitespace` on ASCII: tab, LF, VT, FF, CR, space.
        if matches!(b, b'\t'..=b'\r' | b' ') {
            pending_space = !out.is_empty();
            continue;
        }
        if b.is_ascii_punctuation() {
            continue;
        }
        if pending_space {
            out.push(b' ');
            pending_space = false;
        }
        out.push(b.to_ascii_lowercase());
    }
    // ASCII bytes are UTF-8.
    String::from_utf8(out).unwrap_or_default()
}

fn fold_chars(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut pending_space = false;
    for c in text.chars() {
        if c.is_whitespace() {
            pending_space = !out.is_empty();
            continue;
        }
        if c.is_ascii_punctuation() || is_unicode_punct(c) {
            continue;
        }
        if pending_space {
            out.push(' ');
            pending_space = false;
        }
        if c.is_ascii() {
            out.push(c.to_ascii_lowercase());
        } else if is_caseless(c) {
            out.push(c);
        } else {
            out.extend(c.to_lowercase());
        }
    }
    out
}

/// Kana, CJK ideographs and Hangul syllables have no lower case: skips the
/// table search `char::to_lowercase` makes for every other character (a
/// test checks every character of the ranges).
fn is_caseless(c: char) -> bool {
    matches!(c, '\u{3040}'..='\u{A63F}' | '\u{AC00}'..='\u{D7FF}')
}

fn is_unicode_punct(c: char) -> bool {
    matches!(
        c,
        '\u{00B4}' | '\u{2000}'..='\u{206F}' | '\u{3000}'..='\u{303F}' | '\u{FF01}'..='\u{FF0F}' | '\u{FF1A}'..='\u{FF20}'
    )
}

/// One session's queries (upstream's `used_queries`, one bucket per tool),
/// with the folded form of each for near-duplicate reporting.
///
/// Each recording is tied to the attempt that made it: when that attempt
/// is rolled back ([`QueryCache::end_attempt`]), the recording is counted
/// as rolled back, so a later repeat whose every earlier recording was
/// rolled back is blamed on the layer ([`After::RolledBack`]). With the
/// policy's `query_commit = "per_turn"` (upstream pull request #121)
/// recordings wait in a buffer ([`QueryCache::defer`]) and reach the cache
/// only when the attempt is not rolled back.
#[derive(Debug, Default)]
pub struct QueryCache {
    /// tool → cache key → what was recorded.
    recorded: HashMap<String, HashMap<PyStr, Recorded>>,
    /// tool → folded keys recorded.
    recorded_folded: HashMap<String, HashSet<String>>,
    /// Recordings made during the current attempt (tool, key).
    open: Vec<(String, PyStr)>,
    /// `per_turn`: queries that succeeded in the current attempt, recorded
    /// when it ends without a rollback.
    buffered: Vec<PendingQuery>,
}

/// A recorded query.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Recorded {
    /// Times recorded (upstream's count).
    times: u32,
    /// Of those, recordings made during attempts that were rolled back.
    rolled_back: u32,
    /// The line of the attempt that first recorded it, when known.
    first_line: Option<u64>,
    /// How that first run went.
    after: After,
}

/// What the cache knew about a query before this call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Seen {
    /// Recorded before under the same cache key: a duplicate.
    Repeat,
    /// Not recorded, but a query with the same folded form was.
    NearRepeat,
    New,
}

/// A query to record once its call has run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingQuery {
    tool: String,
    key: PyStr,
    /// The folded key, when not recorded yet (a repeat's is).
    folded: Option<String>,
    /// The line of the attempt making it ([`PendingQuery::made_at`]).
    line: Option<u64>,
    /// For a repeat: the line of the attempt that first made the query.
    first_line: Option<u64>,
    /// How this run went ([`PendingQuery::went`]), or for a repeat how the
    /// first run went ([`After::RolledBack`] when every earlier recording
    /// was rolled back).
    after: After,
}

impl PendingQuery {
    /// Says which line's attempt makes the query, so a later repeat can
    /// say where it was first made (`replay --trace` shows it).
    pub fn made_at(mut self, line: u64) -> PendingQuery {
        self.line = Some(line);
        self
    }

    /// For a repeat: the line where the query was first made, when known.
    pub fn first_made_at(&self) -> Option<u64> {
        self.first_line
    }

    /// Says how the call making the query went, so a later repeat can say
    /// whether the model retried a failure or forgot a success.
    pub fn went(mut self, after: After) -> PendingQuery {
        self.after = after;
        self
    }

    /// For a repeat: how the query's first run went, or
    /// [`After::RolledBack`] when every earlier recording of it was made
    /// during attempts that were rolled back (none in this attempt).
    pub fn first_went(&self) -> After {
        self.after
    }
}

impl QueryCache {
    /// Upstream's check in `_check_duplicate_query` for the query
    /// `fingerprint` of a `tool` call, and what to record if the call runs.
    pub fn lookup(&self, tool: &str, fingerprint: &PyStr, policy: &Policy) -> (Seen, PendingQuery) {
        let key = cache_key(fingerprint, policy);
        let entry = self.recorded.get(tool).and_then(|m| m.get(&key)).copied();
        let (seen, folded) = if entry.is_some_and(|e| e.times > 0) {
            (Seen::Repeat, None)
        } else {
            let folded = near_duplicate_key(fingerprint);
            let near = self
                .recorded_folded
                .get(tool)
                .is_some_and(|s| s.contains(&folded));
            // The exact key is the fingerprint itself: its fold is at hand.
            let folded = match policy.duplicate_match {
                MatchMode::Exact => folded,
                MatchMode::Normalized => near_duplicate_key(&key),
            };
            (
                if near { Seen::NearRepeat } else { Seen::New },
                Some(folded),
            )
        };
        let (first_line, after) = match entry {
            Some(e) if seen == Seen::Repeat => {
                // Recordings of the current attempt are not rolled back yet:
                // a query asked twice in one attempt stays the model's.
                let after = if e.rolled_back == e.times {
                    After::RolledBack
                } else {
                    e.after
                };
                (e.first_line, after)
            }
            // Known only from a log until the call runs.
            _ => (None, After::Unknown),
        };
        let pending = PendingQuery {
            tool: tool.to_string(),
            key,
            folded,
            line: None,
            first_line,
            after,
        };
        (seen, pending)
    }

    /// Upstream's `_record_query`: counts the query as run in this session,
    /// made during the current attempt.
    pub fn record(&mut self, query: PendingQuery) {
        let (tool, key) = (query.tool.clone(), query.key.clone());
        self.insert(query, false);
        self.open.push((tool, key));
    }

    /// Counts a query as run in this session during an earlier attempt
    /// (one a log alone knows), `rolled_back` or not.
    pub fn record_earlier(&mut self, query: PendingQuery, rolled_back: bool) {
        self.insert(query, rolled_back);
    }

    /// `per_turn`: keeps a query that succeeded until the attempt ends.
    pub fn defer(&mut self, query: PendingQuery) {
        self.buffered.push(query);
    }

    /// The current attempt ended: its recordings are counted as rolled
    /// back, or kept; the buffered queries are recorded when it was not
    /// rolled back and dropped when it was.
    pub fn end_attempt(&mut self, rolled_back: bool) {
        if rolled_back {
            for (tool, key) in self.open.drain(..) {
                if let Some(e) = self.recorded.get_mut(&tool).and_then(|m| m.get_mut(&key)) {
                    e.rolled_back += 1;
                }
            }
            self.buffered.clear();
        } else {
            for query in std::mem::take(&mut self.buffered) {
                self.insert(query, false);
            }
            self.open.clear();
        }
    }

    fn insert(&mut self, query: PendingQuery, rolled_back: bool) {
        let PendingQuery {
            tool,
            key,
            folded,
            line,
            after,
            ..
        } = query;
        if let Some(folded) = folded {
            match self.recorded_folded.get_mut(&tool) {
                Some(set) => {
                    set.insert(folded);
                }
                None => {
                    self.recorded_folded
                        .entry(tool.clone())
                        .or_default()
                        .insert(folded);
                }
            }
        }
        let e = self
            .recorded
            .entry(tool)
            .or_default()
            .entry(key)
            .or_insert(Recorded {
                times: 0,
                rolled_back: 0,
                first_line: line,
                after,
            });
        e.times += 1;
        e.rolled_back += u32::from(rolled_back);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pyjson::loads;

    fn fp(tool: &str, args: &str) -> Result<Option<String>, CallRaised> {
        query_fingerprint(tool, &loads(args).unwrap()).map(|q| q.map(|q| q.to_string()))
    }

    #[test]
    fn fingerprints_follow_upstream() {
        /// The fingerprint, or the exception upstream raises.
        type Expected = Result<Option<&'static str>, &'static str>;
        // (tool, arguments, expected)
        let cases: &[(&str, &str, Expected)] = &[
            (
                "google_search",
                r#"{"q": "x"}"#,
                Ok(Some("google_search_x")),
            ),
            ("google_search", r#"{}"#, Ok(Some("google_search_"))),
            (
                "google_search",
                r#"{"q": "x", "num": 3}"#,
                Ok(Some("google_search_x")),
            ),
            (
                "sogou_search",
                r#"{"Query": "y", "q": "z"}"#,
                Ok(Some("sogou_search_y")),
            ),
            (
                "search_and_browse",
                r#"{"subtask": "s"}"#,
                Ok(Some("search_and_browse_s")),
            ),
            (
                "scrape_website",
                r#"{"url": "u"}"#,
                Ok(Some("scrape_website_u")),
            ),
            (
                "scrape_and_extract_info",
                r#"{"url": "u", "info_to_extract": "i"}"#,
                Ok(Some("scrape_and_extract_info_u_i")),
            ),
            (
                "scrape_and_extract_info",
                r#"{"info_to_extract": "i"}"#,
                Ok(Some("scrape_and_extract_info__i")),
            ),
            ("run_python_code", r#"{"code_block": "x"}"#, Ok(None)),
            ("run_python_code", "[1]", Ok(None)),
            ("Google_Search", r#"{"q": "x"}"#, Ok(None)),
            (
                "google_search",
                r#"{"q": 42}"#,
                Err("TypeError: can only concatenate str (not \"int\") to str"),
            ),
            (
                "scrape_and_extract_info",
                r#"{"url": "u", "info_to_extract": null}"#,
                Err("TypeError: can only concatenate str (not \"NoneType\") to str"),
            ),
            (
                "google_search",
                "[1]",
                Err("AttributeError: 'list' object has no attribute 'get'"),
            ),
            (
                "scrape_website",
                r#""u""#,
                Err("AttributeError: 'str' object has no attribute 'get'"),
            ),
        ];
        for (tool, args, expected) in cases {
            let got = fp(tool, args);
            let got = got.as_ref().map(Option::as_deref).map_err(|e| e.0.as_str());
            assert_eq!(got, *expected, "{tool} {args}");
        }
    }

    #[test]
    fn caseless_characters_lower_to_themselves() {
        for c in ('\u{0}'..=char::MAX).filter(|&c| is_caseless(c)) {
            assert_eq!(c.to_lowercase().collect::<String>(), c.to_string(), "{c:?}");
        }
        assert!(!is_caseless('A') && !is_caseless('\u{FF21}') && !is_caseless('\u{A640}'));
    }

    #[test]
    fn near_duplicate_keys_snapshot() {
        let inputs = [
            "google_search_Capital of  France?",
            "google_search_capital of france",
            " Don\u{2019}t  , STOP ",
            "上海 中心，大厦",
            "scrape_website_https://Example.com/a?b=1",
            "\u{201C}Quoted\u{201D}\u{3000}text\u{FF01}",
            "Ünïcode ΣΑΣ",
            "...",
            "",
        ];
        let rendered: Vec<String> = inputs
            .iter()
            .map(|t| format!("{t:?} => {:?}", near_duplicate_key(&PyStr::from(*t))))
            .collect();
        let expected = [
            r#""google_search_Capital of  France?" => "googlesearchcapital of france""#,
            r#""google_search_capital of france" => "googlesearchcapital of france""#,
            r#"" Don’t  , STOP " => "dont stop""#,
            r#""上海 中心，大厦" => "上海 中心大厦""#,
            r#""scrape_website_https://Example.com/a?b=1" => "scrapewebsitehttpsexamplecomab1""#,
            r#""“Quoted”\u{3000}text！" => "quoted text""#,
            r#""Ünïcode ΣΑΣ" => "ünïcode σασ""#,
            r#""..." => """#,
            r#""" => """#,
        ];
        assert_eq!(rendered, expected);
    }

    #[test]
    fn ascii_folding_equals_the_general_folding() {
        // Every ASCII byte, in runs and at the edges.
        let all: String = (0u8..128).map(char::from).collect();
        let samples = [
            all.clone(),
            format!("  {all}  {all}\t"),
            "google_search_\x0bA\x0cB\rC\nD".to_string(),
            "!!!".to_string(),
            String::new(),
        ];
        for text in samples {
            assert_eq!(fold_ascii(text.as_bytes()), fold_chars(&text), "{text:?}");
        }
        // Random texts, heavy in blanks, punctuation and capitals.
        let alphabet = b" \t\n\x0b.,!?'\"-_aAzZ09\x00\x01\x7f";
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for len in 0..400 {
            let text: String = (0..len % 40)
                .map(|_| {
                    state = state
                        .wrapping_mul(6_364_136_223_846_793_005)
                        .wrapping_add(1);
                    char::from(alphabet[(state >> 33) as usize % alphabet.len()])
                })
                .collect();
            assert_eq!(fold_ascii(text.as_bytes()), fold_chars(&text), "{text:?}");
        }
    }

    #[test]
    fn cache_keys_follow_the_policy() {
        let fp = PyStr::from("google_search_Capital of  France?");
        let exact = Policy::default();
        let normalized = Policy {
            duplicate_match: MatchMode::Normalized,
            ..Policy::default()
        };
        assert_eq!(cache_key(&fp, &exact), fp);
        assert_eq!(
            cache_key(&fp, &normalized),
            PyStr::from("googlesearchcapital of france")
        );
    }

    /// Runs `queries` (tool, fingerprint) through one session's cache,
    /// recording each one that is not a repeat; returns what each saw.
    fn session(policy: &Policy, queries: &[(&str, &str)]) -> Vec<Seen> {
        let mut cache = QueryCache::default();
        queries
            .iter()
            .map(|(tool, q)| {
                let (seen, pending) = cache.lookup(tool, &PyStr::from(*q), policy);
                if seen != Seen::Repeat {
                    cache.record(pending);
                }
                seen
            })
            .collect()
    }

    #[test]
    fn the_cache_finds_repeats_per_tool() {
        use Seen::{NearRepeat, New, Repeat};
        let queries = [
            ("google_search", "google_search_Paris"),
            ("google_search", "google_search_Paris"),
            ("google_search", "google_search_paris!"),
            ("google_search", "google_search_paris!"),
            // Another tool's bucket: the same fingerprint is new there.
            ("sogou_search", "google_search_Paris"),
            ("google_search", "google_search_Lyon"),
        ];
        let exact = Policy::default();
        assert_eq!(
            session(&exact, &queries),
            [New, Repeat, NearRepeat, Repeat, New, New]
        );
        let normalized = Policy {
            duplicate_match: MatchMode::Normalized,
            ..Policy::default()
        };
        assert_eq!(
            session(&normalized, &queries),
            [New, Repeat, Repeat, Repeat, New, New]
        );
    }

    #[test]
    fn a_repeat_is_counted_again_without_refolding() {
        let p = Policy::default();
        let mut cache = QueryCache::default();
        let q = PyStr::from("google_search_x");
        let (_, first) = cache.lookup("google_search", &q, &p);
        assert!(first.folded.is_some());
        assert_eq!(first.first_made_at(), None, "new: made nowhere before");
        assert_eq!(first.first_went(), After::Unknown);
        cache.record(first.made_at(7).went(After::Empty));
        let (seen, again) = cache.lookup("google_search", &q, &p);
        assert_eq!(seen, Seen::Repeat);
        assert_eq!(again.folded, None);
        assert_eq!(again.first_made_at(), Some(7));
        assert_eq!(again.first_went(), After::Empty, "how the first run went");
        cache.record(again.made_at(9).went(After::Success));
        let e = cache.recorded["google_search"][&q];
        assert_eq!((e.times, e.first_line, e.after), (2, Some(7), After::Empty));
        assert_eq!(cache.recorded_folded["google_search"].len(), 1);
    }

    /// How a repeat of `q` stands after the attempts `fates` (each: it
    /// recorded `q` once, then was rolled back or not), and one more
    /// recording in the current attempt when `again_now`.
    fn repeat_after(fates: &[bool], again_now: bool) -> After {
        let p = Policy::default();
        let q = PyStr::from("google_search_x");
        let mut cache = QueryCache::default();
        for &rolled_back in fates {
            let (_, pending) = cache.lookup("google_search", &q, &p);
            cache.record(pending.went(After::Success));
            cache.end_attempt(rolled_back);
        }
        if again_now {
            let (_, pending) = cache.lookup("google_search", &q, &p);
            cache.record(pending.went(After::Success));
        }
        let (seen, pending) = cache.lookup("google_search", &q, &p);
        assert_eq!(seen, Seen::Repeat);
        pending.first_went()
    }

    #[test]
    fn repeats_of_rolled_back_runs_are_the_layers() {
        assert_eq!(repeat_after(&[true], false), After::RolledBack);
        assert_eq!(repeat_after(&[true, true], false), After::RolledBack);
        // One earlier run survived: the model had its result.
        assert_eq!(repeat_after(&[true, false], false), After::Success);
        assert_eq!(repeat_after(&[false, true], false), After::Success);
        // Asked twice within one attempt: the model's duplicate.
        assert_eq!(repeat_after(&[], true), After::Success);
        assert_eq!(repeat_after(&[true], true), After::Success);
    }

    #[test]
    fn per_turn_records_only_the_queries_of_kept_attempts() {
        let p = Policy::default();
        let q = PyStr::from("google_search_x");
        let mut cache = QueryCache::default();
        let (_, pending) = cache.lookup("google_search", &q, &p);
        cache.defer(pending.clone().went(After::Success));
        // Not recorded during its attempt: asking again there is new.
        assert_eq!(cache.lookup("google_search", &q, &p).0, Seen::New);
        cache.end_attempt(true);
        assert_eq!(cache.lookup("google_search", &q, &p).0, Seen::New);
        cache.defer(pending.went(After::Empty));
        cache.end_attempt(false);
        let (seen, again) = cache.lookup("google_search", &q, &p);
        assert_eq!((seen, again.first_went()), (Seen::Repeat, After::Empty));
        // A later rollback does not touch what was committed.
        cache.end_attempt(true);
        assert_eq!(
            cache.lookup("google_search", &q, &p).1.first_went(),
            After::Empty
        );
    }

    #[test]
    fn earlier_runs_a_log_alone_knows_keep_their_fate() {
        let p = Policy::default();
        let mut cache = QueryCache::default();
        for (q, rolled_back, want) in [
            ("google_search_a", true, After::RolledBack),
            ("google_search_b", false, After::Unknown),
        ] {
            let q = PyStr::from(q);
            let (_, pending) = cache.lookup("google_search", &q, &p);
            cache.record_earlier(pending, rolled_back);
            assert_eq!(cache.lookup("google_search", &q, &p).1.first_went(), want);
        }
    }
}
