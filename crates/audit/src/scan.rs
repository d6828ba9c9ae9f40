//! Running the rules over one file's bytes.

use std::borrow::Cow;
use std::collections::HashMap;
use std::path::Path;
use std::sync::LazyLock;

use regex::Regex;

use crate::rules::{
    BinaryKind, Capability, CharClass, DECODE_OR_EVAL, MIN_SELECTOR_RUN, Matcher, RULES, Rule,
    ZERO_WIDTH_BULK, ZERO_WIDTH_NEAR_DECODE,
};
use crate::text::{Lines, detail, excerpt};
use crate::{Finding, Note};

/// The most findings of one rule in one file; the rest are counted in a note.
pub const MAX_FINDINGS_PER_RULE_PER_FILE: usize = 20;
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
        Matcher::Chars(_) | Matcher::Binary(_) => Compiled {
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

/// How much of the shell `allowed-tools` grants.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum Shell {
    /// No `Bash`.
    #[default]
    None,
    /// `Bash(git:*)` and the like: some commands.
    Scoped,
    /// `Bash` or `Bash(*)`: any command.
    Any,
}

/// The tools a skill's `allowed-tools` grants, as far as the rules care.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Grants {
    shell: Shell,
    /// A tool that writes files.
    write: bool,
    /// A web tool.
    network: bool,
}

impl Grants {
    /// What `allowed-tools` (as the skills crate split it) grants.
    pub(crate) fn from_tools(tools: &[String]) -> Self {
        let mut grants = Self::default();
        for tool in tools {
            let (name, scope) = match tool.split_once('(') {
                Some((name, rest)) => (name, Some(rest.trim_end_matches(')').trim())),
                None => (tool.as_str(), None),
            };
            let name = name.trim().to_ascii_lowercase();
            match name.as_str() {
                "bash" | "shell" | "run_shell_command" => {
                    let any = scope.is_none_or(|scope| scope.is_empty() || scope == "*");
                    grants.shell = if any || grants.shell == Shell::Any {
                        Shell::Any
                    } else {
                        Shell::Scoped
                    };
                }
                "write" | "edit" | "multiedit" | "notebookedit" | "write_file" | "edit_file"
                | "replace" => grants.write = true,
                "webfetch" | "websearch" | "web_fetch" | "google_web_search" => {
                    grants.network = true;
                }
                _ => {}
            }
        }
        grants
    }

    fn grants(&self, capability: Capability) -> bool {
        match capability {
            Capability::Shell => self.shell != Shell::None,
            Capability::Write => self.write || self.shell == Shell::Any,
            Capability::Network => self.network || self.shell == Shell::Any,
        }
    }
}

/// What the bytes of a file are.
enum Content<'a> {
    Executable(&'static str),
    Known,
    Unknown,
    Text(Cow<'a, str>),
}

/// How many leading bytes are looked at for NUL bytes.
const SNIFF_BYTES: usize = 8192;

fn classify(bytes: &[u8]) -> Content<'_> {
    if let Some(name) = executable_format(bytes) {
        return Content::Executable(name);
    }
    if let Some(text) = utf16_text(bytes) {
        return Content::Text(Cow::Owned(text));
    }
    let head = &bytes[..bytes.len().min(SNIFF_BYTES)];
    if !head.contains(&0) {
        return Content::Text(String::from_utf8_lossy(bytes));
    }
    if known_format(bytes) {
        Content::Known
    } else {
        Content::Unknown
    }
}

