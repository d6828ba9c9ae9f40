//! Running the rules over one file's bytes.

use std::collections::HashMap;
use std::path::Path;
use std::sync::LazyLock;

use regex::Regex;

use crate::rules::{
    BinaryKind, Capability, CharClass, DECODE_OR_EVAL, Matcher, RULES, Rule, ZERO_WIDTH_BULK,
    ZERO_WIDTH_NEAR_DECODE,
};
use crate::text::{Lines, Stripped, detail, excerpt, is_invisible_format};
use crate::{Finding, MAX_FILE_BYTES, Note};

mod chars;
mod content;
mod grants;

use chars::line_chars;
use content::{Content, classify, executable_format};
pub(crate) use grants::Grants;

/// The most findings of one rule in one file; the rest are counted in a note.
pub const MAX_FINDINGS_PER_RULE_PER_FILE: usize = 20;
/// The longest quoted label, quotes excluded, in characters: `"ignore previous instructions"`
/// in prose that explains an attack is not one.
pub const MAX_QUOTED_LABEL_CHARS: usize = 60;
/// The most matches of either side of a [`Matcher::Near`] rule looked at in one file.
const MAX_NEAR_MATCHES: usize = 10_000;

/// A rule's regular expressions, compiled once (with ASCII word boundaries). A pattern that
/// does not compile leaves its rule inert; `every_pattern_compiles_as_used` checks none does.
struct Compiled {
    /// `first` with `^` and `$` matching at line ends: when it finds nothing in the whole text,
    /// no line can match, and the lines are not looked at one by one.
    anywhere: Option<Regex>,
    first: Option<Regex>,
    second: Option<Regex>,
    unless: Option<Regex>,
}

static COMPILED: LazyLock<Vec<Compiled>> = LazyLock::new(|| {
    let compile =
        |pattern: Option<&str>| pattern.and_then(|p| Regex::new(&ascii_boundaries(p)).ok());
    RULES
        .iter()
        .map(|rule| {
            let mut compiled = compile_rule(rule, compile);
            compiled.anywhere = match rule.matcher {
                Matcher::Line { pattern, .. } | Matcher::NearLines { pattern, .. } => {
                    compile(Some(&format!("(?mR){pattern}")))
                }
                _ => None,
            };
            compiled
        })
        .collect()
});

fn compile_rule(rule: &Rule, compile: impl Fn(Option<&str>) -> Option<Regex>) -> Compiled {
    match rule.matcher {
        Matcher::Line {
            pattern, unless, ..
        } => Compiled {
            anywhere: None,
            first: compile(Some(pattern)),
            second: None,
            unless: compile(unless),
        },
        Matcher::Near { first, second, .. } => Compiled {
            anywhere: None,
            first: compile(Some(first)),
            second: compile(Some(second)),
            unless: None,
        },
        Matcher::NearLines {
            pattern, context, ..
        } => Compiled {
            anywhere: None,
            first: compile(Some(pattern)),
            second: compile(Some(context)),
            unless: None,
        },
        Matcher::Comment { pattern } | Matcher::Tool { pattern, .. } => Compiled {
            anywhere: None,
            first: compile(Some(pattern)),
            second: None,
            unless: None,
        },
        Matcher::Chars(_) | Matcher::Binary(_) | Matcher::Incomplete => Compiled {
            anywhere: None,
            first: None,
            second: None,
            unless: None,
        },
    }
}

/// `pattern` with every `\b` an ASCII word boundary: a Unicode one stops the fast matcher on
/// any text that is not pure ASCII (most skills have a dash or an emoji somewhere), and every
/// word the rules look for is ASCII.
fn ascii_boundaries(pattern: &str) -> String {
    pattern.replace(r"\b", r"(?-u:\b)")
}

static DECODE_OR_EVAL_RE: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(&ascii_boundaries(DECODE_OR_EVAL)).ok());
static HTML_COMMENT: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"(?s)<!--(.*?)-->").ok());

/// A file the rules run on.
pub(crate) struct FileInput<'a> {
    /// The file as shown (absolute).
    pub(crate) path: &'a Path,
    /// Its bytes (at most the cap).
    pub(crate) bytes: &'a [u8],
    /// Whether the file goes on past `bytes` (it was larger than [`MAX_FILE_BYTES`]).
    pub(crate) truncated: bool,
    /// What the skill's `allowed-tools` grants, when it has one.
    pub(crate) grants: Option<&'a Grants>,
}

