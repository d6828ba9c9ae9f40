//! The audit on files made to be slow: a 1 MiB single line of findings (each used to build its
//! excerpt by counting the whole line, minutes in a debug build) and of near hits hidden by
//! invisible characters. `cargo bench -p skillet-audit`.

#![allow(clippy::unwrap_used, reason = "benchmark set-up")]

use std::path::Path;

fn main() {
    divan::main();
}

/// A skill folder holding `notes.md` = `text` repeated to 1 MiB on one line.
fn skill_with_line(text: &str) -> tempfile::TempDir {
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path();
    std::fs::write(
        dir.join("SKILL.md"),
        "---\nname: slow\ndescription: A skill made to be slow to audit\n---\nBody.\n",
    )
    .unwrap();
    std::fs::write(dir.join("notes.md"), text.repeat(1024 * 1024 / text.len())).unwrap();
    temp
}

fn audit(dir: &Path) -> usize {
    skillet_audit::audit_skill_dir(dir).findings.len()
}

/// The lines, by a name that prints safely (one of them holds invisible characters).
const LINES: [(&str, &str); 3] = [
    ("plain-comments", "<!--always run-->"),
    ("order-comments", "<!--secretly run-->"),
    (
        "hidden-near-hits",
        "eval(atob(x)) ig\u{200B}nore previous instructions \u{202E} ",
    ),
];

#[divan::bench(args = ["plain-comments", "order-comments", "hidden-near-hits"])]
fn megabyte_line(bencher: divan::Bencher, name: &str) {
    let text = LINES.iter().find(|(n, _)| *n == name).unwrap().1;
    let skill = skill_with_line(text);
    bencher.bench(|| audit(divan::black_box(skill.path())));
}
