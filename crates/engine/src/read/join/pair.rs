//! Pairs a run's recorded calls with the LLM calls its task log shows.
//!
//! The calls of one run are strictly sequential (a sub-agent runs inside
//! the main-agent turn that launched it), so the recording's order is the
//! step log's. Each logged call made one try, plus one per retry warning
//! of upstream's client before it; each try is one recorded call with the
//! SDK's own retries after it (`x-stainless-retry-count` ≥ 1). Tries and
//! logged tries are aligned in order, a try fitting a logged one when its
//! conversation is that session's (same system prompt and first user
//! message as the saved history; a session whose history was not saved
//! takes a conversation no saved session has). What the alignment leaves
//! over on either side is a disagreement, reported, never guessed away.

use super::fill::same_text;
use crate::model::{CallLog, CallPurpose, SessionOpening};
use crate::read::recording::conversation::is_summary;
use crate::read::recording::{CallResult, RecordedCall};

/// One try of upstream's client: the call, then the SDK's retries of it.
#[derive(Debug, Clone)]
pub struct Try<'r> {
    pub calls: Vec<&'r RecordedCall>,
}

impl<'r> Try<'r> {
    /// The call that answered (the last one).
    pub fn last(&self) -> &'r RecordedCall {
        self.calls[self.calls.len() - 1]
    }

    pub fn first(&self) -> &'r RecordedCall {
        self.calls[0]
    }
}

/// The alignment of a run with its log.
#[derive(Debug, Default)]
pub struct Pairing<'r> {
    /// For each logged call (`CallLog::calls`, same order): its tries, the
    /// retries first and its own last; `None` where no recorded try matched.
    pub tries: Vec<Vec<Option<Try<'r>>>>,
    /// Tries no logged call took.
    pub unknown: Vec<Try<'r>>,
}

/// The tries of a run, in the order the proxy received them.
pub fn tries(calls: &[RecordedCall]) -> Vec<Try<'_>> {
    let mut out: Vec<Try<'_>> = Vec::new();
    for c in calls {
        match out.last_mut() {
            Some(t) if c.sdk_retry > 0 => t.calls.push(c),
            _ => out.push(Try { calls: vec![c] }),
        }
    }
    out
}

/// Which saved sessions a conversation can be; `None` when the request
/// could not be read (it fits anywhere).
pub fn sessions_of<'o>(c: &RecordedCall, openings: &'o [SessionOpening]) -> Option<Vec<&'o str>> {
    if c.request.unreadable.is_some() {
        return None;
    }
    let first_user = c.request.first_user_text();
    Some(
        openings
            .iter()
            .filter(|o| {
                same(
                    o.system_prompt.as_deref(),
                    c.request.system_prompt.as_deref(),
                ) && same(o.first_user.as_deref(), first_user.as_deref())
            })
            .map(|o| o.session.as_str())
            .collect(),
    )
}

/// Two texts agree where both are known.
fn same(a: Option<&str>, b: Option<&str>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => a.trim() == b.trim(),
        _ => true,
    }
}

/// Whether a try answered with this text (a turn the history kept).
fn answered(t: &Try<'_>, text: &str) -> bool {
    match &t.last().result {
        CallResult::Answer(a) => same_text(text, &a.text),
        _ => false,
    }
}