/// Runs every rule on one file.
pub(crate) fn scan_file(input: &FileInput<'_>, findings: &mut Vec<Finding>, notes: &mut Vec<Note>) {
    let first = findings.len();
    let mut sink = Sink {
        path: input.path,
        findings,
        per_rule: HashMap::new(),
    };
    match classify(input.bytes) {
        Content::Executable(name) => sink.binary(BinaryKind::Executable, name),
        Content::Archive(name) => sink.binary(BinaryKind::Archive, &name),
        Content::Unknown => sink.binary(
            BinaryKind::Unknown,
            "binary data (NUL bytes) of no known image, font, media, PDF or archive type",
        ),
        Content::Known => {}
        Content::Text(text) => {
            scan_text(input, &text, &mut sink);
            if input.truncated
                && let Some(rule) = incomplete_rule()
            {
                sink.report(rule, 0, || {
                    (
                        String::new(),
                        Some(format!(
                            "larger than {MAX_FILE_BYTES} bytes; only the first {MAX_FILE_BYTES} were scanned"
                        )),
                    )
                });
            }
        }
    }
    let rank = |id: &str| RULES.iter().position(|rule| rule.id == id);
    sink.findings[first..].sort_by_key(|f| (f.line, rank(f.rule)));
    let mut over: Vec<(&'static str, usize)> = sink
        .per_rule
        .iter()
        .filter(|&(_, &count)| count > MAX_FINDINGS_PER_RULE_PER_FILE)
        .map(|(&id, &count)| (id, count - MAX_FINDINGS_PER_RULE_PER_FILE))
        .collect();
    over.sort_unstable();
    for (id, more) in over {
        notes.push(Note {
            path: input.path.to_path_buf(),
            message: format!(
                "{more} more {id} findings in this file are not listed (at most {MAX_FINDINGS_PER_RULE_PER_FILE} per rule and file)"
            ),
        });
    }
}

/// Looks at the first bytes of a file in a folder never scanned as text (`node_modules`,
/// `.git`): an executable there is still reported.
pub(crate) fn scan_head(path: &Path, head: &[u8], findings: &mut Vec<Finding>) {
    if let Some(name) = executable_format(head) {
        let mut sink = Sink {
            path,
            findings,
            per_rule: HashMap::new(),
        };
        sink.binary(
            BinaryKind::Executable,
            &format!("{name}, in a folder not scanned as text"),
        );
    }
}

/// The rule that says the scan stopped short ([`Matcher::Incomplete`]).
pub(crate) fn incomplete_rule() -> Option<&'static Rule> {
    RULES
        .iter()
        .find(|rule| matches!(rule.matcher, Matcher::Incomplete))
}

/// Where findings of one file go, counted per rule.
struct Sink<'a> {
    path: &'a Path,
    findings: &'a mut Vec<Finding>,
    per_rule: HashMap<&'static str, usize>,
}

impl Sink<'_> {
    /// Counts a hit of `rule`; whether it is still listed (within
    /// [`MAX_FINDINGS_PER_RULE_PER_FILE`]). Checked before an excerpt is built, so hits past
    /// the cap cost only the count.
    fn take(&mut self, rule: &'static Rule) -> bool {
        let count = self.per_rule.entry(rule.id).or_insert(0);
        *count += 1;
        *count <= MAX_FINDINGS_PER_RULE_PER_FILE
    }

    fn push(&mut self, rule: &'static Rule, line: usize, excerpt: String, detail: Option<String>) {
        self.findings.push(Finding {
            rule: rule.id,
            severity: rule.severity,
            title: rule.title,
            hint: rule.hint,
            path: self.path.to_path_buf(),
            line: line + 1,
            excerpt,
            detail,
        });
    }

    /// A hit on line `line` (0-based); `make` builds its excerpt and detail, only when it is
    /// listed.
    fn report(
        &mut self,
        rule: &'static Rule,
        line: usize,
        make: impl FnOnce() -> (String, Option<String>),
    ) {
        if self.take(rule) {
            let (excerpt, detail) = make();
            self.push(rule, line, excerpt, detail);
        }
    }

    /// A hit of a text rule: `spans` are byte ranges of `file`'s text, the one reported first
    /// (any other: what made it a hit, such as the nearby network call). When invisible
    /// characters were removed inside any of them, the detail says so.
    fn text_hit(
        &mut self,
        rule: &'static Rule,
        file: &View<'_>,
        spans: &[(usize, usize)],
        detail: impl FnOnce() -> Option<String>,
    ) {
        let Some(&(start, _)) = spans.first() else {
            return;
        };
        let line = file.lines.index_of(start);
        self.report(rule, line, || {
            let detail = detail();
            let detail = if spans.iter().any(|&(from, to)| file.hides(from, to)) {
                Some(match detail {
                    Some(detail) => format!("{detail}; {HIDDEN_BY_INVISIBLE}"),
                    None => HIDDEN_BY_INVISIBLE.to_string(),
                })
            } else {
                detail
            };
            (file.excerpt(start), detail)
        });
    }

    fn binary(&mut self, kind: BinaryKind, name: &str) {
        for rule in RULES {
            if matches!(rule.matcher, Matcher::Binary(k) if k == kind) {
                self.report(rule, 0, || (String::new(), Some(name.to_string())));
            }
        }
    }
}

