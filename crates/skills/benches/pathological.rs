//! Parsing pathological frontmatters of 4, 16 and 64 KB (the bound is
//! [`MAX_FRONTMATTER_BYTES`]): time must grow linearly with size. Each case is a whole skill file
//! checked by [`validate_text`], which splits it and parses its frontmatter (the same parse
//! discovery makes), then validates the fields when it parsed.
//!
//! `cargo bench -p skillet-skills --bench pathological`

#![allow(clippy::unwrap_used, reason = "benchmark setup")]

use std::fmt::Write as _;
use std::path::Path;

use divan::Bencher;
use divan::counter::BytesCount;
use skillet_skills::{MAX_FRONTMATTER_BYTES, Validation, validate_text};

/// Frontmatter sizes, in kilobytes (of 1,000 bytes: 64 KB is under the bound).
const SIZES: [usize; 3] = [4, 16, 64];

fn main() {
    assert!(SIZES.iter().all(|kb| kb * 1000 < MAX_FRONTMATTER_BYTES));
    divan::main();
}

fn skill_file(yaml: &str) -> String {
    format!("---\nname: hostile\ndescription: A hostile frontmatter\n{yaml}---\n# Body\n")
}

fn validate(text: &str) -> Validation {
    let dir = Path::new("/skills/hostile");
    validate_text(text, &dir.join("SKILL.md"), dir)
}

/// Benches the validation of the skill file around the frontmatter `make` writes for `bytes`.
fn bench_file(bencher: Bencher, kb: usize, make: impl Fn(usize) -> String) {
    let text = skill_file(&make(kb * 1000));
    bencher
        .counter(BytesCount::of_str(&text))
        .bench(|| validate(divan::black_box(&text)));
}

/// Lines from `line` until `bytes` is filled.
fn fill(bytes: usize, mut line: impl FnMut(&mut String, usize)) -> String {
    let mut yaml = String::with_capacity(bytes + 64);
    let mut index = 0;
    while yaml.len() < bytes {
        line(&mut yaml, index);
        index += 1;
    }
    yaml
}

/// `key: [[[…x…]]]`: refused at the depth limit.
#[divan::bench(args = SIZES)]
fn nested_brackets(bencher: Bencher, kb: usize) {
    bench_file(bencher, kb, |bytes| {
        let depth = bytes / 2;
        format!("key: {}x{}\n", "[".repeat(depth), "]".repeat(depth))
    });
}

/// `key: {a: {a: …}}`: refused at the depth limit.
#[divan::bench(args = SIZES)]
fn nested_flow_mappings(bencher: Bencher, kb: usize) {
    bench_file(bencher, kb, |bytes| {
        let depth = bytes / 5;
        format!("key: {}x{}\n", "{a: ".repeat(depth), "}".repeat(depth))
    });
}

/// `- - - - … x`: block sequences nested in one line, refused at the depth limit.
#[divan::bench(args = SIZES)]
fn nested_block_sequences(bencher: Bencher, kb: usize) {
    bench_file(bencher, kb, |bytes| {
        format!("key:\n  {}x\n", "- ".repeat(bytes / 2))
    });
}

/// One line of `kb` KB: a plain value (the fast path reads it).
#[divan::bench(args = SIZES)]
fn one_long_line(bencher: Bencher, kb: usize) {
    bench_file(bencher, kb, |bytes| {
        format!("license: {}\n", "a".repeat(bytes))
    });
}

/// One line of `kb` KB: a flow list of quoted items (for the full parser).
#[divan::bench(args = SIZES)]
fn one_long_flow_line(bencher: Bencher, kb: usize) {
    bench_file(bencher, kb, |bytes| {
        let mut line = String::from("tags: [");
        let mut index = 0;
        while line.len() < bytes {
            let _ = write!(line, "\"tag{index}\", ");
            index += 1;
        }
        line + "end]\n"
    });
}

/// One line of `kb` KB of `a: a: a: …`: the parser fails, the lenient retry quotes it.
#[divan::bench(args = SIZES)]
fn one_long_line_of_colons(bencher: Bencher, kb: usize) {
    bench_file(bencher, kb, |bytes| {
        format!("compatibility: {}end\n", "a: ".repeat(bytes / 3))
    });
}

/// Keys `k0: v`, `k1: v` … (about 7,000 at 64 KB): the fast path reads them.
#[divan::bench(args = SIZES)]
fn many_keys(bencher: Bencher, kb: usize) {
    bench_file(bencher, kb, |bytes| {
        fill(bytes, |yaml, index| {
            let _ = writeln!(yaml, "k{index}: v");
        })
    });
}

/// The same keys, each with a comment, so the full parser reads them.
#[divan::bench(args = SIZES)]
fn many_keys_full_parser(bencher: Bencher, kb: usize) {
    bench_file(bencher, kb, |bytes| {
        fill(bytes, |yaml, index| {
            let _ = writeln!(yaml, "k{index}: v # c");
        })
    });
}

/// Half anchors, then lists of aliases: refused at the first alias.
#[divan::bench(args = SIZES)]
fn anchors_and_aliases(bencher: Bencher, kb: usize) {
    bench_file(bencher, kb, |bytes| {
        let anchors = fill(bytes / 2, |yaml, index| {
            let _ = writeln!(yaml, "a{index}: &a{index} value {index}");
        });
        let aliases = fill(bytes / 2, |yaml, index| {
            let _ = writeln!(yaml, "b{index}: [*a0, *a1, *a2, *a3]");
        });
        anchors + &aliases
    });
}

/// The "billion laughs", each level naming the one before as often as fills the size: refused
/// at its first alias, however wide.
#[divan::bench(args = SIZES)]
fn billion_laughs(bencher: Bencher, kb: usize) {
    bench_file(bencher, kb, |bytes| {
        let width = bytes / 9 / 5;
        let mut yaml = format!("l0: &l0 [{}]\n", vec!["lol"; width].join(", "));
        for level in 1..9 {
            let previous = format!("*l{}", level - 1);
            let _ = writeln!(
                yaml,
                "l{level}: &l{level} [{}]",
                vec![previous.as_str(); width].join(", ")
            );
        }
        yaml
    });
}
