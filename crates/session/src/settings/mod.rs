//! Typed settings for `run` and `chat`, resolved once from flags, then the environment, then
//! `skillet.toml` (the project's, then the user's); each value remembers where it came from
//! ([`Origin`]), and where the environment wins over a different value in a file, the user is
//! told ([`Settings::warnings`]).
//!
//! A project's file is written by whoever wrote the repository, so it grants nothing until the
//! user trusts the project (`skillet trust`, [`Sources::trusted_project`]):
//! `FileConfig::without_grants` drops what only flags, the environment and the user's own file
//! may set (permissions, the provider, where requests and the key go, what the shell sandbox lets
//! through; `sandbox.network = false` only narrows, so it stays). A project file that sets one is
//! ignored on that key, with a warning naming it; [`project_grants`] lists them for the trust
//! question. Every value in every file is checked, also
//! where a flag or the environment wins, so a typo never passes silently.
//!
//! - `file`: what `skillet.toml` may say, and reading one safely.
//! - `check`: every value in a file checked.
//! - `toml_words`: TOML's errors put in the file's words.
//! - `layers`: the files read in order, and one value picked from a flag, the environment or a
//!   file.
//! - `resolve`: [`Settings::resolve`], each key in turn made into its typed value.
//! - `explain`: where each value came from, for `skillet config` and the catalog budget.
//! - `error`: why the settings cannot be resolved ([`SettingsError`]).

mod check;
mod error;
mod explain;
mod file;
mod layers;
pub mod permissions;
mod resolve;
#[cfg(test)]
mod testing;
mod toml_words;

use std::path::{Path, PathBuf};

use skillet_agent::SkillMatch;
use skillet_agent::tool::CatalogPlacement;
use skillet_llm::ProviderKind;

use crate::env;

pub use check::{THINKING_BUDGET, thinking_budget_ok};
pub use error::SettingsError;
pub use explain::{Explanation, Origin, default_budget_why};
pub use layers::{project_grants, registry_url};
pub use resolve::provider_name;

/// The MCP servers the config files name (the user's, a trusted project's), without the rest
/// of the settings: `skillet mcp list` needs no provider.
pub fn mcp_servers(
    sources: &Sources<'_>,
) -> Result<Vec<skillet_mcp_client::ServerConfig>, SettingsError> {
    let files = layers::read_files(sources)?;
    resolve::mcp_servers(&files, sources.project_root)
}

/// The config file's name, in the project root and in the user config folder.
pub const CONFIG_FILE: &str = "skillet.toml";
/// The model used with Anthropic when none is configured.
pub const DEFAULT_ANTHROPIC_MODEL: &str = "claude-sonnet-4-5";
/// The model used with OpenAI's own API when none is configured.
pub const DEFAULT_OPENAI_MODEL: &str = "gpt-4o-mini";