/// The detail of a finding made only once invisible characters were removed.
const HIDDEN_BY_INVISIBLE: &str =
    "hidden by invisible characters: matched once they were removed (see the escapes)";

fn scan_text(input: &FileInput<'_>, text: &str, sink: &mut Sink<'_>) {
    let lines = Lines::new(text);
    let original = View {
        text,
        lines: &lines,
        original: text,
        original_lines: &lines,
        stripped: None,
    };
    // The text rules run on the text with invisible format characters removed, so that
    // `ig\u{200B}nore previous instructions` reads as it shows; excerpts come from the file.
    let stripped = Stripped::new(text);
    let stripped_lines = stripped.as_ref().map(|s| Lines::new(&s.text));
    let view = match (&stripped, &stripped_lines) {
        (Some(stripped), Some(stripped_lines)) => View {
            text: &stripped.text,
            lines: stripped_lines,
            original: text,
            original_lines: &lines,
            stripped: Some(stripped),
        },
        _ => View {
            stripped: None,
            ..original
        },
    };
    for (index, rule) in RULES.iter().enumerate() {
        let compiled = &COMPILED[index];
        if compiled
            .anywhere
            .as_ref()
            .is_some_and(|re| !re.is_match(view.text))
        {
            continue;
        }
        match rule.matcher {
            Matcher::Line { skip_quoted, .. } => {
                if let Some(pattern) = &compiled.first {
                    by_line(
                        rule,
                        pattern,
                        compiled.unless.as_ref(),
                        skip_quoted,
                        &view,
                        sink,
                    );
                }
            }
            Matcher::Near { chars, .. } => {
                if let (Some(first), Some(second)) = (&compiled.first, &compiled.second) {
                    near(rule, first, second, chars, &view, sink);
                }
            }
            Matcher::NearLines { lines: within, .. } => {
                if let (Some(pattern), Some(context)) = (&compiled.first, &compiled.second) {
                    near_lines(rule, pattern, context, within, &view, sink);
                }
            }
            Matcher::Comment { .. } => {
                if let (Some(pattern), Some(comments)) = (&compiled.first, &*HTML_COMMENT) {
                    in_comments(rule, pattern, comments, &view, sink);
                }
            }
            Matcher::Chars(class) => chars(rule, class, &original, sink),
            Matcher::Binary(_) | Matcher::Incomplete => {}
            Matcher::Tool { capability, .. } => {
                if let (Some(grants), Some(pattern)) = (input.grants, &compiled.first)
                    && !grants.grants(capability)
                {
                    tool(rule, capability, pattern, input.path, &view, sink);
                }
            }
        }
    }
}

/// A text the rules run on, and its lines: the file's own, or its view with invisible format
/// characters removed (the same lines, since line ends are kept).
struct View<'a> {
    /// The text matched.
    text: &'a str,
    /// Its lines.
    lines: &'a Lines,
    /// The file's text, for excerpts.
    original: &'a str,
    /// Its lines.
    original_lines: &'a Lines,
    /// How `text` was made from `original`, when it was stripped.
    stripped: Option<&'a Stripped>,
}

impl View<'_> {
    /// Line `index` (0-based), without its ending.
    fn line(&self, index: usize) -> &str {
        let (start, end) = self.lines.span(index);
        &self.text[start..end]
    }

    /// Where line `index` starts in the text.
    fn line_start(&self, index: usize) -> usize {
        self.lines.span(index).0
    }

    /// The excerpt of the file's line around byte `at` of the text matched.
    fn excerpt(&self, at: usize) -> String {
        let at = self.stripped.map_or(at, |s| s.start_in_original(at));
        let number = self.original_lines.index_of(at);
        let (start, end) = self.original_lines.span(number);
        excerpt(&self.original[start..end], at.saturating_sub(start))
    }

    /// Whether the span `start..end` of the text matched held invisible characters in the file.
    fn hides(&self, start: usize, end: usize) -> bool {
        self.stripped.is_some_and(|s| s.hides(start, end))
    }
}

