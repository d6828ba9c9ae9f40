//! What `skillet.toml` may say, how one is read (only a regular file, of at most 1 MiB), and a
//! project's copy with what it may not grant removed.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::SettingsError;
use super::toml_words::toml_message;

/// The largest config file read.
pub const MAX_CONFIG_BYTES: u64 = 1024 * 1024;

/// What `skillet.toml` may say. Unknown keys are errors, so typos do not pass silently.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileConfig {
    /// `anthropic` or `openai`.
    pub provider: Option<String>,
    /// The model.
    pub model: Option<String>,
    /// The API base URL.
    pub base_url: Option<String>,
    /// Most output tokens per request.
    pub max_tokens: Option<u32>,
    /// Tokens the model may think with before it answers (Anthropic's extended thinking; 0 or
    /// absent: off).
    pub thinking_budget: Option<u32>,
    /// Most model requests per turn.
    pub max_steps: Option<usize>,
    /// `system`, `tool` or `both`.
    pub catalog: Option<String>,
    /// The catalog budget in characters.
    pub catalog_budget: Option<usize>,
    /// Allow writes and commands in `run` without `--yes`.
    pub yes: Option<bool>,
    /// Stream answers.
    pub stream: Option<bool>,
    /// Run skills' dynamic context (`` !`command` ``) in trusted skills (default true).
    pub skill_shell: Option<bool>,
    /// Where `save_skill` writes: `project` (default) or `user` (the user's file only).
    pub save_skills: Option<String>,
    /// `off`, `suggest` or `auto`.
    pub skill_match: Option<String>,
    /// The `bash` sandbox.
    pub sandbox: Option<SandboxFile>,
    /// The shared skill registry (a PostgreSQL URL) `skillet registry` uses.
    pub registry_url: Option<String>,
    /// Standing permission rules.
    pub permissions: Option<PermissionsFile>,
    /// MCP servers whose tools the agent uses (`[mcp_servers.NAME]`, as Codex writes them);
    /// a project's start commands the repository chose, so they are a grant.
    pub mcp_servers: Option<std::collections::BTreeMap<String, skillet_mcp_client::ServerFile>>,
    /// How their tools reach the model.
    pub mcp: Option<McpFile>,
}

/// The `[mcp]` table: how MCP servers' tools are disclosed.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpFile {
    /// `auto` (the default: offered natively while their definitions fit `inline_tokens`,
    /// else found through `search_tools`), `on` (always searched) or `off` (always native).
    pub tool_search: Option<String>,
    /// The budget in tokens for definitions offered natively.
    pub inline_tokens: Option<usize>,
}

/// The `[permissions]` table: rules in Claude Code's spelling (`Bash(git status:*)`,
/// `Read(.env)`, `Edit(src/**)`).
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PermissionsFile {
    /// Calls that run without asking (a grant: the user's file or a trusted project's only).
    pub allow: Option<Vec<String>>,
    /// Calls asked about each time (any file: it only narrows).
    pub ask: Option<Vec<String>>,
    /// Calls refused (any file: it only narrows).
    pub deny: Option<Vec<String>>,
    /// The permission mode sessions start in: `default`, `accept-edits` or `plan` (only
    /// `plan` narrows; the others are grants, since they would lift the user's plan mode).
    pub default_mode: Option<String>,
    /// Folders added to every session, as `--add-dir` does (a grant), relative to the working
    /// directory or absolute.
    pub additional_directories: Option<Vec<PathBuf>>,
}

/// The `[sandbox]` table.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SandboxFile {
    /// Let commands reach the network (default true).
    pub network: Option<bool>,
    /// More folders commands may write to (the user's file only).
    pub writable: Option<Vec<PathBuf>>,
    /// `false` runs commands without the sandbox (the user's file only).
    pub enabled: Option<bool>,
    /// Variables passed to commands although they look like credentials (the user's file
    /// only).
    pub pass_env: Option<Vec<String>>,
    /// `true` lets commands make UNIX sockets, and so reach servers on disk (Docker's, an
    /// agent's): the user's file only.
    pub unix_sockets: Option<bool>,
}

