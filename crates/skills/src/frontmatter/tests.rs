//! Tests of [`super`].

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
        "a", "b c", "k", " ", " ", "  ", "\n", "\n", "\n  ", "\n    ", ": ", ":", "- ", "-", "? ",
        "?", "[", "]", "{", "}", ", ", ",", "'", "\"", "\\", "''", "#", " #", "*zz", "*zz", "*",
        "*z.", "&aa", "&aa ", "!t ", "!", "!<x>", "|", ">", "|-", "|2", "---", "...", "%", "\t",
        "\r\n", "\r", "@", "`", "\u{a0}", "\u{2028}", "\u{85}", "é", "x:y",
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
    let corpus = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus");
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
