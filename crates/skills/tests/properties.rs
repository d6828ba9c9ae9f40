//! Property tests with fixed budgets (run by `cargo test`; `scripts/fuzz.sh` runs the same
//! properties for longer): frontmatter parsing, the catalog's budget, path confinement, and the
//! cleaning of descriptions.
//!
//! Each property runs the number of cases given at its call of [`check`] (about a second each in
//! a debug build), or `PROPTEST_CASES` when set. A failing case is shrunk, and its seed saved in
//! `proptest-regressions/properties.txt` (commit it): every later run replays the saved seeds
//! first. `PROPTEST_RNG_SEED` fixes the random seed of a run.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stderr,
    reason = "test helpers"
)]

use std::collections::BTreeMap;
use std::fmt::{Debug, Write as _};
use std::fs;
use std::path::{Component, Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use proptest::prelude::*;
use proptest::sample::{Index, select};
use proptest::test_runner::TestCaseResult;
use skillet_skills::confine::Beneath;
use skillet_skills::{
    CatalogFormat, Frontmatter, FrontmatterStatus, Invoker, Root, RootKind, Skill,
    clean_description, discover, neutralize_wrapper, read_in_skill, render_catalog,
    resolve_in_skill, validate_text, xml_escape,
};
use yaml_serde::Value;

/// Where failing cases are saved and replayed from (committed).
const REGRESSIONS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/proptest-regressions/properties.txt"
);

/// [`skillet_test_support::check_property`] with this file's regressions.
fn check<S>(name: &str, cases: u32, strategy: S, test: impl Fn(S::Value) -> TestCaseResult)
where
    S: Strategy,
    S::Value: Debug,
{
    skillet_test_support::check_property(REGRESSIONS, name, cases, strategy, test);
}

// ---------------------------------------------------------------------------------------------
// Frontmatter: generated documents, after `fast_yaml::generated` (whose tame and wild pieces are
// copied here), as proptest strategies that shrink.

/// Keys mostly of fields whose values [`Frontmatter`] keeps as they are, so a fast path that
/// read a value differently from the real parser shows.
const TAME_KEYS: &[&str] = &[
    "license",
    "compatibility",
    "argument-hint",
    "metadata",
    "name",
    "description",
    "tags",
    "allowed-tools",
    "disable-model-invocation",
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
    "&aa x",
    "!t x",
    "!!str 5",
    "\"*zz\"",
    "\"esc \\\" q\"",
    "{a: b}",
    "{}",
    "a\u{a0}b",
    "a\u{2028}b",
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
    "Use when: x",
    "a: b: c",
    "x # *zz",
    "[a,\n  *zz]",
    "'a\n  b'",
    "\"a\n  b\"",
    "[a,\nb]",
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
    "key: *zz",
    "'",
    "\"",
    "# not a comment",
    "ends  ",
    "---x",
    "\u{2028}",
    "a\u{a0}",
];

/// How often a document's pieces are wild (in 100), as in `fast_yaml::generated`: many
/// documents are wholly tame, so that the fast path answers for them.
type Wild = u32;

/// From `tame`, or from `wild` `wild_rate` times in 100; shrinks towards the first tame piece.
fn piece(
    tame: &'static [&'static str],
    wild: &'static [&'static str],
    wild_rate: Wild,
) -> BoxedStrategy<String> {
    if wild_rate == 0 {
        return select(tame).prop_map(String::from).boxed();
    }
    prop_oneof![
        100 - wild_rate => select(tame).prop_map(String::from),
        wild_rate => select(wild).prop_map(String::from),
    ]
    .boxed()
}

fn key(wild: Wild) -> BoxedStrategy<String> {
    piece(TAME_KEYS, WILD_KEYS, wild)
}

/// A scalar's text: the pieces above, plus made-up words and, when wild, any text.
fn word(wild: Wild) -> BoxedStrategy<String> {
    let tame = prop_oneof![
        4 => select(TAME_WORDS).prop_map(String::from),
        1 => "[a-zA-Z][a-zA-Z0-9 ,.()/_é-]{0,15}[a-zA-Z0-9é.)]",
    ];
    if wild == 0 {
        return tame.boxed();
    }
    prop_oneof![
        100 - wild => tame,
        wild => prop_oneof![
            4 => select(WILD_WORDS).prop_map(String::from),
            2 => "[a-zA-Z][a-zA-Z0-9 ,.()/_*'\":#&!|>-]{0,15}",
            1 => "\\PC{1,10}",
            1 => "[^\n]{1,6}",
        ],
    ]
    .boxed()
}

fn value(wild: Wild) -> BoxedStrategy<String> {
    let suffix = prop_oneof![
        100 - wild / 2 => Just(""),
        wild / 2 => select(&["  ", " # comment *zz", "\t", " ", "#x"][..]),
    ];
    (word(wild), suffix)
        .prop_map(|(word, suffix)| word + suffix)
        .boxed()
}

fn indent(wild: Wild) -> BoxedStrategy<String> {
    piece(TAME_INDENTS, WILD_INDENTS, wild)
}

fn blank(wild: Wild) -> BoxedStrategy<String> {
    piece(TAME_BLANKS, WILD_BLANKS, wild)
}

