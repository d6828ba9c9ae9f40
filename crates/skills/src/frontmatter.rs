//! Splitting a `SKILL.md` into frontmatter and body, and parsing the frontmatter leniently.
//!
//! The rules (see the crate docs): the frontmatter opens only when the first line, after an
//! optional UTF-8 BOM, is `---` (trailing whitespace allowed); it closes at the first later line
//! that is `---` with nothing before it. An indented `---` is content. CRLF line ends work.
//!
//! Hostile frontmatters are refused before the YAML parser sees them (see [`check_hostile`]):
//! aliases, and nesting deeper than [`MAX_YAML_DEPTH`]. So parsing any frontmatter takes time and
//! memory linear in its size.

use yaml_serde::{Mapping, Value};

/// The UTF-8 byte order mark, which some editors write at the start of a file.
const BOM: char = '\u{feff}';

/// Where the frontmatter and body of a document lie.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Split<'a> {
    /// The first line is not `---`: the whole text is body.
    Missing { body: &'a str },
    /// The opening `---` has no closing line.
    Unclosed { yaml: &'a str, body: &'a str },
    /// A closed frontmatter block.
    Closed { yaml: &'a str, body: &'a str },
}

/// Splits `text` into frontmatter and body.
pub(crate) fn split(text: &str) -> Split<'_> {
    let text = text.strip_prefix(BOM).unwrap_or(text);
    let Some((first, rest)) = split_line(text) else {
        return Split::Missing { body: text };
    };
    if !is_fence(first) {
        return Split::Missing { body: text };
    }
    let mut offset = 0;
    let mut remaining = rest;
    while let Some((line, after)) = split_line(remaining) {
        if is_fence(line) {
            return Split::Closed {
                yaml: &rest[..offset],
                body: after,
            };
        }
        offset += remaining.len() - after.len();
        remaining = after;
    }
    Split::Unclosed {
        yaml: rest,
        body: rest,
    }
}

impl<'a> Split<'a> {
    /// The body: found by the split alone, without parsing the YAML.
    pub(crate) fn body(&self) -> &'a str {
        match self {
            Self::Missing { body } | Self::Unclosed { body, .. } | Self::Closed { body, .. } => {
                body
            }
        }
    }
}

/// Returns the first line (without its line end) and the text after it.
fn split_line(text: &str) -> Option<(&str, &str)> {
    if text.is_empty() {
        return None;
    }
    match text.find('\n') {
        Some(index) => {
            let line = &text[..index];
            Some((line.strip_suffix('\r').unwrap_or(line), &text[index + 1..]))
        }
        None => Some((text, "")),
    }
}

fn is_fence(line: &str) -> bool {
    line.trim_end_matches([' ', '\t', '\r']) == "---"
}

/// What became of the frontmatter of one document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FrontmatterStatus {
    /// Parsed as a YAML mapping.
    Parsed,
    /// Parsed after quoting values that held an unquoted `: `; the lines (1-based, in the file)
    /// that were quoted.
    RecoveredByQuoting {
        /// File lines whose values were quoted.
        lines: Vec<usize>,
    },
    /// The file does not start with `---`.
    Missing,
    /// The opening `---` is never closed.
    Unclosed,
    /// The frontmatter is empty.
    Empty,
    /// The YAML parsed, but is not a mapping.
    NotMapping,
    /// The YAML does not parse, even with values quoted.
    InvalidYaml {
        /// The parser's message.
        message: String,
        /// 1-based line in the file, where the parser names one.
        line: Option<usize>,
    },
}

impl FrontmatterStatus {
    /// True when the frontmatter gave a mapping (possibly after recovery).
    pub fn is_mapping(&self) -> bool {
        matches!(self, Self::Parsed | Self::RecoveredByQuoting { .. })
    }
}

/// A document split and parsed: the raw mapping (empty when the YAML failed) and the body.
#[derive(Debug, Clone)]
pub(crate) struct Document<'a> {
    pub status: FrontmatterStatus,
    pub mapping: Mapping,
    pub body: &'a str,
}

