//! Discovery and catalog benchmarks: a generated tree of 10,000 skills, and the corpus
//! (`../shared/corpus` or `$SKILLET_CORPUS`) when present. Whole-process figures against Python
//! and `find | xargs head` come from `scripts/bench-discovery.sh`.

#![allow(clippy::unwrap_used, clippy::print_stderr, reason = "benchmark setup")]

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use skillet_skills::{
    CatalogFormat, DEFAULT_CATALOG_BUDGET, Root, RootKind, discover, locate, render_catalog,
};

const GENERATED_SKILLS: usize = 10_000;

fn main() {
    divan::main();
}

/// A tree of synthetic skills with realistic frontmatter, written once per run.
fn generated() -> &'static Path {
    static TREE: OnceLock<tempfile::TempDir> = OnceLock::new();
    TREE.get_or_init(|| {
        let temp = tempfile::tempdir().unwrap();
        for index in 0..GENERATED_SKILLS {
            let name = format!("skill-{index:05}");
            let dir = temp.path().join(format!("group-{:03}", index / 100)).join(&name);
            std::fs::create_dir_all(&dir).unwrap();
            let text = format!(
                "---\nname: {name}\ndescription: >-\n  Synthetic skill {index} for benchmarks. Use when the task\n  mentions topic {} or asks for report number {index}.\nlicense: MIT\nmetadata:\n  author: bench\n  version: \"1.0\"\nallowed-tools: Read Grep Bash(git:*)\n---\n\n# {name}\n\n{}",
                index % 97,
                "Instruction line for the agent to follow.\n".repeat(60)
            );
            std::fs::write(dir.join("SKILL.md"), text).unwrap();
        }
        temp
    })
    .path()
}

fn corpus() -> Option<PathBuf> {
    let dir = std::env::var_os("SKILLET_CORPUS").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus"),
        PathBuf::from,
    );
    if dir.is_dir() {
        Some(dir)
    } else {
        eprintln!("corpus benchmarks skipped: no corpus at {}", dir.display());
        None
    }
}

fn roots(path: &Path) -> Vec<Root> {
    vec![Root::new(path, RootKind::Explicit)]
}

#[divan::bench(sample_count = 10)]
fn locate_10k() -> usize {
    locate(&roots(generated())).0.len()
}

#[divan::bench(sample_count = 10)]
fn discover_and_catalog_10k() -> usize {
    let library = discover(&roots(generated()));
    assert_eq!(library.skills().len(), GENERATED_SKILLS);
    render_catalog(library.skills(), CatalogFormat::List, usize::MAX)
        .text
        .len()
}

#[divan::bench(sample_count = 10)]
fn discover_and_catalog_corpus() -> usize {
    let Some(corpus) = corpus() else { return 0 };
    let library = discover(&roots(&corpus));
    render_catalog(library.skills(), CatalogFormat::Xml, DEFAULT_CATALOG_BUDGET)
        .text
        .len()
}

#[divan::bench(sample_count = 10)]
fn budgeted_catalog_of_10k() -> usize {
    static LIBRARY: OnceLock<skillet_skills::Library> = OnceLock::new();
    let library = LIBRARY.get_or_init(|| discover(&roots(generated())));
    render_catalog(
        library.skills(),
        CatalogFormat::List,
        DEFAULT_CATALOG_BUDGET,
    )
    .listed
}
