//! What a session cost, for `/cost`: the list prices of common Anthropic and OpenAI models.
//!
//! Prices change; an unknown model (or a newer one than this table) gets no price rather than a
//! guessed one.

use skillet_llm::Usage;

/// A model's list price in US dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Price {
    /// Input tokens not read from or written to the cache.
    pub input: f64,
    /// Output tokens.
    pub output: f64,
    /// Input tokens written to the prompt cache (Anthropic's 5-minute cache; OpenAI charges
    /// the input price).
    pub cache_write: f64,
    /// Input tokens read from the prompt cache.
    pub cache_read: f64,
}

/// Tokens in the unit the prices are given for.
const TOKENS_PER_PRICE_UNIT: f64 = 1_000_000.0;

const fn price(input: f64, output: f64, cache_write: f64, cache_read: f64) -> Price {
    Price {
        input,
        output,
        cache_write,
        cache_read,
    }
}

/// List prices (USD per million tokens), as Anthropic and OpenAI published them at the end of
/// 2025 (newer models, and any price changed since, are not here: they show as unknown). A
/// name matches an entry when it is the entry or the entry followed by a dated
/// snapshot (`claude-sonnet-4-20250514`, `gpt-4.1-2025-04-14`): `claude-opus-4-6` is not
/// `claude-opus-4`.
pub const PRICES: &[(&str, Price)] = &[
    // Anthropic: input, output, cache write (5 minutes), cache read.
    ("claude-opus-4-5", price(5.0, 25.0, 6.25, 0.50)),
    ("claude-opus-4-1", price(15.0, 75.0, 18.75, 1.50)),
    ("claude-opus-4", price(15.0, 75.0, 18.75, 1.50)),
    ("claude-opus-4-0", price(15.0, 75.0, 18.75, 1.50)),
    ("claude-sonnet-4-5", price(3.0, 15.0, 3.75, 0.30)),
    ("claude-sonnet-4", price(3.0, 15.0, 3.75, 0.30)),
    ("claude-sonnet-4-0", price(3.0, 15.0, 3.75, 0.30)),
    ("claude-3-7-sonnet", price(3.0, 15.0, 3.75, 0.30)),
    ("claude-haiku-4-5", price(1.0, 5.0, 1.25, 0.10)),
    ("claude-3-5-haiku", price(0.80, 4.0, 1.0, 0.08)),
    // OpenAI: input, output, (input again: no cache write charge), cached input.
    ("gpt-5", price(1.25, 10.0, 1.25, 0.125)),
    ("gpt-5-mini", price(0.25, 2.0, 0.25, 0.025)),
    ("gpt-5-nano", price(0.05, 0.40, 0.05, 0.005)),
    ("gpt-4.1", price(2.0, 8.0, 2.0, 0.50)),
    ("gpt-4.1-mini", price(0.40, 1.60, 0.40, 0.10)),
    ("gpt-4.1-nano", price(0.10, 0.40, 0.10, 0.025)),
    ("gpt-4o", price(2.50, 10.0, 2.50, 1.25)),
    ("gpt-4o-mini", price(0.15, 0.60, 0.15, 0.075)),
    ("o1", price(15.0, 60.0, 15.0, 7.50)),
    ("o3", price(2.0, 8.0, 2.0, 0.50)),
    ("o3-mini", price(1.10, 4.40, 1.10, 0.55)),
    ("o4-mini", price(1.10, 4.40, 1.10, 0.275)),
];

/// The list price of a model, when [`PRICES`] knows it (case does not matter).
pub fn price_of(model: &str) -> Option<Price> {
    let model = model.to_ascii_lowercase();
    PRICES
        .iter()
        .find(|(name, _)| {
            model == *name
                || model
                    .strip_prefix(name)
                    .and_then(|rest| rest.strip_prefix('-'))
                    .is_some_and(is_snapshot_date)
        })
        .map(|(_, price)| *price)
}

/// `20250514` or `2025-04-14`: a dated snapshot of the same model.
fn is_snapshot_date(rest: &str) -> bool {
    let digits: String = rest.chars().filter(|c| *c != '-').collect();
    digits.len() == 8
        && digits.chars().all(|c| c.is_ascii_digit())
        && rest.chars().all(|c| c.is_ascii_digit() || c == '-')
}

/// What `usage` cost at `price`, in dollars.
#[expect(
    clippy::cast_precision_loss,
    reason = "token counts stay far below 2^52; the result is shown to the cent"
)]
pub fn cost(usage: &Usage, price: &Price) -> f64 {
    (usage.input_tokens as f64 * price.input
        + usage.output_tokens as f64 * price.output
        + usage.cache_write_tokens as f64 * price.cache_write
        + usage.cache_read_tokens as f64 * price.cache_read)
        / TOKENS_PER_PRICE_UNIT
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_snapshots_match_and_newer_models_do_not() {
        let sonnet = price(3.0, 15.0, 3.75, 0.30);
        assert_eq!(price_of("claude-sonnet-4-5"), Some(sonnet));
        assert_eq!(price_of("claude-sonnet-4-5-20250929"), Some(sonnet));
        assert_eq!(price_of("Claude-Sonnet-4-20250514"), Some(sonnet));
        assert_eq!(
            price_of("claude-opus-4-5"),
            Some(price(5.0, 25.0, 6.25, 0.50))
        );
        assert_eq!(
            price_of("claude-opus-4-20250514"),
            Some(price(15.0, 75.0, 18.75, 1.50))
        );
        assert_eq!(
            price_of("gpt-4.1-2025-04-14"),
            Some(price(2.0, 8.0, 2.0, 0.50))
        );
        assert_eq!(
            price_of("gpt-4.1-mini"),
            Some(price(0.40, 1.60, 0.40, 0.10))
        );
        assert_eq!(
            price_of("gpt-4o-mini"),
            Some(price(0.15, 0.60, 0.15, 0.075))
        );
        // Not priced: a newer version, a local model, a lookalike.
        assert_eq!(price_of("claude-opus-4-6"), None);
        assert_eq!(price_of("llama3.2"), None);
        assert_eq!(price_of("gpt-4o-mini-tts"), None);
        assert_eq!(price_of("o3-pro"), None);
    }

    #[test]
    fn cost_adds_every_kind_of_token() {
        let usage = Usage {
            input_tokens: 1_000_000,
            output_tokens: 100_000,
            cache_write_tokens: 200_000,
            cache_read_tokens: 2_000_000,
        };
        let dollars = cost(&usage, &price_of("claude-sonnet-4-5").unwrap());
        // 3 + 1.5 + 0.75 + 0.6
        assert!((dollars - 5.85).abs() < 1e-9, "{dollars}");
    }
}