/// `key: value` lines, nested mappings, block scalars, flow and block lists, comments,
/// multi-line scalars and blank lines.
fn item(wild: Wild) -> BoxedStrategy<String> {
    let simple = (key(wild), value(wild)).prop_map(|(key, value)| format!("{key}: {value}\n"));
    let nested = (
        key(wild),
        indent(wild),
        prop::collection::vec(
            (
                prop::option::weighted(0.1, indent(wild)),
                key(wild),
                value(wild),
            ),
            1..=3,
        ),
    )
        .prop_map(|(key, indent, entries)| {
            let mut doc = format!("{key}:\n");
            for (other, key, value) in entries {
                doc.push_str(other.as_deref().unwrap_or(&indent));
                let _ = writeln!(doc, "{key}: {value}");
            }
            doc
        });
    let block_line = prop_oneof![
        1 => blank(wild).prop_map(|blank| (None, false, blank, true)),
        4 => (
            prop::option::weighted(0.15, indent(wild)),
            prop::bool::weighted(f64::from(wild) / 100.0),
            prop_oneof![piece(TAME_BLOCK_LINES, WILD_BLOCK_LINES, wild), word(wild)],
        )
            .prop_map(|(other, extra, line)| (other, extra, line, false)),
    ];
    let block = (
        key(wild),
        piece(TAME_HEADERS, WILD_HEADERS, wild),
        indent(wild),
        prop::collection::vec(block_line, 1..=4),
    )
        .prop_map(|(key, header, indent, lines)| {
            let mut doc = format!("{key}: {header}\n");
            for (other, extra, line, is_blank) in lines {
                if !is_blank {
                    doc.push_str(other.as_deref().unwrap_or(&indent));
                    if extra {
                        doc.push(' ');
                    }
                }
                doc.push_str(&line);
                doc.push('\n');
            }
            doc
        });
    let flow = (key(wild), prop::collection::vec(word(wild), 0..4))
        .prop_map(|(key, items)| format!("{key}: [{}]\n", items.join(", ")));
    let list = (
        key(wild),
        select(&["", "  ", "    "][..]),
        prop::collection::vec(value(wild), 1..=3),
    )
        .prop_map(|(key, indent, items)| {
            let mut doc = format!("{key}:\n");
            for item in items {
                let _ = writeln!(doc, "{indent}- {item}");
            }
            doc
        });
    let comment = (
        piece(
            &["# comment *zz", "#", "  # indented", ""],
            &["# \u{7}", "#\u{fffe}"],
            wild,
        ),
        blank(wild),
    )
        .prop_map(|(comment, blank)| format!("{comment}{blank}\n"));
    let multi_line = (
        key(wild),
        select(&["", "", "'", "\""][..]),
        value(wild),
        indent(wild),
        value(wild),
    )
        .prop_map(|(key, quote, first, indent, second)| {
            format!("{key}: {quote}{first}\n{indent}{second}{quote}\n")
        });
    // Tame documents keep to the shapes the fast path takes (no block lists, no scalars going
    // on over lines), so that it answers for many of them.
    let (list_weight, multi_line_weight) = if wild == 0 { (0, 0) } else { (1, 2) };
    prop_oneof![
        4 => simple,
        1 => nested,
        2 => block,
        1 => flow,
        list_weight => list,
        1 => comment,
        multi_line_weight => multi_line,
        1 => blank(wild).prop_map(|blank| format!("{blank}\n")),
    ]
    .boxed()
}

/// One frontmatter (the YAML between the fences), with CRLF line ends one time in ten; a
/// document is tame throughout or wild at one rate throughout.
fn document() -> BoxedStrategy<String> {
    // Built once per rate (a strategy per case would compile its regular expressions anew).
    let at_rate = |wild: Wild| {
        (
            prop::collection::vec(item(wild), 1..=6),
            prop::bool::weighted(0.1),
        )
            .prop_map(|(items, crlf)| {
                let doc = items.concat();
                if crlf { doc.replace('\n', "\r\n") } else { doc }
            })
    };
    prop_oneof![
        3 => at_rate(0),
        1 => at_rate(2),
        1 => at_rate(5),
        1 => at_rate(10),
        1 => at_rate(30),
        1 => at_rate(60),
    ]
    .boxed()
}

/// Runs of YAML's indicators, words, spaces and breaks (the pre-scan's test pieces).
fn token_soup() -> BoxedStrategy<String> {
    const PIECES: &[&str] = &[
        "a", "b c", "k", " ", " ", "  ", "\n", "\n", "\n  ", "\n    ", ": ", ":", "- ", "-", "? ",
        "?", "[", "]", "{", "}", ", ", ",", "'", "\"", "\\", "''", "#", " #", "*zz", "*", "&aa",
        "&aa ", "!t ", "!", "!<x>", "|", ">", "|-", "|2", "---", "...", "%", "\t", "\r\n", "\r",
        "@", "`", "\u{a0}", "\u{2028}", "\u{85}", "é", "x:y",
    ];
    prop::collection::vec(select(PIECES), 1..40)
        .prop_map(|pieces| pieces.concat())
        .boxed()
}

/// A line that closes a frontmatter.
fn is_fence(line: &str) -> bool {
    line.trim_end_matches([' ', '\t', '\r']) == "---"
}

/// Writes `text` as the one skill of a fresh root and discovers it.
fn discover_one(root: &Path, text: &[u8]) -> skillet_skills::Library {
    let skill = root.join("s");
    fs::create_dir_all(&skill).unwrap();
    fs::write(skill.join("SKILL.md"), text).unwrap();
    discover(&[Root::new(root, RootKind::Explicit)])
}

/// What a frontmatter's status says about the mapping, as the real parser would tell it.
#[derive(Debug, PartialEq, Eq)]
enum Outcome {
    Mapping,
    /// Empty or not a mapping: both give the same diagnostic.
    NoMapping,
    /// The real parser refused it.
    Refused,
}

