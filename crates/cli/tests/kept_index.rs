//! The index a start keeps (`~/.cache/skillet/index`: the body facts and the word indexes;
//! the vectors in the embedding cache) through `skillet skills match`, with the real model:
//! processes building it at once, a warm start using it, an edited body, a torn file; each
//! ranks exactly as a start with nothing kept. Skips, saying so, when the model is not at hand
//! (`scripts/fetch-model.sh`, `SKILLET_EMBED_MODEL`).

#![allow(clippy::unwrap_used, clippy::print_stderr, reason = "tests")]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const TOPICS: [(&str, &str); 6] = [
    (
        "rotate database credentials",
        "Rotate the passwords in the vault, then restart.",
    ),
    (
        "draft release notes",
        "Collect merged pull requests and group them by label.",
    ),
    (
        "profile a slow web page",
        "Record a trace, find long tasks, shrink the bundle.",
    ),
    (
        "translate an interface",
        "Extract strings, translate them, check plural forms.",
    ),
    (
        "plan a sprint",
        "Estimate the backlog and pick what fits the velocity.",
    ),
    (
        "clean a CSV export",
        "Trim columns, fix dates, drop duplicate rows.",
    ),
];

const QUERIES: [&str; 3] = [
    "my vault passwords need rotating",
    "find duplicate rows in a spreadsheet export",
    "kubernetes pods keep crashing",
];

/// A library of 24 skills with bodies.
fn library(root: &Path) -> PathBuf {
    let library = root.join("skills");
    for index in 0..24 {
        let (topic, body) = TOPICS[index % TOPICS.len()];
        let name = format!("task-{index:02}");
        write_skill(
            &library,
            &name,
            &format!("Helps {topic} (variant {index})."),
            body,
        );
    }
    library
}

fn write_skill(library: &Path, name: &str, description: &str, body: &str) {
    let folder = library.join(name);
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(
        folder.join("SKILL.md"),
        format!("---\nname: {name}\ndescription: {description}\n---\n{body}\n"),
    )
    .unwrap();
}

/// `skills match QUERY --json` over `library`, caching under `cache`.
fn matching(model: &Path, library: &Path, cache: &Path, query: &str) -> Command {
    let mut command = Command::new(assert_cmd::cargo::cargo_bin("skillet"));
    command
        .current_dir(library)
        .env_clear()
        .env("HOME", cache)
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("XDG_CACHE_HOME", cache)
        .env("SKILLET_EMBED_MODEL", model)
        .env("HF_HUB_OFFLINE", "1")
        .arg("--skills-dir")
        .arg(library)
        .args([
            "skills", "match", query, "--json", "--top-k", "24", "--mode", "hybrid",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

/// Every query's ranking (the JSON output) with the cache at `cache`.
fn rankings(model: &Path, library: &Path, cache: &Path) -> Vec<String> {
    QUERIES
        .iter()
        .map(|query| {
            let output = matching(model, library, cache, query).output().unwrap();
            assert!(
                output.status.success(),
                "{}",
                String::from_utf8_lossy(&output.stderr)
            );
            String::from_utf8(output.stdout).unwrap()
        })
        .collect()
}

/// The truth: a start with nothing kept (a cache folder of its own, embedded afresh).
fn fresh(model: &Path, library: &Path, scratch: &Path) -> Vec<String> {
    let cache = tempfile::tempdir_in(scratch).unwrap();
    rankings(model, library, cache.path())
}

fn words_file(cache: &Path) -> Option<PathBuf> {
    std::fs::read_dir(cache.join("skillet/index"))
        .ok()?
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .find(|path| {
            path.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("words-")
        })
}

/// Past the second within which a file just written is not trusted as unchanged.
fn settle() {
    std::thread::sleep(std::time::Duration::from_millis(1_100));
}

#[test]
fn a_kept_index_ranks_as_a_start_with_nothing_kept() {
    let Some(model) = skillet_test_support::embedding_model_or_skip("the kept index") else {
        return;
    };
    let temp = tempfile::tempdir().unwrap();
    let library = library(temp.path());
    let cache = temp.path().join("cache");
    settle();
    let truth = fresh(&model, &library, temp.path());
    assert!(truth.iter().all(|ranking| ranking.contains("task-")));
    // Three processes building the index at once, each ranking as the truth.
    let children: Vec<_> = (0..3)
        .map(|index| {
            matching(&model, &library, &cache, QUERIES[index])
                .spawn()
                .unwrap()
        })
        .collect();
    for (index, child) in children.into_iter().enumerate() {
        let output = child.wait_with_output().unwrap();
        assert!(output.status.success());
        assert_eq!(String::from_utf8(output.stdout).unwrap(), truth[index]);
    }
    let kept = words_file(&cache).expect("the word indexes kept");
    let written = std::fs::metadata(&kept).unwrap().modified().unwrap();
    // Warm: the kept file used as it is.
    assert_eq!(rankings(&model, &library, &cache), truth);
    assert_eq!(
        std::fs::metadata(&kept).unwrap().modified().unwrap(),
        written,
        "used, not written again"
    );
    // A body edited (its frontmatter as it was): ranked by its new words.
    write_skill(
        &library,
        "task-05",
        "Helps clean a CSV export (variant 5).",
        "Kubernetes pods crashing: read the events, the logs, the probes.",
    );
    settle();
    let edited = fresh(&model, &library, temp.path());
    assert_ne!(edited, truth, "the edit changes the ranking");
    assert_eq!(rankings(&model, &library, &cache), edited);
    // A skill removed, one added.
    std::fs::remove_dir_all(library.join("task-00")).unwrap();
    write_skill(
        &library,
        "task-99",
        "Helps rotate vault passwords.",
        "Rotate them.",
    );
    settle();
    let changed = fresh(&model, &library, temp.path());
    assert_eq!(rankings(&model, &library, &cache), changed);
    // A torn word index file: not used, built again.
    let kept = words_file(&cache).unwrap();
    let bytes = std::fs::read(&kept).unwrap();
    std::fs::write(&kept, &bytes[..bytes.len() / 2]).unwrap();
    assert_eq!(rankings(&model, &library, &cache), changed);
    assert_eq!(std::fs::read(&kept).unwrap(), bytes, "written again whole");
}
