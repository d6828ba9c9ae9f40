//! The embedding model: where it is found, downloading it from the Hugging Face hub when it is
//! not, and the [`SkillIndex`] built with it (by words when it is missing).
//!
//! Nothing here reads the environment or prints: [`ModelEnv`] holds what the caller read (the
//! CLI: `--embed-model` and its environment variables), and what happens is reported as
//! [`ModelEvent`]s, with the words to say ([`ModelEvent::message`]): the CLI prints them on
//! stderr, the MCP server logs them.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use skillet_retrieval::download::{DEFAULT_ENDPOINT, MODEL_REPO, download_model};
use skillet_retrieval::embed::{EmbedError, find_model};
use skillet_skills::Library;

use crate::index::{IndexStats, IndexWarning, SkillIndex, cache_dir, refresh_cache};

/// After a failed download, how long skillet waits before trying again on its own (`skillet
/// skills index` always tries).
pub const DOWNLOAD_RETRY_AFTER: Duration = Duration::from_hours(24);

/// The file, in the embeddings folder ([`ModelEnv::embeddings_dir`]), whose age says when a
/// download last failed.
pub const DOWNLOAD_FAILED_MARKER: &str = "model-download-failed";

/// The folder under the system's temporary folder that holds the embedding cache when there is
/// no home for it.
pub const TEMP_EMBEDDINGS_DIR: &str = "skillet-embeddings";

/// Where the model can come from besides a download.
/// The short hint wherever skills are ranked by words only for want of the model.
pub const WORDS_ONLY_HINT: &str =
    "`skillet skills index` downloads the embedding model (about 90 MB) to rank by meaning too";

const MODEL_BY_HAND: &str = "or put its config.json, tokenizer.json and model.safetensors in a \
    folder and pass --embed-model DIR or set SKILLET_EMBED_MODEL";

/// What the model's whereabouts depend on: the folder the user named, and what the caller read
/// from the environment (an empty variable is `None`). The library reads none of it itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelEnv {
    /// The folder named for this command (`--embed-model DIR`).
    pub explicit: Option<PathBuf>,
    /// `SKILLET_EMBED_MODEL`: a folder holding the model.
    pub skillet_embed_model: Option<PathBuf>,
    /// `HF_HOME`: the Hugging Face home, whose `hub` cache is searched and downloaded into.
    pub hf_home: Option<PathBuf>,
    /// `HOME`.
    pub home: Option<PathBuf>,
    /// `XDG_CACHE_HOME`: the base of the embedding cache.
    pub xdg_cache_home: Option<PathBuf>,
    /// `HF_ENDPOINT`: the hub's address (a mirror), else [`DEFAULT_ENDPOINT`].
    pub hf_endpoint: Option<String>,
    /// `HF_HUB_OFFLINE` set to a true value: nothing is downloaded.
    pub hf_hub_offline: bool,
    /// The system's temporary folder (`std::env::temp_dir()`): the embedding cache goes under it
    /// ([`TEMP_EMBEDDINGS_DIR`]) when neither `XDG_CACHE_HOME` nor `HOME` gives it a place.
    pub temp_dir: PathBuf,
}

impl ModelEnv {
    /// The folder the user named for the model: `--embed-model`, else `SKILLET_EMBED_MODEL`.
    /// When it does not hold the model, nothing else is searched and nothing is downloaded, and
    /// the model missing is the user's mistake (the CLI's usage error) rather than a failure.
    pub fn named_dir(&self) -> Option<&Path> {
        self.explicit
            .as_deref()
            .or(self.skillet_embed_model.as_deref())
    }

    /// The embedding model's folder, where one is found (nothing is downloaded): the folder
    /// named, else the pinned snapshot in the Hugging Face cache.
    pub fn model_dir(&self) -> Option<PathBuf> {
        find_model(
            self.explicit.as_deref(),
            self.skillet_embed_model.as_deref(),
            self.hf_home.as_deref(),
            self.home.as_deref(),
        )
    }

    /// The Hugging Face hub cache: `$HF_HOME/hub`, else `~/.cache/huggingface/hub`.
    pub fn hub_dir(&self) -> Option<PathBuf> {
        self.hf_home
            .as_ref()
            .map(|home| home.join("hub"))
            .or_else(|| {
                self.home
                    .as_ref()
                    .map(|home| home.join(".cache/huggingface/hub"))
            })
    }

