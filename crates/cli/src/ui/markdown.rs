//! The model's Markdown rendered for a terminal, as it streams.
//!
//! Text is buffered until a line is complete ([`Markdown::preview`] shows the line still coming,
//! for the screen to replace once it ends); each complete line passes
//! [`terminal_safe`] before anything is parsed or styled, so the only escape sequences in the
//! output are the ones [`Style`] adds. Blocks are recognised line by line (headings, lists,
//! quotes, rules, fenced code, tables); what is inside a line (`code`, **bold**, *italic*,
//! ~~strike~~, links) is parsed by `pulldown-cmark`, whose text is made safe again (an entity
//! such as `&#27;` decodes to an escape character). A fenced code block's lines are shown as
//! they come; a table is shown when it ends, aligned by display width. Because only complete
//! lines are rendered, a text gives the same output however it is cut into chunks.
//!
//! Shapes (the same with colour off, less the attributes):
//!
//! ```text
//! # Title            -> Title (bold, underlined); `# Title` without colour
//! - item / 1. item   -> • item / 1. item, two columns more per nesting level (◦, ▪ below)
//! - [x] done         -> • ☑ done
//! > quote            -> │ quote
//! ---                -> ──────── (40 columns)
//! ```rust            -> ╭─ rust / │ code / ╰─
//! | a | b |          -> ┌───┬───┐ boxes, header bold, columns aligned as the delimiter row says
//! [text](url)        -> text (url)
//! `code`             -> code in cyan; `code` with its backticks without colour
//! ```

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};
use unicode_width::UnicodeWidthStr as _;

use super::style::{Attrs, Style};
use skillet_skills::terminal_safe;

/// List bullets by nesting level (cycled below the third).
const BULLETS: [&str; 3] = ["•", "◦", "▪"];
/// The most rows of a table held back to be aligned: past this the rows held are shown and the
/// rest of the table streams as it comes (a model's endless table never stalls the screen).
const MAX_HELD_TABLE_ROWS: usize = 200;
/// The longest line held back waiting for its end: past this it is shown as it is so far.
const MAX_HELD_LINE_BYTES: usize = 16 * 1024;
/// Columns each list level is indented by.
const LIST_INDENT: usize = 2;
/// Columns of a horizontal rule.
const RULE_WIDTH: usize = 40;
/// Tab stops in code blocks.
const TAB_WIDTH: usize = 4;
/// Fewest backticks or tildes that open a fence.
const FENCE_MIN: usize = 3;
/// Indentation (columns) from which a line can no longer be a heading or a rule.
const INDENTED_CODE: usize = 4;

/// How headings look (level 1 is underlined too).
const HEADING: Attrs = Attrs::BOLD;
/// Inline code.
const CODE: Attrs = Attrs::CYAN;
/// Borders, bullets' decorations, link addresses.
const FAINT: Attrs = Attrs::DIM;
/// Quoted text.
const QUOTE: Attrs = Attrs::ITALIC;

/// A streaming renderer: [`Markdown::push`] what arrives, [`Markdown::finish`] at the end of
/// the answer.
#[derive(Debug)]
pub struct Markdown {
    style: Style,
    /// The incomplete last line.
    partial: String,
    /// The open code fence.
    fence: Option<Fence>,
    /// Lines that may be a table (held until it ends, or until the second line shows it is not).
    table: Vec<String>,
    /// Source indentation of the open list items, outermost first.
    lists: Vec<usize>,
    /// The terminal's width: a wider table is shown as its lines, not boxed.
    width: Option<usize>,
    /// The open code block's colours, when its language is known and colour is on.
    code: Option<super::highlight::CodeColours>,
}

#[derive(Debug, Clone)]
struct Fence {
    marker: char,
    len: usize,
    indent: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Align {
    Left,
    Center,
    Right,
}

impl Markdown {
    /// A renderer writing with `style`.
    pub fn new(style: Style) -> Self {
        Self {
            style,
            partial: String::new(),
            fence: None,
            table: Vec::new(),
            lists: Vec::new(),
            width: None,
            code: None,
        }
    }

