//! What the server serves from: the discovered library and its index, swapped whole when the
//! library is discovered again or the embedding model has loaded. Every request takes the
//! snapshot current when it starts ([`Shared::snapshot`]), so a swap never changes a library
//! under a request in flight. Swaps happen one at a time (under one lock), so the model loading
//! and a rediscovery never undo each other.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock, RwLock};
use std::time::Duration;

use rmcp::RoleServer;
use rmcp::model::Skill as McpSkill;
use rmcp::service::Peer;
use skillet_library::index::SkillIndex;
use skillet_library::model::{ModelEnv, ModelEvent, Need, find_or_download, index_with};
use skillet_library::source::{FetchedSkill, SkillRef, SkillSource};
use skillet_skills::{Library, Root, discover};

/// How long telling one session of a change may take before it is given up (a client that
/// stopped reading must not hold the others).
const NOTIFY_TIMEOUT: Duration = Duration::from_secs(5);

/// How the index ranks, for the results to say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ranking {
    /// By words only: the model is still loading.
    Loading,
    /// By words only: there is no model (or it failed); see the server's log.
    WordsOnly,
    /// By words and meaning.
    Hybrid,
}

/// One library and the index over it.
pub struct Snapshot {
    /// The skills.
    pub library: Arc<Library>,
    /// Their index.
    pub index: Arc<SkillIndex>,
    /// How it ranks.
    pub ranking: Ranking,
    /// Each skill's manifest for the Skills extension (or why it has none), in discovery order:
    /// made on first use, for this library (files are hashed once per discovery, and the model
    /// loading, which keeps the library, keeps them too).
    manifests: Arc<OnceLock<Vec<Result<McpSkill, String>>>>,
}

impl Snapshot {
    fn new(library: Arc<Library>, index: SkillIndex, ranking: Ranking) -> Self {
        Self {
            library,
            index: Arc::new(index),
            ranking,
            manifests: Arc::new(OnceLock::new()),
        }
    }

    /// Every skill's manifest, or why it cannot have one (blocking: reads and hashes files the
    /// first time).
    pub fn manifests(&self) -> &[Result<McpSkill, String>] {
        self.manifests.get_or_init(|| {
            self.library
                .skills()
                .iter()
                .map(crate::manifest::manifest)
                .collect()
        })
    }
}

/// What a new discovery changed, for the list_changed notifications.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Changes {
    /// The tools (`load_skill`'s enum of names, the library's size in descriptions).
    pub tools: bool,
    /// The prompts (skills the user may invoke, their descriptions and argument hints).
    pub prompts: bool,
    /// The resources (a change inside a root may add or remove a file).
    pub resources: bool,
}

impl Changes {
    /// Whether anything changed.
    pub fn any(self) -> bool {
        self.tools || self.prompts || self.resources
    }
}

/// How many changes a slow `subscriptions/listen` stream may fall behind before it skips some
/// (a skipped change still ends in a notification: lists are read whole).
const CHANGE_BACKLOG: usize = 16;

/// The server's state, shared by every session.
#[derive(Clone)]
pub struct Shared {
    roots: Arc<Vec<Root>>,
    model: Arc<ModelEnv>,
    /// The model's folder once looked for: `Some` when found (or downloaded), `None` when there
    /// is none.
    model_dir: Arc<OnceLock<Option<PathBuf>>>,
    current: Arc<RwLock<Arc<Snapshot>>>,
    /// Held while a new snapshot is made and put in place.
    swapping: Arc<Mutex<()>>,
    /// Sessions on the protocol before 2026-07-28, told of changes directly.
    peers: Arc<Mutex<Vec<Peer<RoleServer>>>>,
    /// Changes, for 2026-07-28 sessions' `subscriptions/listen` streams.
    changes: tokio::sync::broadcast::Sender<Changes>,
    /// Skills beyond the roots (the shared registry), and how many it offers once known.
    source: Option<Arc<dyn SkillSource>>,
    source_count: Arc<Mutex<Option<usize>>>,
    /// The source's versions fetched so far (by exact version), at most [`MAX_FETCHED`].
    fetched: Arc<Mutex<HashMap<SkillRef, FetchedSkill>>>,
    /// True once the model was looked for and the library indexed with it (or without one).
    ranked: tokio::sync::watch::Sender<bool>,
}

/// How long a search that arrives while the model loads waits for it, so a warm start answers
/// its first search as every later one; past it, the search is answered by words (and says
/// so). A warm load takes well under a second; a first one that embeds a large library takes
/// minutes.
pub const RANKING_WAIT: Duration = Duration::from_secs(5);

/// The most fetched versions whose verified copies are remembered (past it, all are forgotten
/// and fetched again when asked for).
pub const MAX_FETCHED: usize = 256;

/// Logs what the model lookup and indexing report.
fn log_event(event: ModelEvent<'_>) {
    if let Some(message) = event.message() {
        crate::log(&message);
    }
}