/// Whenever the real parser (`yaml_serde`) reads a generated frontmatter, discovery gives the
/// same fields from it; whenever it refuses one, discovery does not call it parsed (which the fast
/// path answering would). The fields are compared through [`Frontmatter`], the public view of the
/// mapping: strings as they are, lists, metadata, booleans, the names of unknown keys.
#[test]
fn frontmatter_fast_path_agrees_with_the_real_parser() {
    let temp = tempfile::tempdir().unwrap();
    let outcomes = Mutex::new(BTreeMap::<String, usize>::new());
    check("frontmatter_fast_path_agrees", 512, document(), |yaml| {
        prop_assume!(!yaml.lines().any(is_fence));
        let text = format!("---\n{yaml}---\nThe body.\n");
        let library = discover_one(temp.path(), text.as_bytes());
        prop_assert_eq!(library.skills().len(), 1, "{:?}", library.diagnostics());
        let skill = &library.skills()[0];
        let real = yaml_serde::from_str::<Value>(&yaml);
        let expected = match &real {
            // Blank text (Unicode spaces included) is empty without asking the parser.
            _ if yaml.trim().is_empty() => Outcome::NoMapping,
            Ok(Value::Mapping(mapping)) if !mapping.is_empty() => Outcome::Mapping,
            Ok(_) => Outcome::NoMapping,
            Err(_) => Outcome::Refused,
        };
        let got = match &skill.status {
            FrontmatterStatus::Parsed => Outcome::Mapping,
            FrontmatterStatus::Empty | FrontmatterStatus::NotMapping => Outcome::NoMapping,
            FrontmatterStatus::RecoveredByQuoting { .. }
            | FrontmatterStatus::InvalidYaml { .. } => Outcome::Refused,
            other => return Err(TestCaseError::fail(format!("status {other:?}"))),
        };
        prop_assert_eq!(
            &got,
            &expected,
            "status {:?}, real parser {:?}",
            skill.status,
            real
        );
        *outcomes
            .lock()
            .unwrap()
            .entry(format!("{got:?}"))
            .or_default() += 1;
        if let Ok(Value::Mapping(mapping)) = &real
            && got == Outcome::Mapping
        {
            prop_assert_eq!(&skill.frontmatter, &Frontmatter::from_mapping(mapping));
        }
        Ok(())
    });
    // The generator must reach documents the real parser reads, or the comparison says little.
    let outcomes = outcomes.into_inner().unwrap();
    eprintln!("frontmatter outcomes: {outcomes:?}");
    let total: usize = outcomes.values().sum();
    assert!(total < 100 || outcomes.get("Mapping").copied().unwrap_or(0) * 3 > total);
}

/// Any text, and frontmatters of YAML's token soup or generated documents with characters
/// inserted anywhere: validation never panics.
#[test]
fn frontmatter_parsing_never_panics() {
    let mangled = (
        document(),
        prop::collection::vec((any::<prop::sample::Index>(), any::<char>()), 0..4),
    )
        .prop_map(|(doc, inserts)| {
            let mut chars: Vec<char> = format!("---\n{doc}---\nbody\n").chars().collect();
            for (at, c) in inserts {
                let at = at.index(chars.len() + 1);
                chars.insert(at, c);
            }
            chars.into_iter().collect::<String>()
        });
    let texts = prop_oneof![
        any::<String>(),
        (token_soup(), any::<String>())
            .prop_map(|(yaml, body)| format!("---\n{yaml}\n---\n{body}")),
        (prop::bool::ANY, document()).prop_map(|(bom, yaml)| {
            format!("{}---\n{yaml}---\n", if bom { "\u{feff}" } else { "" })
        }),
        mangled,
    ];
    check("frontmatter_parsing_never_panics", 4096, texts, |text| {
        let validation = validate_text(&text, Path::new("s/SKILL.md"), Path::new("s"));
        prop_assert!(validation.is_valid() || validation.errors().next().is_some());
        Ok(())
    });
}

/// Any bytes as a skill file, up to past the prefix discovery reads first: discovery, loading
/// and reading the body never panic (discovery would turn a panic into an "internal error").
#[test]
fn discovery_never_panics_on_any_bytes() {
    let temp = tempfile::tempdir().unwrap();
    let long_document = (document(), 0..6000usize).prop_map(|(yaml, pad)| {
        // Lines of padding push the closing fence past the first read.
        format!("---\n{yaml}{}---\nbody\n", "# pad\n".repeat(pad / 6)).into_bytes()
    });
    let flipped = (
        long_document.clone(),
        prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
    )
        .prop_map(|(mut bytes, flips)| {
            for (at, byte) in flips {
                let at = at.index(bytes.len());
                bytes[at] = byte;
            }
            bytes
        });
    let files = prop_oneof![
        prop::collection::vec(any::<u8>(), 0..200),
        long_document,
        flipped,
    ];
    check("discovery_never_panics", 256, files, |bytes| {
        let library = discover_one(temp.path(), &bytes);
        for diagnostic in library.diagnostics() {
            prop_assert!(
                !diagnostic.to_string().contains("internal error"),
                "{diagnostic}"
            );
        }
        for skill in library.skills() {
            let _ = skill.read_body();
            let _ = library.load(&skill.name, Invoker::Model);
            let _ = library.load(&skill.name, Invoker::User);
        }
        Ok(())
    });
}

// ---------------------------------------------------------------------------------------------
// The catalog.

/// A skill as discovery would give it, for the catalog only.
fn catalog_skill(
    index: usize,
    name: String,
    description: String,
    tags: Vec<String>,
    hidden: bool,
) -> Skill {
    let dir = PathBuf::from(format!("/skills/{index}"));
    Skill {
        name,
        description,
        frontmatter: Frontmatter {
            tags,
            disable_model_invocation: hidden,
            user_invocable: true,
            ..Frontmatter::default()
        },
        status: FrontmatterStatus::Parsed,
        file: dir.join("SKILL.md"),
        dir,
        root: PathBuf::from("/skills"),
        root_kind: RootKind::Explicit,
        diagnostics: Vec::new(),
        shadowed: Vec::new(),
        form: skillet_skills::Form::Folder,
    }
}

/// Names and descriptions with multibyte, combining, zero-width and markup characters.
fn catalog_text(max: usize) -> BoxedStrategy<String> {
    // Picked from lists rather than generated from regular expressions: cheaper by far.
    const WORDS: &[&str] = &[
        "a",
        "pdf",
        "forms",
        "extract",
        "Use",
        "when",
        "the",
        "user",
        "asks",
        "to",
        "work",
        "with",
        "documents",
        "spreadsheets",
        "and",
        "charts",
        "quickly",
        "é",
        "日本",
        "👍🏽",
        "a\u{301}",
        "\u{200b}",
        "…",
        "&",
        "<b>",
        "'",
        "\"",
        ":",
        "x…y",
        "\u{feff}",
    ];
    let words = prop::collection::vec(
        prop_oneof![
            8 => select(WORDS).prop_map(String::from),
            1 => any::<char>().prop_map(String::from),
        ],
        0..=max / 4,
    )
    .prop_map(|words| words.join(" "));
    prop_oneof![
        4 => words,
        1 => "\\PC{0,40}",
        1 => "[a-z][a-z0-9-]{0,63}",
    ]
    .boxed()
}

