//! "Did you mean": the names closest to a mistyped one, found with a bounded edit distance.

/// The most "did you mean" names an unknown command gets.
const MAX_CLOSEST: usize = 3;
/// Names longer than this (in characters) are not compared for "did you mean", and an unknown
/// name is repeated cut to it: the work stays bounded whatever is typed.
pub(super) const MAX_COMPARED_NAME_CHARS: usize = 128;

/// The names closest to `name` (at most [`MAX_CLOSEST`]): within a small edit distance, or
/// starting with it. The work is bounded: a name (typed or offered) over
/// [`MAX_COMPARED_NAME_CHARS`] is not compared, nor one whose length is too far from the typed
/// one to be close, and each distance is computed in a band around the diagonal.
pub(super) fn closest<'a>(name: &str, candidates: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    let comparable = |text: &str| -> Option<Vec<char>> {
        if text.len() > 4 * MAX_COMPARED_NAME_CHARS {
            return None;
        }
        let chars: Vec<char> = text.to_lowercase().chars().collect();
        (chars.len() <= MAX_COMPARED_NAME_CHARS).then_some(chars)
    };
    let Some(wanted) = comparable(name).filter(|chars| !chars.is_empty()) else {
        return Vec::new();
    };
    let limit = (wanted.len() / 3).max(2);
    let mut scored: Vec<(usize, &str)> = candidates
        .filter_map(|candidate| {
            let offered = comparable(candidate)?;
            if let Some(distance) = distance_within(&wanted, &offered, limit) {
                return Some((distance, candidate));
            }
            (wanted.len() >= 2 && offered.starts_with(&wanted)).then_some((limit + 1, candidate))
        })
        .collect();
    scored.sort_unstable();
    scored.dedup_by(|a, b| a.1 == b.1);
    scored
        .into_iter()
        .take(MAX_CLOSEST)
        .map(|(_, candidate)| candidate)
        .collect()
}

/// The Levenshtein distance of `a` and `b` when it is at most `limit`, else `None`: only cells
/// within `limit` of the diagonal are computed, and a row all over the limit stops the work.
/// The candidate within `limit` edits of `name` (the closest, the first on a tie), compared
/// without case; names over [`MAX_COMPARED_NAME_CHARS`] are not compared.
pub(in crate::commands) fn closest_within<'a>(
    name: &str,
    candidates: impl Iterator<Item = &'a str>,
    limit: usize,
) -> Option<&'a str> {
    let chars = |text: &str| -> Option<Vec<char>> {
        let chars: Vec<char> = text.to_lowercase().chars().collect();
        (chars.len() <= MAX_COMPARED_NAME_CHARS).then_some(chars)
    };
    let wanted = chars(name)?;
    candidates
        .filter_map(|candidate| {
            distance_within(&wanted, &chars(candidate)?, limit)
                .map(|distance| (distance, candidate))
        })
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, candidate)| candidate)
}

fn distance_within(a: &[char], b: &[char], limit: usize) -> Option<usize> {
    if a.len().abs_diff(b.len()) > limit {
        return None;
    }
    let over = limit + 1;
    let mut previous: Vec<usize> = (0..=b.len()).map(|j| j.min(over)).collect();
    for (i, &from) in a.iter().enumerate() {
        let row = i + 1;
        let mut current = vec![over; b.len() + 1];
        current[0] = row.min(over);
        let low = row.saturating_sub(limit).max(1);
        let high = (row + limit).min(b.len());
        for j in low..=high {
            current[j] = (previous[j - 1] + usize::from(from != b[j - 1]))
                .min(previous[j] + 1)
                .min(current[j - 1] + 1)
                .min(over);
        }
        if current.iter().all(|&cell| cell > limit) {
            return None;
        }
        previous = current;
    }
    let distance = previous[b.len()];
    (distance <= limit).then_some(distance)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closest_names_are_few_and_close() {
        let names = [
            "model",
            "compact",
            "cost",
            "clear",
            "help",
            "pdf",
            "pdf-forms",
            "review",
        ];
        assert_eq!(closest("modle", names.into_iter()), ["model"]);
        assert_eq!(closest("cmpact", names.into_iter()), ["compact"]);
        assert_eq!(closest("pd", names.into_iter()), ["pdf", "pdf-forms"]);
        assert_eq!(closest("REVIEW", names.into_iter()), ["review"]);
        assert!(closest("zzzzzzzz", names.into_iter()).is_empty());
        assert!(closest("", names.into_iter()).is_empty());
        // At most MAX_CLOSEST, and a huge name is not compared at all.
        let many: Vec<String> = (0..20).map(|n| format!("cos{n}")).collect();
        assert_eq!(
            closest("cos", many.iter().map(String::as_str)).len(),
            MAX_CLOSEST
        );
        let huge = "a".repeat(10 * MAX_COMPARED_NAME_CHARS);
        assert!(closest(&huge, std::iter::once(huge.as_str())).is_empty());
    }

    #[test]
    fn banded_distance_matches_the_full_one() {
        fn full(a: &[char], b: &[char]) -> usize {
            let mut previous: Vec<usize> = (0..=b.len()).collect();
            for (i, &x) in a.iter().enumerate() {
                let mut current = vec![i + 1; b.len() + 1];
                for j in 1..=b.len() {
                    current[j] = (previous[j - 1] + usize::from(x != b[j - 1]))
                        .min(previous[j] + 1)
                        .min(current[j - 1] + 1);
                }
                previous = current;
            }
            previous[b.len()]
        }
        let words = [
            "", "a", "ab", "ba", "abc", "model", "modle", "mdoel", "compact", "cost", "kitten",
            "sitting", "flaw", "lawn",
        ];
        for a in words {
            for b in words {
                let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
                let exact = full(&a, &b);
                for limit in 0..4 {
                    let expected = (exact <= limit).then_some(exact);
                    assert_eq!(
                        distance_within(&a, &b, limit),
                        expected,
                        "{a:?} {b:?} {limit}"
                    );
                }
            }
        }
    }
}