/// The executable format the magic number names, if any.
fn executable_format(bytes: &[u8]) -> Option<&'static str> {
    let magic = |prefix: &[u8]| bytes.starts_with(prefix);
    if magic(b"\x7fELF") {
        return Some("ELF executable or object");
    }
    if magic(&[0xfe, 0xed, 0xfa, 0xce])
        || magic(&[0xfe, 0xed, 0xfa, 0xcf])
        || magic(&[0xce, 0xfa, 0xed, 0xfe])
        || magic(&[0xcf, 0xfa, 0xed, 0xfe])
    {
        return Some("Mach-O executable or object");
    }
    if magic(&[0xca, 0xfe, 0xba, 0xbe]) {
        return Some("universal Mach-O binary or Java class file");
    }
    if magic(b"MZ") && bytes.len() >= 0x40 {
        let offset = u32::from_le_bytes([bytes[0x3c], bytes[0x3d], bytes[0x3e], bytes[0x3f]]);
        let offset = usize::try_from(offset).unwrap_or(usize::MAX);
        if bytes.get(offset..offset.saturating_add(4)) == Some(b"PE\0\0") {
            return Some("Windows PE executable or DLL");
        }
    }
    None
}

/// Images, fonts, audio, video, PDFs and archives: binary on purpose, never flagged.
fn known_format(bytes: &[u8]) -> bool {
    const PREFIXES: &[&[u8]] = &[
        b"\x89PNG",
        b"\xff\xd8\xff",
        b"GIF8",
        b"BM",
        b"\x00\x00\x01\x00",
        b"II*\x00",
        b"MM\x00*",
        b"%PDF",
        b"PK\x03\x04",
        b"PK\x05\x06",
        b"\x1f\x8b",
        b"BZh",
        b"\xfd7zXZ\x00",
        b"7z\xbc\xaf\x27\x1c",
        b"\x28\xb5\x2f\xfd",
        b"\x00\x01\x00\x00",
        b"OTTO",
        b"wOFF",
        b"wOF2",
        b"ttcf",
        b"ID3",
        b"OggS",
        b"fLaC",
        b"\x1a\x45\xdf\xa3",
        b"SQLite format 3\x00",
        b"\x00asm",
    ];
    PREFIXES.iter().any(|prefix| bytes.starts_with(prefix))
        || (bytes.starts_with(b"RIFF") && bytes.len() >= 12)
        || bytes.get(4..8) == Some(b"ftyp")
        || bytes.get(257..262) == Some(b"ustar")
}

/// UTF-16 text with a byte-order mark, decoded (scanned like any text; a scanner that reads
/// bytes would miss it).
fn utf16_text(bytes: &[u8]) -> Option<String> {
    let little = bytes.starts_with(&[0xff, 0xfe]);
    let big = bytes.starts_with(&[0xfe, 0xff]);
    if !(little || big) || !bytes.len().is_multiple_of(2) {
        return None;
    }
    let units: Vec<u16> = bytes[2..]
        .chunks_exact(2)
        .map(|pair| {
            if little {
                u16::from_le_bytes([pair[0], pair[1]])
            } else {
                u16::from_be_bytes([pair[0], pair[1]])
            }
        })
        .collect();
    Some(String::from_utf16_lossy(&units))
}

/// A file the rules run on.
pub(crate) struct FileInput<'a> {
    /// The file as shown (absolute).
    pub(crate) path: &'a Path,
    /// Its bytes (at most the cap).
    pub(crate) bytes: &'a [u8],
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
        Content::Unknown => sink.binary(
            BinaryKind::Unknown,
            "binary data (NUL bytes) of no known image, font, media, PDF or archive type",
        ),
        Content::Known => {}
        Content::Text(text) => scan_text(input, &text, &mut sink),
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

/// Where findings of one file go, counted per rule.
struct Sink<'a> {
    path: &'a Path,
    findings: &'a mut Vec<Finding>,
    per_rule: HashMap<&'static str, usize>,
}

impl Sink<'_> {
    fn push(&mut self, rule: &'static Rule, line: usize, excerpt: String, detail: Option<String>) {
        let count = self.per_rule.entry(rule.id).or_insert(0);
        *count += 1;
        if *count > MAX_FINDINGS_PER_RULE_PER_FILE {
            return;
        }
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

    fn binary(&mut self, kind: BinaryKind, name: &str) {
        for rule in RULES {
            if matches!(rule.matcher, Matcher::Binary(k) if k == kind) {
                self.push(rule, 0, String::new(), Some(name.to_string()));
            }
        }
    }
}