/// Where `rest` starts with the entry (its head, its description whole or, when `shortened`, cut
/// short, its tail and separator), how many bytes the entry takes; `None` when it does not.
/// `ends`: the entry must end `rest` (the list's last line, whose tail alone cannot tell where a
/// description containing `…` stops).
fn match_entry(
    rest: &str,
    head: &str,
    description: &str,
    shortened: bool,
    tail: &str,
    ends: bool,
) -> Option<usize> {
    let after_head = rest.strip_prefix(head)?;
    if let Some(after) = after_head
        .strip_prefix(description)
        .and_then(|after| after.strip_prefix(tail))
        .filter(|after| !ends || after.is_empty())
    {
        return Some(rest.len() - after.len());
    }
    if !shortened {
        return None;
    }
    // A shortened description is a prefix of the full one (trailing spaces trimmed) and `…`.
    let ending = format!("…{tail}");
    let mut from = 0;
    while let Some(found) = after_head[from..].find(&ending) {
        let at = from + found;
        let used = head.len() + at + ending.len();
        if description.starts_with(&after_head[..at]) && (!ends || used == rest.len()) {
            return Some(used);
        }
        from = at + '…'.len_utf8();
    }
    None
}

#[derive(Debug, Clone)]
struct CatalogCase {
    skills: Vec<(String, String, Vec<String>, bool)>,
    format: CatalogFormat,
    budget: usize,
}

fn catalog_case() -> impl Strategy<Value = CatalogCase> {
    let skill = (
        catalog_text(24),
        catalog_text(600),
        prop::collection::vec("[a-z]{1,6}", 0..3),
        prop::bool::weighted(0.1),
    );
    (
        prop::collection::vec(skill, 0..12),
        prop_oneof![Just(CatalogFormat::List), Just(CatalogFormat::Xml)],
        prop_oneof![0..200usize, 0..3000usize, 0..20_000usize],
    )
        .prop_map(|(skills, format, budget)| CatalogCase {
            skills,
            format,
            budget,
        })
}

/// Whatever the names and descriptions, the catalog never exceeds its budget; each skill listed
/// is shown with its whole name, in order, its description whole or a prefix of it ending in `…`;
/// the others are reported as dropped, from the end; nothing is cut when the whole fits.
#[test]
fn catalog_fits_its_budget_and_keeps_names_whole() {
    check("catalog_fits_its_budget", 1024, catalog_case(), |case| {
        let skills: Vec<Skill> = case
            .skills
            .iter()
            .enumerate()
            .map(|(index, (name, description, tags, hidden))| {
                catalog_skill(
                    index,
                    name.clone(),
                    description.clone(),
                    tags.clone(),
                    *hidden,
                )
            })
            .collect();
        let catalog = render_catalog(&skills, case.format, case.budget);
        let text = &catalog.text;
        let chars = text.chars().count();
        prop_assert!(
            chars <= case.budget,
            "{chars} characters over a budget of {}",
            case.budget
        );
        prop_assert_eq!(catalog.report.used_chars, chars);
        prop_assert_eq!(catalog.report.budget, case.budget);
        let visible: Vec<&Skill> = skills
            .iter()
            .filter(|skill| skill.model_invocable())
            .collect();
        if catalog.report.full_chars <= case.budget {
            prop_assert!(!catalog.report.is_cut());
            prop_assert_eq!(catalog.listed, visible.len());
        }
        prop_assert!(catalog.listed <= visible.len());
        let dropped: Vec<String> = visible[catalog.listed..]
            .iter()
            .map(|skill| skill.name.clone())
            .collect();
        prop_assert_eq!(&catalog.report.dropped, &dropped);
        if catalog.listed == 0 {
            prop_assert_eq!(text.as_str(), "");
            return Ok(());
        }
        let mut rest = text.as_str();
        if case.format == CatalogFormat::Xml {
            rest = rest
                .strip_prefix("<available_skills>\n")
                .ok_or_else(|| TestCaseError::fail("no XML opening"))?;
        }
        for (index, skill) in visible[..catalog.listed].iter().enumerate() {
            let last = index + 1 == catalog.listed;
            let (head, description, tail) = match case.format {
                CatalogFormat::List => {
                    let tags = &skill.frontmatter.tags;
                    let tags = if tags.is_empty() {
                        String::new()
                    } else {
                        format!(" [{}]", tags.join(", "))
                    };
                    let end = if last { "" } else { "\n" };
                    (
                        format!("  - {}: ", skill.name),
                        skill.description.clone(),
                        format!("{tags}{end}"),
                    )
                }
                CatalogFormat::Xml => (
                    format!(
                        "<skill><name>{}</name><description>",
                        xml_escape(&skill.name)
                    ),
                    xml_escape(&skill.description),
                    format!(
                        "</description><location>{}</location></skill>\n",
                        xml_escape(&skill.file.to_string_lossy())
                    ),
                ),
            };
            // Names may repeat: a name reported shortened may also be shown whole.
            let shortened = catalog.report.shortened.contains(&skill.name);
            let ends = last && case.format == CatalogFormat::List;
            let used = match_entry(rest, &head, &description, shortened, &tail, ends).ok_or_else(
                || {
                    TestCaseError::fail(format!(
                        "entry {index} ({:?}) is not shown whole at {rest:?}",
                        skill.name
                    ))
                },
            )?;
            rest = &rest[used..];
        }
        if case.format == CatalogFormat::Xml {
            prop_assert_eq!(rest, "</available_skills>");
        } else {
            prop_assert_eq!(rest, "");
        }
        Ok(())
    });
}

// ---------------------------------------------------------------------------------------------
// Path confinement.