impl Shared {
    /// Discovers the library in `roots` (but a project's commands folders) and indexes it by
    /// words: ready to answer at once. The
    /// model is loaded by [`Shared::load_model`], after.
    pub fn new(mut roots: Vec<Root>, model: ModelEnv) -> Self {
        // A project's custom commands are offered only in a trusted project, and the server has
        // no one to ask: it serves the user's own commands, never a repository's.
        roots.retain(|root| {
            !(root.layout == skillet_skills::Layout::Commands
                && root.kind == skillet_skills::RootKind::Project)
        });
        let started = std::time::Instant::now();
        let library = Arc::new(discover(&roots));
        let discovered = started.elapsed();
        let index = SkillIndex::lexical(&library);
        crate::log_at(
            crate::LogLevel::Debug,
            &format!(
                "{} skills discovered in {} ms, indexed by words in {} ms",
                library.skills().len(),
                discovered.as_millis(),
                started.elapsed().saturating_sub(discovered).as_millis()
            ),
        );
        Self {
            roots: Arc::new(roots),
            model: Arc::new(model),
            model_dir: Arc::new(OnceLock::new()),
            current: Arc::new(RwLock::new(Arc::new(Snapshot::new(
                library,
                index,
                Ranking::Loading,
            )))),
            swapping: Arc::new(Mutex::new(())),
            peers: Arc::new(Mutex::new(Vec::new())),
            changes: tokio::sync::broadcast::channel(CHANGE_BACKLOG).0,
            source: None,
            source_count: Arc::new(Mutex::new(None)),
            fetched: Arc::new(Mutex::new(HashMap::new())),
            ranked: tokio::sync::watch::Sender::new(false),
        }
    }

    /// Waits (at most [`RANKING_WAIT`]) until the library is ranked as it will be: by meaning
    /// once the model has loaded, or by words when there is none.
    pub async fn ranking_settled(&self) {
        let mut ranked = self.ranked.subscribe();
        let _ = tokio::time::timeout(RANKING_WAIT, ranked.wait_for(|ranked| *ranked)).await;
    }

    /// The verified copy of `skill` fetched before, when it names a version and the copy is
    /// still there.
    pub fn fetched(&self, skill: &SkillRef) -> Option<FetchedSkill> {
        skill.seq?;
        let fetched = self.fetched.lock().ok()?.get(skill).cloned()?;
        fetched.dir.is_dir().then_some(fetched)
    }

    /// Forgets every fetched version (one was yanked, or changes may have been missed).
    pub fn forget_fetched(&self) {
        if let Ok(mut remembered) = self.fetched.lock() {
            remembered.clear();
        }
    }

    /// Remembers a fetched version, by the reference asked for (when it names a version) and by
    /// its exact version.
    pub fn remember_fetched(&self, asked: &SkillRef, fetched: &FetchedSkill) {
        let Ok(mut remembered) = self.fetched.lock() else {
            return;
        };
        if remembered.len() >= MAX_FETCHED {
            remembered.clear();
        }
        if asked.seq.is_some() {
            remembered.insert(asked.clone(), fetched.clone());
        }
        remembered.insert(fetched.skill.clone(), fetched.clone());
    }

    /// The same, also searching `source` and loading its skills (as text only).
    #[must_use]
    pub fn with_source(mut self, source: Arc<dyn SkillSource>) -> Self {
        self.source = Some(source);
        self
    }

    /// The skill source, if any.
    pub fn source(&self) -> Option<&Arc<dyn SkillSource>> {
        self.source.as_ref()
    }

    /// What the tools say of the source.
    pub fn source_view(&self) -> Option<crate::tools::SourceView> {
        self.source.as_ref().map(|source| crate::tools::SourceView {
            label: source.label().to_string(),
            count: self.source_count.lock().ok().and_then(|count| *count),
        })
    }

    /// Counts the source's skills again; whether the count changed (the tools' description
    /// says it). A source that cannot answer keeps the last count, and it is logged.
    pub async fn recount_source(&self) -> bool {
        let Some(source) = &self.source else {
            return false;
        };
        match source.count().await {
            Ok(now) => self.source_count.lock().is_ok_and(|mut count| {
                let changed = *count != Some(now);
                *count = Some(now);
                changed
            }),
            Err(error) => {
                crate::log_at(crate::LogLevel::Error, &format!("registry: {error}"));
                false
            }
        }
    }

    /// The roots served.
    pub fn roots(&self) -> &[Root] {
        &self.roots
    }

    /// The snapshot to answer a request from.
    pub fn snapshot(&self) -> Arc<Snapshot> {
        match self.current.read() {
            Ok(current) => Arc::clone(&current),
            Err(poisoned) => Arc::clone(&poisoned.into_inner()),
        }
    }

    fn replace(&self, snapshot: Snapshot) {
        let snapshot = Arc::new(snapshot);
        match self.current.write() {
            Ok(mut current) => *current = snapshot,
            Err(poisoned) => *poisoned.into_inner() = snapshot,
        }
    }