/// The frontmatter of a skill file's `text` exactly as written, when it is a YAML mapping that
/// parses as it stands (no recovery by quoting) and passes the same bounds as discovery; `None`
/// otherwise. For whoever must hand the fields on verbatim (the MCP Skills extension compares
/// them with the file).
pub fn strict_frontmatter(text: &str) -> Option<Mapping> {
    let document = parse_document(text);
    (document.status == FrontmatterStatus::Parsed).then_some(document.mapping)
}

/// Splits and parses `text` leniently: every failure becomes a status, never an error.
pub(crate) fn parse_document(text: &str) -> Document<'_> {
    let split = split(text);
    let (status, mapping) = match split {
        Split::Missing { .. } => (FrontmatterStatus::Missing, Mapping::new()),
        Split::Unclosed { .. } => (FrontmatterStatus::Unclosed, Mapping::new()),
        Split::Closed { yaml, .. } => parse_yaml(yaml),
    };
    Document {
        status,
        mapping,
        body: split.body(),
    }
}

/// The file line on which the YAML of a closed frontmatter starts (after the opening `---`).
const YAML_FIRST_LINE: usize = 2;

/// Parses frontmatter YAML, retrying with offending values quoted.
fn parse_yaml(yaml: &str) -> (FrontmatterStatus, Mapping) {
    if yaml.trim().is_empty() {
        return (FrontmatterStatus::Empty, Mapping::new());
    }
    if let Some(mapping) = crate::fast_yaml::parse_simple_mapping(yaml) {
        return (FrontmatterStatus::Parsed, mapping);
    }
    if let Err(refusal) = check_hostile(yaml) {
        return (
            FrontmatterStatus::InvalidYaml {
                message: refusal.reason,
                line: Some(refusal.line + YAML_FIRST_LINE),
            },
            Mapping::new(),
        );
    }
    match yaml_serde::from_str::<Value>(yaml) {
        Ok(value) => mapping_status(value, FrontmatterStatus::Parsed),
        Err(first_error) => {
            // Quoting can move text out of a quoted scalar, so the new text is checked again.
            let (quoted, lines) = quote_colon_values(yaml);
            if !lines.is_empty()
                && check_hostile(&quoted).is_ok()
                && let Ok(value) = yaml_serde::from_str::<Value>(&quoted)
            {
                let lines = lines.iter().map(|line| line + YAML_FIRST_LINE).collect();
                return mapping_status(value, FrontmatterStatus::RecoveredByQuoting { lines });
            }
            // An error at the end of input points past the last line: name the last line.
            let last_line = yaml.lines().count().max(1);
            let line = first_error
                .location()
                .map(|location| location.line().min(last_line) + YAML_FIRST_LINE - 1);
            (
                FrontmatterStatus::InvalidYaml {
                    message: yaml_message(&first_error),
                    line,
                },
                Mapping::new(),
            )
        }
    }
}

/// The parser's message without the position suffix (we report the file line ourselves).
fn yaml_message(error: &yaml_serde::Error) -> String {
    let message = error.to_string();
    match message.find(" at line ") {
        Some(index) => message[..index].to_string(),
        None => message,
    }
}

fn mapping_status(value: Value, ok: FrontmatterStatus) -> (FrontmatterStatus, Mapping) {
    match value {
        Value::Mapping(mapping) if mapping.is_empty() => (FrontmatterStatus::Empty, mapping),
        Value::Mapping(mapping) => (ok, mapping),
        Value::Null => (FrontmatterStatus::Empty, Mapping::new()),
        _ => (FrontmatterStatus::NotMapping, Mapping::new()),
    }
}

