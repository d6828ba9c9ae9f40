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

mod guard {
    //! The tokenizer that [`super::check_hostile`] runs.

    use super::{ALIAS_REASON, MAX_YAML_DEPTH, Refusal};

    /// How far (bytes) a simple key may lie before its `:` (libyaml's limit).
    const SIMPLE_KEY_SPAN: usize = 1024;

    /// A position in the text.
    #[derive(Debug, Clone, Copy)]
    struct Mark {
        pos: usize,
        line: usize,
        column: usize,
    }

    /// libyaml's line breaks: LF, CR, NEL, LINE SEPARATOR, PARAGRAPH SEPARATOR.
    fn is_break(c: char) -> bool {
        matches!(c, '\n' | '\r' | '\u{85}' | '\u{2028}' | '\u{2029}')
    }

    fn is_blank(c: char) -> bool {
        matches!(c, ' ' | '\t')
    }

    /// Blank, break, or the end of the text.
    fn is_blankz(c: Option<char>) -> bool {
        c.is_none_or(|c| is_blank(c) || is_break(c))
    }

    /// Characters an anchor or alias name is made of.
    fn is_anchor_char(c: char) -> bool {
        c.is_ascii_alphanumeric() || matches!(c, '_' | '-')
    }

    /// Characters a tag is made of (outside `!<…>`).
    fn is_tag_char(c: char) -> bool {
        is_anchor_char(c) || ";/?:@&=+$.%!~*'()".contains(c)
    }

    /// An open block collection.
    #[derive(Debug, Clone, Copy)]
    struct Level {
        column: usize,
        /// A mapping (else a sequence).
        mapping: bool,
        /// Holding an indentless sequence just now.
        indentless: bool,
    }

