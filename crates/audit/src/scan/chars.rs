//! The characters the per-line character rules look for (bidirectional controls, invisible
//! format characters, variation selectors that smuggle bytes), found in one line.

use crate::rules::{CharClass, MIN_SELECTOR_RUN};
use crate::text::detail;

/// The first offending character of `line` for a per-line class, and the detail.
pub(super) fn line_chars(class: CharClass, line: &str) -> Option<(usize, String)> {
    match class {
        CharClass::Tags => {
            let at = line
                .char_indices()
                .find(|(_, c)| matches!(c, '\u{e0000}'..='\u{e007f}'))?
                .0;
            let (_, removed) = skillet_skills::clean_description(line);
            if removed.tags == 0 {
                return None; // only subdivision flags
            }
            let found = if removed.hidden.is_empty() {
                format!("{} tag characters (no printable text)", removed.tags)
            } else {
                format!(
                    "{} tag characters; hidden text: \"{}\"",
                    removed.tags,
                    detail(&removed.hidden)
                )
            };
            Some((at, found))
        }
        CharClass::Bidi | CharClass::Separators => {
            let wanted = |c: char| match class {
                CharClass::Bidi => matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'),
                _ => matches!(c, '\u{2028}' | '\u{2029}'),
            };
            let mut found = line.char_indices().filter(|&(_, c)| wanted(c));
            let (at, c) = found.next()?;
            let count = 1 + found.count();
            Some((at, format!("{count} × U+{:04X} and alike", u32::from(c))))
        }
        CharClass::VariationRun => {
            let mut run: Vec<u8> = Vec::new();
            let mut run_start = 0;
            for (at, c) in line
                .char_indices()
                .chain(std::iter::once((line.len(), ' ')))
            {
                if let Some(byte) = selector_byte(c) {
                    if run.is_empty() {
                        run_start = at;
                    }
                    run.push(byte);
                    continue;
                }
                if run.len() >= MIN_SELECTOR_RUN {
                    let decoded: String = run
                        .iter()
                        .map(|&b| {
                            let c = char::from(b);
                            if c.is_ascii_graphic() || c == ' ' {
                                c
                            } else {
                                '.'
                            }
                        })
                        .collect();
                    return Some((
                        run_start,
                        format!(
                            "{} variation selectors in a row; as bytes: \"{}\"",
                            run.len(),
                            detail(&decoded)
                        ),
                    ));
                }
                run.clear();
            }
            None
        }
        CharClass::ZeroWidth => None,
    }
}

/// The byte a variation selector stands for in the "emoji smuggling" encoding: U+FE00–FE0F are
/// 0–15, U+E0100–E01EF are 16–255.
pub(super) fn selector_byte(c: char) -> Option<u8> {
    let code = u32::from(c);
    let byte = match code {
        0xfe00..=0xfe0f => code - 0xfe00,
        0xe0100..=0xe01ef => code - 0xe0100 + 16,
        _ => return None,
    };
    u8::try_from(byte).ok()
}