/// Everything `run` and `chat` need to start a session.
#[derive(Debug, Clone)]
#[expect(clippy::struct_excessive_bools, reason = "independent switches")]
pub struct Settings {
    /// The provider's dialect.
    pub provider: ProviderKind,
    /// The model.
    pub model: String,
    /// The API base URL.
    pub base_url: String,
    /// The API key, where there is one.
    pub api_key: Option<String>,
    /// Most output tokens per request.
    pub max_tokens: u32,
    /// The thinking budget in tokens (`thinking_budget`, `--thinking-budget`); `None`: off.
    pub thinking: Option<u32>,
    /// Most model requests per turn.
    pub max_steps: usize,
    /// Where the catalog goes.
    pub placement: CatalogPlacement,
    /// The catalog budget, when configured.
    pub catalog_budget: Option<usize>,
    /// Writes and commands allowed without asking (`run`).
    pub yes: bool,
    /// Stream answers.
    pub stream: bool,
    /// Run trusted skills' dynamic context (`` !`command` ``).
    pub skill_shell: bool,
    /// Where `save_skill` writes: the user's skills folder rather than the project's.
    pub save_to_user: bool,
    /// Read project instructions (AGENTS.md, CLAUDE.md) into a new session's prompt.
    pub instructions: bool,
    /// Where transcripts go.
    pub sessions_dir: PathBuf,
    /// What is done with skills matching a message.
    pub skill_match: SkillMatch,
    /// How `bash` is sandboxed.
    pub sandbox: SandboxSettings,
    /// The shared registry `search_skills` also searches (`SKILLET_REGISTRY_URL`, else
    /// `registry_url` in a file; a project's only once trusted).
    pub registry_url: Option<String>,
    /// The permission mode a session starts in (`--permission-mode`).
    pub permission_mode: skillet_agent::permission::Mode,
    /// Folders added for the session besides the working directory, as given: `--add-dir`'s
    /// first (one that is no folder is an error), then the config files' (one that is no
    /// folder is left out, said).
    pub add_dirs: Vec<PathBuf>,
    /// How many of [`Settings::add_dirs`] came from `--add-dir`.
    pub flagged_dirs: usize,
    /// Standing permission rules, each with where it came from ([`permissions`]).
    pub permission_rules: Vec<permissions::Gathered>,
    /// The MCP servers the user's file names, then a trusted project's (a name in both: the
    /// user's); a project's `.mcp.json` is read by the session builder, once trusted.
    pub mcp_servers: Vec<skillet_mcp_client::ServerConfig>,
    /// How their tools reach the model.
    pub mcp_disclosure: skillet_mcp_client::Disclosure,
    /// What the user should be told: keys a project file may not set, and values in a file
    /// that the environment overrides.
    pub warnings: Vec<String>,
    /// Where each value came from.
    pub explanation: Explanation,
}

/// How `bash` is sandboxed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxSettings {
    /// Run commands in the sandbox (where the kernel has one).
    pub enabled: bool,
    /// Commands may reach the network.
    pub network: bool,
    /// Folders writable besides the working directory and the temp dir.
    pub writable: Vec<PathBuf>,
    /// Variables passed to commands although they look like credentials.
    pub pass_env: Vec<String>,
    /// Commands may make UNIX sockets.
    pub unix_sockets: bool,
}

impl SandboxSettings {
    /// The policy commands run under, skillet's own binary running the inner Landlock and
    /// seccomp layer inside the namespaces.
    pub fn policy(&self) -> skillet_agent::sandbox::SandboxPolicy {
        skillet_agent::sandbox::SandboxPolicy {
            enabled: self.enabled,
            network: self.network,
            writable: self.writable.clone(),
            pass_env: self.pass_env.clone(),
            unix_sockets: self.unix_sockets,
            inner: std::env::current_exe().ok(),
            own: [user_config_dir(), user_data_dir(), user_cache_dir()]
                .into_iter()
                .flatten()
                .chain(user_code_config())
                .collect(),
            home: env::path(env::HOME).filter(|home| home.is_absolute()),
            state: user_cache_dir().map(|dir| dir.join("sandbox")),
            ..skillet_agent::sandbox::SandboxPolicy::default()
        }
    }
}

/// Where the inputs come from, so tests can pass their own.
pub struct Sources<'a> {
    /// Reads an environment variable.
    pub var: &'a dyn Fn(&str) -> Option<String>,
    /// The project root (where `skillet.toml` is looked for).
    pub project_root: &'a Path,
    /// The user's config folder for skillet (`~/.config/skillet`).
    pub user_config_dir: Option<PathBuf>,
    /// The user's data folder for skillet (`~/.local/share/skillet`).
    pub user_data_dir: Option<PathBuf>,
    /// Whether the user trusts the project: then its file may grant what only flags, the
    /// environment and the user's own file may otherwise (`yes`, the provider, `base_url`, the
    /// sandbox).
    pub trusted_project: bool,
}