    /// What follows a token.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum Next {
        /// Another token.
        Token,
        /// Nothing: the parser stops at an error here.
        ParserStops,
    }

    pub(super) struct Scanner<'a> {
        text: &'a str,
        pos: usize,
        line: usize,
        column: usize,
        flow_level: usize,
        /// The open block collections (libyaml's indent stack).
        indents: Vec<Level>,
        /// How many of them hold an indentless sequence (`key:` then `- item` in its column),
        /// which the parser nests one level deeper without a column of its own.
        indentless: usize,
        simple_key_allowed: bool,
        /// Where a simple key of the block context (flow level 0) may start.
        block_key: Option<Mark>,
    }

    impl<'a> Scanner<'a> {
        pub(super) fn new(text: &'a str) -> Self {
            Self {
                text,
                pos: 0,
                line: 0,
                column: 0,
                flow_level: 0,
                indents: Vec::new(),
                indentless: 0,
                simple_key_allowed: true,
                block_key: None,
            }
        }

        fn peek(&self) -> Option<char> {
            self.text[self.pos..].chars().next()
        }

        fn peek_at(&self, ahead: usize) -> Option<char> {
            self.text[self.pos..].chars().nth(ahead)
        }

        fn mark(&self) -> Mark {
            Mark {
                pos: self.pos,
                line: self.line,
                column: self.column,
            }
        }

        /// Moves past one character, counting lines.
        fn advance(&mut self) {
            let Some(c) = self.peek() else { return };
            if is_break(c) {
                let width = if self.text[self.pos..].starts_with("\r\n") {
                    2
                } else {
                    c.len_utf8()
                };
                self.pos += width;
                self.line += 1;
                self.column = 0;
            } else {
                self.pos += c.len_utf8();
                self.column += 1;
            }
        }

        fn skip_to_break(&mut self) {
            self.skip_until(|_| false);
        }

        /// Moves to the next line break, end, or ASCII character that `stop` picks, a byte at a
        /// time (the quick way through long scalars and comments).
        fn skip_until(&mut self, stop: impl Fn(u8) -> bool) {
            let bytes = self.text.as_bytes();
            while let Some(&byte) = bytes.get(self.pos) {
                let multibyte_break = matches!(byte, 0xC2 | 0xE2)
                    && self.text[self.pos..].starts_with(['\u{85}', '\u{2028}', '\u{2029}']);
                if byte == b'\n' || byte == b'\r' || multibyte_break || stop(byte) {
                    return;
                }
                self.pos += 1;
                if byte & 0xC0 != 0x80 {
                    self.column += 1; // the first byte of a character
                }
            }
        }

        fn at_document_indicator(&self) -> bool {
            self.column == 0
                && (self.text[self.pos..].starts_with("---")
                    || self.text[self.pos..].starts_with("..."))
                && is_blankz(self.peek_at(3))
        }

        fn refusal(&self, reason: String) -> Refusal {
            Refusal {
                reason,
                line: self.line,
            }
        }

        fn check_depth(&self) -> Result<(), Refusal> {
            if self.indents.len() + self.indentless + self.flow_level > MAX_YAML_DEPTH {
                return Err(self.refusal(format!("nests deeper than {MAX_YAML_DEPTH} levels")));
            }
            Ok(())
        }

        /// The column of the innermost block collection.
        fn indent(&self) -> Option<usize> {
            self.indents.last().map(|level| level.column)
        }

        /// Opens a block collection at `column` when it is deeper than the current one.
        fn roll_indent(&mut self, column: usize, mapping: bool) -> Result<(), Refusal> {
            if self.flow_level == 0 && self.indent().is_none_or(|top| top < column) {
                self.indents.push(Level {
                    column,
                    mapping,
                    indentless: false,
                });
                self.check_depth()?;
            }
            Ok(())
        }

        /// Notes whether the block mapping whose column a token starts in holds an indentless
        /// sequence: it does from a `- ` there until its next key.
        fn track_indentless(&mut self, c: char, next: Option<char>) -> Result<(), Refusal> {
            let column = self.column;
            let Some(top) = self.indents.last_mut() else {
                return Ok(());
            };
            if self.flow_level != 0 || top.column != column || !top.mapping {
                return Ok(());
            }
            let entry = c == '-' && is_blankz(next);
            if entry != top.indentless {
                top.indentless = entry;
                if entry {
                    self.indentless += 1;
                    self.check_depth()?;
                } else {
                    self.indentless -= 1;
                }
            }
            Ok(())
        }

        fn unroll_indent(&mut self, column: Option<usize>) {
            if self.flow_level != 0 {
                return;
            }
            while self
                .indent()
                .is_some_and(|top| column.is_none_or(|column| top > column))
            {
                if self.indents.pop().is_some_and(|level| level.indentless) {
                    self.indentless -= 1;
                }
            }
        }

        fn save_simple_key(&mut self) {
            if self.flow_level == 0 && self.simple_key_allowed {
                self.block_key = Some(self.mark());
            }
        }

        fn remove_simple_key(&mut self) {
            if self.flow_level == 0 {
                self.block_key = None;
            }
        }

        pub(super) fn run(mut self) -> Result<(), Refusal> {
            loop {
                self.skip_to_next_token();
                if let Some(key) = self.block_key
                    && (key.line < self.line || key.pos + SIMPLE_KEY_SPAN < self.pos)
                {
                    self.block_key = None;
                }
                self.unroll_indent(Some(self.column));
                let Some(c) = self.peek() else {
                    return Ok(());
                };
                self.track_indentless(c, self.peek_at(1))?;
                if self.token(c)? == Next::ParserStops {
                    // The parser reports an error here and reads no further (the lenient retry
                    // that quotes values is checked again in full).
                    return Ok(());
                }
            }
        }

        /// Skips spaces, tabs, comments and line breaks.
        fn skip_to_next_token(&mut self) {
            loop {
                if self.column == 0 && self.peek() == Some('\u{feff}') {
                    self.advance();
                }
                while self.peek().is_some_and(is_blank) {
                    self.advance();
                }
                if self.peek() == Some('#') {
                    self.skip_to_break();
                }
                if !self.peek().is_some_and(is_break) {
                    return;
                }
                self.advance();
                if self.flow_level == 0 {
                    self.simple_key_allowed = true;
                }
            }
        }

        /// Reads one token starting with `c`.
        fn token(&mut self, c: char) -> Result<Next, Refusal> {
            let next = self.peek_at(1);
            let flow = self.flow_level > 0;
            match c {
                '%' if self.column == 0 => {
                    self.close_blocks();
                    self.skip_to_break();
                }
                '-' | '.' if self.at_document_indicator() => {
                    self.close_blocks();
                    for _ in 0..3 {
                        self.advance();
                    }
                }
                '[' | '{' => {
                    self.save_simple_key();
                    self.flow_level += 1;
                    self.check_depth()?;
                    self.simple_key_allowed = true;
                    self.advance();
                }
                ']' | '}' => {
                    self.remove_simple_key();
                    self.flow_level = self.flow_level.saturating_sub(1);
                    self.simple_key_allowed = false;
                    self.advance();
                }
                ',' => {
                    self.remove_simple_key();
                    self.simple_key_allowed = true;
                    self.advance();
                }
                // Where the parser stops: an indicator of the block context where no key or entry
                // may start (`key: value: more`, the mistake the lenient retry mends).
                '-' | '?' | ':'
                    if !flow
                        && !self.simple_key_allowed
                        && is_blankz(next)
                        && (c != ':' || self.block_key.is_none()) =>
                {
                    return Ok(Next::ParserStops);
                }
                '-' if is_blankz(next) => {
                    self.roll_indent(self.column, false)?;
                    self.remove_simple_key();
                    self.simple_key_allowed = true;
                    self.advance();
                }
                '?' if flow || is_blankz(next) => {
                    self.roll_indent(self.column, true)?;
                    self.remove_simple_key();
                    self.simple_key_allowed = !flow;
                    self.advance();
                }
                ':' if flow || is_blankz(next) => self.value()?,
                '*' => return self.alias(),
                '&' => {
                    self.save_simple_key();
                    self.simple_key_allowed = false;
                    self.advance();
                    self.skip_anchor_name();
                }
                '!' => {
                    self.save_simple_key();
                    self.simple_key_allowed = false;
                    self.tag();
                }
                '|' | '>' if !flow => {
                    self.remove_simple_key();
                    self.simple_key_allowed = true;
                    self.block_scalar();
                }
                '\'' | '"' => {
                    self.save_simple_key();
                    self.simple_key_allowed = false;
                    self.quoted_scalar(c == '\'');
                }
                _ if self.starts_plain_scalar(c, next) => {
                    self.save_simple_key();
                    self.simple_key_allowed = false;
                    self.plain_scalar();
                }
                // A character that cannot start a token: the parser stops with an error.
                _ => self.advance(),
            }
            Ok(Next::Token)
        }

        /// A directive or document marker closes every block collection.
        fn close_blocks(&mut self) {
            self.unroll_indent(None);
            self.remove_simple_key();
            self.simple_key_allowed = false;
        }

        /// The `:` of a key-value pair: in the block context it opens a mapping at the key's
        /// column (or its own, for an empty key).
        fn value(&mut self) -> Result<(), Refusal> {
            if self.flow_level > 0 {
                self.simple_key_allowed = false;
            } else if let Some(key) = self.block_key.take() {
                self.roll_indent(key.column, true)?;
                self.simple_key_allowed = false;
            } else {
                self.roll_indent(self.column, true)?;
                self.simple_key_allowed = true;
            }
            self.advance();
            Ok(())
        }

        /// A `*`: an alias token when a name and a proper end follow, which is refused; else
        /// (`*` alone, `*.md`) an error where the parser stops.
        fn alias(&mut self) -> Result<Next, Refusal> {
            self.advance();
            let named = self.skip_anchor_name();
            let next = self.peek();
            if named && (is_blankz(next) || next.is_some_and(|c| "?:,]}%@`".contains(c))) {
                return Err(self.refusal(ALIAS_REASON.to_string()));
            }
            Ok(Next::ParserStops)
        }

        /// Skips an anchor's or alias's name; false when there is none.
        fn skip_anchor_name(&mut self) -> bool {
            let start = self.pos;
            while self.peek().is_some_and(is_anchor_char) {
                self.advance();
            }
            self.pos > start
        }

        fn starts_plain_scalar(&self, c: char, next: Option<char>) -> bool {
            let indicator = is_blankz(Some(c)) || "-?:,[]{}#&*!|>'\"%@`".contains(c);
            !indicator
                || (c == '-' && !next.is_some_and(is_blank))
                || (self.flow_level == 0 && matches!(c, '?' | ':') && !is_blankz(next))
        }

        /// The decimal digit under the cursor (an indentation indicator).
        fn digit(&self) -> Option<usize> {
            self.peek()
                .and_then(|c| c.to_digit(10))
                .and_then(|digit| usize::try_from(digit).ok())
        }

        fn tag(&mut self) {
            self.advance();
            if self.peek() == Some('<') {
                self.advance();
                while self
                    .peek()
                    .is_some_and(|c| is_tag_char(c) || matches!(c, ',' | '[' | ']'))
                {
                    self.advance();
                }
                if self.peek() == Some('>') {
                    self.advance();
                }
            } else {
                while self.peek().is_some_and(is_tag_char) {
                    self.advance();
                }
            }
        }

        fn quoted_scalar(&mut self, single: bool) {
            self.advance();
            loop {
                if self.at_document_indicator() {
                    return; // an error for the parser
                }
                self.skip_until(|byte| {
                    if single {
                        byte == b'\''
                    } else {
                        byte == b'"' || byte == b'\\'
                    }
                });
                let Some(c) = self.peek() else { return };
                match c {
                    '\'' if single => {
                        self.advance();
                        if self.peek() != Some('\'') {
                            return;
                        }
                        self.advance();
                    }
                    '"' if !single => {
                        self.advance();
                        return;
                    }
                    '\\' if !single => {
                        self.advance();
                        self.advance();
                    }
                    _ => self.advance(),
                }
            }
        }

        /// A literal or folded scalar: the header line, then every line indented at least as
        /// deep as the first non-empty one (or the indentation indicator).
        fn block_scalar(&mut self) {
            self.advance();
            let mut increment = 0;
            if matches!(self.peek(), Some('+' | '-')) {
                self.advance();
                if let Some(digit) = self.digit() {
                    increment = digit;
                    self.advance();
                }
            } else if let Some(digit) = self.digit() {
                increment = digit;
                self.advance();
                if matches!(self.peek(), Some('+' | '-')) {
                    self.advance();
                }
            }
            // Blanks, a comment, the line break (anything else is an error for the parser).
            self.skip_to_break();
            self.advance();
            let parent = self.indent();
            let mut indent = match (increment, parent) {
                (0, _) => 0,
                (increment, Some(parent)) => parent + increment,
                (increment, None) => increment,
            };
            let min_indent = parent.map_or(1, |parent| parent + 1);
            self.block_scalar_breaks(&mut indent, min_indent);
            while self.column == indent && self.peek().is_some() {
                self.skip_to_break();
                self.advance();
                self.block_scalar_breaks(&mut indent, min_indent);
            }
        }

        /// Skips the indentation and empty lines of a block scalar, settling its indentation
        /// from the first non-empty line when it has no indicator.
        fn block_scalar_breaks(&mut self, indent: &mut usize, min_indent: usize) {
            let mut max_indent = 0;
            loop {
                while (*indent == 0 || self.column < *indent) && self.peek() == Some(' ') {
                    self.advance();
                }
                max_indent = max_indent.max(self.column);
                if !self.peek().is_some_and(is_break) {
                    break;
                }
                self.advance();
            }
            if *indent == 0 {
                *indent = max_indent.max(min_indent);
            }
        }

        fn plain_scalar(&mut self) {
            let flow = self.flow_level > 0;
            let min_indent = self.indent().map_or(0, |top| top + 1);
            let mut leading_blanks = false;
            loop {
                if self.at_document_indicator() || self.peek() == Some('#') {
                    break;
                }
                // The words: up to a blank, a break, a `: ` (or, in brackets, a `:` before an
                // indicator, or an indicator).
                loop {
                    self.skip_until(|byte| {
                        matches!(byte, b' ' | b'\t' | b':')
                            || (flow && matches!(byte, b',' | b'[' | b']' | b'{' | b'}'))
                    });
                    if self.peek() != Some(':') {
                        break;
                    }
                    let next = self.peek_at(1);
                    if is_blankz(next) || (flow && next.is_some_and(|n| ",?[]{}".contains(n))) {
                        break;
                    }
                    self.advance();
                }
                if !self.peek().is_some_and(|c| is_blank(c) || is_break(c)) {
                    break;
                }
                while let Some(c) = self.peek().filter(|&c| is_blank(c) || is_break(c)) {
                    leading_blanks |= is_break(c);
                    self.advance();
                }
                if !flow && self.column < min_indent {
                    break;
                }
            }
            if leading_blanks {
                self.simple_key_allowed = true;
            }
        }
    }
}

