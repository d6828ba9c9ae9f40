//! A fast path for the frontmatter shapes nearly every skill uses: `key: value` lines with plain
//! or simply quoted string values, and one level of nested `key: value` mappings (`metadata:`).
//!
//! It accepts only text whose meaning under the real YAML parser is certain, and returns `None`
//! for anything else (block scalars, lists, flow collections, escapes, comments after values,
//! anything that could be a number, boolean or null, duplicate keys), so the caller falls back
//! to the real parser. A differential test over the corpus checks that whenever it answers, the
//! real parser gives the same mapping. It exists because discovery parses thousands of
//! frontmatters at startup and the real parser costs about 10 µs each.

use yaml_serde::{Mapping, Value};

/// Parses `yaml` if it is made only of the simple shapes; `None` means "ask the real parser".
pub(crate) fn parse_simple_mapping(yaml: &str) -> Option<Mapping> {
    let lines: Vec<&str> = yaml
        .split('\n')
        .map(|line| line.strip_suffix('\r').unwrap_or(line))
        .collect();
    let mut top = Mapping::new();
    // The key of a nested mapping being filled, its indentation, and its entries.
    let mut nested: Option<(String, usize, Mapping)> = None;
    let mut index = 0;
    while index < lines.len() {
        let line = lines[index];
        index += 1;
        if line.contains(['\t', '\r']) {
            return None;
        }
        if line.trim().is_empty() || line.starts_with('#') {
            continue; // blank and comment lines
        }
        let indent = line.len() - line.trim_start_matches(' ').len();
        if indent > 0 {
            let (_, nested_indent, entries) = nested.as_mut()?;
            if *nested_indent == 0 {
                *nested_indent = indent;
            } else if indent != *nested_indent {
                return None;
            }
            let (key, value) = entry(&line[indent..])?;
            insert(entries, key, scalar_value(value?)?)?;
            continue;
        }
        if let Some((key, _, entries)) = nested.take() {
            insert(&mut top, key, nested_value(entries)?)?;
        }
        let (key, value) = entry(line)?;
        match value {
            None => nested = Some((key, 0, Mapping::new())),
            Some(value) => {
                let value = match BlockStyle::of(value) {
                    Some(style) => {
                        let (text, used) = block_scalar(style, &lines[index..])?;
                        index += used;
                        Value::String(text)
                    }
                    None => scalar_value(value)?,
                };
                insert(&mut top, key, value)?;
            }
        }
    }
    if let Some((key, _, entries)) = nested {
        insert(&mut top, key, nested_value(entries)?)?;
    }
    (!top.is_empty()).then_some(top)
}

/// `key:` with nothing under it is null: not ours to decide.
fn nested_value(entries: Mapping) -> Option<Value> {
    (!entries.is_empty()).then_some(Value::Mapping(entries))
}

/// A block scalar header without indentation or keep indicators.
#[derive(Clone, Copy)]
enum BlockStyle {
    Literal { strip: bool },
    Folded { strip: bool },
}

impl BlockStyle {
    fn of(value: &str) -> Option<Self> {
        match value {
            "|" => Some(Self::Literal { strip: false }),
            "|-" => Some(Self::Literal { strip: true }),
            ">" => Some(Self::Folded { strip: false }),
            ">-" => Some(Self::Folded { strip: true }),
            _ => None,
        }
    }
}

/// Reads a top-level block scalar from the lines after its header: every line indented the
/// same, no blank lines inside, no trailing spaces (the cases where folding has no subtleties).
/// Returns the text and how many lines it used.
fn block_scalar(style: BlockStyle, lines: &[&str]) -> Option<(String, usize)> {
    let mut content: Vec<&str> = Vec::new();
    let mut indent = 0;
    let mut used = 0;
    for line in lines {
        let this_indent = line.len() - line.trim_start_matches(' ').len();
        if line.trim().is_empty() {
            // A blank line may only end the block (before the next key or the end).
            if lines[used..].iter().all(|rest| rest.trim().is_empty())
                || lines
                    .get(used + 1)
                    .is_some_and(|next| !next.starts_with(' '))
            {
                break;
            }
            return None;
        }
        if this_indent == 0 {
            break;
        }
        if indent == 0 {
            indent = this_indent;
        }
        if this_indent != indent || line.ends_with(' ') || line.contains(['\t', '\r']) {
            return None;
        }
        content.push(&line[indent..]);
        used += 1;
    }
    if content.is_empty()
        || content
            .iter()
            .any(|line| line.chars().any(char::is_control))
    {
        return None;
    }
    let (separator, strip) = match style {
        BlockStyle::Literal { strip } => ("\n", strip),
        BlockStyle::Folded { strip } => (" ", strip),
    };
    let mut text = content.join(separator);
    if !strip {
        text.push('\n');
    }
    Some((text, used))
}