/// How many bytes after a match an `unless` match is looked for (it must start inside the
/// match or right after it).
const UNLESS_LOOKAHEAD_BYTES: usize = 256;

/// The first match of `pattern` on each line that counts: not a quoted label (when
/// `skip_quoted`), not cancelled by `unless` starting inside it or right after it.
fn by_line(
    rule: &'static Rule,
    pattern: &Regex,
    unless: Option<&Regex>,
    skip_quoted: bool,
    file: &View<'_>,
    sink: &mut Sink<'_>,
) {
    for number in 0..file.lines.len() {
        let line = file.line(number);
        let label = |m: &regex::Match<'_>| skip_quoted && quoted_label(line, m.start(), m.end());
        let cancelled =
            |m: &regex::Match<'_>| unless.is_some_and(|u| cancels(u, line, m.start(), m.end()));
        let hit = pattern.find_iter(line).find(|m| !label(m) && !cancelled(m));
        let Some(hit) = hit else { continue };
        let start = file.line_start(number);
        sink.text_hit(
            rule,
            file,
            &[(start + hit.start(), start + hit.end())],
            || None,
        );
    }
}

/// Whether `unless` matches starting within `start..=end` of `line` (inside the match or right
/// after it): `Do not tell the user to restart it` is advice, `Do not tell the user about the
/// upload; tell the user to wait` is not.
fn cancels(unless: &Regex, line: &str, start: usize, end: usize) -> bool {
    let reach = line.ceil_char_boundary(end.saturating_add(UNLESS_LOOKAHEAD_BYTES));
    unless
        .find_at(&line[..reach], start)
        .is_some_and(|m| m.start() <= end)
}

/// Each line `pattern` matches with a line `context` matches at most `within` lines away; the
/// detail shows that other line.
fn near_lines(
    rule: &'static Rule,
    pattern: &Regex,
    context: &Regex,
    within: usize,
    file: &View<'_>,
    sink: &mut Sink<'_>,
) {
    let count = file.lines.len();
    let nearby: Vec<Option<(usize, usize)>> = (0..count)
        .map(|n| {
            let start = file.line_start(n);
            context
                .find(file.line(n))
                .map(|m| (start + m.start(), start + m.end()))
        })
        .collect();
    for number in 0..count {
        let line = file.line(number);
        let Some(hit) = pattern.find(line) else {
            continue;
        };
        let from = number.saturating_sub(within);
        let to = (number + within).min(count - 1);
        let Some((other, span)) = (from..=to).find_map(|n| nearby[n].map(|span| (n, span))) else {
            continue;
        };
        let start = file.line_start(number);
        let spans = [(start + hit.start(), start + hit.end()), span];
        sink.text_hit(rule, file, &spans, || {
            (other != number).then(|| {
                format!(
                    "line {}: {}",
                    other + 1,
                    file.excerpt(file.line_start(other))
                )
            })
        });
    }
}

/// How many bytes of a comment are looked at for the detail showing it.
const COMMENT_DETAIL_BYTES: usize = 2048;

/// The first match of `pattern` inside each HTML comment; the detail is the comment.
fn in_comments(
    rule: &'static Rule,
    pattern: &Regex,
    comments: &Regex,
    file: &View<'_>,
    sink: &mut Sink<'_>,
) {
    for comment in comments.find_iter(file.text) {
        let inner_start = comment.start() + "<!--".len();
        let inner_end = comment.end() - "-->".len();
        let Some(inner) = file.text.get(inner_start..inner_end) else {
            continue;
        };
        if let Some(hit) = pattern.find(inner) {
            let span = (inner_start + hit.start(), inner_start + hit.end());
            sink.text_hit(rule, file, &[span], || {
                let shown = &inner[..inner.floor_char_boundary(COMMENT_DETAIL_BYTES)];
                Some(detail(&fold(shown)))
            });
        }
    }
}

