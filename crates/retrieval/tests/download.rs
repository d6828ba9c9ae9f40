//! Downloading the model at a pinned revision, each file checked against its digest, from a
//! stand-in for the hub on loopback. Small made-up files with their own digests stand in for
//! the model (the pinned digests are those of the real files, checked last when they are here).

#![cfg(feature = "download")]
#![allow(clippy::unwrap_used, clippy::print_stderr, reason = "tests")]

use std::path::{Path, PathBuf};

use skillet_retrieval::download::{
    MODEL_REPO, MODEL_REVISION, MODEL_SPEC, ModelFile, ModelSpec, download_model_with, sha256_file,
};
use skillet_retrieval::embed::{EmbedError, find_model, pinned_snapshot, snapshot_dir};
use skillet_test_support::hub::{HubServer, resolve_path};

const REPO: &str = "test/tiny-model";
const REVISION: &str = "1111111111111111111111111111111111111111";
const OTHER_REVISION: &str = "2222222222222222222222222222222222222222";
const FILES: [&str; 3] = ["config.json", "tokenizer.json", "model.safetensors"];

fn content(file: &str) -> Vec<u8> {
    format!("the {file} of {REPO} at {REVISION}").into_bytes()
}

fn sha256(bytes: &[u8]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("file");
    std::fs::write(&path, bytes).unwrap();
    sha256_file(&path).unwrap()
}

/// The made-up model: its files with their digests, served at [`REVISION`].
struct Fixture {
    digests: Vec<(&'static str, String)>,
    hub: HubServer,
    cache: tempfile::TempDir,
}

impl Fixture {
    fn new() -> Self {
        let hub = HubServer::start();
        for file in FILES {
            hub.add_file(REPO, REVISION, file, content(file));
        }
        Self {
            digests: FILES.map(|file| (file, sha256(&content(file)))).to_vec(),
            hub,
            cache: tempfile::tempdir().unwrap(),
        }
    }

    fn files(&self) -> Vec<ModelFile<'_>> {
        self.digests
            .iter()
            .map(|(name, sha256)| ModelFile { name, sha256 })
            .collect()
    }

    fn download(&self) -> Result<PathBuf, EmbedError> {
        let files = self.files();
        let spec = ModelSpec {
            repo: REPO,
            revision: REVISION,
            files: &files,
        };
        download_model_with(&spec, &self.hub.url(), self.cache.path(), &mut |_, _, _| {})
    }

    fn snapshot(&self) -> PathBuf {
        snapshot_dir(self.cache.path(), REPO, REVISION)
    }

    /// The files requested so far.
    fn fetched(&self) -> Vec<String> {
        let mut paths: Vec<String> = self
            .hub
            .requests()
            .into_iter()
            .map(|(path, _)| path)
            .collect();
        paths.dedup();
        paths
    }
}

fn requested(files: &[&str]) -> Vec<String> {
    files
        .iter()
        .map(|file| resolve_path(REPO, REVISION, file))
        .collect()
}

fn exists(path: &Path) -> bool {
    path.symlink_metadata().is_ok()
}

#[test]
fn downloads_the_pinned_revision_into_its_snapshot() {
    let fixture = Fixture::new();
    // Served at `main` too, with other bytes: never asked for.
    for file in FILES {
        fixture
            .hub
            .add_file(REPO, "main", file, b"the latest commit".to_vec());
    }
    let dir = fixture.download().unwrap();
    assert_eq!(
        dir,
        fixture
            .cache
            .path()
            .join("models--test--tiny-model/snapshots")
            .join(REVISION)
    );
    for file in FILES {
        assert_eq!(
            std::fs::read(dir.join(file)).unwrap(),
            content(file),
            "{file}"
        );
    }
    assert_eq!(fixture.fetched(), requested(&FILES));

    // Cached and still matching: nothing is requested again.
    assert_eq!(fixture.download().unwrap(), dir);
    assert_eq!(fixture.fetched(), requested(&FILES));
}

#[test]
fn a_tampered_file_is_refused_and_removed() {
    let fixture = Fixture::new();
    fixture.hub.corrupt_file(REPO, REVISION, "tokenizer.json");
    let error = fixture.download().unwrap_err();
    let bad = fixture.snapshot().join("tokenizer.json");
    let EmbedError::Checksum {
        path,
        expected,
        actual,
    } = &error
    else {
        panic!("not a digest error: {error}");
    };
    assert_eq!(*path, bad);
    assert_eq!(*expected, fixture.digests[1].1);
    let mut served = content("tokenizer.json");
    *served.last_mut().unwrap() ^= 0xff;
    assert_eq!(*actual, sha256(&served));
    let message = error.to_string();
    for part in ["tokenizer.json", expected.as_str(), actual.as_str()] {
        assert!(message.contains(part), "{message}");
    }
    // Gone, and so is the blob it pointed to; the good files stay.
    assert!(!exists(&bad));
    let blobs = fixture.cache.path().join("models--test--tiny-model/blobs");
    for blob in std::fs::read_dir(blobs).unwrap() {
        let blob = blob.unwrap().path();
        if blob.extension().is_none() {
            assert_ne!(std::fs::read(&blob).unwrap(), served, "{}", blob.display());
        }
    }
    assert!(fixture.snapshot().join("config.json").is_file());
    assert!(find_model(Some(&fixture.snapshot()), None, None, None).is_none());

    // Once the hub serves the right bytes, only that file is fetched again.
    fixture
        .hub
        .add_file(REPO, REVISION, "tokenizer.json", content("tokenizer.json"));
    let before = fixture.hub.requests().len();
    let dir = fixture.download().unwrap();
    assert_eq!(
        std::fs::read(dir.join("tokenizer.json")).unwrap(),
        content("tokenizer.json")
    );
    let again: Vec<String> = fixture.hub.requests()[before..]
        .iter()
        .map(|(path, _)| path.clone())
        .collect();
    assert!(
        again
            .iter()
            .all(|path| *path == resolve_path(REPO, REVISION, "tokenizer.json")),
        "{again:?}"
    );
}

