//! json_repair's `JsonContext`: a stack of where the parser is.
//!
//! Entries are pushed and popped exactly where Python does it, including the
//! places where json_repair forgets to pop (an object that ends right after
//! a key leaves `ObjectKey` behind); later decisions read the whole stack.

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Ctx {
    ObjectKey,
    ObjectValue,
    Array,
}

#[derive(Default, Debug)]
pub(super) struct Context {
    stack: Vec<Ctx>,
    /// How many entries of each kind the stack holds (it can grow with the
    /// input, so membership is counted rather than searched).
    counts: [usize; 3],
}

impl Context {
    /// `context.set(value)`.
    pub fn set(&mut self, value: Ctx) {
        self.stack.push(value);
        self.counts[value as usize] += 1;
    }

    /// `context.reset()`: pops the newest entry (no-op when empty).
    pub fn reset(&mut self) {
        if let Some(value) = self.stack.pop() {
            self.counts[value as usize] -= 1;
        }
    }

    /// `context.current`.
    pub fn current(&self) -> Option<Ctx> {
        self.stack.last().copied()
    }

    /// `context.empty`.
    pub fn is_empty(&self) -> bool {
        self.stack.is_empty()
    }

    /// `value in context.context`.
    pub fn contains(&self, value: Ctx) -> bool {
        self.counts[value as usize] > 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reset_on_empty_is_harmless() {
        let mut c = Context::default();
        c.reset();
        assert!(c.is_empty());
        c.set(Ctx::Array);
        c.set(Ctx::ObjectKey);
        assert_eq!(c.current(), Some(Ctx::ObjectKey));
        c.reset();
        assert_eq!(c.current(), Some(Ctx::Array));
        assert!(!c.contains(Ctx::ObjectKey));
        c.reset();
        assert!(c.is_empty() && c.current().is_none());
    }
}