/// A temporary folder in memory where there is one: every write through `Beneath` is synced to
/// disk, which on a busy disk costs more than the rest of the test.
fn scratch_dir() -> tempfile::TempDir {
    let shm = Path::new("/dev/shm");
    if shm.is_dir()
        && let Ok(dir) = tempfile::tempdir_in(shm)
    {
        return dir;
    }
    tempfile::tempdir().unwrap()
}

/// A tree with links inside, outside, dangling and looping, and sentinels outside the root.
struct Tree {
    _temp: tempfile::TempDir,
    /// Holds `root`, `outside`, `sentinel` and `root-link` (a link to `root`).
    base: PathBuf,
    root: PathBuf,
}

const SENTINEL: &[u8] = b"SENTINEL: outside the root";

impl Tree {
    fn new() -> Self {
        use std::os::unix::fs::symlink;
        let temp = scratch_dir();
        let base = fs::canonicalize(temp.path()).unwrap();
        let root = base.join("root");
        let outside = base.join("outside");
        for dir in ["root/sub/deeper", "outside/dir"] {
            fs::create_dir_all(base.join(dir)).unwrap();
        }
        fs::write(base.join("sentinel"), SENTINEL).unwrap();
        fs::write(outside.join("sentinel"), SENTINEL).unwrap();
        fs::write(outside.join("dir/secret"), SENTINEL).unwrap();
        for file in ["a.txt", "sub/b.txt", "sub/deeper/c.txt"] {
            fs::write(root.join(file), format!("inside:{file}")).unwrap();
        }
        let links: [(&str, PathBuf); 16] = [
            ("link-in", "sub".into()),
            ("link-file", "sub/b.txt".into()),
            ("link-in-abs", root.join("sub/b.txt")),
            ("link-out", "../outside".into()),
            ("link-out-file", "../outside/sentinel".into()),
            ("link-out-abs", outside.join("sentinel")),
            ("link-out-dir-abs", outside.clone()),
            ("sub/up", "..".into()),
            ("sub/upup", "../..".into()),
            ("sub/deeper/back", "../../a.txt".into()),
            ("sub/deeper/escape", "../../../outside/sentinel".into()),
            ("loop1", "loop2".into()),
            ("loop2", "loop1".into()),
            ("self", "self".into()),
            ("dangling", "missing".into()),
            ("dangling-out", "../outside/missing".into()),
        ];
        for (link, target) in links {
            symlink(target, root.join(link)).unwrap();
        }
        symlink("root", base.join("root-link")).unwrap();
        Self {
            _temp: temp,
            base,
            root,
        }
    }

    /// Every entry under `base` outside `root` (links not followed): name, kind and content.
    fn outside_snapshot(&self) -> BTreeMap<PathBuf, String> {
        let mut snapshot = BTreeMap::new();
        let mut stack = vec![self.base.clone()];
        while let Some(dir) = stack.pop() {
            for entry in fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path == self.root {
                    continue;
                }
                let metadata = fs::symlink_metadata(&path).unwrap();
                let what = if metadata.is_symlink() {
                    format!("link to {}", fs::read_link(&path).unwrap().display())
                } else if metadata.is_dir() {
                    stack.push(path.clone());
                    "folder".to_string()
                } else {
                    format!("file {:?}", fs::read(&path).unwrap())
                };
                snapshot.insert(path, what);
            }
        }
        snapshot
    }
}

/// The pieces paths are made of: the tree's names, `..`, `.`, empty segments, unicode, names
/// that do not exist.
fn segment() -> BoxedStrategy<String> {
    const NAMES: &[&str] = &[
        "a.txt",
        "sub",
        "deeper",
        "b.txt",
        "c.txt",
        "link-in",
        "link-file",
        "link-in-abs",
        "link-out",
        "link-out-file",
        "link-out-abs",
        "link-out-dir-abs",
        "up",
        "upup",
        "back",
        "escape",
        "loop1",
        "loop2",
        "self",
        "dangling",
        "dangling-out",
        "..",
        "..",
        "..",
        ".",
        "",
        "outside",
        "sentinel",
        "secret",
        "dir",
        "root",
        "root-link",
        "missing",
        "new.txt",
    ];
    prop_oneof![
        8 => select(NAMES).prop_map(String::from),
        1 => "\\PC{1,6}",
        1 => select(&["é", "日本語", "...", " ", "a\u{0}b", "\u{202e}x", "~"][..]).prop_map(String::from),
    ]
    .boxed()
}

/// How a generated path starts: relative, or absolute through one of the tree's folders.
#[derive(Debug, Clone, Copy)]
enum Start {
    Relative,
    Slash,
    Root,
    RootLink,
    Base,
    Outside,
}

#[derive(Debug, Clone)]
struct GeneratedPath {
    start: Start,
    segments: Vec<String>,
    trailing_slash: bool,
}

impl GeneratedPath {
    fn render(&self, tree: &Tree) -> PathBuf {
        let joined = self.segments.join("/");
        let slash = if self.trailing_slash { "/" } else { "" };
        let start = match self.start {
            Start::Relative => return PathBuf::from(format!("{joined}{slash}")),
            Start::Slash => PathBuf::from("/"),
            Start::Root => tree.root.clone(),
            Start::RootLink => tree.base.join("root-link"),
            Start::Base => tree.base.clone(),
            Start::Outside => tree.base.join("outside"),
        };
        PathBuf::from(format!("{}/{joined}{slash}", start.display()))
    }
}

/// The tree's folders as a walk sees them: the names in each, and where each name leads (links
/// followed; `base` holds `root` and `outside`).
fn walk_children(folder: &str) -> &'static [&'static str] {
    match folder {
        "root" => &[
            "a.txt",
            "sub",
            "link-in",
            "link-file",
            "link-in-abs",
            "link-out",
            "link-out-file",
            "link-out-abs",
            "link-out-dir-abs",
            "loop1",
            "self",
            "dangling",
            "dangling-out",
        ],
        "sub" => &["b.txt", "deeper", "up", "upup"],
        "deeper" => &["c.txt", "back", "escape"],
        "base" => &["root", "root-link", "outside", "sentinel"],
        "outside" => &["sentinel", "dir", "missing"],
        "dir" => &["secret"],
        _ => &["x"],
    }
}

