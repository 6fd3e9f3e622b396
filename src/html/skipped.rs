//! What the run skipped, on the page: the lines stderr printed (a reader
//! of the page never sees stderr), then the counts per kind.

use super::table;
use crate::render::skipped::Skipped;
use crate::render::Document;

/// The section's inner markup, or `None` when nothing was skipped.
pub fn inner(s: &Skipped) -> Option<String> {
    let mut section = s.section()?;
    // The page's own section heading names it.
    section.title = String::new();
    Some(table::view(&Document {
        title: String::new(),
        level: 2,
        headline: Vec::new(),
        sections: vec![section],
    }))
}