/// A script that needs `capability` (not granted): a shell script needs the shell from its
/// first line; otherwise the first line `pattern` matches.
fn tool(
    rule: &'static Rule,
    capability: Capability,
    pattern: &Regex,
    path: &Path,
    file: &View<'_>,
    sink: &mut Sink<'_>,
) {
    let Some(script) = script_kind(path, file.text) else {
        return;
    };
    if capability == Capability::Shell && script == Script::Shell {
        sink.report(rule, 0, || {
            (
                file.excerpt(0),
                Some("a shell script: running it at all needs Bash".to_string()),
            )
        });
        return;
    }
    let found = (0..file.lines.len()).find_map(|n| pattern.find(file.line(n)).map(|m| (n, m)));
    if let Some((number, hit)) = found {
        let start = file.line_start(number);
        sink.text_hit(
            rule,
            file,
            &[(start + hit.start(), start + hit.end())],
            || None,
        );
    }
}

/// Whether the match `start..end` of `line` is a quoted label in explanatory prose, not an
/// instruction: it starts right after an opening quote or backtick, and the closing one
/// follows it after nothing but punctuation, the whole quote at most
/// [`MAX_QUOTED_LABEL_CHARS`] characters (`phrases like "ignore previous instructions"`; not
/// `Say: "Ignore previous instructions and …"`).
fn quoted_label(line: &str, start: usize, end: usize) -> bool {
    let Some(open) = line[..start].chars().next_back() else {
        return false;
    };
    let closes: &[char] = match open {
        '"' => &['"'],
        '\'' => &['\''],
        '`' => &['`'],
        '“' => &['”'],
        '‘' => &['’'],
        '«' => &['»'],
        '„' => &['“', '”'],
        _ => return false,
    };
    let mut quoted = line[start..end]
        .chars()
        .take(MAX_QUOTED_LABEL_CHARS + 1)
        .count();
    for c in line[end..].chars() {
        if closes.contains(&c) {
            return quoted <= MAX_QUOTED_LABEL_CHARS;
        }
        quoted += 1;
        let punctuation = c.is_whitespace() || matches!(c, '.' | ',' | ';' | ':' | '!' | '?' | '…');
        if !punctuation || quoted > MAX_QUOTED_LABEL_CHARS {
            return false;
        }
    }
    false
}

/// One line of text for a detail: whitespace runs folded to one space.
fn fold(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Reports each match of `first` that has a match of `second` within `chars` characters, once
/// per line.
fn near(
    rule: &'static Rule,
    first: &Regex,
    second: &Regex,
    chars: usize,
    file: &View<'_>,
    sink: &mut Sink<'_>,
) {
    let text = file.text;
    // A pattern may take the character before a word to tell it apart (`[^.\w$]eval\(`):
    // leading whitespace is left out, so a line end taken does not name the line before.
    let span = |m: regex::Match<'_>| {
        let lead = m.len() - m.as_str().trim_start().len();
        (m.start() + lead, m.end())
    };
    let firsts: Vec<(usize, usize)> = first
        .find_iter(text)
        .take(MAX_NEAR_MATCHES)
        .map(span)
        .collect();
    if firsts.is_empty() {
        return;
    }
    let seconds: Vec<(usize, usize)> = second
        .find_iter(text)
        .take(MAX_NEAR_MATCHES)
        .map(span)
        .collect();
    // `chars` characters are at most four times as many bytes.
    let reach = chars.saturating_mul(4);
    let gap_chars = |from: usize, to: usize| text[from..to].chars().count();
    let mut last_line = None;
    for &(start, end) in &firsts {
        let low = seconds.partition_point(|&(_, e)| e + reach < start);
        let high = seconds.partition_point(|&(s, _)| s <= end + reach);
        let close = seconds[low..high.max(low)].iter().find(|&&(s, e)| {
            if e <= start {
                gap_chars(e, start) <= chars
            } else if s >= end {
                gap_chars(end, s) <= chars
            } else {
                true
            }
        });
        let Some(&other) = close else { continue };
        let spans = if other.0 < start {
            [other, (start, end)]
        } else {
            [(start, end), other]
        };
        let number = file.lines.index_of(spans[0].0);
        if last_line == Some(number) {
            continue;
        }
        last_line = Some(number);
        sink.text_hit(rule, file, &spans, || None);
    }
}

