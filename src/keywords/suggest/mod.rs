//! Mining candidate refusal phrases.
//!
//! Refusals can only fire on answers without a tool call, and upstream's
//! list misses some of them: those end the loop as ordinary `final`
//! answers. So phrases are contrasted between two kinds of text:
//!
//! * *foreground*: refusal-eligible answers (no parsed tool call, no MCP
//!   tag) that do not give a final answer (`\boxed{…}`, MiroThinker's answer
//!   format), whether the current list flags them or not;
//! * *background*: the visible text of tool-calling attempts, and answers
//!   that give a boxed final answer ("I can't be certain, but the answer is
//!   \boxed{7}" is a hedge, not a refusal).
//!
//! With labels, a labelled attempt goes by its label instead (refusal →
//! foreground, not → background).
//!
//! Texts are cut to what the model says (`<think>` and MCP blocks removed)
//! and split into sentences. Candidates are word n-grams (1–6 words,
//! lowercased, apostrophes folded, inner punctuation kept, so a phrase
//! matches as a `normalized` substring) and, for CJK text, character
//! n-grams (2–4 characters). Each is scored by a smoothed log-ratio of its
//! document frequency in foreground vs background, times log support,
//! preferring 2–5 word phrases and phrases that carry an apology or
//! inability marker (a small multilingual lexicon) over content words.
//! Phrases with the same documents as a better one are dropped, and phrases
//! whose documents are mostly covered by better ones move behind those that
//! find new documents, so the top of the ranking reads as a short list.
//! Everything is deterministic (ties break on the phrase).
//!
//! [`text`] cuts answers into candidate phrases, [`cues`] knows what reads
//! as a refusal, [`miner`] ranks the candidates, [`near_miss`] finds the
//! current keywords written slightly differently.

pub mod cues;
pub mod miner;
pub mod near_miss;
pub mod text;

pub use cues::{looks_like_refusal, refusal_cue, Cue};
pub use miner::{background_doc, ForegroundDoc, LeftOut, Miner, Suggestion};
pub use near_miss::{near_misses_in, variations, NearMiss, NearMisses, Variation};
pub use text::{
    gives_final_answer, grams, is_placeholder, key_hash, mined_part, visible_text, Gram, GramKind,
    PLACEHOLDERS,
};