/// Aligns the run's tries with the log's. `kept[i]` is the text the
/// message history kept for logged call `i` (a turn that survived): only
/// a try that answered it fits that call, which anchors the alignment
/// where conversations repeat (a popped turn's next request is the same).
pub fn pair<'r>(log: &CallLog, calls: &'r [RecordedCall], kept: &[Option<&str>]) -> Pairing<'r> {
    let tries = tries(calls);
    // The logged tries: (logged call, slot), each with its session.
    let mut slots: Vec<(usize, usize)> = Vec::new();
    for (i, c) in log.calls.iter().enumerate() {
        for k in 0..=c.retries.len() {
            slots.push((i, k));
        }
    }
    let saved: Vec<&str> = log.sessions.iter().map(|o| o.session.as_str()).collect();
    let labels: Vec<Option<Vec<&str>>> = tries
        .iter()
        .map(|t| sessions_of(t.first(), &log.sessions))
        .collect();
    let anchor = |slot: usize| -> Option<&str> {
        let (call, k) = slots[slot];
        let last = k == log.calls[call].retries.len();
        kept.get(call).copied().flatten().filter(|_| last)
    };
    let conversation = |slot: usize, t: usize| -> bool {
        let session = log.calls[slots[slot].0].session.as_str();
        match &labels[t] {
            None => true,
            Some(l) if saved.contains(&session) => l.contains(&session),
            Some(l) => l.is_empty(),
        }
    };
    // A summary call sends upstream's summary prompt last; a turn does not.
    let summary: Vec<Option<bool>> = tries
        .iter()
        .map(|t| {
            let request = &t.first().request;
            request.unreadable.is_none().then(|| is_summary(request))
        })
        .collect();
    let purpose = |slot: usize, t: usize| -> bool {
        let is_summary = log.calls[slots[slot].0].purpose == CallPurpose::Summary;
        summary[t].is_none_or(|s| s == is_summary)
    };
    let fits = |slot: usize, t: usize| -> bool {
        conversation(slot, t)
            && purpose(slot, t)
            && anchor(slot).is_none_or(|text| answered(&tries[t], text))
    };
    let (n, m) = (slots.len(), tries.len());
    let mut taken: Vec<Option<usize>> = vec![None; n];
    if (n + 1).saturating_mul(m + 1) > MAX_CELLS {
        greedy(n, m, &fits, &mut taken);
    } else {
        aligned(n, m, &fits, &|i| anchor(i).is_some(), &mut taken);
    }

    // A kept turn left without a try, and a try of its session left over
    // between the same neighbours: the same call, whose text differs from
    // the history's (the fill says so), not two disagreements.
    let mut used = vec![false; m];
    for j in taken.iter().flatten() {
        used[*j] = true;
    }
    for slot in 0..n {
        if taken[slot].is_some() || anchor(slot).is_none() {
            continue;
        }
        let lo = taken[..slot]
            .iter()
            .rev()
            .find_map(|t| *t)
            .map_or(0, |t| t + 1);
        let hi = taken[slot + 1..].iter().find_map(|t| *t).unwrap_or(m);
        let same_session =
            (lo..hi).find(|&t| !used[t] && conversation(slot, t) && purpose(slot, t));
        if let Some(t) = same_session {
            taken[slot] = Some(t);
            used[t] = true;
        }
    }
    let mut out = Pairing {
        tries: log
            .calls
            .iter()
            .map(|c| vec![None; c.retries.len() + 1])
            .collect(),
        unknown: Vec::new(),
    };
    for (slot, t) in taken.iter().enumerate() {
        if let Some(t) = t {
            let (call, k) = slots[slot];
            out.tries[call][k] = Some(tries[*t].clone());
        }
    }
    out.unknown = (0..m)
        .filter(|&t| !used[t])
        .map(|t| tries[t].clone())
        .collect();
    out
}

/// Beyond this many cells (slots × tries) the alignment is made in one
/// pass instead of by the longest common subsequence (its table would
/// take more than 32 MB).
const MAX_CELLS: usize = 8 << 20;

/// The longest common subsequence of slots and tries under `fits`, walked
/// forwards; a slot the history does not anchor gives way to a later one
/// that takes the same try as well.
fn aligned(
    n: usize,
    m: usize,
    fits: &dyn Fn(usize, usize) -> bool,
    anchored: &dyn Fn(usize) -> bool,
    taken: &mut [Option<usize>],
) {
    // From the end, so the walk goes forwards.
    let mut best = vec![0u32; (n + 1) * (m + 1)];
    let at = |i: usize, j: usize| i * (m + 1) + j;
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            let skip = best[at(i + 1, j)].max(best[at(i, j + 1)]);
            best[at(i, j)] = if fits(i, j) {
                skip.max(best[at(i + 1, j + 1)] + 1)
            } else {
                skip
            };
        }
    }
    // The walk: each slot's try, where one fits.
    let (mut i, mut j) = (0, 0);
    while i < n && j < m {
        // A call the history does not anchor gives way to a later one
        // that takes the same try as well.
        let gives_way = !anchored(i) && best[at(i + 1, j)] == best[at(i, j)];
        if fits(i, j) && best[at(i, j)] == best[at(i + 1, j + 1)] + 1 && !gives_way {
            taken[i] = Some(j);
            i += 1;
            j += 1;
        } else if best[at(i + 1, j)] >= best[at(i, j + 1)] {
            i += 1;
        } else {
            j += 1;
        }
    }
}

/// One pass for a very long run: a try that fits the slot is taken; one
/// that fits a slot a little further on leaves this slot without a try;
/// any other is left over.
fn greedy(n: usize, m: usize, fits: &dyn Fn(usize, usize) -> bool, taken: &mut [Option<usize>]) {
    const AHEAD: usize = 16;
    let (mut i, mut j) = (0, 0);
    while i < n && j < m {
        if fits(i, j) {
            taken[i] = Some(j);
            i += 1;
            j += 1;
        } else if (i + 1..n.min(i + 1 + AHEAD)).any(|k| fits(k, j)) {
            i += 1;
        } else {
            j += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_alignments_leave_out_what_does_not_fit() {
        // Slots a b c d; tries a x c d (b was dropped, x is foreign).
        let slots = ['a', 'b', 'c', 'd'];
        let tries = ['a', 'x', 'c', 'd'];
        let fits = |i: usize, j: usize| slots[i] == tries[j];
        let mut lcs = vec![None; 4];
        aligned(4, 4, &fits, &|_| true, &mut lcs);
        let mut one_pass = vec![None; 4];
        greedy(4, 4, &fits, &mut one_pass);
        assert_eq!(lcs, [Some(0), None, Some(2), Some(3)]);
        assert_eq!(one_pass, lcs);
    }
}