    /// The terminal's width, when known (a table wider than it is not boxed: it would wrap).
    pub fn set_width(&mut self, width: Option<usize>) {
        self.width = width;
    }

    /// Takes a chunk of the answer; returns what is ready to show (complete lines, each ending
    /// in a newline; empty while a line or a table is still coming).
    pub fn push(&mut self, chunk: &str) -> String {
        self.partial.push_str(chunk);
        let mut out = String::new();
        while let Some(end) = self.partial.find('\n') {
            let line: String = self.partial.drain(..=end).collect();
            self.line(&line[..end], &mut out);
        }
        if self.partial.len() > MAX_HELD_LINE_BYTES {
            let mut cut = MAX_HELD_LINE_BYTES;
            while !self.partial.is_char_boundary(cut) {
                cut -= 1;
            }
            let line: String = self.partial.drain(..cut).collect();
            self.line(&line, &mut out);
        }
        out
    }

    /// Ends the answer: the last line, a table still held, an unclosed fence's border. The
    /// renderer is then ready for the next answer.
    pub fn finish(&mut self) -> String {
        let mut out = String::new();
        if !self.partial.is_empty() {
            let line = std::mem::take(&mut self.partial);
            self.line(&line, &mut out);
        }
        self.flush_table(&mut out);
        if let Some(fence) = self.fence.take() {
            self.fence_bottom(&fence, &mut out);
        }
        self.code = None;
        self.lists.clear();
        out
    }

    fn line(&mut self, raw: &str, out: &mut String) {
        let raw = raw.strip_suffix('\r').unwrap_or(raw);
        let line = terminal_safe(raw, true).into_owned();
        if self.fence.is_some() {
            self.code_line(&line, out);
            return;
        }
        match self.table.len() {
            0 => {}
            1 if is_delimiter_row(&line, cells(&self.table[0]).len()) => {
                self.table.push(line);
                return;
            }
            1 => self.flush_table(out),
            rows if rows >= MAX_HELD_TABLE_ROWS => self.flush_table(out),
            _ if line.contains('|') => {
                self.table.push(line);
                return;
            }
            _ => self.flush_table(out),
        }
        if let Some(fence) = fence_open(&line) {
            self.lists.clear();
            let language = fence_language(&fence, &line);
            self.code = if self.style.colour() {
                super::highlight::CodeColours::for_language(language)
            } else {
                None
            };
            self.fence_top(&fence, &line, out);
            self.fence = Some(fence);
            return;
        }
        if line.contains('|') {
            self.table.push(line);
            return;
        }
        self.block(&line, out);
    }

    /// A line that is not code and not part of a table.
    fn block(&mut self, line: &str, out: &mut String) {
        let indent = columns(line);
        let body = line.trim_start();
        if body.is_empty() {
            out.push('\n');
            return;
        }
        if indent < INDENTED_CODE {
            if let Some((level, text)) = heading(body) {
                self.lists.clear();
                let attrs = if level == 1 {
                    HEADING | Attrs::UNDERLINE
                } else {
                    HEADING
                };
                let marks = if self.style.colour() {
                    String::new()
                } else {
                    format!("{} ", "#".repeat(level))
                };
                self.wrapped(&marks, &self.inline(text, attrs).0, "", out);
                return;
            }
            if is_rule(body) {
                self.lists.clear();
                out.push_str(&self.style.paint(FAINT, &"─".repeat(RULE_WIDTH)));
                out.push('\n');
                return;
            }
        }
        if body.starts_with('>') {
            self.lists.clear();
            let mut depth = 0;
            let mut rest = body;
            while let Some(inner) = rest.strip_prefix('>') {
                depth += 1;
                rest = inner.strip_prefix(' ').unwrap_or(inner).trim_start();
            }
            let bars = self.style.paint(FAINT, &"│ ".repeat(depth));
            self.wrapped(&bars, &self.inline(rest, QUOTE).0, &bars, out);
            return;
        }
        if let Some((marker, text)) = list_item(body) {
            let level = self.list_level(indent);
            let bullet = match marker {
                Marker::Bullet => BULLETS[level % BULLETS.len()].to_string(),
                Marker::Number(number) => number.to_string(),
            };
            let (checkbox, text) = task_box(text);
            let indent = " ".repeat(LIST_INDENT * level);
            let prefix = format!("{indent}{} {checkbox}", self.style.paint(FAINT, &bullet));
            // Later lines of the item start under its text.
            let hanging = " ".repeat(super::wrap::visible_width(&prefix));
            self.wrapped(&prefix, &self.inline(text, Attrs::NONE).0, &hanging, out);
            return;
        }
        let indent = if !self.lists.is_empty() && indent > 0 {
            // More of the current item: under its text.
            " ".repeat(LIST_INDENT * self.lists.len())
        } else {
            self.lists.clear();
            " ".repeat(indent)
        };
        self.wrapped(&indent, &self.inline(body, Attrs::NONE).0, &indent, out);
    }