impl FileConfig {
    /// Reads one file; `None` when there is none. Only a regular file of at most
    /// [`MAX_CONFIG_BYTES`] is read: a repository's FIFO named `skillet.toml` must not hang
    /// skillet, nor a huge one fill its memory.
    pub fn read_if_present(path: &Path) -> Result<Option<Self>, SettingsError> {
        let failed = |source| SettingsError::Read {
            path: path.to_path_buf(),
            source,
        };
        match std::fs::metadata(path) {
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                return Ok(None);
            }
            Err(source) => return Err(failed(source)),
            Ok(metadata) if !metadata.is_file() => {
                return Err(failed(std::io::Error::other(
                    "not a regular file; skillet reads only regular files as its config",
                )));
            }
            Ok(metadata) if metadata.len() > MAX_CONFIG_BYTES => {
                return Err(failed(std::io::Error::other(format!(
                    "{} bytes, over the {MAX_CONFIG_BYTES}-byte limit for a config file",
                    metadata.len()
                ))));
            }
            Ok(_) => {}
        }
        let mut text = String::new();
        std::io::Read::read_to_string(
            &mut std::io::Read::take(std::fs::File::open(path).map_err(failed)?, MAX_CONFIG_BYTES),
            &mut text,
        )
        .map_err(failed)?;
        toml::from_str(&text)
            .map(Some)
            .map_err(|error| SettingsError::Parse {
                path: path.to_path_buf(),
                message: toml_message(&error, &text),
            })
    }

    /// What in this file only trust grants a project's copy, one `key = value` each.
    pub(super) fn grants(&self) -> Vec<String> {
        self.clone()
            .split_grants()
            .1
            .into_iter()
            .map(|(_, shown)| shown)
            .collect()
    }

    /// A project's file with every key it may not set removed; the removed keys, named.
    pub(super) fn without_grants(self) -> (Self, Vec<&'static str>) {
        let (narrowed, grants) = self.split_grants();
        (narrowed, grants.into_iter().map(|(key, _)| key).collect())
    }

    /// An untrusted project's file held under the user's own: a limit (`max_steps`,
    /// `max_tokens`, `catalog_budget`) above the user's, matching the user turned further on
    /// (`skill_match`: off, then suggest, then auto) or another model than the user's is
    /// removed, and named. Where the user's file says nothing, the project's value stands.
    pub(super) fn capped_by(mut self, user: &Self) -> (Self, Vec<&'static str>) {
        fn above<T: PartialOrd>(project: &mut Option<T>, user: Option<&T>) -> bool {
            let wider = matches!((&*project, user), (Some(p), Some(u)) if p > u);
            if wider {
                *project = None;
            }
            wider
        }
        let mut capped = Vec::new();
        if above(&mut self.max_steps, user.max_steps.as_ref()) {
            capped.push("max_steps");
        }
        if above(&mut self.max_tokens, user.max_tokens.as_ref()) {
            capped.push("max_tokens");
        }
        if above(&mut self.catalog_budget, user.catalog_budget.as_ref()) {
            capped.push("catalog_budget");
        }
        // Thinking spends tokens on every request: where the user's file says nothing, it is
        // off, and a project may not turn it on.
        if above(
            &mut self.thinking_budget,
            Some(&user.thinking_budget.unwrap_or(0)),
        ) {
            capped.push("thinking_budget");
        }
        let rank = |value: &str| match value {
            "off" => 0,
            "auto" => 2,
            _ => 1,
        };
        let mut skill_match = self.skill_match.as_deref().map(rank);
        if above(
            &mut skill_match,
            user.skill_match.as_deref().map(rank).as_ref(),
        ) {
            self.skill_match = None;
            capped.push("skill_match");
        }
        if user.model.is_some() && self.model.is_some() && self.model != user.model {
            self.model = None;
            capped.push("model");
        }
        (self, capped)
    }

    /// What in this (a project's) file goes past the user's own `user`, as the trust question
    /// shows it: `key = value (yours: value)`, for each key [`Self::capped_by`] removes.
    pub(super) fn raised_over(&self, user: &Self) -> Vec<String> {
        fn shown<T: std::fmt::Debug>(value: Option<&T>) -> String {
            value.map_or_else(String::new, |value| format!("{value:?}"))
        }
        let (_, capped) = self.clone().capped_by(user);
        capped
            .into_iter()
            .map(|key| {
                let (theirs, yours) = match key {
                    "max_steps" => (
                        shown(self.max_steps.as_ref()),
                        shown(user.max_steps.as_ref()),
                    ),
                    "max_tokens" => (
                        shown(self.max_tokens.as_ref()),
                        shown(user.max_tokens.as_ref()),
                    ),
                    "catalog_budget" => (
                        shown(self.catalog_budget.as_ref()),
                        shown(user.catalog_budget.as_ref()),
                    ),
                    "thinking_budget" => (
                        shown(self.thinking_budget.as_ref()),
                        shown(Some(&user.thinking_budget.unwrap_or(0))),
                    ),
                    "skill_match" => (
                        shown(self.skill_match.as_ref()),
                        shown(user.skill_match.as_ref()),
                    ),
                    _ => (shown(self.model.as_ref()), shown(user.model.as_ref())),
                };
                format!("{key} = {theirs} (yours: {yours})")
            })
            .collect()
    }

    /// This file split in two: what any project's copy may set (values that only narrow what
    /// the user allows), and what only trust grants, each key with its `key = value` as shown
    /// in the trust question. Every field is named here (no `..`): a key added to the file
    /// does not compile until it is put on one side.
    fn split_grants(self) -> (Self, Vec<(&'static str, String)>) {
        let Self {
            provider,
            model,
            base_url,
            max_tokens,
            thinking_budget,
            max_steps,
            catalog,
            catalog_budget,
            yes,
            stream,
            skill_shell,
            save_skills,
            skill_match,
            sandbox,
            registry_url,
            permissions,
            mcp_servers,
            mcp,
        } = self;
        let mut grants = Vec::new();
        let g = &mut grants;
        // Servers start commands (or send requests) the file chose: each is a grant.
        let mcp_servers = mcp_grants(mcp_servers, g);
        // `false` is the default and only narrows, so it stays.
        let yes = granting(yes, g, "yes", |yes| *yes);
        let _ = granting(provider, g, "provider", |_| true);
        let _ = granting(base_url, g, "base_url", |_| true);
        // Where skills are installed from, and credentials sent to (shown without a password).
        let _ = granting(
            registry_url.map(|url| super::redacted_url(&url)),
            g,
            "registry_url",
            |_| true,
        );
        let save_skills = granting(save_skills, g, "save_skills", |to| to == "user");
        // `true` would undo the user's own `false`; `false` only narrows, so it stays.
        let skill_shell = granting(skill_shell, g, "skill_shell", |shell| *shell);
        let sandbox = sandbox.map(|sandbox| sandbox.split_grants(&mut grants));
        // Deny and ask rules only narrow; allow rules grant.
        let permissions = permissions.map(|permissions| {
            let allow = granting(
                permissions.allow.map(|allow| allow.join(", ")),
                &mut grants,
                "permissions.allow",
                |allow| !allow.is_empty(),
            );
            let default_mode = granting(
                permissions.default_mode,
                &mut grants,
                "permissions.default_mode",
                // Only plan narrows: "default" would lift the user's own plan mode.
                |mode| mode != "plan",
            );
            let additional_directories = granting(
                permissions
                    .additional_directories
                    .filter(|dirs| !dirs.is_empty())
                    .map(|dirs| {
                        dirs.iter()
                            .map(|dir| dir.display().to_string())
                            .collect::<Vec<_>>()
                            .join(", ")
                    }),
                &mut grants,
                "permissions.additional_directories",
                |_| true,
            );
            PermissionsFile {
                allow: allow.map(|_| Vec::new()),
                default_mode,
                additional_directories: additional_directories.map(|_| Vec::new()),
                ..permissions
            }
        });
        let narrowed = Self {
            provider: None,
            model,
            base_url: None,
            max_tokens,
            thinking_budget,
            max_steps,
            catalog,
            catalog_budget,
            yes,
            stream,
            skill_shell,
            save_skills,
            skill_match,
            sandbox,
            registry_url: None,
            permissions,
            mcp_servers,
            mcp,
        };
        (narrowed, grants)
    }
}

