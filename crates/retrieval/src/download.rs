//! Fetching all-MiniLM-L6-v2 from the Hugging Face hub into the standard Hugging Face cache
//! (`$HF_HOME/hub`, else `~/.cache/huggingface/hub`), where [`crate::embed::find_model`] and
//! every other Hugging Face tool find it. Uses the `hf-hub` crate; the endpoint is
//! `$HF_ENDPOINT` when set (a mirror, or a test server on loopback).
//!
//! The model is fetched at a pinned commit ([`MODEL_REVISION`]), so its files land together in
//! `snapshots/REVISION/`, and each file is checked against a pinned sha256 digest: a file that
//! does not match is removed (the next download fetches it again) and the download fails, and
//! so does one that leaves any file missing from the folder it returns.

use std::io;
use std::path::{Path, PathBuf};

use hf_hub::api::Progress;
use hf_hub::api::sync::ApiBuilder;
use hf_hub::{Repo, RepoType};

use crate::embed::{EmbedError, snapshot_dir};
pub use crate::embed::{MODEL_REPO, MODEL_REVISION};

/// The hub, unless `HF_ENDPOINT` says otherwise.
pub const DEFAULT_ENDPOINT: &str = "https://huggingface.co";

/// sha256 of `config.json` at [`MODEL_REVISION`].
pub const CONFIG_SHA256: &str = "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41";
/// sha256 of `tokenizer.json` at [`MODEL_REVISION`].
pub const TOKENIZER_SHA256: &str =
    "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037";
/// sha256 of `model.safetensors` at [`MODEL_REVISION`] (also checked by
/// `scripts/fetch-model.sh`).
pub const WEIGHTS_SHA256: &str = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db";

/// The model skillet downloads: [`MODEL_REPO`] at [`MODEL_REVISION`], the files of
/// [`crate::embed::MODEL_FILES`] with their digests.
pub const MODEL_SPEC: ModelSpec<'static> = ModelSpec {
    repo: MODEL_REPO,
    revision: MODEL_REVISION,
    files: &[
        ModelFile {
            name: "config.json",
            sha256: CONFIG_SHA256,
        },
        ModelFile {
            name: "tokenizer.json",
            sha256: TOKENIZER_SHA256,
        },
        ModelFile {
            name: "model.safetensors",
            sha256: WEIGHTS_SHA256,
        },
    ],
};

/// What to download: a model repository at one commit, and its files with their digests.
#[derive(Debug, Clone, Copy)]
pub struct ModelSpec<'a> {
    /// `owner/name` on the hub.
    pub repo: &'a str,
    /// The commit (40 hex digits), which names the snapshot folder.
    pub revision: &'a str,
    /// The files, each with its sha256 digest.
    pub files: &'a [ModelFile<'a>],
}

/// One file of a [`ModelSpec`].
#[derive(Debug, Clone, Copy)]
pub struct ModelFile<'a> {
    /// Its path in the repository.
    pub name: &'a str,
    /// Its sha256 digest, lower-case hex.
    pub sha256: &'a str,
}

/// Downloads all-MiniLM-L6-v2 ([`MODEL_SPEC`]) from `endpoint` into the cache under `hub_dir`
/// and returns its snapshot folder; see [`download_model_with`].
pub fn download_model(
    endpoint: &str,
    hub_dir: &Path,
    progress: &mut dyn FnMut(&str, usize, usize),
) -> Result<PathBuf, EmbedError> {
    download_model_with(&MODEL_SPEC, endpoint, hub_dir, progress)
}

/// Downloads the files of `spec` that its snapshot folder under `hub_dir`
/// (`models--OWNER--NAME/snapshots/REVISION`) lacks from `endpoint` at `spec.revision`, and
/// returns that folder once every file is in it and matches its digest. Files already there are
/// checked too: one that does not match is removed and fetched again. A downloaded file that
/// does not match is removed and is an [`EmbedError::Checksum`]; a file missing from the
/// folder, an [`EmbedError::Io`] naming it. Files cached under other revisions are not used.
/// `progress(file, done, total)` is called as bytes arrive (sizes in bytes).
pub fn download_model_with(
    spec: &ModelSpec<'_>,
    endpoint: &str,
    hub_dir: &Path,
    progress: &mut dyn FnMut(&str, usize, usize),
) -> Result<PathBuf, EmbedError> {
    let endpoint = endpoint.trim_end_matches('/');
    let snapshot = snapshot_dir(hub_dir, spec.repo, spec.revision);
    // What the cache holds at this revision is kept when it matches, and fetched again if not.
    let mut wanted = Vec::new();
    for file in spec.files {
        let path = snapshot.join(file.name);
        if path.is_file() {
            match verify(&path, file, &snapshot) {
                Ok(()) => continue,
                Err(EmbedError::Checksum { .. }) => {}
                Err(error) => return Err(error),
            }
        } else if path.symlink_metadata().is_ok() {
            // A link whose blob is gone: `hf-hub` would not replace it.
            remove(&path, &snapshot)?;
        }
        wanted.push(file);
    }
    if wanted.is_empty() {
        return Ok(snapshot);
    }
    let repo = Repo::with_revision(
        spec.repo.to_string(),
        RepoType::Model,
        spec.revision.to_string(),
    );
    let api = ApiBuilder::from_cache(hf_hub::Cache::new(hub_dir.to_path_buf()))
        .with_endpoint(endpoint.to_string())
        .with_progress(false)
        .build()
        .map_err(|error| EmbedError::Download {
            url: format!("{endpoint}/{}", spec.repo),
            message: error.to_string(),
        })?;
    let remote = api.repo(repo);
    for file in &wanted {
        let failed = |message: String| EmbedError::Download {
            url: remote.url(file.name),
            message,
        };
        let path = remote
            .download_with_progress(
                file.name,
                Reporter {
                    file: file.name,
                    total: 0,
                    done: 0,
                    report: &mut *progress,
                },
            )
            .map_err(|error| failed(error.to_string()))?;
        // `hf-hub` files it under the commit the hub answered with.
        if path != snapshot.join(file.name) {
            return Err(failed(format!(
                "the hub answered with another commit than {} (saved as {})",
                spec.revision,
                path.display()
            )));
        }
    }
    // Every bad file is removed before the first error is returned.
    let mut first_error = None;
    for file in spec.files {
        if let Err(error) = verify(&snapshot.join(file.name), file, &snapshot) {
            first_error.get_or_insert(error);
        }
    }
    first_error.map_or(Ok(snapshot), Err)
}