    /// One line of text after `prefix`, wrapped at words to the terminal's width (when known),
    /// each later line after `rest`.
    fn wrapped(&self, prefix: &str, body: &str, rest: &str, out: &mut String) {
        if let Some(width) = self.width {
            out.push_str(&super::wrap::wrap(prefix, body, rest, width));
        } else {
            out.push_str(prefix);
            out.push_str(body);
        }
        out.push('\n');
    }

    /// The line still coming, shown as it would be if it ended now (with its newline), so an
    /// answer is read as it streams; the screen replaces it when the line is complete (it may
    /// then look different: a `**` closed, a table found). `None` when there is nothing to show:
    /// no partial line, or one that may be a table's row (a table is shown when it ends).
    pub fn preview(&self) -> Option<String> {
        if self.partial.is_empty() || !self.table.is_empty() || self.partial.contains('|') {
            return None;
        }
        let mut probe = Self {
            style: self.style,
            partial: String::new(),
            fence: self.fence.clone(),
            table: Vec::new(),
            lists: self.lists.clone(),
            width: self.width,
            // The line still coming is shown plain; it is coloured once complete.
            code: None,
        };
        let mut out = String::new();
        probe.line(&self.partial, &mut out);
        (!out.is_empty()).then_some(out)
    }

    /// The nesting level of a list item indented by `indent` columns.
    fn list_level(&mut self, indent: usize) -> usize {
        while self.lists.last().is_some_and(|&top| top > indent) {
            self.lists.pop();
        }
        if self.lists.last() != Some(&indent) {
            self.lists.push(indent);
        }
        self.lists.len() - 1
    }

    fn fence_top(&self, fence: &Fence, line: &str, out: &mut String) {
        let language = fence_language(fence, line);
        out.push_str(&" ".repeat(fence.indent));
        out.push_str(&self.style.paint(FAINT, "╭─"));
        if !language.is_empty() {
            out.push(' ');
            out.push_str(&self.style.paint(FAINT, language));
        }
        out.push('\n');
    }

    fn fence_bottom(&self, fence: &Fence, out: &mut String) {
        out.push_str(&" ".repeat(fence.indent));
        out.push_str(&self.style.paint(FAINT, "╰─"));
        out.push('\n');
    }

    fn code_line(&mut self, line: &str, out: &mut String) {
        let Some(fence) = &self.fence else {
            return;
        };
        if closes(line, fence) {
            self.code = None;
            if let Some(fence) = self.fence.take() {
                self.fence_bottom(&fence, out);
            }
            return;
        }
        // The fence's own indentation is not part of the code.
        let code = expand_tabs(strip_columns(line, fence.indent));
        out.push_str(&" ".repeat(fence.indent));
        out.push_str(&self.style.paint(FAINT, "│"));
        if !code.is_empty() {
            out.push(' ');
            match &mut self.code {
                Some(colours) => out.push_str(&colours.line(&code)),
                None => out.push_str(&code),
            }
        }
        out.push('\n');
    }

    fn flush_table(&mut self, out: &mut String) {
        let lines = std::mem::take(&mut self.table);
        if lines.len() < 2 {
            for line in &lines {
                self.block(line, out);
            }
            return;
        }
        self.lists.clear();
        self.render_table(&lines, out);
    }

