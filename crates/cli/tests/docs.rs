//! The README and `docs/`: every relative link leads to a file that exists, and every `#anchor`
//! to a heading of that file (GitHub's slugs), outside code blocks.

#![allow(clippy::unwrap_used, clippy::panic, reason = "tests")]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The Markdown files checked: the README and every page under `docs/`.
fn pages() -> Vec<PathBuf> {
    let root = repository();
    let mut pages = vec![root.join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "md"))
        .collect();
    docs.sort();
    pages.extend(docs);
    pages
}

/// A file's lines outside fenced code blocks, numbered from 1.
fn prose(text: &str) -> Vec<(usize, &str)> {
    let mut fence: Option<&str> = None;
    let mut lines = Vec::new();
    for (number, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        let marker = ["```", "~~~"]
            .into_iter()
            .find(|marker| trimmed.starts_with(marker));
        match (fence, marker) {
            (None, Some(marker)) => fence = Some(marker),
            (Some(open), Some(marker)) if open == marker => fence = None,
            (None, None) => lines.push((number + 1, line)),
            _ => {}
        }
    }
    lines
}

/// A line without its inline code spans (`` `a](b` `` is no link).
fn without_code(line: &str) -> String {
    let mut out = String::new();
    let mut in_code = false;
    for c in line.chars() {
        if c == '`' {
            in_code = !in_code;
        } else if !in_code {
            out.push(c);
        }
    }
    out
}

/// GitHub's anchor for a heading: lower case, punctuation but `-` and `_` dropped, spaces to
/// `-`; a repeated heading gets `-1`, `-2`, ….
fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    for (_, line) in prose(text) {
        let Some(heading) = line
            .strip_prefix('#')
            .map(|rest| rest.trim_start_matches('#'))
        else {
            continue;
        };
        if !heading.starts_with(' ') {
            continue;
        }
        let slug = slug(heading.trim());
        let mut unique = slug.clone();
        let mut n = 1;
        while seen.contains(&unique) {
            unique = format!("{slug}-{n}");
            n += 1;
        }
        seen.insert(unique);
    }
    seen
}

/// A heading's slug as GitHub makes it (the text of inline code kept, its backticks not).
fn slug(heading: &str) -> String {
    heading
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// Every `](target)` of a file's prose, with its line.
fn links(text: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for (number, line) in prose(text) {
        let line = without_code(line);
        let mut rest = line.as_str();
        while let Some(start) = rest.find("](") {
            let after = &rest[start + 2..];
            let Some(end) = after.find(')') else { break };
            let target = after[..end].split_whitespace().next().unwrap_or("");
            found.push((number, target.to_string()));
            rest = &after[end..];
        }
    }
    found
}

#[test]
fn every_relative_link_and_anchor_resolves() {
    let mut broken = Vec::new();
    let mut checked = 0;
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        for (line, target) in links(&text) {
            if target.contains("://") || target.starts_with("mailto:") || target.is_empty() {
                continue;
            }
            checked += 1;
            let (file, anchor) = target.split_once('#').unwrap_or((&target, ""));
            let linked = if file.is_empty() {
                page.clone()
            } else {
                page.parent().unwrap().join(file)
            };
            let shown = format!(
                "{}:{line}: {target}",
                page.strip_prefix(repository()).unwrap_or(&page).display()
            );
            if !linked.exists() {
                broken.push(format!("{shown} (no such file)"));
                continue;
            }
            if !anchor.is_empty() {
                let heading_text = std::fs::read_to_string(&linked).unwrap_or_default();
                if !anchors(&heading_text).contains(anchor) {
                    broken.push(format!("{shown} (no such heading)"));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
    assert!(
        checked > 20,
        "only {checked} relative links found: is the parser right?"
    );
}

#[test]
fn the_checker_sees_a_broken_link_and_a_missing_heading() {
    let text = "# A heading\n\n[ok](#a-heading) [bad](#nothing)\n\n```\n[x](nowhere.md)\n```\n";
    assert!(anchors(text).contains("a-heading"));
    assert!(!anchors(text).contains("nothing"));
    let found: Vec<String> = links(text).into_iter().map(|(_, t)| t).collect();
    assert_eq!(
        found,
        ["#a-heading", "#nothing"],
        "code blocks hold no links"
    );
    assert!(anchors("## `skillet mcp` in Claude Code\n").contains("skillet-mcp-in-claude-code"));
    assert!(
        anchors("## Flags, and exit codes\n## Flags, and exit codes\n")
            .contains("flags-and-exit-codes-1")
    );
}

#[test]
fn the_readme_is_a_front_door() {
    let text = std::fs::read_to_string(repository().join("README.md")).unwrap();
    let lines = text.lines().count();
    assert!(
        lines <= 250,
        "README.md is {lines} lines; the rest belongs in docs/"
    );
}