#[cfg(test)]
mod tests {

    use super::*;
    use pretty_assertions::assert_eq;

    /// The real parser's verdict on `yaml` has no alias resolved (the generator never names an
    /// anchor that an alias names), so "unknown anchor" means it met an alias token.
    fn alias_oracle(yaml: &str) -> Option<bool> {
        match yaml_serde::from_str::<Value>(yaml) {
            Ok(_) => Some(false),
            Err(error) if error.to_string().starts_with("unknown anchor") => Some(true),
            Err(_) => None,
        }
    }

    /// Thousands of generated documents: the pre-scan refuses an alias exactly where the real
    /// parser meets one, and never refuses what the real parser reads.
    #[test]
    fn generated_documents_are_refused_exactly_when_the_parser_meets_an_alias() {
        let mut rng = crate::fast_yaml::generated::Lcg::new(0xa11a5);
        let (mut parsed, mut aliases) = (0, 0);
        for _ in 0..50_000 {
            let yaml = crate::fast_yaml::generated::document(&mut rng);
            let verdict = check_hostile(&yaml);
            match alias_oracle(&yaml) {
                Some(false) => {
                    parsed += 1;
                    assert_eq!(verdict, Ok(()), "refused, but the parser reads {yaml:?}");
                }
                Some(true) => {
                    aliases += 1;
                    assert!(
                        verdict.as_ref().is_err_and(|r| r.reason == ALIAS_REASON),
                        "the parser meets an alias in {yaml:?}, the pre-scan says {verdict:?}"
                    );
                }
                None => {}
            }
        }
        eprintln!("{parsed} documents parsed, {aliases} met an alias");
        assert!(
            parsed > 5_000 && aliases > 1_000,
            "the generator should reach both"
        );
    }