    fn render_table(&self, lines: &[String], out: &mut String) {
        let header = cells(&lines[0]);
        let count = header.len();
        let aligns: Vec<Align> = cells(&lines[1]).iter().map(|cell| align(cell)).collect();
        let mut rows: Vec<Vec<(String, usize)>> = vec![
            header
                .iter()
                .map(|cell| self.inline(cell, Attrs::BOLD))
                .collect(),
        ];
        for line in &lines[2..] {
            let mut row = cells(line);
            row.resize(count, String::new());
            rows.push(
                row.iter()
                    .map(|cell| self.inline(cell, Attrs::NONE))
                    .collect(),
            );
        }
        let widths: Vec<usize> = (0..count)
            .map(|column| {
                rows.iter()
                    .map(|row| row[column].1)
                    .max()
                    .unwrap_or(0)
                    .max(1)
            })
            .collect();
        // `│ a │ b │`: each column takes its width and three more, and one closes the row.
        let total = widths.iter().map(|width| width + 3).sum::<usize>() + 1;
        if self.width.is_some_and(|width| total > width) {
            for row in &rows {
                let texts: Vec<&str> = row.iter().map(|(text, _)| text.as_str()).collect();
                out.push_str(&texts.join(&self.style.paint(FAINT, " │ ")));
                out.push('\n');
            }
            return;
        }
        let border = |left: &str, middle: &str, right: &str| {
            let bars: Vec<String> = widths.iter().map(|w| "─".repeat(w + 2)).collect();
            let mut line = self
                .style
                .paint(FAINT, &format!("{left}{}{right}", bars.join(middle)));
            line.push('\n');
            line
        };
        let bar = self.style.paint(FAINT, "│");
        out.push_str(&border("┌", "┬", "┐"));
        for (index, row) in rows.iter().enumerate() {
            out.push_str(&bar);
            for (column, (text, width)) in row.iter().enumerate() {
                let room = widths[column] - width;
                let (before, after) = match aligns.get(column).copied().unwrap_or(Align::Left) {
                    Align::Left => (0, room),
                    Align::Right => (room, 0),
                    Align::Center => (room / 2, room - room / 2),
                };
                out.push(' ');
                out.push_str(&" ".repeat(before));
                out.push_str(text);
                out.push_str(&" ".repeat(after));
                out.push(' ');
                out.push_str(&bar);
            }
            out.push('\n');
            if index == 0 {
                out.push_str(&border("├", "┼", "┤"));
            }
        }
        out.push_str(&border("└", "┴", "┘"));
    }

    /// What is inside a line, styled, with its display width. `base` applies to all of it.
    fn inline(&self, text: &str, base: Attrs) -> (String, usize) {
        let mut rendered = Inline {
            style: self.style,
            base,
            out: String::new(),
            width: 0,
            stack: Vec::new(),
            links: Vec::new(),
        };
        for event in Parser::new_ext(text, Options::ENABLE_STRIKETHROUGH) {
            rendered.event(event);
        }
        (rendered.out, rendered.width)
    }
}

/// One line's inline content being rendered.
struct Inline {
    style: Style,
    base: Attrs,
    out: String,
    width: usize,
    stack: Vec<Attrs>,
    /// Open links: the address and the text shown so far.
    links: Vec<(String, String)>,
}

impl Inline {
    fn event(&mut self, event: Event<'_>) {
        match event {
            Event::Start(Tag::Strong) => self.stack.push(Attrs::BOLD),
            Event::Start(Tag::Emphasis) => self.stack.push(Attrs::ITALIC),
            Event::Start(Tag::Strikethrough) => self.stack.push(Attrs::STRIKE),
            Event::Start(Tag::Link { dest_url, .. }) => {
                self.links.push((dest_url.to_string(), String::new()));
                self.stack.push(Attrs::UNDERLINE);
            }
            Event::Start(Tag::Image { dest_url, .. }) => {
                self.text("image: ", Attrs::NONE);
                self.links.push((dest_url.to_string(), String::new()));
                self.stack.push(Attrs::NONE);
            }
            Event::End(TagEnd::Strong | TagEnd::Emphasis | TagEnd::Strikethrough) => {
                self.stack.pop();
            }
            Event::End(TagEnd::Link | TagEnd::Image) => {
                self.stack.pop();
                if let Some((url, shown)) = self.links.pop()
                    && !url.is_empty()
                    && shown != url
                    && shown.strip_prefix("mailto:") != Some(url.as_str())
                {
                    self.text(" (", Attrs::NONE);
                    self.text(&url, FAINT);
                    self.text(")", Attrs::NONE);
                }
            }
            Event::Code(code) => {
                if self.style.colour() {
                    self.text(&code, CODE);
                } else {
                    self.text(&format!("`{code}`"), Attrs::NONE);
                }
            }
            Event::Text(text)
            | Event::Html(text)
            | Event::InlineHtml(text)
            | Event::InlineMath(text)
            | Event::DisplayMath(text)
            | Event::FootnoteReference(text) => self.text(&text, Attrs::NONE),
            Event::SoftBreak | Event::HardBreak => self.text(" ", Attrs::NONE),
            Event::TaskListMarker(done) => self.text(if done { "☑ " } else { "☐ " }, Attrs::NONE),
            Event::Rule => self.text(&"─".repeat(RULE_WIDTH), FAINT),
            Event::Start(_) | Event::End(_) => {}
        }
    }