/// Inserts, refusing duplicate keys (which the real parser rejects).
fn insert(mapping: &mut Mapping, key: String, value: Value) -> Option<()> {
    mapping
        .insert(Value::String(key), value)
        .is_none()
        .then_some(())
}

/// Splits `key: value` (or `key:` opening a nested mapping, value `None`).
fn entry(line: &str) -> Option<(String, Option<&str>)> {
    let colon = line.find(':')?;
    let key = &line[..colon];
    if !is_plain_key(key) {
        return None;
    }
    let rest = &line[colon + 1..];
    if rest.is_empty() {
        return Some((key.to_string(), None));
    }
    let value = rest.strip_prefix(' ')?.trim_matches(' ');
    if value.is_empty() {
        return Some((key.to_string(), None));
    }
    Some((key.to_string(), Some(value)))
}

fn is_plain_key(key: &str) -> bool {
    let mut chars = key.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        && !is_typed_word(key)
}

/// A scalar: `true`/`false`, a plain decimal integer, or a string.
fn scalar_value(value: &str) -> Option<Value> {
    match value {
        "true" | "True" | "TRUE" => return Some(Value::Bool(true)),
        "false" | "False" | "FALSE" => return Some(Value::Bool(false)),
        _ => {}
    }
    if let Some(inner) = value.strip_prefix('[') {
        return flow_sequence(inner.strip_suffix(']')?);
    }
    let digits = value.strip_prefix('-').unwrap_or(value);
    let is_plain_integer = !digits.is_empty()
        && digits.len() < 18
        && digits.bytes().all(|b| b.is_ascii_digit())
        && (digits == "0" || !digits.starts_with('0'));
    if is_plain_integer {
        return value.parse::<i64>().ok().map(Value::from);
    }
    string_value(value).map(Value::String)
}

/// `[a, b]` of plain items (no quotes or nested collections).
fn flow_sequence(inner: &str) -> Option<Value> {
    if inner.contains(['[', ']', '{', '}', '"', '\'']) {
        return None;
    }
    if inner.trim().is_empty() {
        return Some(Value::Sequence(Vec::new()));
    }
    inner
        .split(',')
        .map(|item| scalar_value(item.trim_matches(' ')))
        .collect::<Option<Vec<Value>>>()
        .map(Value::Sequence)
}

/// A value's string, for plain scalars and quotes without escapes.
fn string_value(value: &str) -> Option<String> {
    if value.chars().any(char::is_control) {
        return None;
    }
    if let Some(inner) = value.strip_prefix('"') {
        let inner = inner.strip_suffix('"')?;
        return (!inner.contains(['"', '\\'])).then(|| inner.to_string());
    }
    if let Some(inner) = value.strip_prefix('\'') {
        let inner = inner.strip_suffix('\'')?;
        // Inside single quotes, `''` is a quote; a lone `'` would end the scalar early.
        return (!inner.replace("''", "").contains('\'')).then(|| inner.replace("''", "'"));
    }
    let first = value.chars().next()?;
    if "-?:,[]{}#&*!|>'\"%@`".contains(first)
        || value.contains(": ")
        || value.contains(" #")
        || value.ends_with(':')
        || is_typed_word(value)
        || may_be_number(value)
    {
        return None;
    }
    Some(value.to_string())
}

/// Words YAML 1.1 or 1.2 reads as booleans or null.
fn is_typed_word(word: &str) -> bool {
    matches!(
        word.to_ascii_lowercase().as_str(),
        "true" | "false" | "yes" | "no" | "on" | "off" | "y" | "n" | "null" | "~"
    )
}