impl<'a> Sources<'a> {
    /// This process's: its environment, the user's folders, and the project at `project_root`
    /// (trusted or not).
    pub fn of_this_process(project_root: &'a Path, trusted_project: bool) -> Self {
        Self {
            var: &env::var,
            project_root,
            user_config_dir: user_config_dir(),
            user_data_dir: user_data_dir(),
            trusted_project,
        }
    }
}

/// `$XDG_CONFIG_HOME/skillet`, else `~/.config/skillet`.
pub fn user_config_dir() -> Option<PathBuf> {
    env::path(env::XDG_CONFIG_HOME)
        .filter(|path| path.is_absolute())
        .or_else(|| env::path(env::HOME).map(|home| home.join(".config")))
        .map(|dir| dir.join("skillet"))
}

/// The user's configuration, kept from commands nobody reviewed like skillet's own folders
/// when it lies in a folder commands may write (a dotfiles repository as the working
/// directory): the whole of `XDG_CONFIG_HOME` (else `~/.config`: git's config, shells' and
/// editors' startup files, prompts, terminals, user services), zsh's `ZDOTDIR`, and the file
/// `GIT_CONFIG_GLOBAL` names when there is one.
fn user_code_config() -> Vec<PathBuf> {
    let config = env::path(env::XDG_CONFIG_HOME)
        .filter(|path| path.is_absolute())
        .or_else(|| env::path(env::HOME).map(|home| home.join(".config")));
    config
        .into_iter()
        // `ZDOTDIR=$HOME` names the home folder's dotfiles, which the home folder's own rule
        // keeps (the sandbox's layout): as a folder of its own it would hold every project.
        .chain(env::path("ZDOTDIR").filter(|dir| {
            dir.is_absolute()
                && env::path(env::HOME).is_none_or(|home| {
                    let real = |path: &Path| {
                        std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
                    };
                    real(&home) != real(dir)
                })
        }))
        .chain(env::path("GIT_CONFIG_GLOBAL").filter(|file| file.is_absolute() && file.is_file()))
        .collect()
}

/// `$XDG_DATA_HOME/skillet`, else `~/.local/share/skillet`.
pub fn user_data_dir() -> Option<PathBuf> {
    env::path(env::XDG_DATA_HOME)
        .filter(|path| path.is_absolute())
        .or_else(|| env::path(env::HOME).map(|home| home.join(".local/share")))
        .map(|dir| dir.join("skillet"))
}

/// `$XDG_CACHE_HOME/skillet`, else `~/.cache/skillet`: the embeddings and registry skills.
pub fn user_cache_dir() -> Option<PathBuf> {
    env::path(env::XDG_CACHE_HOME)
        .filter(|path| path.is_absolute())
        .or_else(|| env::path(env::HOME).map(|home| home.join(".cache")))
        .map(|dir| dir.join("skillet"))
}

/// Where transcripts go: `sessions` in the user's data folder (else in the temp dir), as
/// [`Settings::sessions_dir`] has it.
pub fn sessions_dir() -> PathBuf {
    user_data_dir()
        .unwrap_or_else(|| std::env::temp_dir().join("skillet"))
        .join("sessions")
}

/// A URL as shown to the user: credentials in it (`user:secret@`) and the query (where some
/// servers take a key) are replaced by `…`, so `skillet config` and `/model` never print a key.
pub fn redacted_url(url: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap_or(("", url));
    let (authority, path) = rest
        .find(['/', '?', '#'])
        .map_or((rest, ""), |end| (&rest[..end], &rest[end..]));
    let host = authority
        .rsplit_once('@')
        .map_or(authority.to_string(), |(_, host)| format!("…@{host}"));
    let path = path
        .split_once('?')
        .map_or(path.to_string(), |(path, _)| format!("{path}?…"));
    if scheme.is_empty() {
        format!("{host}{path}")
    } else {
        format!("{scheme}://{host}{path}")
    }
}
