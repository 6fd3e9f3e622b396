//! Trace ids as a report lists them: an id that the report lists from more
//! than one file (two inputs each holding a `task-003`) is shown with its
//! file, `task-003 (a.jsonl)`, so the rows can be told apart without
//! opening them; an id from one file stays bare.

use std::collections::{BTreeMap, BTreeSet};

use crate::analyze::aggregate::Aggregate;

/// The ids that the worst traces and the longest streaks list from more
/// than one file.
pub fn ambiguous(a: &Aggregate) -> BTreeSet<String> {
    let mut files: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    let listed = a
        .worst_traces
        .items()
        .iter()
        .map(|t| (t.trace_id.as_str(), &*t.file))
        .chain(
            a.longest_streaks
                .items()
                .iter()
                .map(|s| (s.trace_id.as_str(), &*s.file)),
        );
    for (id, file) in listed {
        files.entry(id).or_default().insert(file);
    }
    files
        .into_iter()
        .filter(|(_, f)| f.len() > 1)
        .map(|(id, _)| id.to_string())
        .collect()
}

/// `id`, or `id (file)` when `id` is in `ambiguous`.
pub fn label(id: &str, file: &str, ambiguous: &BTreeSet<String>) -> String {
    if ambiguous.contains(id) {
        format!("{id} ({file})")
    } else {
        id.to_string()
    }
}

/// `id`, or `id in file` when `id` is in `ambiguous` (for a sentence,
/// where [`label`]'s parentheses would clash with the sentence's own).
pub fn in_sentence(id: &str, file: &str, ambiguous: &BTreeSet<String>) -> String {
    if ambiguous.contains(id) {
        format!("{id} in {file}")
    } else {
        id.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_id_from_several_files_names_its_file() {
        let set: BTreeSet<String> = ["t1".to_string()].into();
        assert_eq!(label("t1", "a.jsonl", &set), "t1 (a.jsonl)");
        assert_eq!(label("t2", "a.jsonl", &set), "t2");
    }
}
