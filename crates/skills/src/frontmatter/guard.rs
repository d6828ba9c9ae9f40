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
