//! `--prices FILE`: what tokens cost, per model, to turn the cost figures
//! into money. Nothing is bundled (prices change); a model the file does
//! not price is named as unpriced and left out of the sums, never priced
//! at a guess.
//!
//! ```toml
//! # USD (or any currency) per million tokens
//! [models."gpt-4o"]
//! input = 2.5
//! output = 10.0
//! ```

use std::collections::BTreeMap;
use std::path::Path;

use super::cost::{CostSums, CostTally};
use crate::detect::Reason;

/// Largest prices file read.
const MAX_BYTES: u64 = 1 << 20;

/// Why a prices file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum PricesError {
    #[error("cannot read the prices file {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("the prices file {path} is larger than 1 MiB")]
    TooLarge { path: String },
    #[error("the prices file {path} is not valid: {message}")]
    Invalid { path: String, message: String },
}

/// The price of a million tokens of one model.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Price {
    pub input: f64,
    pub output: f64,
}

/// Prices per model name (`meta.model` as recorded).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Prices {
    pub models: BTreeMap<String, Price>,
}

impl Prices {
    pub fn load(path: &Path) -> Result<Prices, PricesError> {
        let name = path.display().to_string();
        let read = |source| PricesError::Read {
            path: name.clone(),
            source,
        };
        // One bounded reader for every side file: `/dev/zero` or `<(yes)`
        // is refused within the limit, not read whole.
        let text = crate::policy::read_side_file(path, MAX_BYTES).map_err(|e| {
            if e.kind() == std::io::ErrorKind::InvalidData && e.to_string().starts_with("larger") {
                PricesError::TooLarge { path: name.clone() }
            } else {
                read(e)
            }
        })?;
        Prices::parse(&text).map_err(|message| PricesError::Invalid {
            path: name,
            message,
        })
    }

    pub fn parse(text: &str) -> Result<Prices, String> {
        let prices: Prices = toml::from_str(text).map_err(|e| e.to_string().trim().to_string())?;
        prices.validate()?;
        Ok(prices)
    }

    /// Every price a non-negative number (a partial's prices are checked
    /// as a prices file's are).
    pub fn validate(&self) -> Result<(), String> {
        for (model, p) in &self.models {
            if !(p.input.is_finite() && p.output.is_finite() && p.input >= 0.0 && p.output >= 0.0) {
                return Err(format!(
                    "model {model:?}: prices must be non-negative numbers"
                ));
            }
        }
        Ok(())
    }

    /// The money of every model's attempts, over the priced models.
    pub fn money(&self, by_model: &BTreeMap<String, CostTally>) -> Money {
        let mut m = Money::default();
        for (model, c) in by_model {
            let Some(p) = self.models.get(model) else {
                if c.total.attempts > 0 {
                    m.unpriced_models.push(model.clone());
                }
                continue;
            };
            m.priced_models.push(model.clone());
            add(&mut m.total, p.of(&c.total));
            add(&mut m.discarded, p.of(&c.discarded));
            add(&mut m.failed, p.of(&c.failed));
            for r in Reason::ALL {
                add(
                    m.by_reason.entry(r.name()).or_insert(None),
                    p.of(c.reason(r)),
                );
            }
        }
        m
    }
}

/// Adds a known sum to a sum that is known once one part of it is.
fn add(sum: &mut Option<f64>, part: Option<f64>) {
    if let Some(part) = part {
        *sum = Some(sum.unwrap_or(0.0) + part);
    }
}

impl Price {
    /// The money of a set of attempts' recorded tokens: unknown (`None`)
    /// when no attempt of the set recorded a token count, never 0.
    pub fn of(&self, c: &CostSums) -> Option<f64> {
        (c.input_known > 0 || c.output_known > 0).then(|| {
            (c.input_tokens as f64 * self.input + c.output_tokens as f64 * self.output) / 1e6
        })
    }
}

/// Cost figures in money (the prices file's currency). A sum no priced
/// attempt recorded tokens for is unknown (`None`: `null` in JSON, `–`
/// in tables), never 0.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct Money {
    pub total: Option<f64>,
    pub discarded: Option<f64>,
    pub failed: Option<f64>,
    pub by_reason: BTreeMap<&'static str, Option<f64>>,
    pub priced_models: Vec<String>,
    /// Models with attempts that the file does not price (in no sum).
    pub unpriced_models: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_prices_and_rejects_what_it_cannot_use() {
        let p = Prices::parse("[models.\"m\"]\ninput = 2.0\noutput = 8.0\n").expect("valid");
        assert_eq!(p.models["m"].input, 2.0);
        assert!(
            Prices::parse("[models.m]\ninput = 1.0\n").is_err(),
            "output missing"
        );
        assert!(Prices::parse("[models.m]\ninput = -1.0\noutput = 1.0\n").is_err());
        assert!(Prices::parse("[models.m]\ninput = 1\noutput = 1\ncache = 2\n").is_err());
    }

    #[test]
    fn money_over_priced_models_only() {
        let p = Prices::parse("[models.m]\ninput = 2.0\noutput = 8.0\n").expect("valid");
        let mut by_model = BTreeMap::new();
        let mut m = CostTally::default();
        m.total.attempts = 1;
        m.total.input_known = 1;
        m.total.input_tokens = 1_000_000;
        m.total.output_known = 1;
        m.total.output_tokens = 500_000;
        by_model.insert("m".to_string(), m);
        let mut other = CostTally::default();
        other.total.attempts = 3;
        by_model.insert("x".to_string(), other);
        let money = p.money(&by_model);
        assert_eq!(money.total, Some(2.0 + 4.0));
        assert_eq!(money.unpriced_models, vec!["x".to_string()]);
        // Nothing discarded: no attempt recorded anything there, unknown.
        assert_eq!(money.discarded, None);
    }

    #[test]
    fn money_of_attempts_without_usage_is_unknown_not_zero() {
        let p = Prices::parse("[models.m]\ninput = 2.0\noutput = 8.0\n").expect("valid");
        let mut m = CostTally::default();
        m.total.attempts = 5;
        let by_model = BTreeMap::from([("m".to_string(), m)]);
        let money = p.money(&by_model);
        assert_eq!(money.total, None);
        assert_eq!(money.failed, None);
        assert!(money.by_reason.values().all(Option::is_none));
        assert_eq!(money.priced_models, vec!["m".to_string()]);
    }
}