fn scan_text(input: &FileInput<'_>, text: &str, sink: &mut Sink<'_>) {
    let lines = Lines::new(text);
    let file = Text {
        text,
        lines: &lines,
    };
    for (index, rule) in RULES.iter().enumerate() {
        let compiled = &COMPILED[index];
        if compiled
            .anywhere
            .as_ref()
            .is_some_and(|re| !re.is_match(text))
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
                        &file,
                        sink,
                    );
                }
            }
            Matcher::Near { chars, .. } => {
                if let (Some(first), Some(second)) = (&compiled.first, &compiled.second) {
                    near(rule, first, second, chars, &file, sink);
                }
            }
            Matcher::NearLines { lines: within, .. } => {
                if let (Some(pattern), Some(context)) = (&compiled.first, &compiled.second) {
                    near_lines(rule, pattern, context, within, &file, sink);
                }
            }
            Matcher::Comment { .. } => {
                if let (Some(pattern), Some(comments)) = (&compiled.first, &*HTML_COMMENT) {
                    in_comments(rule, pattern, comments, &file, sink);
                }
            }
            Matcher::Chars(class) => chars(rule, class, &file, sink),
            Matcher::Binary(_) => {}
            Matcher::Tool { capability, .. } => {
                if let (Some(grants), Some(pattern)) = (input.grants, &compiled.first)
                    && !grants.grants(capability)
                {
                    tool(rule, capability, pattern, input.path, &file, sink);
                }
            }
        }
    }
}

/// A text and its lines.
struct Text<'a> {
    text: &'a str,
    lines: &'a Lines,
}

impl Text<'_> {
    /// Line `index` (0-based), without its ending.
    fn line(&self, index: usize) -> &str {
        let (start, end) = self.lines.span(index);
        &self.text[start..end]
    }

    /// The line holding byte `at`, and `at` within it.
    fn locate(&self, at: usize) -> (usize, usize) {
        let number = self.lines.index_of(at);
        (number, at - self.lines.span(number).0)
    }
}

/// The first match of `pattern` on each line (past quoted labels when `skip_quoted`), unless
/// `unless` matches the line.
fn by_line(
    rule: &'static Rule,
    pattern: &Regex,
    unless: Option<&Regex>,
    skip_quoted: bool,
    file: &Text<'_>,
    sink: &mut Sink<'_>,
) {
    for number in 0..file.lines.len() {
        let line = file.line(number);
        let hit = pattern
            .find_iter(line)
            .find(|m| !(skip_quoted && after_quote(line, m.start())));
        let Some(hit) = hit else { continue };
        if unless.is_some_and(|u| u.is_match(line)) {
            continue;
        }
        sink.push(rule, number, excerpt(line, hit.start()), None);
    }
}

/// Each line `pattern` matches with a line `context` matches at most `within` lines away; the
/// detail shows that other line.
fn near_lines(
    rule: &'static Rule,
    pattern: &Regex,
    context: &Regex,
    within: usize,
    file: &Text<'_>,
    sink: &mut Sink<'_>,
) {
    let count = file.lines.len();
    let nearby: Vec<bool> = (0..count).map(|n| context.is_match(file.line(n))).collect();
    for number in 0..count {
        let line = file.line(number);
        let Some(hit) = pattern.find(line) else {
            continue;
        };
        let from = number.saturating_sub(within);
        let to = (number + within).min(count - 1);
        if let Some(other) = (from..=to).find(|&n| nearby[n]) {
            let shown = (other != number)
                .then(|| format!("line {}: {}", other + 1, excerpt(file.line(other), 0)));
            sink.push(rule, number, excerpt(line, hit.start()), shown);
        }
    }
}

