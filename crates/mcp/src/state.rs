//! What the server serves from: the discovered library and its index, swapped whole when the
//! library is discovered again or the embedding model has loaded. Every request takes the
//! snapshot current when it starts ([`Shared::snapshot`]), so a swap never changes a library
//! under a request in flight.

use std::sync::{Arc, RwLock};

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

/// The server's state, shared by every session.
#[derive(Clone)]
pub struct Shared {
    roots: Arc<Vec<Root>>,
    model: Arc<ModelEnv>,
    current: Arc<RwLock<Arc<Snapshot>>>,
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
    /// when the model had loaded); blocking.
    pub fn rediscover(&self) {
        let library = Arc::new(discover(&self.roots));
        let ranking = self.snapshot().ranking;
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
    }
}
