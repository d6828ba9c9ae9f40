//! Getting the embedding model: `skillet skills match` and `skills index` download it from the
//! Hugging Face hub (`HF_ENDPOINT`, here a stand-in on loopback) at the pinned revision into the
//! Hugging Face cache (`HF_HOME`), checking each file's sha256 digest, fall back to words when
//! it cannot be had, and say so once rather than on every run.

#![allow(clippy::unwrap_used, clippy::print_stderr, reason = "tests")]

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use skillet_retrieval::download::{CONFIG_SHA256, MODEL_REPO as REPO, MODEL_REVISION};
use skillet_test_support::hub::{HubServer, resolve_path};

const FILES: [&str; 3] = ["config.json", "tokenizer.json", "model.safetensors"];

use skillet_test_support::fixture_library as fixtures;

/// `skillet skills ARGS` over the fixture library with a clean environment: no model anywhere,
/// the hub at `hub`, the Hugging Face cache and skillet's cache inside `sandbox`.
fn skillet(sandbox: &Path, hub: &HubServer, args: &[&str]) -> (i32, String, String) {
    let output = Command::cargo_bin("skillet")
        .unwrap()
        .current_dir(sandbox)
        .env_clear()
        .env("HOME", sandbox)
        .env("PATH", std::env::var_os("PATH").unwrap())
        .env("HF_HOME", sandbox.join("hf"))
        .env("HF_ENDPOINT", hub.url())
        .arg("--skills-dir")
        .arg(fixtures())
        .arg("skills")
        .args(args)
        .output()
        .unwrap();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// Where the download puts the files: the snapshot of the pinned revision.
fn snapshot_dir(sandbox: &Path) -> PathBuf {
    sandbox
        .join("hf/hub/models--sentence-transformers--all-MiniLM-L6-v2/snapshots")
        .join(MODEL_REVISION)
}

/// The real model, served by `hub` at the pinned revision; `None` (the test skips, saying so)
/// when it is not at hand (CI fetches it; `SKILLET_EMBED_MODEL`).
fn serve_the_model(hub: &HubServer) -> Option<PathBuf> {
    let model = skillet_test_support::embedding_model_or_skip("the model served by a mock hub")?;
    for file in FILES {
        hub.add_file(
            REPO,
            MODEL_REVISION,
            file,
            std::fs::read(model.join(file)).unwrap(),
        );
    }
    Some(model)
}

/// The files that were downloaded (each is asked for twice: its size, then its bytes).
fn downloaded(hub: &HubServer) -> Vec<String> {
    hub.requests()
        .into_iter()
        .filter(|(_, range)| range.as_deref() != Some("bytes=0-0"))
        .map(|(path, _)| path)
        .collect()
}

/// With the real model at hand, the hub serves it at the pinned revision, the files land in
/// that revision's snapshot, and matching by meaning works from the downloaded copy.
#[test]
fn downloads_the_pinned_revision_into_the_hugging_face_cache() {
    let sandbox = tempfile::tempdir().unwrap();
    let hub = HubServer::start();
    let Some(model) = serve_the_model(&hub) else {
        return;
    };
    let (code, stdout, stderr) = skillet(
        sandbox.path(),
        &hub,
        &["match", "fill in a pdf form", "--json"],
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("downloading the embedding model"),
        "{stderr}"
    );
    assert!(stderr.contains(&hub.url()), "{stderr}");
    assert!(stderr.contains("mode: hybrid"), "{stderr}");
    let ranked: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(ranked[0]["name"], "pdf", "{stdout}");
    let wanted: Vec<String> = FILES
        .iter()
        .map(|file| resolve_path(REPO, MODEL_REVISION, file))
        .collect();
    assert_eq!(downloaded(&hub), wanted);
    for file in FILES {
        let path = snapshot_dir(sandbox.path()).join(file);
        assert_eq!(
            std::fs::metadata(&path).unwrap().len(),
            std::fs::metadata(model.join(file)).unwrap().len(),
            "{}",
            path.display()
        );
    }

    // Found in the cache next time: nothing more is requested.
    let before = hub.requests().len();
    let (code, _, stderr) = skillet(sandbox.path(), &hub, &["match", "fill in a pdf form"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(!stderr.contains("downloading"), "{stderr}");
    assert!(stderr.contains("mode: hybrid"), "{stderr}");
    assert_eq!(hub.requests().len(), before);
}

/// One file with other bytes than the pinned ones: refused, naming it and both digests, and
/// removed; the next download fetches only that file.
#[test]
fn a_tampered_file_is_refused_removed_and_fetched_again() {
    let sandbox = tempfile::tempdir().unwrap();
    let hub = HubServer::start();
    if serve_the_model(&hub).is_none() {
        return;
    }
    hub.corrupt_file(REPO, MODEL_REVISION, "config.json");
    let config = snapshot_dir(sandbox.path()).join("config.json");
    let (code, _, stderr) = skillet(sandbox.path(), &hub, &["index"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains(&format!("error: {}", config.display())),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!("expected {CONFIG_SHA256}")),
        "{stderr}"
    );
    assert!(stderr.contains("the file was removed"), "{stderr}");
    assert!(config.symlink_metadata().is_err(), "{}", config.display());

    let model = serve_the_model(&hub).unwrap();
    let before = downloaded(&hub).len();
    let (code, _, stderr) = skillet(sandbox.path(), &hub, &["index"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        downloaded(&hub)[before..],
        [resolve_path(REPO, MODEL_REVISION, "config.json")]
    );
    assert_eq!(
        std::fs::read(&config).unwrap(),
        std::fs::read(model.join("config.json")).unwrap()
    );
}

/// Files that are not the model (stand-ins; no real model needed): refused by their digests,
/// removed, and skills are ranked by words, saying why.
#[test]
fn stand_in_files_are_refused_and_words_are_used() {
    let sandbox = tempfile::tempdir().unwrap();
    let hub = HubServer::start();
    for file in FILES {
        hub.add_file(
            REPO,
            MODEL_REVISION,
            file,
            format!("stand-in {file}").into_bytes(),
        );
    }
    let (code, stdout, stderr) = skillet(sandbox.path(), &hub, &["match", "fill in a pdf form"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("downloading the embedding model"),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!("expected {CONFIG_SHA256}")),
        "{stderr}"
    );
    assert!(stderr.contains("ranked by words only"), "{stderr}");
    assert!(stderr.contains("mode: lexical"), "{stderr}");
    assert!(stdout.contains("pdf"), "{stdout}");
    for file in FILES {
        let path = snapshot_dir(sandbox.path()).join(file);
        assert!(path.symlink_metadata().is_err(), "{}", path.display());
    }
}

/// A file the hub does not have (404) fails the download: it is not a model missing a file.
#[test]
fn a_file_the_hub_lacks_fails_the_download() {
    let sandbox = tempfile::tempdir().unwrap();
    let hub = HubServer::start();
    if serve_the_model(&hub).is_none() {
        for file in FILES {
            hub.add_file(REPO, MODEL_REVISION, file, b"stand-in".to_vec());
        }
    }
    hub.fail_file_with(REPO, MODEL_REVISION, "tokenizer.json", 404);
    let (code, _, stderr) = skillet(sandbox.path(), &hub, &["index"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("error: downloading"), "{stderr}");
    assert!(
        stderr.contains(&resolve_path(REPO, MODEL_REVISION, "tokenizer.json")),
        "{stderr}"
    );
    assert!(stderr.contains("404"), "{stderr}");
    assert!(!snapshot_dir(sandbox.path()).join("tokenizer.json").exists());
}

#[test]
fn an_unreachable_hub_means_words_and_one_hint() {
    let sandbox = tempfile::tempdir().unwrap();
    let hub = HubServer::start();
    hub.fail_with(503);
    let (code, stdout, stderr) = skillet(sandbox.path(), &hub, &["match", "fill in a pdf form"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("pdf"), "{stdout}");
    assert!(stderr.contains("mode: lexical"), "{stderr}");
    assert!(
        stderr.contains("hint: `skillet skills index` downloads"),
        "{stderr}"
    );
    assert!(stderr.contains("SKILLET_EMBED_MODEL"), "{stderr}");
    let tried = hub.requests().len();
    assert!(tried > 0);

    // The next run does not try again nor repeat the hint.
    let (code, _, stderr) = skillet(sandbox.path(), &hub, &["match", "fill in a pdf form"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(!stderr.contains("hint"), "{stderr}");
    assert_eq!(hub.requests().len(), tried);

    // `skills index` needs the model: it tries again and fails clearly.
    let (code, _, stderr) = skillet(sandbox.path(), &hub, &["index"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("error: downloading"), "{stderr}");
    assert!(stderr.contains("503"), "{stderr}");
    assert!(hub.requests().len() > tried);
}

#[test]
fn hf_hub_offline_never_downloads() {
    let sandbox = tempfile::tempdir().unwrap();
    let hub = HubServer::start();
    let output = Command::cargo_bin("skillet")
        .unwrap()
        .current_dir(sandbox.path())
        .env_clear()
        .env("HOME", sandbox.path())
        .env("HF_HOME", sandbox.path().join("hf"))
        .env("HF_ENDPOINT", hub.url())
        .env("HF_HUB_OFFLINE", "1")
        .arg("--skills-dir")
        .arg(fixtures())
        .args(["skills", "match", "fill in a pdf form"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("mode: lexical"), "{stderr}");
    assert!(hub.requests().is_empty());
}