    /// The embedding cache's folder ([`cache_dir`]), else one under the temporary folder.
    pub fn embeddings_dir(&self) -> PathBuf {
        cache_dir(self.xdg_cache_home.as_deref(), self.home.as_deref())
            .unwrap_or_else(|| self.temp_dir.join(TEMP_EMBEDDINGS_DIR))
    }

    /// The folder of the facts of skills' bodies ([`crate::facts`]), beside the embedding
    /// cache; none when only the temporary folder could hold it (other users could write there,
    /// and trust reads these facts).
    pub fn facts_dir(&self) -> Option<PathBuf> {
        crate::index::facts_dir(self.xdg_cache_home.as_deref(), self.home.as_deref())
    }

    /// The hub's address: `HF_ENDPOINT`, else [`DEFAULT_ENDPOINT`].
    pub fn endpoint(&self) -> &str {
        self.hf_endpoint.as_deref().unwrap_or(DEFAULT_ENDPOINT)
    }
}

/// Who asked for the model: a command that needs it (`skills index`, `skills match --mode
/// semantic`), or matching that can do without it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    /// Building the embedding cache (`skillet skills index`).
    Index,
    /// Ranking by meaning alone (`skillet skills match --mode semantic`).
    Semantic,
    /// Matching that ranks by words when the model is missing (sessions, hybrid matching).
    Optional,
}

impl Need {
    /// How what is said about the model is led: `error` when the command needs it, else `note`.
    pub fn lead(self) -> &'static str {
        if self == Self::Optional {
            "note"
        } else {
            "error"
        }
    }
}

/// Why the model is missing, when no download was tried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Missing<'a> {
    /// The folder the user named ([`ModelEnv::named_dir`]) does not hold it.
    NotInFolder(&'a Path),
    /// `HF_HUB_OFFLINE` is set (only reported when the model is needed).
    Offline,
    /// There is nowhere to download it to: neither `HF_HOME` nor `HOME`.
    NowhereToDownload,
}

/// What happens while the model is found, downloaded and used, for the caller to show or log.
/// Those with something to say have a [`message`](Self::message); progress is the caller's to
/// draw (or not).
#[derive(Debug, Clone, Copy)]
pub enum ModelEvent<'a> {
    /// The model is being downloaded (once) from `endpoint` into the hub cache `hub`.
    Downloading {
        /// The hub's address.
        endpoint: &'a str,
        /// The Hugging Face hub cache it goes into.
        hub: &'a Path,
    },
    /// Bytes of one of the model's files arrived (sizes in bytes).
    DownloadProgress {
        /// The file's name in the model repository.
        file: &'a str,
        /// Bytes so far.
        done: usize,
        /// The file's size.
        total: usize,
    },
    /// The download is over, well or not (a progress line ends here).
    DownloadEnded,
    /// The download failed: the model is missing.
    DownloadFailed {
        /// Who asked for the model.
        need: Need,
        /// Why it failed.
        error: &'a EmbedError,
    },
    /// The model is missing and no download was tried. Not reported for optional use when
    /// `HF_HUB_OFFLINE` is set or a download failed within [`DOWNLOAD_RETRY_AFTER`], so an
    /// offline user is told once and not on every run.
    ModelMissing {
        /// Who asked for the model.
        need: Need,
        /// Why.
        why: Missing<'a>,
    },
    /// Skills embedded so far, of the `total` new or changed ones.
    EmbeddingProgress {
        /// Embedded so far.
        done: usize,
        /// To embed.
        total: usize,
    },
    /// The index (or the embedding cache) is built (a progress line ends here when skills were
    /// embedded); its warnings follow as [`ModelEvent::IndexWarning`]s.
    Indexed(&'a IndexStats),
    /// Something building the index recovered from.
    IndexWarning(&'a IndexWarning),
    /// The model was found but could not be loaded or run: matching that can do without it
    /// ranks by words only.
    ModelFailed {
        /// Who asked for the model.
        need: Need,
        /// What went wrong.
        error: &'a EmbedError,
    },
}

impl ModelEvent<'_> {
    /// What to tell the user, as `skillet` says it on stderr (led by `error:`, `note:` or
    /// `warning:` where it is one); `None` for progress and its ends.
    pub fn message(&self) -> Option<String> {
        match *self {
            Self::Downloading { endpoint, hub } => Some(format!(
                "downloading the embedding model {MODEL_REPO} (about 90 MB, once) from {endpoint} \
                 into {}",
                hub.display()
            )),
            Self::DownloadFailed { need, error } => {
                Some(format!("{}: {error}; {}", need.lead(), no_model(need)))
            }
            Self::ModelMissing {
                need,
                why: Missing::NotInFolder(dir),
            } => Some(format!(
                "{}: {} does not hold config.json, tokenizer.json and model.safetensors; {}",
                need.lead(),
                dir.display(),
                no_model(need)
            )),
            Self::ModelMissing {
                need,
                why: Missing::Offline,
            } => Some(format!(
                "{}: {}\n  note: HF_HUB_OFFLINE is set, so skillet did not try to download it",
                need.lead(),
                no_model(need)
            )),
            Self::ModelMissing {
                need,
                why: Missing::NowhereToDownload,
            } => Some(format!("{}: {}", need.lead(), no_model(need))),
            Self::IndexWarning(warning) => Some(format!("warning: {warning}")),
            Self::ModelFailed {
                need: Need::Optional,
                error,
            } => Some(format!("note: skills are ranked by words only: {error}")),
            Self::ModelFailed { error, .. } => {
                Some(format!("error: the embedding model failed: {error}"))
            }
            Self::DownloadProgress { .. }
            | Self::DownloadEnded
            | Self::EmbeddingProgress { .. }
            | Self::Indexed(_) => None,
        }
    }
}

