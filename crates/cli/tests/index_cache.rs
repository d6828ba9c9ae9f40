//! The embedding cache through `skillet skills index`, with the real model: several indexing
//! processes at once (two libraries sharing one cache) leave one valid cache holding both
//! libraries, and a damaged cache is rebuilt, saying so. Skips, saying so, when the model is
//! not at hand (`scripts/fetch-model.sh`, `SKILLET_EMBED_MODEL`).

#![allow(clippy::unwrap_used, clippy::print_stderr, reason = "tests")]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use skillet_retrieval::EmbeddingCache;
use skillet_retrieval::embed::fingerprint;

fn model() -> Option<PathBuf> {
    let dir = skillet_test_support::embedding_model_dir();
    if dir.is_none() {
        skillet_test_support::skip(
            "SKIPPED: no embedding model (run scripts/fetch-model.sh, set SKILLET_EMBED_MODEL)",
        );
    }
    dir
}

use skillet_test_support::fixture_library as fixtures;

/// A second library of `count` skills.
fn generated_library(root: &Path, count: usize) -> PathBuf {
    const TOPICS: [&str; 6] = [
        "rotate database credentials",
        "draft release notes from merged pull requests",
        "profile a slow web page",
        "translate a user interface into French",
        "plan a sprint from a backlog",
        "clean a CSV export before loading it",
    ];
    let library = root.join("library-b");
    for index in 0..count {
        let name = format!("task-{index:02}");
        let folder = library.join(&name);
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(
            folder.join("SKILL.md"),
            format!(
                "---\nname: {name}\ndescription: Helps {} (variant {index}).\n---\nBody.\n",
                TOPICS[index % TOPICS.len()]
            ),
        )
        .unwrap();
    }
    library
}

/// `skillet --skills-dir LIBRARY skills index` in a clean environment: the model named by
/// `SKILLET_EMBED_MODEL`, nothing downloaded, the cache under `sandbox/cache`.
fn index_command(sandbox: &Path, model: &Path, library: &Path) -> Command {
    let mut command = Command::new(assert_cmd::cargo::cargo_bin("skillet"));
    command
        .current_dir(sandbox)
        .env_clear()
        .env("HOME", sandbox)
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("XDG_CACHE_HOME", sandbox.join("cache"))
        .env("SKILLET_EMBED_MODEL", model)
        .env("HF_HUB_OFFLINE", "1")
        .arg("--skills-dir")
        .arg(library)
        .args(["skills", "index"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

fn text(output: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// Runs one index and returns its stdout, checking it succeeded without a warning.
fn index_cleanly(sandbox: &Path, model: &Path, library: &Path) -> String {
    let output = index_command(sandbox, model, library).output().unwrap();
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(!stderr.contains("warning"), "{stderr}");
    stdout
}

fn embeddings_dir(sandbox: &Path) -> PathBuf {
    sandbox.join("cache/skillet/embeddings")
}

/// The files of the embedding cache folder, by name.
fn cache_folder(sandbox: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(embeddings_dir(sandbox))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Four `skills index` at once, two per library, sharing one cache: all succeed, the folder
/// holds one cache file (no temporary left), the file is valid and holds both libraries, so
/// indexing either again embeds nothing.
#[test]
fn concurrent_indexing_leaves_one_valid_cache_with_both_libraries() {
    let Some(model) = model() else { return };
    let sandbox = tempfile::tempdir().unwrap();
    let library_a = fixtures();
    let library_b = generated_library(sandbox.path(), 24);
    let children: Vec<_> = [&library_a, &library_b, &library_a, &library_b]
        .into_iter()
        .map(|library| {
            index_command(sandbox.path(), &model, library)
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let output = child.wait_with_output().unwrap();
        let (stdout, stderr) = text(&output);
        assert!(output.status.success(), "{stdout}\n{stderr}");
        assert!(!stderr.contains("warning"), "{stderr}");
    }

    let model_id = fingerprint(&model, None).unwrap();
    let cache_file = EmbeddingCache::path_for(&embeddings_dir(sandbox.path()), &model_id.id);
    // The cache and its lock (and the weights' digest memo); no temporary file, no other cache.
    let cache_name = cache_file
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let mut names = cache_folder(sandbox.path());
    names.retain(|name| name != skillet_retrieval::embed::DIGEST_MEMO);
    assert_eq!(names, [cache_name.clone(), format!("{cache_name}.lock")]);
    let (cache, warnings) = EmbeddingCache::open(&cache_file, model_id.dimensions);
    assert_eq!(warnings, []);
    // The fixture library's skills (some share a text) and the 24 generated ones.
    assert!(cache.len() >= 24 + 5, "{}", cache.len());

    for library in [&library_a, &library_b] {
        let stdout = index_cleanly(sandbox.path(), &model, library);
        assert!(stdout.contains(" 0 embedded"), "{stdout}");
    }
}

/// A damaged cache: `skills index` warns, naming the file, rebuilds it, and the next run is
/// clean and embeds nothing.
#[test]
fn a_damaged_cache_is_rebuilt_with_a_warning() {
    let Some(model) = model() else { return };
    let sandbox = tempfile::tempdir().unwrap();
    let library = fixtures();
    index_cleanly(sandbox.path(), &model, &library);
    let model_id = fingerprint(&model, None).unwrap();
    let cache_file = EmbeddingCache::path_for(&embeddings_dir(sandbox.path()), &model_id.id);
    let whole = std::fs::read(&cache_file).unwrap();
    std::fs::write(&cache_file, &whole[..whole.len() / 2]).unwrap();

    let output = index_command(sandbox.path(), &model, &library)
        .output()
        .unwrap();
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "warning: embedding cache {} was unreadable (",
            cache_file.display()
        )) && stderr.contains("; rebuilding"),
        "{stderr}"
    );
    assert!(!stdout.contains(" 0 embedded"), "{stdout}");

    let stdout = index_cleanly(sandbox.path(), &model, &library);
    assert!(stdout.contains(" 0 embedded"), "{stdout}");
}