fn walk_leads_to(name: &str) -> &'static str {
    match name {
        "sub" | "link-in" => "sub",
        "deeper" => "deeper",
        "up" | "root" | "root-link" => "root",
        "upup" => "base",
        "outside" | "link-out" | "link-out-dir-abs" => "outside",
        "dir" => "dir",
        _ => "file",
    }
}

/// A walk from the root through the tree's names (links in and out, `..` and `.` among them),
/// so that many paths lead somewhere: purely random segments seldom do.
fn walk_path() -> impl Strategy<Value = Vec<String>> {
    (
        prop::collection::vec(any::<Index>(), 1..7),
        prop::option::weighted(0.6, any::<Index>()),
    )
        .prop_map(|(steps, last_file)| {
            let mut folders = vec!["root"];
            let mut segments = Vec::new();
            for step in steps {
                let here = folders.last().copied().unwrap_or("above");
                let children = walk_children(here);
                // Mostly a name of the folder, sometimes `..` or `.`.
                let choice = step.index(children.len() + 2);
                let name = match choice.checked_sub(children.len()) {
                    None => children[choice],
                    Some(0) => "..",
                    Some(_) => ".",
                };
                match name {
                    ".." => {
                        folders.pop();
                    }
                    "." => {}
                    name => folders.push(walk_leads_to(name)),
                }
                segments.push(name.to_string());
            }
            // Often end on a file of the folder reached, which a read can succeed on.
            let here = folders.last().copied().unwrap_or("above");
            let files: Vec<&str> = walk_children(here)
                .iter()
                .copied()
                .filter(|name| walk_leads_to(name) == "file")
                .collect();
            if let Some(pick) = last_file
                && !files.is_empty()
            {
                segments.push(files[pick.index(files.len())].to_string());
            }
            segments
        })
}

fn generated_path() -> impl Strategy<Value = GeneratedPath> {
    let random = (
        prop_oneof![
            12 => Just(Start::Relative),
            1 => Just(Start::Slash),
            2 => Just(Start::Root),
            1 => Just(Start::RootLink),
            1 => Just(Start::Base),
            1 => Just(Start::Outside),
        ],
        prop::collection::vec(segment(), 0..6),
    );
    let walk = (
        prop_oneof![
            4 => Just(Start::Relative),
            1 => Just(Start::Root),
            1 => Just(Start::RootLink),
        ],
        walk_path(),
    );
    (prop_oneof![random, walk], prop::bool::weighted(0.1)).prop_map(
        |((start, segments), trailing_slash)| GeneratedPath {
            start,
            segments,
            trailing_slash,
        },
    )
}

/// `real` lies beneath `root` (both canonical).
fn beneath(real: &Path, root: &Path) -> bool {
    real.starts_with(root)
}

/// A relative path with no `..` and no root: it stays where it is joined.
fn is_plain_relative(path: &Path) -> bool {
    path.components()
        .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
}

/// Reading through Layer 3 and through `Beneath` never reads anything outside the root: what
/// it reads is the content of a file inside, and what it resolves lies inside (links followed).
#[test]
fn confined_reads_never_leave_the_root() {
    let tree = Tree::new();
    let beneath_root = Beneath::open(&tree.root).unwrap();
    let reads = AtomicUsize::new(0);
    check("confined_reads", 8192, generated_path(), |generated| {
        let path = generated.render(&tree);
        for skill_dir in [tree.root.clone(), tree.base.join("root-link")] {
            let resolved = resolve_in_skill(&skill_dir, &path);
            if let Ok(resolved) = &resolved {
                let real = fs::canonicalize(resolved).unwrap();
                prop_assert!(beneath(&real, &tree.root), "{path:?} resolved to {real:?}");
            }
            if let Ok(bytes) = read_in_skill(&skill_dir, &path) {
                reads.fetch_add(1, Ordering::Relaxed);
                prop_assert!(bytes.starts_with(b"inside:"), "{path:?} read {bytes:?}");
                let resolved = resolved.as_ref().map_err(|error| {
                    TestCaseError::fail(format!("{path:?} read, but resolving says {error}"))
                })?;
                prop_assert_eq!(&fs::read(resolved).unwrap(), &bytes);
            }
        }
        if let Ok(bytes) = beneath_root.read(&path, "p", 1 << 20) {
            prop_assert!(bytes.starts_with(b"inside:"), "{path:?} read {bytes:?}");
        }
        if let Ok(Some(bytes)) = beneath_root.read_if_exists(&path, "p", 1 << 20) {
            prop_assert!(bytes.starts_with(b"inside:"), "{path:?} read {bytes:?}");
        }
        if let Ok(target) = beneath_root.write_target(&path, "p") {
            prop_assert!(is_plain_relative(&target), "{path:?} targets {target:?}");
        }
        Ok(())
    });
    eprintln!("confined reads: {} files read", reads.into_inner());
}

/// Paths to the tree's files, with `.`, `x/..` and the root's absolute path thrown in, are read
/// (the property above would also hold for a confinement that refused everything).
#[test]
fn confined_reads_find_what_is_inside() {
    let tree = Tree::new();
    let cases = (
        select(
            &[
                "a.txt",
                "sub/b.txt",
                "sub/deeper/c.txt",
                "link-file",
                "link-in/b.txt",
                "sub/deeper/back",
            ][..],
        ),
        prop::collection::vec(
            select(&[".", "sub/..", "link-in/..", "./sub/deeper/../.."][..]),
            0..3,
        ),
        prop::bool::ANY,
    );
    check(
        "confined_reads_find",
        256,
        cases,
        |(file, detours, absolute)| {
            let mut path = if absolute {
                tree.root.clone()
            } else {
                PathBuf::new()
            };
            for detour in detours {
                path.push(detour);
            }
            path.push(file);
            let bytes = read_in_skill(&tree.root, &path)
                .map_err(|error| TestCaseError::fail(format!("{path:?}: {error}")))?;
            prop_assert!(bytes.starts_with(b"inside:"));
            prop_assert!(resolve_in_skill(&tree.root, &path).is_ok());
            Ok(())
        },
    );
}

