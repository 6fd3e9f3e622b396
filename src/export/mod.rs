//! Writing replayed traces in other tools' formats (`mirotrace export`).
//! Above the replay: what is written includes its verdicts.

pub mod atif;
pub mod examples;
