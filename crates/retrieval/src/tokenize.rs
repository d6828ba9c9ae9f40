//! Tokenisation for lexical ranking: lowercase, split on anything not a letter or digit, drop
//! a short list of function words, and (optionally) a light English stemmer.

/// Words too common in skill text and requests to tell skills apart.
const STOPWORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "can", "do", "for", "from", "how", "i", "if",
    "in", "into", "is", "it", "its", "me", "my", "of", "on", "or", "our", "so", "that", "the",
    "their", "them", "then", "this", "to", "us", "use", "used", "uses", "using", "was", "we",
    "what", "when", "where", "which", "while", "who", "will", "with", "you", "your", "skill",
    "should", "user", "users", "asks", "want", "wants", "need", "needs", "help", "any", "all",
];

/// How tokens are normalised.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Stemming {
    /// Tokens as they are.
    None,
    /// Strip common English suffixes (`-s`, `-es`, `-ing`, `-ed`, `-ly`, `-ies` → `-y`).
    #[default]
    Light,
}

/// The tokens of a text.
pub fn tokens(text: &str, stemming: Stemming) -> Vec<String> {
    let mut out = Vec::new();
    for word in text.split(|c: char| !c.is_alphanumeric()) {
        if word.is_empty() {
            continue;
        }
        let lower = word.to_lowercase();
        if STOPWORDS.contains(&lower.as_str()) {
            continue;
        }
        out.push(match stemming {
            Stemming::None => lower,
            Stemming::Light => stem(&lower),
        });
    }
    out
}

/// Whether stripping `suffix` from a word leaving `stem` is a plural or verb ending, not part of
/// the word ("status", "analysis", "databases" keep what they need).
fn suffix_applies(suffix: &str, stem: &str) -> bool {
    match suffix {
        "s" => !(stem.ends_with('s') || stem.ends_with('u') || stem.ends_with('i')),
        // "classes", "boxes", "matches"; but "notes" and "databases" only lose the "s".
        "es" => ["ss", "x", "z", "ch", "sh"]
            .iter()
            .any(|end| stem.ends_with(end)),
        _ => true,
    }
}

/// A light suffix stripper: enough to match "tests"/"testing"/"tested" to "test".
pub fn stem(word: &str) -> String {
    let chars = word.chars().count();
    if chars <= 3 || word.chars().any(|c| c.is_ascii_digit()) {
        return word.to_string();
    }
    for (suffix, replacement, min_stem) in [
        ("ies", "y", 2),
        ("ing", "", 3),
        ("ed", "", 3),
        ("es", "", 3),
        ("ly", "", 3),
        ("s", "", 3),
    ] {
        let Some(stem) = word.strip_suffix(suffix) else {
            continue;
        };
        if stem.chars().count() < min_stem || !suffix_applies(suffix, stem) {
            continue;
        }
        let mut stem = format!("{stem}{replacement}");
        // "running" → "runn" → "run"
        let bytes = stem.as_bytes();
        let n = bytes.len();
        if matches!(suffix, "ing" | "ed")
            && n >= 2
            && bytes[n - 1] == bytes[n - 2]
            && !matches!(bytes[n - 1], b'l' | b's' | b'z')
        {
            stem.pop();
        }
        return stem;
    }
    word.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_lowercases_and_drops_stopwords() {
        assert_eq!(
            tokens("Review my PR for SQL-injection holes!", Stemming::None),
            ["review", "pr", "sql", "injection", "holes"]
        );
    }

    #[test]
    fn light_stemming() {
        for (word, stem_) in [
            ("tests", "test"),
            ("testing", "test"),
            ("tested", "test"),
            ("queries", "query"),
            ("running", "run"),
            ("classes", "class"),
            ("analysis", "analysis"),
            ("status", "status"),
            ("pdfs", "pdf"),
            ("quickly", "quick"),
            ("k8s", "k8s"),
            ("bus", "bus"),
            ("notes", "note"),
            ("databases", "database"),
            ("matches", "match"),
            ("boxes", "box"),
        ] {
            assert_eq!(stem(word), stem_, "{word}");
        }
    }
}