impl SandboxFile {
    /// The `[sandbox]` table's side of [`FileConfig::split_grants`]: what narrows stays, what
    /// grants is added to `grants` and taken out.
    fn split_grants(self, grants: &mut Vec<(&'static str, String)>) -> Self {
        let Self {
            network,
            writable,
            enabled,
            pass_env,
            unix_sockets,
        } = self;
        // An empty list adds nothing, `enabled = true` and `false` elsewhere only narrow: they stay.
        let writable = granting(writable, grants, "sandbox.writable", |w| !w.is_empty());
        let pass_env = granting(pass_env, grants, "sandbox.pass_env", |p| !p.is_empty());
        let unix_sockets = granting(unix_sockets, grants, "sandbox.unix_sockets", |on| *on);
        let enabled = granting(enabled, grants, "sandbox.enabled", |on| !on);
        let network = granting(network, grants, "sandbox.network", |on| *on);
        Self {
            network,
            writable,
            enabled,
            pass_env,
            unix_sockets,
        }
    }
}

/// `value` when it only narrows what the user allows; when `widens` says it grants, `None`, and
/// `key = value` added to `grants` (as the trust question shows it).
/// The `[mcp_servers]` side of [`FileConfig::split_grants`]: each enabled server is a grant,
/// shown as it would start; only a file whose servers are all disabled keeps them.
fn mcp_grants(
    servers: Option<std::collections::BTreeMap<String, skillet_mcp_client::ServerFile>>,
    g: &mut Vec<(&'static str, String)>,
) -> Option<std::collections::BTreeMap<String, skillet_mcp_client::ServerFile>> {
    servers.filter(|servers| {
        for (name, server) in servers.iter().filter(|(_, s)| s.enabled != Some(false)) {
            let mut shown = match (&server.command, &server.url) {
                (Some(command), _) => std::iter::once(command.as_str())
                    .chain(server.args.iter().flatten().map(String::as_str))
                    .collect::<Vec<_>>()
                    .join(" "),
                // As written: the repository's own text, and what a URL parser reads from it.
                (None, Some(url)) => url.clone(),
                (None, None) => String::new(),
            };
            // Everything that decides what runs or where it goes, values included.
            for (label, map) in [("env", &server.env), ("headers", &server.headers)] {
                if let Some(map) = map.as_ref().filter(|map| !map.is_empty()) {
                    let pairs: Vec<String> = map.iter().map(|(k, v)| format!("{k}={v}")).collect();
                    let _ = std::fmt::Write::write_fmt(
                        &mut shown,
                        format_args!(" ({label}: {})", pairs.join(", ")),
                    );
                }
            }
            if let Some(cwd) = &server.cwd {
                let _ =
                    std::fmt::Write::write_fmt(&mut shown, format_args!(" (in {})", cwd.display()));
            }
            g.push(("mcp_servers", format!("mcp_servers.{name} = {shown:?}")));
        }
        servers.values().all(|s| s.enabled == Some(false))
    })
}

fn granting<T: std::fmt::Debug>(
    value: Option<T>,
    grants: &mut Vec<(&'static str, String)>,
    key: &'static str,
    widens: impl Fn(&T) -> bool,
) -> Option<T> {
    match value {
        Some(value) if widens(&value) => {
            grants.push((key, format!("{key} = {value:?}")));
            None
        }
        other => other,
    }
}

#[cfg(all(test, unix))]
mod tests {
    use crate::Flags;
    use crate::env;
    use crate::settings::CONFIG_FILE;
    use crate::settings::testing::resolve;

    #[cfg(unix)]
    #[test]
    fn a_config_that_is_a_fifo_is_an_error_not_a_hang() {
        let temp = tempfile::tempdir().unwrap();
        rustix::fs::mknodat(
            rustix::fs::CWD,
            temp.path().join(CONFIG_FILE),
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        let error = resolve(
            &[(env::ANTHROPIC_API_KEY, "k")],
            &Flags::default(),
            temp.path(),
        )
        .unwrap_err()
        .to_string();
        assert!(error.contains("not a regular file"), "{error}");
    }
}