/// Writing, replacing and removing through `Beneath`, on a fresh tree each time: nothing outside
/// the root changes, and a write that succeeds lands on a file beneath the root.
#[test]
fn confined_writes_never_touch_anything_outside() {
    check("confined_writes", 1024, generated_path(), |generated| {
        let tree = Tree::new();
        let before = tree.outside_snapshot();
        let path = generated.render(&tree);
        let confined = Beneath::open(&tree.root).unwrap();
        if let Ok(written) = confined.write_atomic(&path, "p", b"WRITTEN") {
            prop_assert!(
                is_plain_relative(&written.path),
                "{path:?} wrote {:?}",
                written.path
            );
            let landed = tree.root.join(&written.path);
            let real = fs::canonicalize(&landed).unwrap();
            prop_assert!(beneath(&real, &tree.root), "{path:?} wrote {real:?}");
            prop_assert_eq!(fs::read(&real).unwrap(), b"WRITTEN".to_vec());
        }
        let _ = confined.replace(&path, "p", b"REPLACED");
        let _ = confined.remove_file(&path, "p");
        prop_assert_eq!(
            tree.outside_snapshot(),
            before,
            "{:?} changed something outside",
            path
        );
        Ok(())
    });
}

// ---------------------------------------------------------------------------------------------
// Cleaning of descriptions.

fn is_tag(c: char) -> bool {
    ('\u{e0000}'..='\u{e007f}').contains(&c)
}

/// What `clean_description` promises to remove (outside subdivision flags).
fn is_forbidden(c: char) -> bool {
    is_tag(c)
        || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' | '\u{061c}')
        || matches!(c, '\u{200b}'..='\u{200d}' | '\u{2060}' | '\u{feff}')
        // The second red team's list (issue 28): variation selectors, the soft hyphen,
        // invisible operators, fillers and joiners, annotation marks, line separators.
        || matches!(c, '\u{fe00}'..='\u{fe0f}' | '\u{e0100}'..='\u{e01ef}' | '\u{00ad}'
            | '\u{2061}'..='\u{2064}' | '\u{180e}' | '\u{3164}' | '\u{034f}' | '\u{fff9}'..='\u{fffb}'
            | '\u{115f}' | '\u{1160}' | '\u{ffa0}' | '\u{2028}' | '\u{2029}')
        // The review's additions: deprecated format characters, Mongolian variation selectors,
        // shorthand format controls, unassigned specials and tag-block code points, braille blank.
        || matches!(c, '\u{2065}'..='\u{206f}' | '\u{180b}'..='\u{180f}' | '\u{1bca0}'..='\u{1bca3}'
            | '\u{fff0}'..='\u{fff8}' | '\u{e0080}'..='\u{e0fff}' | '\u{2800}')
        || c.is_control()
}

/// The length of the RGI subdivision flag that starts `chars` (🏴, the tag letters of England,
/// Scotland or Wales, the cancel tag), if one does.
fn flag_at(chars: &[char]) -> Option<usize> {
    if chars.first() != Some(&'\u{1f3f4}') {
        return None;
    }
    let letters: String = chars[1..]
        .iter()
        .take_while(|c| matches!(c, '\u{e0061}'..='\u{e007a}' | '\u{e0030}'..='\u{e0039}'))
        .map(|&c| char::from_u32(u32::from(c) - 0xE0000).unwrap())
        .collect();
    (skillet_skills::RGI_SUBDIVISION_FLAGS.contains(&letters.as_str())
        && chars.get(1 + letters.len()) == Some(&'\u{e007f}'))
    .then_some(letters.len() + 2)
}

/// Text full of what hides or reorders text, with flags and near misses.
fn hiding_text() -> impl Strategy<Value = String> {
    let tag_letter = prop_oneof![0xE0061u32..=0xE007A, 0xE0030u32..=0xE0039]
        .prop_map(|code| char::from_u32(code).unwrap());
    let flag = (
        prop::collection::vec(tag_letter, 0..8),
        prop::bool::weighted(0.8),
    )
        .prop_map(|(letters, cancel)| {
            let mut flag = String::from('\u{1f3f4}');
            flag.extend(letters);
            if cancel {
                flag.push('\u{e007f}');
            }
            flag
        });
    let special = prop_oneof![
        0xE0000u32..=0xE007F,
        0x202Au32..=0x202E,
        0x2066u32..=0x2069,
        0x200Bu32..=0x200F,
        Just(0x2060u32),
        Just(0xFEFFu32),
        Just(0x061Cu32),
        0xFE00u32..=0xFE0F,
        0xE0100u32..=0xE01EF,
        Just(0x00ADu32),
        0x2061u32..=0x2064,
        Just(0x180Eu32),
        Just(0x3164u32),
        Just(0x034Fu32),
        0xFFF9u32..=0xFFFB,
        0x2028u32..=0x2029,
        0x2065u32..=0x206F,
        0x180Bu32..=0x180F,
        0xFFF0u32..=0xFFF8,
        0xE0080u32..=0xE0FFF,
        0u32..=0x20,
        0x7Fu32..=0xA0,
    ]
    .prop_map(|code| char::from_u32(code).unwrap().to_string());
    prop::collection::vec(
        prop_oneof![
            4 => select(&["a", "Fill ", "PDF", " forms", ".", "txt", "exe ", " "][..]).prop_map(String::from),
            3 => special,
            2 => flag,
            1 => select(&skillet_skills::RGI_SUBDIVISION_FLAGS[..]).prop_map(|letters| {
                let mut flag = String::from('\u{1f3f4}');
                flag.extend(letters.chars().map(|c| char::from_u32(0xE0000 + u32::from(c)).unwrap()));
                flag.push('\u{e007f}');
                flag
            }),
            1 => any::<char>().prop_map(String::from),
            1 => select(&["🏴", "👍🏽", "é", "a\u{301}", "日本", "🏴🏴"][..]).prop_map(String::from),
        ],
        0..24,
    )
    .prop_map(|pieces| pieces.concat())
}

