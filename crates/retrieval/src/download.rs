//! Fetching all-MiniLM-L6-v2 from the Hugging Face hub into the standard Hugging Face cache
//! (`$HF_HOME/hub`, else `~/.cache/huggingface/hub`), where [`crate::embed::find_model`] and
//! every other Hugging Face tool find it. Uses the `hf-hub` crate; the endpoint is
//! `$HF_ENDPOINT` when set (a mirror, or a test server on loopback).

use std::path::{Path, PathBuf};

use hf_hub::api::Progress;
use hf_hub::api::sync::ApiBuilder;
use hf_hub::{Cache, Repo, RepoType};

use crate::embed::{EmbedError, MODEL_FILES};

/// The model's repository on the hub.
pub const MODEL_REPO: &str = "sentence-transformers/all-MiniLM-L6-v2";
/// The hub, unless `HF_ENDPOINT` says otherwise.
pub const DEFAULT_ENDPOINT: &str = "https://huggingface.co";

/// Downloads whichever of [`MODEL_FILES`] the cache under `hub_dir` lacks from `endpoint`, and
/// returns the snapshot folder holding all three. `progress(file, done, total)` is called as
/// bytes arrive (sizes in bytes).
pub fn download_model(
    endpoint: &str,
    hub_dir: &Path,
    progress: &mut dyn FnMut(&str, usize, usize),
) -> Result<PathBuf, EmbedError> {
    let failed = |error: &dyn std::fmt::Display| EmbedError::Download {
        url: format!("{endpoint}/{MODEL_REPO}"),
        message: error.to_string(),
    };
    let repo = Repo::new(MODEL_REPO.to_string(), RepoType::Model);
    let cache = Cache::new(hub_dir.to_path_buf());
    let api = ApiBuilder::from_cache(cache.clone())
        .with_endpoint(endpoint.trim_end_matches('/').to_string())
        .with_progress(false)
        .build()
        .map_err(|error| failed(&error))?;
    let remote = api.repo(repo.clone());
    let mut folder = None;
    for file in MODEL_FILES {
        let path = match cache.repo(repo.clone()).get(file) {
            Some(path) => path,
            None => remote
                .download_with_progress(
                    file,
                    Reporter {
                        file,
                        total: 0,
                        done: 0,
                        report: &mut *progress,
                    },
                )
                .map_err(|error| failed(&error))?,
        };
        folder = path.parent().map(Path::to_path_buf);
    }
    folder.ok_or_else(|| failed(&"no files"))
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
