//! A shared skill registry on PostgreSQL with pgvector, for teams whose skills outgrow one
//! machine: publish a skill folder as an immutable version (`owner/name`, a sequence number and
//! a content hash), search by words and meaning with skillet's own ranking, install a verified
//! copy into a skills root with a lock file, yank, and follow changes.
//!
//! - [`Registry`]: the registry at a URL (pools for reads and for the primary, TLS).
//! - [`schema`]: versioned migrations under an advisory lock; the check every command makes.
//! - [`prepare()`]: a folder strictly validated, read, hashed and its words counted.
//! - [`bundle`]: a skill's files and the content hash (length-prefixed, paths sorted by bytes).
//! - [`install()`] and [`Lock`]: writing a fetched version, nothing half-done, and `skillet.lock`.
//! - [`RegistrySource`]: the registry as a `skillet_library::source::SkillSource`, which the
//!   agent and the MCP server search and load from without knowing it is a database.
//!
//! The crate speaks SQL so that nothing above it does: the CLI, the agent and the MCP server
//! see skills, versions and results.

pub mod bundle;
mod connect;
mod error;
mod grants;
mod install;
mod listen;
mod owners;
mod prepare;
mod publish;
pub mod schema;
mod search;
mod source;
mod versions;

pub use bundle::{Bundle, BundleError, BundleFile};
pub use connect::{CONNECT_TIMEOUT, LOCK_TIMEOUT, POOL_SIZE, POOL_WAIT, STATEMENT_TIMEOUT};
pub use error::RegistryError;
pub use grants::{OWNER_ROLE, PUBLISHER_ROLE, READER_ROLE};
pub use install::{
    Installed, LOCK_FILE, LOCK_VERSION, Lock, Locked, MAX_LOCK_BYTES, Target, cache, install,
    shown_dir,
};
pub use listen::{Change, Event, FIRST_RECONNECT_WAIT, MAX_RECONNECT_WAIT};
pub use prepare::{
    MAX_NAME_CHARS, MAX_OWNER_CHARS, Prepared, RESERVED_OWNERS, check_name, check_owner,
    parse_reference, prepare, term_counts,
};
pub use publish::{
    CHANNEL, DIMENSIONS, Published, STATISTICS_SCHEMA, WRITE_IDLE_TIMEOUT, WRITE_LOCK_TIMEOUT,
    WRITE_STATEMENT_TIMEOUT,
};
pub use schema::{InitReport, SCHEMA_VERSION};
pub use search::{CANDIDATES, EF_SEARCH, Found, MAX_TOP_K, Results, SearchSettings};
pub use source::{RegistrySource, SOURCE_TIMEOUT};
pub use versions::{Fetched, SkillRow, VersionRow, Yanked};

use skillet_retrieval::Mode;

/// A registry: a PostgreSQL database with the skillet schema.
#[derive(Debug, Clone)]
pub struct Registry {
    pools: connect::Pools,
}

impl Registry {
    /// The registry at `url` (a PostgreSQL URL; nothing is connected until the first call).
    pub fn new(url: &str) -> Result<Self, RegistryError> {
        Ok(Self {
            pools: connect::Pools::new(url)?,
        })
    }

    /// Where it is, without the password.
    pub fn at(&self) -> &str {
        &self.pools.at
    }

    /// Creates or migrates the schema.
    pub async fn init(&self) -> Result<InitReport, RegistryError> {
        schema::init(&self.pools).await
    }

    /// Recounts the search statistics against the search table and repairs what a fault left
    /// out of step (`init` does it once when it upgrades from before schema 6); what it set
    /// right, if anything. It takes no lock a publish or a search takes: they go on meanwhile.
    pub async fn recount(&self) -> Result<Option<String>, RegistryError> {
        schema::recount_statistics(&self.pools).await
    }

    /// Publishes a prepared skill under `owner`.
    pub async fn publish(
        &self,
        prepared: &Prepared,
        owner: &str,
        expect_seq: Option<i32>,
        embedding: Option<&[f32]>,
    ) -> Result<Published, RegistryError> {
        publish::publish(&self.pools, prepared, owner, expect_seq, embedding).await
    }

    /// The `top_k` best skills for a query.
    pub async fn search(
        &self,
        query: &str,
        vector: Option<&[f32]>,
        mode: Mode,
        top_k: usize,
        settings: SearchSettings,
    ) -> Result<Results, RegistryError> {
        search::search(&self.pools, query, vector, mode, top_k, settings).await
    }

    /// Every skill.
    pub async fn list(&self) -> Result<Vec<SkillRow>, RegistryError> {
        versions::list(&self.pools).await
    }

    /// How many skills search offers.
    pub async fn count(&self) -> Result<i64, RegistryError> {
        versions::count(&self.pools).await
    }

    /// One skill's versions, newest first.
    pub async fn versions(
        &self,
        owner: &str,
        name: &str,
    ) -> Result<Vec<VersionRow>, RegistryError> {
        versions::versions(&self.pools, owner, name).await
    }

    /// Claims `owner` for this login role when nobody holds it; the role that holds it.
    pub async fn claim_owner(&self, owner: &str) -> Result<String, RegistryError> {
        owners::claim(&self.pools, owner).await
    }

    /// Hands `owner` to the database role `role` (only a member of its role, and of `role`).
    pub async fn set_owner_role(&self, owner: &str, role: &str) -> Result<(), RegistryError> {
        owners::set_role(&self.pools, owner, role).await
    }

    /// The database role that holds `owner`, if anyone does.
    pub async fn owner_role(&self, owner: &str) -> Result<Option<String>, RegistryError> {
        owners::role_of(&self.pools, owner).await
    }

    /// Yanks a version.
    pub async fn yank(&self, owner: &str, name: &str, seq: i32) -> Result<Yanked, RegistryError> {
        versions::yank(&self.pools, owner, name, seq).await
    }

    /// The newest event's number (0 when none): where to start following changes from.
    pub async fn latest_event(&self) -> Result<i64, RegistryError> {
        listen::latest_event(&self.pools).await
    }

    /// Sends every change after event `after` to `changes`, then each new one as it commits,
    /// until `changes` closes; a lost connection is said, retried, and caught up on. Runs on
    /// a connection of its own to the primary (LISTEN is session state).
    pub async fn listen(&self, after: i64, changes: tokio::sync::mpsc::Sender<Change>) {
        listen::listen(&self.pools, after, changes).await;
    }

    /// A version's files, verified.
    pub async fn fetch(
        &self,
        owner: &str,
        name: &str,
        seq: Option<i32>,
        allow_yanked: bool,
    ) -> Result<Fetched, RegistryError> {
        versions::fetch(&self.pools, owner, name, seq, allow_yanked).await
    }
}