/// What is said when the model is missing, for who needed it: the hint never names the
/// command that was just run.
fn no_model(need: Need) -> String {
    match need {
        Need::Optional => format!(
            "no embedding model, so skills are ranked by words only\n  hint: `skillet skills \
             index` downloads all-MiniLM-L6-v2 (about 90 MB) into the Hugging Face cache when \
             the hub is reachable (HF_ENDPOINT for a mirror); {MODEL_BY_HAND}"
        ),
        Need::Semantic => format!(
            "--mode semantic ranks by meaning and needs the embedding model, which is not \
             here\n  hint: `skillet skills index` downloads all-MiniLM-L6-v2 (about 90 MB) into \
             the Hugging Face cache when the hub is reachable (HF_ENDPOINT for a mirror); \
             {MODEL_BY_HAND}; or use --mode lexical to rank by words"
        ),
        Need::Index => format!(
            "no embedding model to index with\n  hint: skillet downloads all-MiniLM-L6-v2 \
             (about 90 MB) into the Hugging Face cache when the hub is reachable (HF_HUB_OFFLINE \
             unset, HF_ENDPOINT for a mirror); {MODEL_BY_HAND}"
        ),
    }
}

/// The model folder: found where [`ModelEnv::model_dir`] looks, else downloaded from the hub
/// into the Hugging Face cache. Nothing is downloaded when the user named a folder, when
/// `HF_HUB_OFFLINE` is set, or (for optional use) within [`DOWNLOAD_RETRY_AFTER`] of a failed
/// attempt, so an offline user is told once and not made to wait on every run. Reports why
/// when it returns `None`, except where it already did.
pub fn find_or_download(
    env: &ModelEnv,
    need: Need,
    report: &mut dyn FnMut(ModelEvent<'_>),
) -> Option<PathBuf> {
    if let Some(dir) = env.model_dir() {
        return Some(dir);
    }
    if let Some(dir) = env.named_dir() {
        report(ModelEvent::ModelMissing {
            need,
            why: Missing::NotInFolder(dir),
        });
        return None;
    }
    if env.hf_hub_offline {
        // Offline on purpose: only a command that needs the model says so.
        if need != Need::Optional {
            report(ModelEvent::ModelMissing {
                need,
                why: Missing::Offline,
            });
        }
        return None;
    }
    let marker = env.embeddings_dir().join(DOWNLOAD_FAILED_MARKER);
    if need == Need::Optional && failed_within(&marker, DOWNLOAD_RETRY_AFTER) {
        return None;
    }
    let Some(hub) = env.hub_dir() else {
        report(ModelEvent::ModelMissing {
            need,
            why: Missing::NowhereToDownload,
        });
        return None;
    };
    let endpoint = env.endpoint();
    report(ModelEvent::Downloading {
        endpoint,
        hub: &hub,
    });
    let result = download_model(endpoint, &hub, &mut |file, done, total| {
        report(ModelEvent::DownloadProgress { file, done, total });
    });
    report(ModelEvent::DownloadEnded);
    match result {
        Ok(dir) => {
            let _ = std::fs::remove_file(&marker);
            Some(dir)
        }
        Err(error) => {
            let _ = std::fs::create_dir_all(env.embeddings_dir())
                .and_then(|()| std::fs::write(&marker, error.to_string()));
            report(ModelEvent::DownloadFailed {
                need,
                error: &error,
            });
            None
        }
    }
}

/// Whether the marker was written (a download failed) less than `within` ago.
fn failed_within(marker: &Path, within: Duration) -> bool {
    std::fs::metadata(marker)
        .and_then(|meta| meta.modified())
        .ok()
        .and_then(|when| SystemTime::now().duration_since(when).ok())
        .is_some_and(|age| age < within)
}

/// The index by meaning (the model found or downloaded, new or changed skills embedded into
/// the cache first), or `None` when the model is missing or fails (reported why).
pub fn semantic_index(
    library: &Library,
    env: &ModelEnv,
    need: Need,
    report: &mut dyn FnMut(ModelEvent<'_>),
) -> Option<SkillIndex> {
    let model = find_or_download(env, need, report)?;
    index_with(library, &model, env, need, report)
}

/// The index by meaning with the model in `model_dir` (found before, by [`find_or_download`]),
/// or `None` (reported) when it fails.
pub fn index_with(
    library: &Library,
    model_dir: &Path,
    env: &ModelEnv,
    need: Need,
    report: &mut dyn FnMut(ModelEvent<'_>),
) -> Option<SkillIndex> {
    // The model loads while the body facts are gathered and the words indexed.
    let model = crate::index::ModelLoad::start(model_dir);
    let facts = crate::facts::Facts::gather(library, env.facts_dir().as_deref());
    let built = SkillIndex::semantic_loading(
        library,
        &facts,
        model,
        &env.embeddings_dir(),
        &mut |done, total| report(ModelEvent::EmbeddingProgress { done, total }),
    );
    match built {
        Ok((index, stats)) => {
            indexed(&stats, report);
            Some(index)
        }
        Err(error) => {
            report(ModelEvent::ModelFailed {
                need,
                error: &error,
            });
            None
        }
    }
}

/// The index a session matches user messages with (and `skills match` by default): by meaning
/// when the model is found or downloaded, else by words, reporting once how to get the model.
pub fn session_index(
    library: &Library,
    env: &ModelEnv,
    report: &mut dyn FnMut(ModelEvent<'_>),
) -> SkillIndex {
    semantic_index(library, env, Need::Optional, report)
        .unwrap_or_else(|| SkillIndex::lexical(library))
}

/// Brings the embedding cache up to date with the library using the model in `model_dir`
/// ([`refresh_cache`], under [`ModelEnv::embeddings_dir`]), reporting progress, then what it
/// did and recovered from.
pub fn refresh_index(
    library: &Library,
    model_dir: &Path,
    env: &ModelEnv,
    report: &mut dyn FnMut(ModelEvent<'_>),
) -> Result<IndexStats, EmbedError> {
    let stats = refresh_cache(
        library,
        model_dir,
        &env.embeddings_dir(),
        &mut |done, total| report(ModelEvent::EmbeddingProgress { done, total }),
    )?;
    indexed(&stats, report);
    Ok(stats)
}

/// Reports a built index and its warnings.
fn indexed(stats: &IndexStats, report: &mut dyn FnMut(ModelEvent<'_>)) {
    report(ModelEvent::Indexed(stats));
    for warning in &stats.warnings {
        report(ModelEvent::IndexWarning(warning));
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    /// An environment with no model anywhere, its caches under `dir`, no hub to ask.
    fn nowhere(dir: &Path) -> ModelEnv {
        ModelEnv {
            explicit: None,
            skillet_embed_model: None,
            hf_home: Some(dir.join("hf")),
            home: Some(dir.join("home")),
            xdg_cache_home: Some(dir.join("cache")),
            hf_endpoint: None,
            hf_hub_offline: false,
            temp_dir: dir.join("tmp"),
        }
    }

    /// What `find_or_download` reported, as messages (`-` for those without one).
    fn find(env: &ModelEnv, need: Need) -> (Option<PathBuf>, Vec<String>) {
        let mut said = Vec::new();
        let found = find_or_download(env, need, &mut |event| {
            said.push(event.message().unwrap_or_else(|| "-".into()));
        });
        (found, said)
    }

    #[test]
    fn folders_come_from_the_environment_given() {
        let env = ModelEnv {
            explicit: None,
            skillet_embed_model: None,
            hf_home: None,
            home: None,
            xdg_cache_home: Some("relative".into()),
            hf_endpoint: None,
            hf_hub_offline: false,
            temp_dir: "/tmp".into(),
        };
        assert_eq!(env.hub_dir(), None);
        assert_eq!(env.embeddings_dir(), Path::new("/tmp/skillet-embeddings"));
        assert_eq!(env.endpoint(), DEFAULT_ENDPOINT);
        let env = ModelEnv {
            home: Some("/home/u".into()),
            skillet_embed_model: Some("/models/env".into()),
            ..env
        };
        assert_eq!(env.hub_dir(), Some("/home/u/.cache/huggingface/hub".into()));
        assert_eq!(
            env.embeddings_dir(),
            Path::new("/home/u/.cache/skillet/embeddings")
        );
        assert_eq!(env.named_dir(), Some(Path::new("/models/env")));
        let env = ModelEnv {
            explicit: Some("/models/flag".into()),
            hf_home: Some("/hf".into()),
            ..env
        };
        assert_eq!(env.named_dir(), Some(Path::new("/models/flag")));
        assert_eq!(env.hub_dir(), Some("/hf/hub".into()));
    }

    /// A named folder without the model is said, and nothing is downloaded.
    #[test]
    fn a_named_folder_without_the_model_is_said() {
        let dir = tempfile::tempdir().unwrap();
        let env = ModelEnv {
            skillet_embed_model: Some(dir.path().join("empty")),
            ..nowhere(dir.path())
        };
        let (found, said) = find(&env, Need::Optional);
        assert_eq!(found, None);
        assert_eq!(said.len(), 1);
        assert_eq!(
            said[0],
            format!(
                "note: {} does not hold config.json, tokenizer.json and model.safetensors; {}",
                dir.path().join("empty").display(),
                no_model(Need::Optional)
            )
        );
    }

    /// Offline, only a command that needs the model says so.
    #[test]
    fn offline_is_said_only_when_the_model_is_needed() {
        let dir = tempfile::tempdir().unwrap();
        let env = ModelEnv {
            hf_hub_offline: true,
            ..nowhere(dir.path())
        };
        assert_eq!(find(&env, Need::Optional), (None, vec![]));
        let (found, said) = find(&env, Need::Index);
        assert_eq!(found, None);
        assert_eq!(
            said,
            [format!(
                "error: {}\n  note: HF_HUB_OFFLINE is set, so skillet did not try to download it",
                no_model(Need::Index)
            )]
        );
    }

    /// Within a day of a failed download, optional use does not try again (nor say anything);
    /// a command that needs the model does.
    #[test]
    fn a_recent_failure_is_not_retried_for_optional_use() {
        let dir = tempfile::tempdir().unwrap();
        let hub = skillet_test_support::hub::HubServer::start();
        hub.fail_with(503);
        let env = ModelEnv {
            hf_endpoint: Some(hub.url()),
            ..nowhere(dir.path())
        };
        std::fs::create_dir_all(env.embeddings_dir()).unwrap();
        std::fs::write(env.embeddings_dir().join(DOWNLOAD_FAILED_MARKER), "failed").unwrap();
        assert_eq!(find(&env, Need::Optional), (None, vec![]));
        let (found, said) = find(&env, Need::Semantic);
        assert_eq!(found, None);
        assert_eq!(
            said[0],
            format!(
                "downloading the embedding model {MODEL_REPO} (about 90 MB, once) from {} into {}",
                hub.url(),
                dir.path().join("hf/hub").display()
            )
        );
        assert_eq!(said[said.len() - 2], "-", "the download's end: {said:?}");
        let last = &said[said.len() - 1];
        assert!(
            last.starts_with("error: ")
                && last.ends_with(&format!("; {}", no_model(Need::Semantic))),
            "{last}"
        );
    }
}
