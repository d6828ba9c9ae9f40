//! Getting the embedding model: `skillet skills match` and `skills index` download it from the
//! Hugging Face hub (`HF_ENDPOINT`, here a stand-in on loopback) into the Hugging Face cache
//! (`HF_HOME`), fall back to words when it cannot be had, and say so once rather than on every
//! run.

#![allow(clippy::unwrap_used, reason = "tests")]

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use skillet_test_support::hub::{HUB_COMMIT, HubServer};

const REPO: &str = "sentence-transformers/all-MiniLM-L6-v2";
const FILES: [&str; 3] = ["config.json", "tokenizer.json", "model.safetensors"];

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../skills/tests/fixtures/library")
        .canonicalize()
        .unwrap()
}

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

fn snapshot_dir(sandbox: &Path) -> PathBuf {
    sandbox
        .join("hf/hub/models--sentence-transformers--all-MiniLM-L6-v2/snapshots")
        .join(HUB_COMMIT)
}

#[test]
fn downloads_into_the_hugging_face_cache_from_hf_endpoint() {
    let sandbox = tempfile::tempdir().unwrap();
    let hub = HubServer::start();
    // Stand-in files: the download is what is tested here; they are not a model.
    for file in FILES {
        hub.add_file(REPO, file, format!("stand-in {file}").into_bytes());
    }
    let (code, stdout, stderr) = skillet(sandbox.path(), &hub, &["match", "fill in a pdf form"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("downloading the embedding model"),
        "{stderr}"
    );
    assert!(stderr.contains(&hub.url()), "{stderr}");
    for file in FILES {
        let path = snapshot_dir(sandbox.path()).join(file);
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            format!("stand-in {file}"),
            "{}",
            path.display()
        );
        let wanted = format!("/{REPO}/resolve/main/{file}");
        assert!(
            hub.requests().iter().any(|(path, _)| *path == wanted),
            "{wanted}"
        );
    }
    // The stand-ins do not load: ranked by words, saying why, naming the file.
    assert!(stderr.contains("ranked by words only"), "{stderr}");
    assert!(stderr.contains("mode: lexical"), "{stderr}");
    assert!(stdout.contains("pdf"), "{stdout}");

    // Found in the cache next time: nothing more is requested.
    let before = hub.requests().len();
    let (code, _, stderr) = skillet(sandbox.path(), &hub, &["match", "fill in a pdf form"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(!stderr.contains("downloading"), "{stderr}");
    assert_eq!(hub.requests().len(), before);
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

/// With the real model at hand (CI fetches it; `SKILLET_EMBED_MODEL`), the hub serves it and
/// matching by meaning works from the downloaded copy.
#[test]
fn a_downloaded_model_is_used() {
    let Some(model) = skillet_test_support::embedding_model_dir() else {
        eprintln!(
            "SKIPPED: no embedding model to serve (run scripts/fetch-model.sh, set SKILLET_EMBED_MODEL)"
        );
        return;
    };
    let sandbox = tempfile::tempdir().unwrap();
    let hub = HubServer::start();
    for file in FILES {
        hub.add_file(REPO, file, std::fs::read(model.join(file)).unwrap());
    }
    let (code, stdout, stderr) = skillet(
        sandbox.path(),
        &hub,
        &["match", "fill in a pdf form", "--json"],
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("mode: hybrid"), "{stderr}");
    let ranked: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(ranked[0]["name"], "pdf", "{stdout}");
    assert_eq!(
        std::fs::metadata(snapshot_dir(sandbox.path()).join("model.safetensors"))
            .unwrap()
            .len(),
        std::fs::metadata(model.join("model.safetensors"))
            .unwrap()
            .len()
    );
}
