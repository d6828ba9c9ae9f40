//! The registry as a skill source (`skillet_library::source::SkillSource`): searched beside the
//! local library, its versions fetched into the content-addressed cache ([`crate::cache`],
//! verified on every reuse), its changes followed. Every call is bounded by
//! [`SOURCE_TIMEOUT`], so a registry that stops answering slows a tool call, never hangs it.

use std::path::PathBuf;
use std::time::Duration;

use skillet_library::source::{
    BoxFuture, FetchedSkill, SkillRef, SkillSource, SourceChange, SourceError, SourceHit,
    SourceResults,
};
use skillet_retrieval::Mode;

use crate::install::Lock;
use crate::listen::{Change, FIRST_RECONNECT_WAIT, MAX_RECONNECT_WAIT};
use crate::{Registry, RegistryError, SearchSettings};

/// The longest a search, a fetch or a count may take.
pub const SOURCE_TIMEOUT: Duration = Duration::from_secs(15);
/// Changes a follower may fall behind by before the listener waits for it.
const FOLLOW_BACKLOG: usize = 64;

/// A registry, where its fetched versions are cached, and the lock files that say what is
/// installed here.
#[derive(Debug, Clone)]
pub struct RegistrySource {
    registry: Registry,
    label: String,
    cache_dir: PathBuf,
    locks: Vec<PathBuf>,
}

impl RegistrySource {
    /// `registry`, caching fetched versions under `cache_dir`; a skill a lock file in `locks`
    /// records is marked installed.
    pub fn new(registry: Registry, cache_dir: PathBuf, locks: Vec<PathBuf>) -> Self {
        let label = format!("the registry at {}", registry.at());
        Self {
            registry,
            label,
            cache_dir,
            locks,
        }
    }

    /// `owner/name` and the version of each skill the lock files record (unreadable ones are
    /// passed over: install and update say what is wrong with them).
    fn installed(&self) -> Vec<(String, String, i32)> {
        self.locks
            .iter()
            .filter_map(|path| Lock::read(path).ok())
            .flat_map(|lock| lock.skills)
            .map(|entry| (entry.owner, entry.name, entry.seq))
            .collect()
    }

    fn error(&self, skill: Option<&SkillRef>, error: RegistryError) -> SourceError {
        let at = self.label.clone();
        let first_line = |error: &RegistryError| {
            error
                .to_string()
                .lines()
                .next()
                .unwrap_or_default()
                .to_string()
        };
        let shown = || skill.map_or_else(String::new, ToString::to_string);
        match error {
            RegistryError::NotFound(_) | RegistryError::Yanked(_) => {
                SourceError::Unknown { at, skill: shown() }
            }
            RegistryError::Tampered { .. }
            | RegistryError::Write { .. }
            | RegistryError::Bundle(_)
            | RegistryError::Refused(_)
            | RegistryError::BadName(_) => SourceError::Refused {
                at,
                skill: shown(),
                why: first_line(&error),
            },
            other => SourceError::Unavailable {
                at,
                why: first_line(&other),
            },
        }
    }

    fn timed_out(&self) -> SourceError {
        SourceError::TimedOut {
            at: self.label.clone(),
            after: SOURCE_TIMEOUT,
        }
    }

    async fn search_now(
        &self,
        query: &str,
        vector: Option<&[f32]>,
        top_k: usize,
    ) -> Result<SourceResults, SourceError> {
        let mode = if vector.is_some() {
            Mode::Hybrid
        } else {
            Mode::Lexical
        };
        let searched = self
            .registry
            .search(query, vector, mode, top_k, SearchSettings::default());
        let results = tokio::time::timeout(SOURCE_TIMEOUT, searched)
            .await
            .map_err(|_| self.timed_out())?
            .map_err(|error| self.error(None, error))?;
        let installed = self.installed();
        let hits = results
            .results
            .into_iter()
            .map(|found| SourceHit {
                installed: installed
                    .iter()
                    .find(|(owner, name, _)| *owner == found.owner && *name == found.name)
                    .map(|(_, _, seq)| *seq),
                skill: SkillRef {
                    owner: found.owner,
                    name: found.name,
                    seq: Some(found.seq),
                },
                description: found.description,
                score: found.score,
                relevant: found.relevant,
            })
            .collect();
        Ok(SourceResults {
            hits,
            by_words_only: results.mode == Mode::Lexical.as_str(),
        })
    }

