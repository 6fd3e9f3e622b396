//! `--fail-on` outcomes as every view shows them, `analyze` and `diff`
//! alike: the one-line result that comes first (the Markdown heading, the
//! terminal's first line, the page's title) and the list of rules, each
//! with the line that says why it fired or passed. The rules themselves
//! are parsed and evaluated by `diff::gate`.

use serde::Serialize;

use super::doc::{Block, Line, Section};

/// What one rule made of one comparison (`diff`) or run (`analyze`).
#[derive(Debug, Clone, Serialize)]
pub struct GateOutcome {
    pub rule: String,
    /// The group (`--group-by`) it was evaluated on; `None` for the whole.
    pub group: Option<String>,
    /// `fired`, `passed`, or `not_evaluated` (the figure is undefined).
    pub result: &'static str,
    pub fired: bool,
    /// Which figures made it fire or pass (or why it could not be evaluated).
    pub message: String,
}

/// Whether any rule fired.
pub fn any_fired(gates: &[GateOutcome]) -> bool {
    gates.iter().any(|g| g.fired)
}

/// `gate fired` or `gates passed`, the words a title starts with; `None`
/// without rules.
pub fn result_words(gates: &[GateOutcome]) -> Option<&'static str> {
    match gates {
        [] => None,
        _ if any_fired(gates) => Some("gate fired"),
        _ => Some("gates passed"),
    }
}

/// The first line of a report with rules: `gate fired: sig:refusal>+20%
/// (1 of 2 rules; exit 1)` or `gates passed: 2 rules, none fired`.
pub fn result_line(gates: &[GateOutcome]) -> Option<String> {
    let words = result_words(gates)?;
    let mut rules: Vec<&str> = Vec::new();
    for g in gates {
        if !rules.contains(&g.rule.as_str()) {
            rules.push(&g.rule);
        }
    }
    let mut fired: Vec<String> = Vec::new();
    for g in gates.iter().filter(|g| g.fired) {
        let text = match &g.group {
            Some(group) => format!("{} [{group}]", g.rule),
            None => g.rule.clone(),
        };
        if !fired.contains(&text) {
            fired.push(text);
        }
    }
    let n = rules.len();
    let plural = if n == 1 { "rule" } else { "rules" };
    let unevaluated = gates.iter().filter(|g| g.result == "not_evaluated").count();
    let tail = if unevaluated > 0 {
        format!(", {unevaluated} not evaluated")
    } else {
        String::new()
    };
    Some(if fired.is_empty() {
        format!("{words}: {n} {plural}, none fired{tail}")
    } else {
        let firing = rules
            .iter()
            .filter(|r| gates.iter().any(|g| g.fired && g.rule == **r))
            .count();
        format!(
            "{words}: {} ({firing} of {n} {plural}; exit 1{tail})",
            fired.join(", ")
        )
    })
}

/// The rules, one line each with its result and why.
pub fn section(gates: &[GateOutcome]) -> Section {
    let items = gates
        .iter()
        .map(|g| {
            let icon = match g.result {
                "fired" => "❌",
                "passed" => "✅",
                _ => "➖",
            };
            let mut line = Line::plain(format!("{icon} ")).code(&g.rule);
            if let Some(group) = &g.group {
                line = line.then(" (").code(group).then(")");
            }
            line.then(format!(" {}: {}", g.result.replace('_', " "), g.message))
        })
        .collect();
    Section {
        title: "Gates".into(),
        blocks: vec![Block::List(items)],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(rule: &str, group: Option<&str>, result: &'static str) -> GateOutcome {
        GateOutcome {
            rule: rule.into(),
            group: group.map(String::from),
            result,
            fired: result == "fired",
            message: String::new(),
        }
    }

    #[test]
    fn the_result_line_names_what_fired() {
        assert_eq!(result_line(&[]), None);
        let passed = [
            outcome("a>1", None, "passed"),
            outcome("b>1", None, "passed"),
        ];
        assert_eq!(
            result_line(&passed).as_deref(),
            Some("gates passed: 2 rules, none fired")
        );
        let fired = [
            outcome("a>1", Some("x"), "fired"),
            outcome("a>1", Some("y"), "passed"),
            outcome("b>1", Some("x"), "not_evaluated"),
            outcome("b>1", Some("y"), "passed"),
        ];
        assert_eq!(
            result_line(&fired).as_deref(),
            Some("gate fired: a>1 [x] (1 of 2 rules; exit 1, 1 not evaluated)")
        );
        assert_eq!(result_words(&fired), Some("gate fired"));
    }
}