    fn swap_lock(&self) -> std::sync::MutexGuard<'_, ()> {
        self.swapping
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The index for `library`: by meaning when the model has been found (unchanged skills come
    /// from the embedding cache), else by words, and how it ranks.
    fn index(&self, library: &Library) -> (SkillIndex, Ranking) {
        match self.model_dir.get() {
            None => (SkillIndex::lexical(library), Ranking::Loading),
            Some(None) => (SkillIndex::lexical(library), Ranking::WordsOnly),
            Some(Some(dir)) => {
                match index_with(library, dir, &self.model, Need::Optional, &mut log_event) {
                    Some(index) => (index, Ranking::Hybrid),
                    None => (SkillIndex::lexical(library), Ranking::WordsOnly),
                }
            }
        }
    }

    /// Finds the embedding model (downloading it as `skillet` would) and indexes the current
    /// library by meaning too; blocking, for a blocking thread. What happens is logged on
    /// stderr (never stdout: that is the protocol's).
    pub fn load_model(&self) {
        let mut said = false;
        let found = find_or_download(&self.model, Need::Optional, &mut |event| {
            said |= event.message().is_some();
            log_event(event);
        });
        if found.is_none() && !said {
            // Offline on purpose, or a download failed lately: quiet in a chat, but the
            // server's log is where a client's user looks to see why ranking is by words.
            crate::log(
                "no embedding model, so skills are ranked by words only (HF_HUB_OFFLINE is set, \
                 or a download failed in the last day); `skillet skills index` downloads it, \
                 SKILLET_EMBED_MODEL names a folder holding it",
            );
        }
        if self.model_dir.set(found).is_err() {
            self.ranked.send_replace(true);
            return;
        }
        let _swapping = self.swap_lock();
        let current = self.snapshot();
        let library = Arc::clone(&current.library);
        let (index, ranking) = self.index(&library);
        let mut snapshot = Snapshot::new(library, index, ranking);
        snapshot.manifests = Arc::clone(&current.manifests);
        self.replace(snapshot);
        self.ranked.send_replace(true);
    }

    /// Takes the library discovered again (the watcher saw the roots change) and indexes it (by
    /// meaning once the model has been found); blocking. Returns what changed: the tools and
    /// prompts when their listings differ, the resources always (files changed).
    pub fn rediscovered(&self, library: Library) -> Changes {
        let _swapping = self.swap_lock();
        let library = Arc::new(library);
        let before = self.snapshot();
        let changes = Changes {
            tools: listed(&before.library, true) != listed(&library, true),
            prompts: listed(&before.library, false) != listed(&library, false),
            resources: true,
        };
        let (index, ranking) = self.index(&library);
        self.replace(Snapshot::new(library, index, ranking));
        changes
    }

    /// Tells a session (one that initialized on a protocol before 2026-07-28) of changes.
    pub fn add_peer(&self, peer: Peer<RoleServer>) {
        if let Ok(mut peers) = self.peers.lock() {
            peers.retain(|peer| !peer.is_transport_closed());
            peers.push(peer);
        }
    }

    /// Changes as they happen, for a `subscriptions/listen` stream.
    pub fn subscribe(&self) -> tokio::sync::broadcast::Receiver<Changes> {
        self.changes.subscribe()
    }

    /// Tells every session what changed: the listening streams through the channel, the older
    /// sessions by a notification each, sent side by side (each given [`NOTIFY_TIMEOUT`]), so a
    /// session that stopped reading holds up none of the others. Sessions that have gone are
    /// dropped from the list.
    pub fn publish(&self, changes: Changes) {
        if !changes.any() {
            return;
        }
        let _ = self.changes.send(changes);
        let peers: Vec<Peer<RoleServer>> = match self.peers.lock() {
            Ok(mut peers) => {
                peers.retain(|peer| !peer.is_transport_closed());
                peers.clone()
            }
            Err(_) => return,
        };
        for peer in peers {
            tokio::spawn(async move {
                let _ = tokio::time::timeout(NOTIFY_TIMEOUT, async {
                    if changes.tools {
                        peer.notify_tool_list_changed().await?;
                    }
                    if changes.prompts {
                        peer.notify_prompt_list_changed().await?;
                    }
                    if changes.resources {
                        peer.notify_resource_list_changed().await?;
                    }
                    Ok::<(), rmcp::service::ServiceError>(())
                })
                .await;
            });
        }
    }
}

/// What the tools (`model`: the model-invocable skills' names and descriptions) or the prompts
/// (the user-invocable ones, with their argument hints) list of a library.
fn listed(library: &Library, model: bool) -> Vec<(&str, &str, Option<&str>)> {
    library
        .skills()
        .iter()
        .filter(|skill| {
            if model {
                skill.model_invocable()
            } else {
                skill.user_invocable()
            }
        })
        .map(|skill| {
            (
                skill.name.as_str(),
                skill.description.as_str(),
                skill
                    .frontmatter
                    .argument_hint
                    .as_deref()
                    .filter(|_| !model),
            )
        })
        .collect()
}