/// Checks `path` against `file`'s digest; removes it when it does not match.
fn verify(path: &Path, file: &ModelFile<'_>, snapshot: &Path) -> Result<(), EmbedError> {
    let io_error = |error: io::Error| EmbedError::Io {
        path: path.to_path_buf(),
        message: if error.kind() == io::ErrorKind::NotFound {
            "missing after the download".to_string()
        } else {
            error.to_string()
        },
    };
    let actual = sha256_file(path).map_err(io_error)?;
    if actual.eq_ignore_ascii_case(file.sha256) {
        return Ok(());
    }
    remove(path, snapshot)?;
    Err(EmbedError::Checksum {
        path: path.to_path_buf(),
        expected: file.sha256.to_ascii_lowercase(),
        actual,
    })
}

/// Removes `path` from `snapshot` and, when it links to a blob of the same repository's cache,
/// the blob too (so nothing reuses the bad bytes).
fn remove(path: &Path, snapshot: &Path) -> Result<(), EmbedError> {
    let failed = |error: io::Error| EmbedError::Io {
        path: path.to_path_buf(),
        message: format!("cannot remove it: {error}"),
    };
    let blobs = snapshot
        .parent()
        .and_then(Path::parent)
        .map(|repo| repo.join("blobs"))
        .and_then(|blobs| blobs.canonicalize().ok());
    if let (Ok(target), Some(blobs)) = (path.canonicalize(), blobs)
        && target.starts_with(&blobs)
        && target != path
    {
        ignore_missing(std::fs::remove_file(&target)).map_err(failed)?;
    }
    ignore_missing(std::fs::remove_file(path)).map_err(failed)
}

fn ignore_missing(result: io::Result<()>) -> io::Result<()> {
    match result {
        Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(()),
        other => other,
    }
}

/// The sha256 digest of the file at `path`, lower-case hex, read in pieces.
pub fn sha256_file(path: &Path) -> io::Result<String> {
    crate::fingerprint::sha256_file(path).map(|digest| crate::fingerprint::hex(&digest))
}

/// Passes `hf-hub`'s progress to a callback.
struct Reporter<'a> {
    file: &'a str,
    total: usize,
    done: usize,
    report: &'a mut dyn FnMut(&str, usize, usize),
}

impl Progress for Reporter<'_> {
    fn init(&mut self, size: usize, _filename: &str) {
        self.total = size;
        self.done = 0;
        (self.report)(self.file, 0, size);
    }

    fn update(&mut self, size: usize) {
        self.done += size;
        (self.report)(self.file, self.done, self.total);
    }

    fn finish(&mut self) {
        (self.report)(self.file, self.total, self.total);
    }
}

#[cfg(test)]
mod tests {
    use sha2::{Digest as _, Sha256};

    use super::*;
    use crate::embed::MODEL_FILES;
    use crate::fingerprint::HASH_BUFFER;

    #[test]
    fn the_pinned_spec_covers_the_model_files() {
        let names: Vec<&str> = MODEL_SPEC.files.iter().map(|file| file.name).collect();
        assert_eq!(names, MODEL_FILES);
        assert_eq!(MODEL_SPEC.revision.len(), 40);
        assert!(MODEL_SPEC.revision.bytes().all(|b| b.is_ascii_hexdigit()));
        for file in MODEL_SPEC.files {
            assert_eq!(file.sha256.len(), 64, "{}", file.name);
            assert!(
                file.sha256
                    .bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)),
                "{}",
                file.name
            );
        }
    }

    #[test]
    fn hashes_a_file_in_pieces() {
        let dir = tempfile::tempdir().unwrap();
        let small = dir.path().join("abc");
        std::fs::write(&small, b"abc").unwrap();
        assert_eq!(
            sha256_file(&small).unwrap(),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        // Larger than the buffer: the pieces add up to the whole.
        let large = dir.path().join("large");
        let content: Vec<u8> = (0..3 * HASH_BUFFER + 17)
            .map(|i| u8::try_from(i % 251).unwrap())
            .collect();
        std::fs::write(&large, &content).unwrap();
        assert_eq!(
            sha256_file(&large).unwrap(),
            format!("{:x}", Sha256::digest(&content))
        );
    }
}
