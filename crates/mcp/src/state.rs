//! What the server serves from: the discovered library and its index, swapped whole when the
//! library is discovered again or the embedding model has loaded. Every request takes the
//! snapshot current when it starts ([`Shared::snapshot`]), so a swap never changes a library
//! under a request in flight.

use std::sync::{Arc, Mutex, RwLock};

use rmcp::RoleServer;
use rmcp::service::Peer;

use skillet_library::index::SkillIndex;
use skillet_library::model::{ModelEnv, ModelEvent, Need, semantic_index};
use skillet_skills::{Library, Root, discover};

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
}

/// What a new discovery changed, for the list_changed notifications.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Changes {
    /// The tools (`load_skill`'s enum of names, the library's size in descriptions).
    pub tools: bool,
    /// The prompts (skills the user may invoke, their descriptions).
    pub prompts: bool,
    /// The resources (any change in a root may add or remove a file).
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
    current: Arc<RwLock<Arc<Snapshot>>>,
    /// Sessions on the protocol before 2026-07-28, told of changes directly.
    peers: Arc<Mutex<Vec<Peer<RoleServer>>>>,
    /// Changes, for 2026-07-28 sessions' `subscriptions/listen` streams.
    changes: tokio::sync::broadcast::Sender<Changes>,
}

impl Shared {
    /// Discovers the library in `roots` and indexes it by words: ready to answer at once. The
    /// model is loaded by [`Shared::load_model`], after.
    pub fn new(roots: Vec<Root>, model: ModelEnv) -> Self {
        let library = Arc::new(discover(&roots));
        let snapshot = Snapshot {
            index: Arc::new(SkillIndex::lexical(&library)),
            library,
            ranking: Ranking::Loading,
        };
        Self {
            roots: Arc::new(roots),
            model: Arc::new(model),
            current: Arc::new(RwLock::new(Arc::new(snapshot))),
            peers: Arc::new(Mutex::new(Vec::new())),
            changes: tokio::sync::broadcast::channel(CHANGE_BACKLOG).0,
        }
    }

    /// The roots served.
    pub fn roots(&self) -> &[Root] {
        &self.roots
    }

    /// Tells a session (one that initialized on a protocol before 2026-07-28) of changes.
    pub fn add_peer(&self, peer: Peer<RoleServer>) {
        if let Ok(mut peers) = self.peers.lock() {
            peers.push(peer);
        }
    }

    /// Changes as they happen, for a `subscriptions/listen` stream.
    pub fn subscribe(&self) -> tokio::sync::broadcast::Receiver<Changes> {
        self.changes.subscribe()
    }

    /// Tells every session what changed: the listening streams through the channel, the older
    /// sessions by a notification each (a session that has gone is dropped from the list).
    pub async fn publish(&self, changes: Changes) {
        if !changes.any() {
            return;
        }
        let _ = self.changes.send(changes);
        let peers: Vec<Peer<RoleServer>> = match self.peers.lock() {
            Ok(peers) => peers.clone(),
            Err(_) => return,
        };
        let mut gone = Vec::new();
        for (index, peer) in peers.iter().enumerate() {
            let mut sent = Ok(());
            if changes.tools {
                sent = sent.and(peer.notify_tool_list_changed().await);
            }
            if changes.prompts {
                sent = sent.and(peer.notify_prompt_list_changed().await);
            }
            if changes.resources {
                sent = sent.and(peer.notify_resource_list_changed().await);
            }
            if sent.is_err() || peer.is_transport_closed() {
                gone.push(index);
            }
        }
        if let Ok(mut peers) = self.peers.lock() {
            let mut index = 0;
            peers.retain(|_| {
                let keep = !gone.contains(&index);
                index += 1;
                keep
            });
        }
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

    /// Loads the embedding model (finding it, or downloading it as `skillet` would) and indexes
    /// the current library by meaning too; blocking, for a blocking thread. What happens is
    /// logged on stderr (never stdout: that is the protocol's).
    pub fn load_model(&self) {
        let library = Arc::clone(&self.snapshot().library);
        let mut log = |event: ModelEvent<'_>| {
            if let Some(message) = event.message() {
                crate::log(&message);
            }
        };
        let index = semantic_index(&library, &self.model, Need::Optional, &mut log);
        let current = self.snapshot();
        // The library may have been discovered again meanwhile: that one's index stands.
        if !Arc::ptr_eq(&current.library, &library) {
            return;
        }
        match index {
            Some(index) => self.replace(Snapshot {
                library,
                index: Arc::new(index),
                ranking: Ranking::Hybrid,
            }),
            None => self.replace(Snapshot {
                library,
                index: Arc::clone(&current.index),
                ranking: Ranking::WordsOnly,
            }),
        }
    }

    /// Discovers the library again (a root changed), indexing it as the last one was (by meaning
    /// when the model had loaded; unchanged skills come from the embedding cache); blocking.
    /// Returns what changed.
    pub fn rediscover(&self) -> Changes {
        let library = Arc::new(discover(&self.roots));
        let before = self.snapshot();
        let changes = Changes {
            tools: names(&before.library, true) != names(&library, true),
            prompts: names(&before.library, false) != names(&library, false),
            resources: true,
        };
        let ranking = before.ranking;
        let index = if ranking == Ranking::Hybrid {
            let mut log = |event: ModelEvent<'_>| {
                if let Some(message) = event.message() {
                    crate::log(&message);
                }
            };
            semantic_index(&library, &self.model, Need::Optional, &mut log)
        } else {
            None
        };
        let (index, ranking) = match index {
            Some(index) => (index, Ranking::Hybrid),
            None if ranking == Ranking::Hybrid => {
                (SkillIndex::lexical(&library), Ranking::WordsOnly)
            }
            None => (SkillIndex::lexical(&library), ranking),
        };
        self.replace(Snapshot {
            library,
            index: Arc::new(index),
            ranking,
        });
        changes
    }
}

/// What the tools (`model`: the model-invocable skills' names and descriptions) or the prompts
/// (the user-invocable ones) list of a library.
fn names(library: &Library, model: bool) -> Vec<(&str, &str)> {
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
        .map(|skill| (skill.name.as_str(), skill.description.as_str()))
        .collect()
}