    /// Random runs of YAML's indicators, words, spaces and breaks, for the alias oracle.
    fn token_soup(rng: &mut crate::fast_yaml::generated::Lcg) -> String {
        const PIECES: &[&str] = &[
            "a", "b c", "k", " ", " ", "  ", "\n", "\n", "\n  ", "\n    ", ": ", ":", "- ", "-",
            "? ", "?", "[", "]", "{", "}", ", ", ",", "'", "\"", "\\", "''", "#", " #", "*zz",
            "*zz", "*", "*z.", "&aa", "&aa ", "!t ", "!", "!<x>", "|", ">", "|-", "|2", "---",
            "...", "%", "\t", "\r\n", "\r", "@", "`", "\u{a0}", "\u{2028}", "\u{85}", "é", "x:y",
        ];
        let mut text = String::new();
        for _ in 0..=rng.below(30) {
            text.push_str(PIECES[rng.below(PIECES.len())]);
        }
        text
    }

    #[test]
    fn token_soup_is_refused_exactly_when_the_parser_meets_an_alias() {
        let mut rng = crate::fast_yaml::generated::Lcg::new(0x5090);
        let (mut parsed, mut aliases) = (0, 0);
        for _ in 0..100_000 {
            let yaml = token_soup(&mut rng);
            let verdict = check_hostile(&yaml);
            match alias_oracle(&yaml) {
                Some(false) => {
                    parsed += 1;
                    assert_eq!(verdict, Ok(()), "refused, but the parser reads {yaml:?}");
                }
                Some(true) => {
                    aliases += 1;
                    assert!(
                        verdict.as_ref().is_err_and(|r| r.reason == ALIAS_REASON),
                        "the parser meets an alias in {yaml:?}, the pre-scan says {verdict:?}"
                    );
                }
                None => {}
            }
        }
        eprintln!("{parsed} soups parsed, {aliases} met an alias");
        assert!(
            parsed > 1_000 && aliases > 1_000,
            "the generator should reach both"
        );
    }

