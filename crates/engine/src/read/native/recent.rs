//! The last few distinct strings an input repeated (trace ids, sessions,
//! agents, models, system prompts), each shared as one `Arc<str>`: a line
//! that repeats one costs a comparison, not an allocation.

use std::sync::Arc;

/// Up to `N` strings, each with a value of its own; least recently used
/// first, so the newest is found first and the oldest is dropped.
#[derive(Debug)]
pub(super) struct Recent<V, const N: usize> {
    entries: Vec<(Arc<str>, V)>,
}

impl<V, const N: usize> Default for Recent<V, N> {
    fn default() -> Self {
        Recent {
            entries: Vec::with_capacity(N),
        }
    }
}

impl<V, const N: usize> Recent<V, N> {
    /// The shared copy of `text` and its value (made by `value` if `text`
    /// is new); `text` becomes the most recent.
    pub fn intern(&mut self, text: &str, value: impl FnOnce() -> V) -> (&Arc<str>, &mut V) {
        match self.entries.iter().rposition(|(t, _)| **t == *text) {
            Some(at) if at + 1 < self.entries.len() => {
                let entry = self.entries.remove(at);
                self.entries.push(entry);
            }
            Some(_) => {}
            None => {
                if self.entries.len() == N {
                    self.entries.remove(0);
                }
                self.entries.push((text.into(), value()));
            }
        }
        let (text, value) = self
            .entries
            .last_mut()
            .expect("an entry was just found or added");
        (text, value)
    }

    /// The shared copy of `text`.
    pub fn share(&mut self, text: &str) -> Arc<str>
    where
        V: Default,
    {
        self.intern(text, V::default).0.clone()
    }

    /// The entries, most recent first.
    pub fn newest_first(&self) -> impl Iterator<Item = &(Arc<str>, V)> {
        self.entries.iter().rev()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeats_are_shared_and_the_least_recent_goes_first() {
        let mut recent: Recent<u32, 2> = Recent::default();
        let a = recent.share("a");
        assert!(Arc::ptr_eq(&a, &recent.share("a")));
        *recent.intern("b", || 7).1 += 1;
        assert_eq!(*recent.intern("b", || 0).1, 8);
        recent.share("a"); // "b" is now the least recent
        recent.share("c");
        let names: Vec<&str> = recent.newest_first().map(|(t, _)| &**t).collect();
        assert_eq!(names, ["c", "a"]);
        assert!(Arc::ptr_eq(&a, &recent.share("a")));
        assert_eq!(*recent.intern("b", || 0).1, 0);
    }
}
