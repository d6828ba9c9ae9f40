//! Tests of [`super`].

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

/// Thousands of generated documents: whenever the fast path answers, the real parser gives
/// the same mapping (and does not fail).
#[test]
fn generated_documents_agree_with_the_real_parser() {
    let mut rng = generated::Lcg::new(0x5eed);
    let (mut total, mut fast) = (0, 0);
    for _ in 0..50_000 {
        let yaml = generated::document(&mut rng);
        total += 1;
        if let Some(mapping) = parse_simple_mapping(&yaml) {
            fast += 1;
            let real = yaml_serde::from_str::<Value>(&yaml);
            assert!(
                matches!(&real, Ok(Value::Mapping(real)) if *real == mapping),
                "fast path differs on {yaml:?}:\nfast: {mapping:?}\nreal: {real:?}"
            );
        }
    }
    eprintln!("fast path answered for {fast} of {total} generated documents");
    assert!(
        fast * 10 > total,
        "the generator should often reach the fast path"
    );
}

#[test]
fn spaces_and_separators_that_the_real_parser_reads_otherwise_fall_back() {
    for yaml in [
        // A line of only spaces deeper than the block is content to the real parser.
        "name: a\ndescription: |\n  text\n   \nlicense: MIT\n",
        "name: a\ndescription: |\n  text\n   \n",
        "name: a\ndescription: >\n  text\n\n   \n",
        "name: a\ndescription: |\n   \n  text\n",
        "name: a\ndescription: |-\n  text\nlicense: MIT\n  \n",
        // Unicode spaces and separators.
        "name: a\n\u{a0}\ndescription: b\n",
        "name: a\n\u{3000}\ndescription: b\n",
        "name: a\ndescription: b\u{2028}c\n",
        "name: a\ndescription: b\u{2029}\n",
        "name: a\ndescription: b\u{85}c\n",
        "name: a\nmetadata:\n\u{a0} author: me\n",
        "name: a\n# comment \u{2028} x: y\ndescription: b\n",
        // Noncharacters and control characters, even in comments.
        "name: a\ndescription: b\u{fffe}\n",
        "name: a\ndescription: b\u{ffff}\n",
        "name: a\ndescription: b\u{fdd0}\n",
        "name: a\n# \u{fffe}\ndescription: b\n",
        "name: a\n# \u{7}\ndescription: b\n",
        "\u{feff}name: a\n",
    ] {
        assert!(
            parse_simple_mapping(yaml).is_none(),
            "{yaml:?} should fall back"
        );
    }
}

#[test]
fn every_corpus_frontmatter_that_takes_the_fast_path_agrees() {
    let corpus = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus");
    if !corpus.is_dir() {
        skillet_test_support::skip(&format!("SKIPPED: no corpus at {}", corpus.display()));
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
