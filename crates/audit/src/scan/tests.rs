//! Tests of [`super`].

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