/// Quotes plain values that contain `: ` (`description: Use when: …`), the most common YAML
/// error in real skills. Lines inside block scalars are left alone. Returns the new text and the
/// 0-based indexes of the lines changed.
fn quote_colon_values(yaml: &str) -> (String, Vec<usize>) {
    let mut out = String::with_capacity(yaml.len() + 16);
    let mut changed = Vec::new();
    // Indentation of the key that opened a block scalar; lines indented deeper belong to it.
    let mut block_indent: Option<usize> = None;
    for (index, line) in yaml.split_inclusive('\n').enumerate() {
        let content = line.trim_end_matches(['\n', '\r']);
        let ending = &line[content.len()..];
        let indent = content.len() - content.trim_start_matches(' ').len();
        if let Some(block) = block_indent {
            if content.trim().is_empty() || indent > block {
                out.push_str(line);
                continue;
            }
            block_indent = None;
        }
        match key_value(content) {
            Some((key_part, value)) => {
                let trimmed = value.trim();
                if trimmed.starts_with(['|', '>']) {
                    block_indent = Some(indent);
                    out.push_str(line);
                } else if needs_quoting(trimmed) {
                    out.push_str(key_part);
                    out.push_str(" '");
                    out.push_str(&trimmed.replace('\'', "''"));
                    out.push('\'');
                    out.push_str(ending);
                    changed.push(index);
                } else {
                    out.push_str(line);
                }
            }
            None => out.push_str(line),
        }
    }
    (out, changed)
}

/// Splits `  key: value` into (`  key:`, `value`), for simple keys only.
fn key_value(line: &str) -> Option<(&str, &str)> {
    let body = line.trim_start_matches(' ');
    let body = body.strip_prefix("- ").unwrap_or(body);
    let colon = body.find(": ")?;
    let key = &body[..colon];
    if key.is_empty()
        || !key
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.'))
    {
        return None;
    }
    let split_at = line.len() - body.len() + colon + 1;
    Some((&line[..split_at], &line[split_at..]))
}

fn needs_quoting(value: &str) -> bool {
    !value.is_empty()
        && !value.starts_with(['"', '\'', '[', '{', '&', '*', '!', '|', '>'])
        && (value.contains(": ") || value.ends_with(':'))
}

/// The deepest nesting of YAML collections a frontmatter may have: open brackets plus block
/// levels (an indentless `- ` list under a key counts as one). Deeper frontmatters are refused
/// before the YAML parser sees them: its scanner walks a stack with an entry per open bracket on
/// every token, so nested brackets cost time quadratic in their size (two seconds for 64 KB).
/// Real frontmatters nest two or three levels.
pub const MAX_YAML_DEPTH: usize = 64;

/// Why a frontmatter is refused without parsing it.
const ALIAS_REASON: &str = "uses YAML aliases (`*name`), which skills never need";

/// A frontmatter the pre-scan refuses, and the 0-based line (within the YAML) where it did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Refusal {
    /// What is wrong, for the diagnostic.
    pub reason: String,
    /// 0-based line within the YAML text.
    pub line: usize,
}

/// Refuses, in one linear pass, YAML that uses aliases or nests deeper than [`MAX_YAML_DEPTH`].
///
/// Aliases are how a few kilobytes expand to gigabytes (the "billion laughs"; `yaml_serde` caps
/// the number of alias expansions, not their size), and skills never need them. The pass follows
/// the tokenizer of the parser behind `yaml_serde` (libyaml's), so that a `*` counts only where
/// that tokenizer starts an alias token: not inside quoted scalars, block scalars, comments, or
/// plain scalars such as `a*b` or `use *bold* text` (continuation lines included), nor `*` or
/// `*.md`, which are errors. Where the parser stops at a `: ` inside a plain value, the pass stops
/// too: the lenient retry that quotes such values runs, and its text is checked again. Elsewhere
/// in invalid YAML the pass carries on as best it can, and the parser reports the error.
pub(crate) fn check_hostile(yaml: &str) -> Result<(), Refusal> {
    guard::Scanner::new(yaml).run()
}

mod guard;

#[cfg(test)]
mod tests;
