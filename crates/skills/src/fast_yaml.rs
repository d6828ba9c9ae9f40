//! A fast path for the frontmatter shapes nearly every skill uses: `key: value` lines with plain
//! or simply quoted string values, and one level of nested `key: value` mappings (`metadata:`).
//!
//! It accepts only text whose meaning under the real YAML parser is certain, and returns `None`
//! for anything else (block scalars with subtleties, lists, nested flow collections, escapes,
//! comments after values, anything that could be a number, boolean or null, duplicate keys), so
//! the caller falls back to the real parser. In particular it answers only for text whose
//! whitespace is ASCII spaces and line feeds (no tab, no-break or other Unicode space, no line or
//! paragraph separator, which the real parser reads as a line break), with no control character
//! or noncharacter anywhere, and with no line of only spaces inside or after a block scalar
//! (where the real parser may keep the spaces as content). Differential tests over the corpus and
//! over thousands of generated documents check that whenever it answers, the real parser gives
//! the same mapping. It exists because discovery parses thousands of frontmatters at startup and
//! the real parser costs about 10 µs each. It takes time linear in the text.

use yaml_serde::{Mapping, Value};

/// Parses `yaml` if it is made only of the simple shapes; `None` means "ask the real parser".
pub(crate) fn parse_simple_mapping(yaml: &str) -> Option<Mapping> {
    let unsettled = if yaml.is_ascii() {
        yaml.bytes()
            .any(|byte| (byte < b' ' && byte != b'\n' && byte != b'\r') || byte == 0x7F)
    } else {
        yaml.chars().any(is_unsettled_char)
    };
    if unsettled {
        return None;
    }
    let lines: Vec<&str> = yaml
        .split('\n')
        .map(|line| line.strip_suffix('\r').unwrap_or(line))
        .collect();
    let mut top = Mapping::new();
    // The key of a nested mapping being filled, its indentation, and its entries.
    let mut nested: Option<(String, usize, Mapping)> = None;
    // After a block scalar, a line of only spaces may belong to it (as content): not ours.
    let mut after_block_scalar = false;
    let mut index = 0;
    while index < lines.len() {
        let line = lines[index];
        index += 1;
        if line.contains(['\t', '\r']) || (after_block_scalar && is_spaces(line)) {
            return None;
        }
        if is_blank(line) || line.starts_with('#') {
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
                        after_block_scalar = true;
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

/// Characters on which the real parser's reading is not plainly the obvious one: whitespace
/// other than the ASCII space and line feed (tabs, no-break and other Unicode spaces, NEL, the
/// line and paragraph separators, which it takes for line breaks), control characters, the byte
/// order mark, and noncharacters (U+FFFE, U+FFFF and the like, U+FDD0 to U+FDEF), some of which
/// it refuses.
fn is_unsettled_char(c: char) -> bool {
    (c.is_whitespace() && !matches!(c, ' ' | '\n' | '\r'))
        || (c.is_control() && c != '\n' && c != '\r')
        || c == '\u{feff}'
        || ('\u{fdd0}'..='\u{fdef}').contains(&c)
        || (u32::from(c) & 0xFFFE) == 0xFFFE
}

/// A line that is empty or only spaces.
fn is_blank(line: &str) -> bool {
    line.bytes().all(|b| b == b' ')
}

/// A line of one space or more and nothing else.
fn is_spaces(line: &str) -> bool {
    !line.is_empty() && is_blank(line)
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
/// same, no blank lines inside, no trailing spaces, no line of only spaces (the cases where
/// folding has no subtleties). Returns the text and how many lines it used.
fn block_scalar(style: BlockStyle, lines: &[&str]) -> Option<(String, usize)> {
    let mut content: Vec<&str> = Vec::new();
    let mut indent = 0;
    let mut used = 0;
    for line in lines {
        let this_indent = line.len() - line.trim_start_matches(' ').len();
        if is_spaces(line) {
            return None;
        }
        if line.is_empty() {
            // An empty line may only end the block (before the next key or the end).
            if lines[used..].iter().all(|rest| rest.is_empty())
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

/// A deterministic generator of YAML-ish frontmatters for the differential tests here and in
/// `frontmatter`: keys, plain and quoted scalars, block scalars with their indentation and
/// blank lines, flow and block lists, comments, multi-line scalars, aliases and near misses,
/// tabs, Unicode spaces, line and paragraph separators, noncharacters, CRLF.
#[cfg(test)]
pub(crate) mod generated {
    /// A linear congruential generator: the same documents on every run.
    pub(crate) struct Lcg(u64);

    impl Lcg {
        pub(crate) fn new(seed: u64) -> Self {
            Self(seed)
        }

        pub(crate) fn below(&mut self, n: usize) -> usize {
            self.0 = self
                .0
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            usize::try_from(self.0 >> 33).unwrap_or(0) % n
        }

        fn chance(&mut self, percent: usize) -> bool {
            self.below(100) < percent
        }

        fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
            items[self.below(items.len())]
        }
    }

    /// Aliases are always `*zz…` and anchors `&aa…`, so an alias never resolves: the real parser
    /// says "unknown anchor" exactly when it meets an alias token.
    const TAME_KEYS: &[&str] = &[
        "name",
        "description",
        "license",
        "metadata",
        "a",
        "b_c",
        "x-y",
    ];
    const WILD_KEYS: &[&str] = &[
        "k1", "Name", "yes", "on", "null", "true", "123", "-k", "ké", "\"q\"", "'s'", "[a]", "? a",
        "*zz", "&aa k", "a b", "- a", "!t k",
    ];
    const TAME_WORDS: &[&str] = &[
        "pdf",
        "Work with PDF files",
        "x",
        "true",
        "1",
        "-3",
        "1.0.2",
        "Über, 技能",
        "use *bold* text",
        "a:b",
        "a#b",
        "\"quoted\"",
        "'it''s'",
        "[a, b]",
        "[]",
        "ends   ",
        "'*'",
        "\"*.md\"",
        "v*",
    ];
    const WILD_WORDS: &[&str] = &[
        "False",
        "yes",
        "no",
        "~",
        "null",
        "012",
        "1.0",
        "0x1F",
        "0o7",
        "1_000",
        ".inf",
        "+5",
        "1e3",
        "nan",
        "inf",
        "a: b",
        "a #b",
        "*zz",
        "*zz*",
        "* item",
        "*.md",
        "*zz.md",
        "&aa x",
        "&aa *zz",
        "!t x",
        "!t *zz",
        "!!str 5",
        "\"*zz\"",
        "'*zz'",
        "\"esc \\\" q\"",
        "\"esc \\\\\"",
        "'unbalanced",
        "\"unclosed",
        "-",
        "- x",
        "- *zz",
        "-x",
        "?",
        "? x",
        ":x",
        "@x",
        "`x`",
        "%x",
        "[x]",
        "[a, *zz]",
        "[*zz]",
        "[a, [b, c]]",
        "[a *zz]",
        "{a: b}",
        "{a: *zz}",
        "{*zz: a}",
        "{}",
        "a\u{a0}b",
        "\u{a0}",
        "a\u{2028}b",
        "\u{2029}",
        "a\u{85}b",
        "\u{3000}x",
        "x\u{feff}",
        "\u{fdd0}",
        "\u{fffe}",
        "\u{7}",
        "a\tb",
        "|",
        ">",
        "a, b",
        "[a, 'b, c']",
        "[a, , b]",
        "Use when: *zz",
        "Use when: x",
        "x: *zz",
        "a: b: c",
        "see *zz",
        "*zz # c",
        "x # *zz",
        "#*zz",
        "a *zz b",
        "[a,\n  *zz]",
        "'a\n  *zz'",
        "\"a\n  *zz\"",
        "[a,\n*zz]",
        "*zz]",
        "[*zz,",
    ];
    const TAME_INDENTS: &[&str] = &["  ", "    "];
    const WILD_INDENTS: &[&str] = &[" ", "   ", "\t", "\u{a0}", " \t", "", "      "];
    const TAME_BLANKS: &[&str] = &["", "", " ", "    "];
    const WILD_BLANKS: &[&str] = &["\t", "\u{a0}", "\u{2028}", "\u{3000}", "\u{85}"];
    const TAME_HEADERS: &[&str] = &["|", "|-", ">", ">-"];
    const WILD_HEADERS: &[&str] = &[
        "|+", ">+", "|2", ">1-", "| # c", "|0", "|-  ", "> *zz", "|\t", "|\u{a0}",
    ];
    const TAME_BLOCK_LINES: &[&str] = &["text", "more text", "*bold* text", "a: b", "- item"];
    const WILD_BLOCK_LINES: &[&str] = &[
        "*zz",
        "- *zz",
        "key: *zz",
        "[*zz]",
        "'",
        "\"",
        "# not a comment",
        "ends  ",
        "---x",
        "\u{2028}",
        "a\u{a0}",
    ];

    /// Picks mostly from `tame`, and from `wild` at the document's rate.
    struct Picker<'r> {
        rng: &'r mut Lcg,
        wild_percent: usize,
    }

    impl Picker<'_> {
        fn pick(&mut self, tame: &[&'static str], wild: &[&'static str]) -> &'static str {
            if self.rng.chance(self.wild_percent) {
                self.rng.pick(wild)
            } else {
                self.rng.pick(tame)
            }
        }

        fn key(&mut self) -> &'static str {
            self.pick(TAME_KEYS, WILD_KEYS)
        }

        fn word(&mut self) -> &'static str {
            self.pick(TAME_WORDS, WILD_WORDS)
        }

        fn indent(&mut self) -> &'static str {
            self.pick(TAME_INDENTS, WILD_INDENTS)
        }

        fn blank(&mut self) -> &'static str {
            self.pick(TAME_BLANKS, WILD_BLANKS)
        }

        fn value(&mut self, doc: &mut String) {
            doc.push_str(self.word());
            if self.rng.chance(self.wild_percent / 2) {
                doc.push_str(self.rng.pick(&["  ", " # comment *zz", "\t", " ", "#x"]));
            }
        }

        fn nested_mapping(&mut self, key: &str, doc: &mut String) {
            doc.push_str(key);
            doc.push_str(":\n");
            let indent = self.indent();
            for _ in 0..=self.rng.below(3) {
                let this = if self.rng.chance(90) {
                    indent
                } else {
                    self.indent()
                };
                doc.push_str(this);
                doc.push_str(self.key());
                doc.push_str(": ");
                self.value(doc);
                doc.push('\n');
            }
        }

        fn block_scalar(&mut self, key: &str, doc: &mut String) {
            doc.push_str(key);
            doc.push_str(": ");
            doc.push_str(self.pick(TAME_HEADERS, WILD_HEADERS));
            doc.push('\n');
            let indent = self.indent();
            for _ in 0..=self.rng.below(4) {
                if self.rng.chance(20) {
                    doc.push_str(self.blank());
                } else {
                    let this = if self.rng.chance(85) {
                        indent
                    } else {
                        self.indent()
                    };
                    doc.push_str(this);
                    if self.rng.chance(self.wild_percent) {
                        doc.push(' ');
                    }
                    let line = if self.rng.chance(50) {
                        self.pick(TAME_BLOCK_LINES, WILD_BLOCK_LINES)
                    } else {
                        self.word()
                    };
                    doc.push_str(line);
                }
                doc.push('\n');
            }
        }

        /// A plain or quoted scalar going on over a second line.
        fn multi_line_scalar(&mut self, key: &str, doc: &mut String) {
            doc.push_str(key);
            doc.push_str(": ");
            let quote = if self.rng.chance(50) {
                self.rng.pick(&["'", "\""])
            } else {
                ""
            };
            doc.push_str(quote);
            self.value(doc);
            doc.push('\n');
            doc.push_str(self.indent());
            self.value(doc);
            doc.push_str(quote);
            doc.push('\n');
        }
    }

    /// One frontmatter (the YAML between the fences).
    pub(crate) fn document(rng: &mut Lcg) -> String {
        let wild_percent = [0, 2, 5, 10, 30, 60][rng.below(6)];
        let mut p = Picker { rng, wild_percent };
        let mut doc = String::new();
        for _ in 0..=p.rng.below(6) {
            let key = p.key();
            match p.rng.below(13) {
                0..=3 => {
                    doc.push_str(key);
                    doc.push_str(": ");
                    p.value(&mut doc);
                    doc.push('\n');
                }
                4 => p.nested_mapping(key, &mut doc),
                5 | 6 => p.block_scalar(key, &mut doc),
                7 => {
                    doc.push_str(key);
                    doc.push_str(": [");
                    for item in 0..p.rng.below(4) {
                        if item > 0 {
                            doc.push_str(", ");
                        }
                        doc.push_str(p.word());
                    }
                    doc.push_str("]\n");
                }
                8 => {
                    doc.push_str(key);
                    doc.push_str(":\n");
                    let indent = p.rng.pick(&["", "  ", "    "]);
                    for _ in 0..=p.rng.below(3) {
                        doc.push_str(indent);
                        doc.push_str("- ");
                        p.value(&mut doc);
                        doc.push('\n');
                    }
                }
                9 => {
                    let comment = p.pick(
                        &["# comment *zz", "#", "  # indented", ""],
                        &["# \u{7}", "#\u{fffe}"],
                    );
                    doc.push_str(comment);
                    doc.push_str(p.blank());
                    doc.push('\n');
                }
                10 | 11 => p.multi_line_scalar(key, &mut doc),
                _ => {
                    doc.push_str(p.blank());
                    doc.push('\n');
                }
            }
        }
        if p.rng.chance(10) {
            doc = doc.replace('\n', "\r\n");
        }
        doc
    }
}

#[cfg(test)]
mod tests;