    async fn fetch_now(&self, skill: &SkillRef) -> Result<FetchedSkill, SourceError> {
        // A version asked for by number is shown even when yanked (it says so); the newest is
        // never a yanked one.
        let fetching =
            self.registry
                .fetch(&skill.owner, &skill.name, skill.seq, skill.seq.is_some());
        let fetched = tokio::time::timeout(SOURCE_TIMEOUT, fetching)
            .await
            .map_err(|_| self.timed_out())?
            .map_err(|error| self.error(Some(skill), error))?;
        let cache_dir = self.cache_dir.clone();
        let reference = SkillRef {
            seq: Some(fetched.seq),
            ..skill.clone()
        };
        let yanked = fetched.yanked;
        let dir = tokio::task::spawn_blocking(move || crate::cache(&fetched, &cache_dir))
            .await
            .map_err(|error| SourceError::Refused {
                at: self.label.clone(),
                skill: reference.to_string(),
                why: format!("caching it failed: {error}"),
            })?
            .map_err(|error| self.error(Some(&reference), error))?;
        Ok(FetchedSkill {
            skill: reference,
            dir,
            yanked,
        })
    }

    /// Reports changes until `changes` returns `false`: the newest event is looked up first
    /// (retried, the loss said, until the registry answers), then every later one is followed.
    async fn follow_now(&self, mut changes: Box<dyn FnMut(SourceChange) -> bool + Send + '_>) {
        let mut wait = FIRST_RECONNECT_WAIT;
        let mut lost = false;
        let after = loop {
            let latest = tokio::time::timeout(SOURCE_TIMEOUT, self.registry.latest_event());
            match latest.await {
                Ok(Ok(after)) => break after,
                failed => {
                    let why = match failed {
                        Ok(Err(error)) => self.error(None, error),
                        _ => self.timed_out(),
                    };
                    if !changes(SourceChange::Lost(why.to_string())) {
                        return;
                    }
                    lost = true;
                    tokio::time::sleep(wait).await;
                    wait = (wait * 2).min(MAX_RECONNECT_WAIT);
                }
            }
        };
        if lost && !changes(SourceChange::Back) {
            return;
        }
        let (sender, mut received) = tokio::sync::mpsc::channel(FOLLOW_BACKLOG);
        let listening = self.registry.listen(after, sender);
        let forwarding = async {
            while let Some(change) = received.recv().await {
                let change = match change {
                    Change::Event(event) => {
                        // The event table is written by publishers: a row that names no skill
                        // is passed over.
                        let Some(skill) = SkillRef::parse(&format!(
                            "{}/{}@{}",
                            event.owner, event.name, event.seq
                        )) else {
                            continue;
                        };
                        if event.kind == "yank" {
                            SourceChange::Yanked(skill)
                        } else {
                            SourceChange::Published(skill)
                        }
                    }
                    Change::Lost(why) => SourceChange::Lost(why),
                    Change::Back => SourceChange::Back,
                };
                if !changes(change) {
                    return;
                }
            }
        };
        tokio::select! {
            () = listening => {}
            () = forwarding => {}
        }
    }
}

impl SkillSource for RegistrySource {
    fn label(&self) -> &str {
        &self.label
    }

    fn search<'a>(
        &'a self,
        query: &'a str,
        vector: Option<&'a [f32]>,
        top_k: usize,
    ) -> BoxFuture<'a, Result<SourceResults, SourceError>> {
        Box::pin(self.search_now(query, vector, top_k))
    }

    fn fetch<'a>(
        &'a self,
        skill: &'a SkillRef,
    ) -> BoxFuture<'a, Result<FetchedSkill, SourceError>> {
        Box::pin(self.fetch_now(skill))
    }

    fn install_hint(&self, skill: &SkillRef) -> String {
        format!("skillet registry install {skill}")
    }

    /// The cache keeps a version at `cache/HASH/NAME`: its files hashed again must give HASH.
    fn still_verified(&self, fetched: &FetchedSkill) -> bool {
        let Some(expected) = fetched
            .dir
            .parent()
            .filter(|entry| entry.parent() == Some(self.cache_dir.as_path()))
            .and_then(|entry| entry.file_name()?.to_str())
            .and_then(crate::bundle::from_hex)
        else {
            return false;
        };
        crate::Bundle::read(&fetched.dir).is_ok_and(|bundle| {
            bundle.skipped.is_empty() && bundle.content_hash()[..] == expected[..]
        })
    }

    fn count(&self) -> BoxFuture<'_, Result<usize, SourceError>> {
        Box::pin(async move {
            let count = tokio::time::timeout(SOURCE_TIMEOUT, self.registry.count())
                .await
                .map_err(|_| self.timed_out())?
                .map_err(|error| self.error(None, error))?;
            Ok(usize::try_from(count).unwrap_or(0))
        })
    }

    fn follow<'a>(
        &'a self,
        changes: Box<dyn FnMut(SourceChange) -> bool + Send + 'a>,
    ) -> BoxFuture<'a, ()> {
        Box::pin(self.follow_now(changes))
    }
}