/// Cleaning leaves none of the characters it promises to remove (but in whole subdivision
/// flags), keeps every other character in order, counts what it removed, and is idempotent.
#[test]
fn cleaning_removes_only_what_hides_text() {
    check("cleaning", 8192, hiding_text(), |text| {
        let (clean, removed) = clean_description(&text);
        let chars: Vec<char> = clean.chars().collect();
        let mut index = 0;
        while index < chars.len() {
            if let Some(length) = flag_at(&chars[index..]) {
                index += length;
                continue;
            }
            prop_assert!(
                !is_forbidden(chars[index]),
                "{:?} left in {clean:?}",
                chars[index]
            );
            index += 1;
        }
        // Only what the one list names is removed (it names more than this test insists on:
        // every format character among them); the rest is kept in order.
        let visible = |text: &str| {
            text.chars()
                .filter(|&c| skillet_skills::hiding(c).is_none())
                .collect::<String>()
        };
        prop_assert_eq!(visible(&clean), visible(&text));
        let count =
            removed.control + removed.bidi + removed.zero_width + removed.variation + removed.tags;
        prop_assert_eq!(count, text.chars().count() - clean.chars().count());
        prop_assert_eq!(removed.any(), count > 0);
        prop_assert!(removed.hidden.chars().count() <= removed.tags);
        prop_assert!(removed.hidden.chars().all(|c| (' '..='~').contains(&c)));
        let (again, removed_again) = clean_description(&clean);
        prop_assert_eq!(&again, &clean);
        prop_assert!(!removed_again.any());
        Ok(())
    });
}

/// Names escaped for one line and bodies cleaned for a model: no forbidden character is left
/// (in a body: but newlines, tabs, CRLF, whole subdivision flags, one VS15/VS16 after a visible
/// character, and joiners between two visible non-ASCII characters), the visible text is kept
/// in order, and cleaning again changes nothing.
#[test]
fn escaped_names_and_cleaned_bodies_hide_nothing() {
    let text = prop::collection::vec(
        prop_oneof![
            4 => hiding_text(),
            1 => select(&["\n", "\t", "\r\n", "\r", "❤\u{fe0f}", "👨\u{200d}👩", "a\u{200d}b", "می\u{200c}خواهم"][..]).prop_map(String::from),
        ],
        0..6,
    )
    .prop_map(|pieces| pieces.concat());
    check("escape_and_clean_text", 8192, text, |text| {
        let escaped = skillet_skills::escape_invisible(&text);
        prop_assert!(
            !escaped.chars().any(is_forbidden),
            "left in the escaped name {escaped:?}"
        );
        let cleaned = skillet_skills::clean_text(&text);
        let chars: Vec<char> = cleaned.chars().collect();
        let visible =
            |at: Option<&char>| at.is_some_and(|&c| !is_forbidden(c) && !c.is_whitespace());
        let mut index = 0;
        while index < chars.len() {
            if let Some(length) = flag_at(&chars[index..]) {
                index += length;
                continue;
            }
            let c = chars[index];
            let before = index.checked_sub(1).and_then(|at| chars.get(at));
            let after = chars.get(index + 1);
            let allowed = match c {
                '\n' | '\t' => true,
                '\r' => after == Some(&'\n'),
                '\u{fe0e}' | '\u{fe0f}' => visible(before),
                '\u{200c}' | '\u{200d}' => {
                    visible(before)
                        && visible(after)
                        && before.is_some_and(|c| !c.is_ascii())
                        && after.is_some_and(|c| !c.is_ascii())
                }
                c => !is_forbidden(c),
            };
            prop_assert!(allowed, "{c:?} left in the cleaned body {cleaned:?}");
            index += 1;
        }
        // Only hiding characters were replaced (by their escapes); the rest is in order.
        let kept = |text: &str| {
            text.chars()
                .filter(|&c| skillet_skills::hiding(c).is_none() && c != '\\')
                .collect::<String>()
        };
        let unescaped = |text: &str| {
            let mut out = String::new();
            let mut rest = text;
            while let Some(at) = rest.find("\\u{") {
                out.push_str(&rest[..at]);
                let end = rest[at..].find('}').map_or(rest.len(), |end| at + end + 1);
                rest = &rest[end..];
            }
            out.push_str(rest);
            out
        };
        prop_assert_eq!(kept(&unescaped(&cleaned)), kept(&unescaped(&text)));
        let again = skillet_skills::clean_text(&cleaned);
        prop_assert_eq!(again.as_ref(), cleaned.as_ref());
        Ok(())
    });
}

/// A body cannot open or close a `<skill` wrapper: no such tag is left, only `<` became `&lt;`,
/// and neutralizing twice changes nothing more.
#[test]
fn neutralized_bodies_hold_no_wrapper_tag() {
    let body = prop::collection::vec(
        prop_oneof![
            3 => select(&["<skill", "</skill", "<SKILL", "</SkIlL", "<skills", "<skill-name", "<", "&lt;", ">", " ", "\n", "name=\"x\""][..])
                .prop_map(String::from),
            2 => "[a-zA-Z_ -]{1,4}",
            1 => any::<char>().prop_map(String::from),
        ],
        0..20,
    )
    .prop_map(|pieces| pieces.concat());
    check("neutralize_wrapper", 8192, body, |body| {
        let out = neutralize_wrapper(&body);
        let lower = out.to_ascii_lowercase();
        for tag in ["<skill", "</skill"] {
            for (at, _) in lower.match_indices(tag) {
                let next = lower[at + tag.len()..].chars().next();
                prop_assert!(
                    next.is_some_and(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'),
                    "a {tag} tag is left in {out:?}"
                );
            }
        }
        prop_assert_eq!(out.replace("&lt;", "<"), body.replace("&lt;", "<"));
        let twice = neutralize_wrapper(&out).into_owned();
        prop_assert_eq!(twice.as_str(), out.as_ref());
        Ok(())
    });
}