#[test]
fn a_file_the_hub_lacks_is_a_failure() {
    for status in [404, 500] {
        let fixture = Fixture::new();
        fixture
            .hub
            .fail_file_with(REPO, REVISION, "model.safetensors", status);
        let error = fixture.download().unwrap_err();
        let message = error.to_string();
        assert!(matches!(error, EmbedError::Download { .. }), "{message}");
        assert!(message.contains("model.safetensors"), "{message}");
        assert!(message.contains(&status.to_string()), "{message}");
        assert!(!exists(&fixture.snapshot().join("model.safetensors")));
    }
}

#[test]
fn a_hub_answering_with_another_commit_is_a_failure() {
    let fixture = Fixture::new();
    fixture.hub.set_commit(REPO, REVISION, OTHER_REVISION);
    let error = fixture.download().unwrap_err();
    let message = error.to_string();
    assert!(message.contains("another commit"), "{message}");
    assert!(message.contains("config.json"), "{message}");
    assert!(!exists(&fixture.snapshot()));
}

#[test]
fn a_corrupted_cache_is_fetched_again_once_then_refused() {
    let fixture = Fixture::new();
    let dir = fixture.download().unwrap();
    let config = dir.join("config.json");
    let corrupt = |path: &Path| std::fs::write(path.canonicalize().unwrap(), b"bit rot").unwrap();

    // A bad cached file is replaced with a good one.
    corrupt(&config);
    let before = fixture.hub.requests().len();
    assert_eq!(fixture.download().unwrap(), dir);
    assert_eq!(std::fs::read(&config).unwrap(), content("config.json"));
    assert!(
        fixture.hub.requests()[before..]
            .iter()
            .all(|(path, _)| *path == resolve_path(REPO, REVISION, "config.json"))
    );

    // A cached link whose blob is gone is fetched again.
    std::fs::remove_file(config.canonicalize().unwrap()).unwrap();
    assert_eq!(fixture.download().unwrap(), dir);
    assert_eq!(std::fs::read(&config).unwrap(), content("config.json"));

    // When the hub's copy is bad too: one fetch, then the digest error.
    corrupt(&config);
    fixture.hub.corrupt_file(REPO, REVISION, "config.json");
    let before = fixture.hub.requests().len();
    let error = fixture.download().unwrap_err();
    assert!(matches!(error, EmbedError::Checksum { .. }), "{error}");
    let tries = fixture.hub.requests()[before..]
        .iter()
        .filter(|(_, range)| range.as_deref() != Some("bytes=0-0"))
        .count();
    assert_eq!(tries, 1);
    assert!(!exists(&config));
}

#[test]
fn files_of_another_revision_are_not_used() {
    let fixture = Fixture::new();
    let other = snapshot_dir(fixture.cache.path(), REPO, OTHER_REVISION);
    std::fs::create_dir_all(&other).unwrap();
    for file in FILES {
        std::fs::write(other.join(file), content(file)).unwrap();
    }
    let dir = fixture.download().unwrap();
    assert_eq!(dir, fixture.snapshot());
    assert_eq!(fixture.fetched(), requested(&FILES));
}

#[test]
fn find_model_takes_the_pinned_snapshot_or_the_folder_the_user_names() {
    let home = tempfile::tempdir().unwrap();
    let hub = home.path().join("hub");
    let put = |dir: &Path| {
        std::fs::create_dir_all(dir).unwrap();
        for file in FILES {
            std::fs::write(dir.join(file), b"anything").unwrap();
        }
    };
    // Another revision's complete snapshot is not the pinned model.
    put(&snapshot_dir(&hub, MODEL_REPO, OTHER_REVISION));
    assert_eq!(find_model(None, None, Some(home.path()), None), None);
    put(&pinned_snapshot(&hub));
    assert_eq!(
        find_model(None, None, Some(home.path()), None),
        Some(
            hub.join("models--sentence-transformers--all-MiniLM-L6-v2/snapshots")
                .join(MODEL_REVISION)
        )
    );
    // `~/.cache/huggingface/hub` without HF_HOME.
    let cache = home.path().join(".cache/huggingface/hub");
    put(&pinned_snapshot(&cache));
    assert_eq!(
        find_model(None, None, None, Some(home.path())),
        Some(pinned_snapshot(&cache))
    );
    // A folder the user names is taken as it is (no digests): the user chose it.
    let mine = home.path().join("mine");
    put(&mine);
    assert_eq!(
        find_model(Some(&mine), None, Some(home.path()), None),
        Some(mine.clone())
    );
    assert_eq!(
        find_model(None, Some(&mine), Some(home.path()), None),
        Some(mine)
    );
}

/// The pinned digests are those of the real files (`scripts/fetch-model.sh` fetches them).
#[test]
fn the_pinned_digests_match_the_model_files() {
    let Some(dir) = skillet_test_support::embedding_model_or_skip("the pinned digests") else {
        return;
    };
    for file in MODEL_SPEC.files {
        assert_eq!(
            sha256_file(&dir.join(file.name)).unwrap(),
            file.sha256,
            "{}",
            file.name
        );
    }
}