/// The first match of `pattern` inside each HTML comment; the detail is the comment.
fn in_comments(
    rule: &'static Rule,
    pattern: &Regex,
    comments: &Regex,
    file: &Text<'_>,
    sink: &mut Sink<'_>,
) {
    for comment in comments.captures_iter(file.text) {
        let Some(inner) = comment.get(1) else {
            continue;
        };
        if let Some(hit) = pattern.find(inner.as_str()) {
            let (number, at) = file.locate(inner.start() + hit.start());
            sink.push(
                rule,
                number,
                excerpt(file.line(number), at),
                Some(detail(&fold(inner.as_str()))),
            );
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
    file: &Text<'_>,
    sink: &mut Sink<'_>,
) {
    let Some(script) = script_kind(path, file.text) else {
        return;
    };
    if capability == Capability::Shell && script == Script::Shell {
        sink.push(
            rule,
            0,
            excerpt(file.line(0), 0),
            Some("a shell script: running it at all needs Bash".to_string()),
        );
        return;
    }
    let found = (0..file.lines.len()).find_map(|n| pattern.find(file.line(n)).map(|m| (n, m)));
    if let Some((number, hit)) = found {
        sink.push(rule, number, excerpt(file.line(number), hit.start()), None);
    }
}

/// Whether the match at `at` starts right after an opening quote or backtick: a quoted label
/// in explanatory prose, not an instruction.
fn after_quote(line: &str, at: usize) -> bool {
    line[..at]
        .chars()
        .next_back()
        .is_some_and(|c| matches!(c, '"' | '\'' | '`' | '“' | '‘' | '«' | '„'))
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
    file: &Text<'_>,
    sink: &mut Sink<'_>,
) {
    let text = file.text;
    let firsts: Vec<(usize, usize)> = first
        .find_iter(text)
        .take(MAX_NEAR_MATCHES)
        .map(|m| (m.start(), m.end()))
        .collect();
    if firsts.is_empty() {
        return;
    }
    let seconds: Vec<(usize, usize)> = second
        .find_iter(text)
        .take(MAX_NEAR_MATCHES)
        .map(|m| (m.start(), m.end()))
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
        let Some(&(other, _)) = close else { continue };
        let (number, at) = file.locate(start.min(other));
        if last_line == Some(number) {
            continue;
        }
        last_line = Some(number);
        sink.push(rule, number, excerpt(file.line(number), at), None);
    }
}

/// Runs a character rule over the text.
fn chars(rule: &'static Rule, class: CharClass, file: &Text<'_>, sink: &mut Sink<'_>) {
    let text = file.text;
    match class {
        CharClass::ZeroWidth => {
            let mut count = 0;
            let mut first = None;
            for (at, c) in text.char_indices() {
                if matches!(c, '\u{200b}'..='\u{200d}' | '\u{2060}') || (c == '\u{feff}' && at > 0)
                {
                    count += 1;
                    first.get_or_insert(at);
                }
            }
            let Some(first) = first else { return };
            let decodes = DECODE_OR_EVAL_RE
                .as_ref()
                .is_some_and(|re| re.is_match(text));
            if count > ZERO_WIDTH_BULK || (decodes && count > ZERO_WIDTH_NEAR_DECODE) {
                let (number, at) = file.locate(first);
                let why = if count > ZERO_WIDTH_BULK {
                    format!(
                        "{count} zero-width characters in the file (more than {ZERO_WIDTH_BULK})"
                    )
                } else {
                    format!(
                        "{count} zero-width characters in a file that decodes or evaluates (more than {ZERO_WIDTH_NEAR_DECODE})"
                    )
                };
                sink.push(rule, number, excerpt(file.line(number), at), Some(why));
            }
        }
        CharClass::Tags | CharClass::Bidi | CharClass::Separators | CharClass::VariationRun => {
            for number in 0..file.lines.len() {
                let line = file.line(number);
                if line.is_ascii() {
                    continue;
                }
                if let Some((at, found)) = line_chars(class, line) {
                    sink.push(rule, number, excerpt(line, at), Some(found));
                }
            }
        }
    }
}

/// The first offending character of `line` for a per-line class, and the detail.
fn line_chars(class: CharClass, line: &str) -> Option<(usize, String)> {
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
fn selector_byte(c: char) -> Option<u8> {
    let code = u32::from(c);
    let byte = match code {
        0xfe00..=0xfe0f => code - 0xfe00,
        0xe0100..=0xe01ef => code - 0xe0100 + 16,
        _ => return None,
    };
    u8::try_from(byte).ok()
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
mod tests {
    use super::*;

    #[test]
    fn every_pattern_compiles_as_used() {
        for (rule, compiled) in RULES.iter().zip(COMPILED.iter()) {
            let got = [&compiled.first, &compiled.second, &compiled.unless]
                .iter()
                .filter(|regex| regex.is_some())
                .count();
            assert_eq!(got, rule.matcher.patterns().len(), "{}", rule.id);
            let by_line = matches!(
                rule.matcher,
                Matcher::Line { .. } | Matcher::NearLines { .. }
            );
            assert_eq!(compiled.anywhere.is_some(), by_line, "{}", rule.id);
        }
        assert!(DECODE_OR_EVAL_RE.is_some() && HTML_COMMENT.is_some());
    }

    #[test]
    fn grants_follow_the_tool_names() {
        let tools = |list: &[&str]| {
            Grants::from_tools(&list.iter().map(|s| (*s).to_string()).collect::<Vec<_>>())
        };
        let scoped = tools(&["Read", "Bash(git:*)"]);
        assert!(scoped.grants(Capability::Shell));
        assert!(!scoped.grants(Capability::Write));
        assert!(!scoped.grants(Capability::Network));
        let any = tools(&["Bash"]);
        assert!(any.grants(Capability::Write) && any.grants(Capability::Network));
        assert!(tools(&["Bash(*)"]).grants(Capability::Network));
        assert!(tools(&["edit"]).grants(Capability::Write));
        assert!(tools(&["WebFetch"]).grants(Capability::Network));
        assert_eq!(tools(&["Read", "Grep"]), Grants::default());
    }

    #[test]
    fn scripts_are_known_by_extension_or_shebang() {
        assert_eq!(script_kind(Path::new("a/run.sh"), ""), Some(Script::Shell));
        assert_eq!(script_kind(Path::new("a/run.py"), ""), Some(Script::Other));
        assert_eq!(
            script_kind(Path::new("a/run"), "#!/usr/bin/env bash\necho"),
            Some(Script::Shell)
        );
        assert_eq!(
            script_kind(Path::new("a/run"), "#!/usr/bin/python3\n"),
            Some(Script::Other)
        );
        assert_eq!(script_kind(Path::new("a/README.md"), "#!/bin/sh"), None);
        assert_eq!(script_kind(Path::new("a/notes"), "plain"), None);
    }

    #[test]
    fn formats_are_told_apart() {
        assert!(matches!(classify(b"\x7fELF\x02"), Content::Executable(_)));
        let mut pe = vec![0_u8; 0x80];
        pe[..2].copy_from_slice(b"MZ");
        pe[0x3c] = 0x40;
        pe[0x40..0x44].copy_from_slice(b"PE\0\0");
        assert!(matches!(classify(&pe), Content::Executable(_)));
        // "MZ" text without a PE header is text.
        assert!(matches!(classify(b"MZ is a postcode"), Content::Text(_)));
        assert!(matches!(classify(b"%PDF-1.7\n\x00\x01"), Content::Known));
        assert!(matches!(classify(b"\x00\x01\x02"), Content::Unknown));
        let utf16: Vec<u8> = [0xff, 0xfe]
            .into_iter()
            .chain("hi".encode_utf16().flat_map(u16::to_le_bytes))
            .collect();
        assert!(matches!(classify(&utf16), Content::Text(text) if text == "hi"));
    }
}