    /// Appends a piece of text, made safe (the parser decodes entities), in the current style.
    fn text(&mut self, text: &str, attrs: Attrs) {
        let flat = text.replace(['\n', '\t'], " ");
        let safe = terminal_safe(&flat, false);
        if safe.is_empty() {
            return;
        }
        for (_, shown) in &mut self.links {
            shown.push_str(&safe);
        }
        let attrs = self
            .stack
            .iter()
            .fold(self.base.with(attrs), |all, attr| all.with(*attr));
        self.out.push_str(&self.style.paint(attrs, &safe));
        self.width += safe.width();
    }
}

enum Marker<'a> {
    Bullet,
    Number(&'a str),
}

/// Columns of leading whitespace (a tab counts to the next multiple of [`TAB_WIDTH`]).
fn columns(line: &str) -> usize {
    let mut width = 0;
    for c in line.chars() {
        match c {
            ' ' => width += 1,
            '\t' => width += TAB_WIDTH - width % TAB_WIDTH,
            _ => break,
        }
    }
    width
}

/// `line` without up to `count` columns of leading whitespace.
fn strip_columns(line: &str, count: usize) -> &str {
    let mut column = 0;
    for (index, c) in line.char_indices() {
        let next = match c {
            ' ' => column + 1,
            '\t' => column + TAB_WIDTH - column % TAB_WIDTH,
            _ => return &line[index..],
        };
        if column >= count || next > count {
            return &line[index..];
        }
        column = next;
    }
    ""
}

/// Tabs as spaces to the next tab stop.
fn expand_tabs(text: &str) -> String {
    if !text.contains('\t') {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len() + TAB_WIDTH);
    let mut column = 0;
    for c in text.chars() {
        if c == '\t' {
            let spaces = TAB_WIDTH - column % TAB_WIDTH;
            out.push_str(&" ".repeat(spaces));
            column += spaces;
        } else {
            out.push(c);
            column += c.to_string().width();
        }
    }
    out
}

/// `## Title ##` -> (2, "Title").
fn heading(body: &str) -> Option<(usize, &str)> {
    let level = body.chars().take_while(|&c| c == '#').count();
    if !(1..=6).contains(&level) {
        return None;
    }
    let rest = &body[level..];
    if !(rest.is_empty() || rest.starts_with([' ', '\t'])) {
        return None;
    }
    let text = rest.trim();
    let closed = text.trim_end_matches('#');
    let text = if closed.is_empty() || closed.ends_with([' ', '\t']) {
        closed.trim_end()
    } else {
        text
    };
    Some((level, text))
}

/// `---`, `***`, `___` (spaces allowed between).
fn is_rule(body: &str) -> bool {
    let marks: String = body.chars().filter(|c| !c.is_whitespace()).collect();
    let Some(first) = marks.chars().next() else {
        return false;
    };
    matches!(first, '-' | '*' | '_') && marks.len() >= 3 && marks.chars().all(|c| c == first)
}

/// `- text`, `* text`, `+ text`, `12. text`, `3) text`.
fn list_item(body: &str) -> Option<(Marker<'_>, &str)> {
    let after_marker = |rest: &str| -> Option<usize> {
        if rest.is_empty() {
            Some(0)
        } else if rest.starts_with([' ', '\t']) {
            Some(1)
        } else {
            None
        }
    };
    if let Some(rest) = body.strip_prefix(['-', '*', '+']) {
        let skip = after_marker(rest)?;
        return Some((Marker::Bullet, rest[skip..].trim_start()));
    }
    let digits = body.chars().take_while(char::is_ascii_digit).count();
    if !(1..=9).contains(&digits) {
        return None;
    }
    let rest = body[digits..].strip_prefix(['.', ')'])?;
    let skip = after_marker(rest)?;
    Some((Marker::Number(&body[..=digits]), rest[skip..].trim_start()))
}

/// A task item's box: `[ ] text` -> ("☐ ", "text").
fn task_box(text: &str) -> (&'static str, &str) {
    if let Some(rest) = text.strip_prefix("[ ] ") {
        ("☐ ", rest)
    } else if let Some(rest) = text
        .strip_prefix("[x] ")
        .or_else(|| text.strip_prefix("[X] "))
    {
        ("☑ ", rest)
    } else {
        ("", text)
    }
}

/// A line opening a fenced code block.
/// The language a fence names (its info string's first word), or `""`.
fn fence_language<'a>(fence: &Fence, line: &'a str) -> &'a str {
    let info = line
        .trim_start()
        .get(fence.len * fence.marker.len_utf8()..)
        .unwrap_or("")
        .trim();
    info.split_whitespace().next().unwrap_or("")
}

