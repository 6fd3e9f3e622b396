//! json_repair's `ObjectComparer`.

use super::parser::{Parser, R};
use crate::pyjson::Value;

/// `ObjectComparer.is_strictly_empty`: an empty str, list or dict.
pub(super) fn is_strictly_empty(v: &Value) -> bool {
    match v {
        Value::Str(s) => s.is_empty(),
        Value::List(l) => l.is_empty(),
        Value::Dict(d) => d.is_empty(),
        _ => false,
    }
}

impl Parser {
    /// `ObjectComparer.is_same_object`: same types all the way down, same
    /// dict keys, same list lengths; atoms of one type always match.
    /// Counts Python frames: one per dict level, three per list level (the
    /// `all()` call and its generator sit between the recursive calls).
    pub(super) fn is_same_object(&mut self, a: &Value, b: &Value) -> R<bool> {
        self.enter(1)?;
        let same = match (a, b) {
            (Value::Dict(x), Value::Dict(y)) => {
                let mut same = x.len() == y.len();
                for (k, v) in x {
                    if !same {
                        break;
                    }
                    same = match y.get(k) {
                        Some(w) => self.is_same_object(v, w)?,
                        None => false,
                    };
                }
                same
            }
            (Value::List(x), Value::List(y)) => {
                let mut same = x.len() == y.len();
                if same && !x.is_empty() {
                    self.enter(2)?;
                    for (v, w) in x.iter().zip(y) {
                        if !self.is_same_object(v, w)? {
                            same = false;
                            break;
                        }
                    }
                    self.leave(2);
                }
                same
            }
            _ => std::mem::discriminant(a) == std::mem::discriminant(b),
        };
        self.leave(1);
        Ok(same)
    }
}