/// Whether the character `c` at byte `at`, between `prev` and `next`, counts towards
/// [`ZERO_WIDTH_BULK`].
fn counts_as_zero_width(prev: Option<char>, c: char, next: Option<char>, at: usize) -> bool {
    match c {
        '\u{00ad}' | '\u{2060}'..='\u{2064}' => true,
        '\u{feff}' => at > 0,
        // Between two visible non-ASCII characters, joiners and zero-width spaces are how
        // Persian, Indic and Southeast Asian scripts and emoji sequences are written. Next to
        // ASCII, at a line's edge or in a run of invisible characters, they split words or
        // encode.
        '\u{200b}'..='\u{200d}' => !(prev.is_some_and(joins) && next.is_some_and(joins)),
        _ => false,
    }
}

/// A character a joiner may legitimately stand between: visible and not ASCII (a letter of a
/// script that uses joiners, an emoji, or the presentation selector ending an emoji).
fn joins(c: char) -> bool {
    !c.is_ascii() && !c.is_whitespace() && (c == '\u{fe0f}' || !is_invisible_format(c))
}

/// Runs a character rule over the text.
fn chars(rule: &'static Rule, class: CharClass, file: &View<'_>, sink: &mut Sink<'_>) {
    let text = file.text;
    match class {
        CharClass::ZeroWidth => {
            let mut count = 0;
            let mut first = None;
            let mut prev = None;
            let mut chars = text.char_indices().peekable();
            while let Some((at, c)) = chars.next() {
                let next = chars.peek().map(|&(_, c)| c);
                if counts_as_zero_width(prev, c, next, at) {
                    count += 1;
                    first.get_or_insert(at);
                }
                prev = Some(c);
            }
            let Some(first) = first else { return };
            let decodes = DECODE_OR_EVAL_RE
                .as_ref()
                .is_some_and(|re| re.is_match(text));
            if count > ZERO_WIDTH_BULK || (decodes && count > ZERO_WIDTH_NEAR_DECODE) {
                let why = if count > ZERO_WIDTH_BULK {
                    format!(
                        "{count} zero-width characters in the file (more than {ZERO_WIDTH_BULK})"
                    )
                } else {
                    format!(
                        "{count} zero-width characters in a file that decodes or evaluates (more than {ZERO_WIDTH_NEAR_DECODE})"
                    )
                };
                sink.report(rule, file.lines.index_of(first), || {
                    (file.excerpt(first), Some(why))
                });
            }
        }
        CharClass::Tags | CharClass::Bidi | CharClass::Separators | CharClass::VariationRun => {
            for number in 0..file.lines.len() {
                let line = file.line(number);
                if line.is_ascii() {
                    continue;
                }
                if let Some((at, found)) = line_chars(class, line) {
                    sink.report(rule, number, || (excerpt(line, at), Some(found)));
                }
            }
        }
    }
}

/// What kind of script a file is, for the `allowed-tools` rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Script {
    /// Runs as shell commands (sh, bash, zsh, PowerShell, batch).
    Shell,
    /// Another language (Python, JavaScript, Ruby, …).
    Other,
}

/// Whether a file is a script: by its extension, or by its `#!` line when it has none.
fn script_kind(path: &Path, text: &str) -> Option<Script> {
    let extension = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    match extension.as_deref() {
        Some("sh" | "bash" | "zsh" | "ksh" | "fish" | "ps1" | "psm1" | "bat" | "cmd") => {
            return Some(Script::Shell);
        }
        Some(
            "py" | "pyw" | "js" | "mjs" | "cjs" | "ts" | "mts" | "cts" | "rb" | "pl" | "pm" | "php"
            | "lua" | "r" | "tcl",
        ) => return Some(Script::Other),
        // Documents and data (Markdown, text, JSON, …) are not scripts, whatever their first
        // line says; a `#!` line counts only in a file without an extension.
        Some(_) => return None,
        None => {}
    }
    let first = text.lines().next()?;
    let interpreter = first.strip_prefix("#!")?;
    let shells = ["sh", "bash", "zsh", "ksh", "dash", "fish"];
    let words: Vec<&str> = interpreter
        .split(|c: char| c.is_whitespace() || c == '/')
        .filter(|w| !w.is_empty())
        .collect();
    // `#!/usr/bin/env bash` names the program after `env` (and its options).
    let program = match words.iter().position(|w| *w == "env") {
        Some(env) => words[env + 1..].iter().find(|w| !w.starts_with('-')),
        None => words.last(),
    };
    let Some(program) = program else {
        return Some(Script::Other);
    };
    if shells.contains(program) {
        Some(Script::Shell)
    } else {
        Some(Script::Other)
    }
}

#[cfg(test)]
mod tests;