fn fence_open(line: &str) -> Option<Fence> {
    let indent = columns(line);
    let body = line.trim_start();
    let marker = body.chars().next().filter(|c| matches!(c, '`' | '~'))?;
    let len = body.chars().take_while(|&c| c == marker).count();
    if len < FENCE_MIN {
        return None;
    }
    // A backtick fence's info string holds no backtick (else it is inline code).
    if marker == '`' && body[len..].contains('`') {
        return None;
    }
    Some(Fence {
        marker,
        len,
        indent,
    })
}

/// Whether a line closes `fence`: the same character, at least as many, nothing after.
fn closes(line: &str, fence: &Fence) -> bool {
    let body = line.trim();
    let len = body.chars().take_while(|&c| c == fence.marker).count();
    len >= fence.len && len == body.chars().count()
}

/// A table row's cells: outer pipes dropped, split at unescaped pipes, trimmed.
fn cells(line: &str) -> Vec<String> {
    let mut row = line.trim();
    row = row.strip_prefix('|').unwrap_or(row);
    if row.ends_with('|') && !row.ends_with("\\|") {
        row = &row[..row.len() - 1];
    }
    let mut cells = Vec::new();
    let mut cell = String::new();
    let mut escaped = false;
    for c in row.chars() {
        if c == '|' && !escaped {
            cells.push(cell.trim().to_string());
            cell.clear();
        } else {
            cell.push(c);
        }
        escaped = c == '\\' && !escaped;
    }
    cells.push(cell.trim().to_string());
    cells
}

/// `|---|:-:|--:|` with `count` cells.
fn is_delimiter_row(line: &str, count: usize) -> bool {
    if !line.contains('-') {
        return false;
    }
    let row = cells(line);
    row.len() == count
        && row.iter().all(|cell| {
            let inner = cell.strip_prefix(':').unwrap_or(cell);
            let inner = inner.strip_suffix(':').unwrap_or(inner);
            !inner.is_empty() && inner.chars().all(|c| c == '-')
        })
}

fn align(cell: &str) -> Align {
    match (cell.starts_with(':'), cell.ends_with(':')) {
        (true, true) => Align::Center,
        (false, true) => Align::Right,
        _ => Align::Left,
    }
}

#[cfg(test)]
mod tests;