    /// No frontmatter of the corpus that the parser reads is refused.
    #[test]
    fn no_corpus_frontmatter_is_refused() {
        let corpus =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus");
        if !corpus.is_dir() {
            skillet_test_support::skip(&format!("SKIPPED: no corpus at {}", corpus.display()));
            return;
        }
        let mut stack = vec![corpus];
        let mut checked = 0;
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap().filter_map(Result::ok) {
                let path = entry.path();
                if path.is_dir() {
                    stack.push(path);
                } else if path.file_name().is_some_and(|n| n == "SKILL.md")
                    && let Ok(text) = std::fs::read_to_string(&path)
                    && let Split::Closed { yaml, .. } = split(&text)
                {
                    checked += 1;
                    let verdict = check_hostile(yaml);
                    if yaml_serde::from_str::<Value>(yaml).is_ok() {
                        assert_eq!(verdict, Ok(()), "{} is refused", path.display());
                    } else if let Err(refusal) = verdict {
                        eprintln!("{}: {refusal:?}", path.display());
                    }
                }
            }
        }
        eprintln!("{checked} corpus frontmatters checked");
        assert!(checked > 1_900);
    }

    fn refusal_reason(yaml: &str) -> Option<String> {
        check_hostile(yaml).err().map(|refusal| refusal.reason)
    }

    #[test]
    fn aliases_are_refused_wherever_they_start_a_node() {
        for yaml in [
            "a: &x 1\nb: *x\n",
            "base: &b {x: 1}\nother:\n  <<: *b\n",
            "list:\n  - *x\n",
            "list: [*x]\n",
            "list: [a, *x]\n",
            "list: [a,\n  *x]\n",
            "map: {a: *x}\n",
            "map: {*x: a}\n",
            "? *x\n: y\n",
            "*x : y\n",
            "a:\n  *x\n",
            "a: 'quoted'\nb: *x\n",
            "a: \"multi\n  line\"\nb: *x\n",
            "a: |\n  block\nb: *x\n",
            "a: plain\n  continued\nb: *x\n",
            "a: !tag *x\n",
            "a: *x # comment\n",
            "a: *x\r\n",
        ] {
            assert_eq!(
                refusal_reason(yaml).as_deref(),
                Some(ALIAS_REASON),
                "{yaml:?} should be refused"
            );
        }
    }

    #[test]
    fn stars_that_are_not_aliases_pass() {
        for yaml in [
            "description: use *bold* text\n",
            "glob: \"*.md\"\n",
            "glob: '*.md'\n",
            "paths:\n  - '*'\n  - \"*x\"\n",
            "description: |\n  *bold* intro\n  *x\n  - *x\n",
            "description: >-\n  *x\n\n  *y\n",
            "a: a*b\n",
            "a: b *x\n",
            "description: starts here\n  *x continues the plain scalar\n",
            "- a\n  *x\n",
            "# *x\na: b # *x\n",
            "a: \"multi\n  *x line\"\n",
            "a: 'multi\n  *x ''line'''\n",
            "a: \"esc \\\" *x\"\n",
            "allowed-tools: Bash(git add:*) Read\n",
            "tags: [a*, b*c]\n",
            "a: !t x*y\n",
            "anchor: &x value\n",
        ] {
            assert_eq!(refusal_reason(yaml), None, "{yaml:?} should pass");
            assert!(
                yaml_serde::from_str::<Value>(yaml).is_ok(),
                "{yaml:?} parses"
            );
        }
    }

    #[test]
    fn a_star_after_the_parser_stops_is_left_to_the_parser() {
        // The parser stops at the second `: `; the lenient retry quotes the value.
        let document = parse_document("---\nname: a\ndescription: Use when: *nix systems\n---\n");
        assert_eq!(
            document.status,
            FrontmatterStatus::RecoveredByQuoting { lines: vec![3] }
        );
        assert_eq!(
            document.mapping.get("description").and_then(Value::as_str),
            Some("Use when: *nix systems")
        );
        // Not alias tokens: errors for the parser, not refusals.
        for yaml in ["a: *\n", "a: *.md\n", "a: *x.md\n", "a: * item\n"] {
            assert_eq!(refusal_reason(yaml), None, "{yaml:?}");
            assert!(yaml_serde::from_str::<Value>(yaml).is_err(), "{yaml:?}");
        }
    }

    #[test]
    fn refusals_name_the_file_line() {
        let document = parse_document("---\nname: a\nb: &x 1\nc: *x\n---\nbody");
        assert_eq!(
            document.status,
            FrontmatterStatus::InvalidYaml {
                message: ALIAS_REASON.to_string(),
                line: Some(4)
            }
        );
        assert!(document.mapping.is_empty());
        assert_eq!(document.body, "body");
    }

    /// Every way of nesting counts, one level each, as the parser's own stacks do.
    #[test]
    fn nesting_deeper_than_the_limit_is_refused() {
        type Nest = fn(usize) -> String;
        fn flow_sequences(n: usize) -> String {
            format!("k: {}{}\n", "[".repeat(n - 1), "]".repeat(n - 1))
        }
        fn flow_mappings(n: usize) -> String {
            format!("k: {}x{}\n", "{a: ".repeat(n - 1), "}".repeat(n - 1))
        }
        fn block_mappings(n: usize) -> String {
            let keys: String = (0..n).map(|i| " ".repeat(i) + "a:\n").collect();
            keys + &" ".repeat(n) + "x\n"
        }
        fn compact_sequences(n: usize) -> String {
            format!("{}x\n", "- ".repeat(n))
        }
        fn sequences_of_mappings(n: usize) -> String {
            // Each `- a:` opens a sequence and a mapping.
            (0..n / 2).map(|i| "  ".repeat(i) + "- a:\n").collect()
        }
        fn brackets_over_lines(n: usize) -> String {
            format!("k:\n  {}x{}", "[\n".repeat(n - 1), "]\n".repeat(n - 1))
        }
        let too_deep = format!("nests deeper than {MAX_YAML_DEPTH} levels");
        let nestings: [(&str, Nest); 5] = [
            ("flow sequences", flow_sequences),
            ("flow mappings", flow_mappings),
            ("block mappings", block_mappings),
            ("compact sequences", compact_sequences),
            ("brackets over lines", brackets_over_lines),
        ];
        for (what, nest) in nestings {
            let at_limit = nest(MAX_YAML_DEPTH);
            assert_eq!(refusal_reason(&at_limit), None, "{what} at the limit");
            assert!(
                yaml_serde::from_str::<Value>(&at_limit).is_ok(),
                "{what} parses"
            );
            let over = nest(MAX_YAML_DEPTH + 1);
            assert_eq!(
                refusal_reason(&over).as_deref(),
                Some(too_deep.as_str()),
                "{what} over the limit"
            );
        }
        assert_eq!(refusal_reason(&sequences_of_mappings(MAX_YAML_DEPTH)), None);
        assert!(yaml_serde::from_str::<Value>(&sequences_of_mappings(MAX_YAML_DEPTH)).is_ok());
        assert_eq!(
            refusal_reason(&sequences_of_mappings(MAX_YAML_DEPTH + 2)).as_deref(),
            Some(too_deep.as_str())
        );
        // An indentless sequence ends at its mapping's next key.
        let mut siblings = String::new();
        for _ in 0..MAX_YAML_DEPTH * 2 {
            siblings.push_str(
                "a:
- x
b: y
",
            );
        }
        assert_eq!(refusal_reason(&siblings), None);
    }

    /// `parse_yaml` without the pre-scan, as it was: safe on generated documents, whose aliases
    /// never resolve.
    fn unguarded(yaml: &str) -> (FrontmatterStatus, Mapping) {
        if yaml.trim().is_empty() {
            return (FrontmatterStatus::Empty, Mapping::new());
        }
        match yaml_serde::from_str::<Value>(yaml) {
            Ok(value) => mapping_status(value, FrontmatterStatus::Parsed),
            Err(error) => {
                let (quoted, lines) = quote_colon_values(yaml);
                if !lines.is_empty()
                    && let Ok(value) = yaml_serde::from_str::<Value>(&quoted)
                {
                    let lines = lines.iter().map(|line| line + YAML_FIRST_LINE).collect();
                    return mapping_status(value, FrontmatterStatus::RecoveredByQuoting { lines });
                }
                let message = yaml_message(&error);
                (
                    FrontmatterStatus::InvalidYaml {
                        message,
                        line: None,
                    },
                    Mapping::new(),
                )
            }
        }
    }

    /// The pre-scan and the fast path change nothing but the refusals: every generated document
    /// that parsed (or was mended by quoting) before gives the same status and mapping.
    #[test]
    fn generated_documents_parse_as_they_did_without_the_pre_scan() {
        let mut rng = crate::fast_yaml::generated::Lcg::new(0xbee);
        let (mut same, mut refused) = (0, 0);
        for _ in 0..30_000 {
            let yaml = crate::fast_yaml::generated::document(&mut rng);
            let guarded = parse_yaml(&yaml);
            match unguarded(&yaml) {
                (FrontmatterStatus::InvalidYaml { .. }, _) => {
                    assert!(
                        matches!(guarded.0, FrontmatterStatus::InvalidYaml { .. }),
                        "{yaml:?} did not parse before, and now gives {guarded:?}"
                    );
                    refused += 1;
                }
                before => {
                    assert_eq!(guarded, before, "{yaml:?} parsed differently before");
                    same += 1;
                }
            }
        }
        eprintln!("{same} documents read as before, {refused} not parsed before or now");
        assert!(same > 10_000);
    }

    #[test]
    fn split_closed_frontmatter() {
        let text = "---\nname: a\n---\nbody\n";
        assert_eq!(
            split(text),
            Split::Closed {
                yaml: "name: a\n",
                body: "body\n"
            }
        );
    }

    #[test]
    fn split_with_bom_and_crlf() {
        let text = "\u{feff}---\r\nname: a\r\n---\r\nbody\r\n";
        assert_eq!(
            split(text),
            Split::Closed {
                yaml: "name: a\r\n",
                body: "body\r\n"
            }
        );
    }

    #[test]
    fn fence_followed_by_text_is_body() {
        let text = "---not frontmatter\nname: a\n---\n";
        assert_eq!(split(text), Split::Missing { body: text });
    }

    #[test]
    fn closing_fence_allows_trailing_whitespace() {
        let text = "---\nname: a\n---   \nbody";
        assert!(matches!(split(text), Split::Closed { body: "body", .. }));
    }

    #[test]
    fn indented_fence_is_content() {
        let text = "---\ndescription: |\n  a\n  ---\n  b\n---\nbody";
        let document = parse_document(text);
        assert_eq!(document.status, FrontmatterStatus::Parsed);
        assert_eq!(
            document.mapping.get("description").and_then(Value::as_str),
            Some("a\n---\nb\n")
        );
        assert_eq!(document.body, "body");
    }

    #[test]
    fn unclosed_frontmatter() {
        let document = parse_document("---\nname: a\n");
        assert_eq!(document.status, FrontmatterStatus::Unclosed);
        assert_eq!(document.body, "name: a\n");
    }

    #[test]
    fn colon_in_value_is_recovered() {
        let text = "---\nname: a\ndescription: Use when: you need it\n---\n";
        let document = parse_document(text);
        assert_eq!(
            document.status,
            FrontmatterStatus::RecoveredByQuoting { lines: vec![3] }
        );
        assert_eq!(
            document.mapping.get("description").and_then(Value::as_str),
            Some("Use when: you need it")
        );
    }

    #[test]
    fn quoting_keeps_apostrophes_and_skips_block_scalars() {
        let yaml = "description: |\n  key: value: x\nname: it's: fine\n";
        let (quoted, lines) = quote_colon_values(yaml);
        assert_eq!(
            quoted,
            "description: |\n  key: value: x\nname: 'it''s: fine'\n"
        );
        assert_eq!(lines, vec![2]);
    }

    #[test]
    fn invalid_yaml_reports_file_line() {
        let document = parse_document("---\nname: a\ndescription: [broken\n---\nbody");
        match document.status {
            FrontmatterStatus::InvalidYaml { line, .. } => assert!(line.is_some()),
            other => panic!("unexpected {other:?}"),
        }
        assert_eq!(document.body, "body");
    }

    #[test]
    fn list_frontmatter_is_not_a_mapping() {
        let document = parse_document("---\n- a\n- b\n---\nbody");
        assert_eq!(document.status, FrontmatterStatus::NotMapping);
    }

    #[test]
    fn empty_frontmatter() {
        assert_eq!(
            parse_document("---\n---\nbody").status,
            FrontmatterStatus::Empty
        );
        assert_eq!(
            parse_document("---\n\n---\nbody").status,
            FrontmatterStatus::Empty
        );
    }
}