/// Anything a permissive reader could take for a number (ints with signs, underscores or radix
/// prefixes, floats, `.inf`, `.nan`). `1.0.2` is not one.
fn may_be_number(value: &str) -> bool {
    let unsigned = value.trim_start_matches(['+', '-']);
    let starts_numeric = unsigned
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_digit() || c == '.');
    if !starts_numeric {
        return false;
    }
    value.parse::<f64>().is_ok()
        || unsigned.starts_with("0x")
        || unsigned.starts_with("0o")
        || unsigned.starts_with("0b")
        || matches!(unsigned.to_ascii_lowercase().as_str(), ".inf" | ".nan")
        || (unsigned
            .chars()
            .all(|c| c.is_ascii_digit() || c == '_' || c == '.')
            && unsigned.matches('.').count() <= 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whenever the fast path answers, the real parser must give the same mapping.
    fn agrees(yaml: &str) -> bool {
        match parse_simple_mapping(yaml) {
            None => false,
            Some(fast) => {
                let real: Value = yaml_serde::from_str(yaml).unwrap();
                assert_eq!(Value::Mapping(fast), real, "fast path differs on {yaml:?}");
                true
            }
        }
    }

    #[test]
    fn simple_shapes_are_taken_and_match_the_real_parser() {
        for yaml in [
            "name: pdf\ndescription: Work with PDF files, e.g. forms.\n",
            "name: a\r\ndescription: \"Quoted: with colon\"\r\n",
            "name: a\ndescription: 'It''s fine'\nlicense: Apache-2.0\n",
            "name: a\n\n# comment line\ndescription: x#y\n",
            "name: a\nmetadata:\n  author: me\n  version: v1\ndescription: d\n",
            "name: a\nmetadata:\n    short-description: Deep indent\n",
            "name: a\ndescription: ends with spaces   \n",
            "name: a\ndescription: uses < and > and & and 'quotes' inside\n",
            "name: a\ndescription: Über schnell, 技能\n",
            "name: a\nversion: 1.0.2\n",
            "name: a\ntags: [docs, writing tools, 3]\nrequires:\n  mcp: [rube]\nempty: []\n",
            "name: a\ndisable-model-invocation: true\nuser-invocable: False\n",
            "name: a\ncount: 12\nneg: -3\nzero: 0\nmetadata:\n  a: 1\n",
            "name: a\ndescription: >-\n  folded line one\n  line two\nlicense: MIT\n",
            "name: a\ndescription: >\n  folded, clipped\n  two\n\nlicense: MIT\n",
            "name: a\ndescription: |\n  literal\n  lines\n",
            "name: a\ndescription: |-\n    deeper: indent\n    kept\n",
            "description: >-\n  at the end\n",
        ] {
            assert!(agrees(yaml), "{yaml:?} should take the fast path");
        }
    }

    #[test]
    fn anything_uncertain_falls_back() {
        for yaml in [
            "name: a\ndescription: >-\n  folded\n\n  with a blank line\n",
            "name: a\ndescription: >\n  more\n    indented\n",
            "name: a\ndescription: |+\n  keep\n",
            "name: a\ndescription: >2\n  indicator\n",
            "name: a\nmetadata:\n  note: |\n    nested block\n",
            "name: a\ntags: [a, [b]]\n",
            "name: a\ntags: [a, 'b, c']\n",
            "name: a\ntags: [a, , b]\n",
            "name: a\ntags:\n  - a\n",
            "name: a\ndescription: Use when: x\n",
            "name: a\ndescription: value # comment\n",
            "name: a\ndescription: \"escaped \\\" quote\"\n",
            "name: a\nversion: 1.0\n",
            "name: a\nversion: 1_000\n",
            "name: a\nversion: 0x1F\n",
            "name: a\nversion: .inf\n",
            "name: a\ncount: 012\n",
            "name: a\nflag: yes\n",
            "name: a\nflag: tRue\n",
            "name: a\nnothing: ~\n",
            "name: a\nempty:\n",
            "name: a\nname: b\n",
            "name: a\nmetadata:\n  a: x\n    b: y\n",
            "name: a\nmetadata:\n  nested:\n    deep: x\n",
            "name: a\n\tdescription: tab\n",
            "name: &anchor a\n",
            "name: a\ndescription: 'unbalanced ' quote'\n",
            "- list\n",
            "true: x\n",
            "123: x\n",
            "name: a\ndescription: multi\n  line plain\n",
        ] {
            assert!(
                parse_simple_mapping(yaml).is_none(),
                "{yaml:?} should fall back"
            );
        }
    }

    #[test]
    fn every_corpus_frontmatter_that_takes_the_fast_path_agrees() {
        let corpus =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus");
        if !corpus.is_dir() {
            eprintln!("SKIPPED: no corpus at {}", corpus.display());
            return;
        }
        let mut stack = vec![corpus];
        let (mut total, mut fast) = (0, 0);
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap().filter_map(Result::ok) {
                let path = entry.path();
                if path.is_dir() {
                    stack.push(path);
                } else if path.file_name().is_some_and(|n| n == "SKILL.md") {
                    let Ok(text) = std::fs::read_to_string(&path) else {
                        continue;
                    };
                    if let crate::frontmatter::Split::Closed { yaml, .. } =
                        crate::frontmatter::split(&text)
                    {
                        total += 1;
                        if agrees(yaml) {
                            fast += 1;
                        } else if std::env::var_os("SKILLET_SHOW_SLOW_YAML").is_some() {
                            eprintln!("slow path: {}\n{yaml}", path.display());
                        }
                    }
                }
            }
        }
        eprintln!("fast path taken for {fast} of {total} corpus frontmatters");
        assert!(total > 1_900);
        assert!(
            fast * 2 > total,
            "the fast path should serve most real frontmatters"
        );
    }
}
