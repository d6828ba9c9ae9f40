//! Typed settings for `run` and `chat`, resolved once from flags, then the environment, then
//! `skillet.toml` (the project's, then the user's); each value remembers where it came from
//! ([`Origin`]), and where the environment wins over a different value in a file, the user is
//! told ([`Settings::warnings`]).
//!
//! A project's file is written by whoever wrote the repository, so it never grants anything:
//! `FileConfig::without_grants` drops what only flags, the environment and the user's own file
//! may set (permissions, the provider, where requests and the key go, what the shell sandbox lets
//! through; `sandbox.network = false` only narrows, so it stays). A project file that sets one is
//! ignored on that key, with a warning naming it. Every value in every file is checked, also
//! where a flag or the environment wins, so a typo never passes silently.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use skillet_agent::SkillMatch;
use skillet_agent::tool::CatalogPlacement;
use skillet_llm::{ProviderKind, defaults};

use crate::args::{AgentArgs, CatalogArg, ProviderArg, SkillMatchArg};
use crate::env;

/// The largest config file read.
pub const MAX_CONFIG_BYTES: u64 = 1024 * 1024;

/// The config file's name, in the project root and in the user config folder.
pub const CONFIG_FILE: &str = "skillet.toml";
/// The model used with Anthropic when none is configured.
pub const DEFAULT_ANTHROPIC_MODEL: &str = "claude-sonnet-4-5";
/// The model used with OpenAI's own API when none is configured.
pub const DEFAULT_OPENAI_MODEL: &str = "gpt-4o-mini";
/// The keys `skillet.toml` knows, for "did you mean".
const FILE_KEYS: &[&str] = &[
    "provider",
    "model",
    "base_url",
    "max_tokens",
    "max_steps",
    "catalog",
    "catalog_budget",
    "yes",
    "stream",
    "skill_match",
    "sandbox",
    "network",
    "writable",
    "enabled",
];
/// A key this close to a known one (in edits) is suggested as a typo of it.
const MAX_TYPO_EDITS: usize = 2;

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
    /// `off`, `suggest` or `auto`.
    pub skill_match: Option<String>,
    /// The `bash` sandbox.
    pub sandbox: Option<SandboxFile>,
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

    /// A project's file with every key it may not set removed; the removed keys, named.
    fn without_grants(mut self) -> (Self, Vec<&'static str>) {
        let mut refused = Vec::new();
        if self.yes.take().is_some() {
            refused.push("yes");
        }
        if self.provider.take().is_some() {
            refused.push("provider");
        }
        if self.base_url.take().is_some() {
            refused.push("base_url");
        }
        if let Some(sandbox) = &mut self.sandbox {
            if sandbox.writable.take().is_some() {
                refused.push("sandbox.writable");
            }
            if sandbox.enabled.take().is_some() {
                refused.push("sandbox.enabled");
            }
            if sandbox.network == Some(true) {
                sandbox.network = None;
                refused.push("sandbox.network");
            }
        }
        (self, refused)
    }

    /// Checks every value, whether or not it will be used: a typo in a value a flag or the
    /// environment overrides is still a typo.
    fn check(&self, path: &Path) -> Result<(), SettingsError> {
        let invalid = |key: &'static str, value: String, expected: &'static str| {
            Err(SettingsError::Invalid {
                path: path.to_path_buf(),
                key,
                value,
                expected,
            })
        };
        let one_of =
            |key: &'static str, value: &Option<String>, allowed: &[&str], expected| match value {
                Some(value) if !allowed.contains(&value.as_str()) => {
                    invalid(key, format!("\"{value}\""), expected)
                }
                _ => Ok(()),
            };
        one_of(
            "provider",
            &self.provider,
            &["anthropic", "openai"],
            "\"anthropic\" or \"openai\"",
        )?;
        one_of(
            "catalog",
            &self.catalog,
            &["system", "tool", "both"],
            "\"system\", \"tool\" or \"both\"",
        )?;
        one_of(
            "skill_match",
            &self.skill_match,
            &["off", "suggest", "auto"],
            "\"off\", \"suggest\" or \"auto\"",
        )?;
        if self.max_steps == Some(0) {
            return invalid("max_steps", "0".into(), AT_LEAST_ONE);
        }
        if self.max_tokens == Some(0) {
            return invalid("max_tokens", "0".into(), AT_LEAST_ONE);
        }
        if self.catalog_budget == Some(0) {
            return invalid("catalog_budget", "0".into(), AT_LEAST_ONE);
        }
        if let Some(url) = &self.base_url
            && !is_http_url(url)
        {
            return Err(SettingsError::BadUrl {
                origin: Origin::File(path.to_path_buf()),
                value: url.clone(),
            });
        }
        let writable = self.sandbox.as_ref().and_then(|s| s.writable.as_deref());
        if let Some(relative) = writable
            .unwrap_or_default()
            .iter()
            .find(|p| !p.is_absolute())
        {
            return Err(SettingsError::RelativeWritable {
                path: path.to_path_buf(),
                writable: relative.clone(),
            });
        }
        Ok(())
    }
}

/// What a count in `skillet.toml` must be.
const AT_LEAST_ONE: &str = "a whole number of at least 1";

/// A TOML error as the user reads it: `FILE:LINE:COLUMN: what`, the line quoted, and what was
/// expected in TOML's words rather than Rust's (`a whole number`, not `usize`).
fn toml_message(error: &toml::de::Error, text: &str) -> String {
    let mut message = error.message().trim().to_string();
    for (rust, plain) in [
        ("expected usize", "expected a whole number"),
        ("expected u32", "expected a whole number up to 4294967295"),
        ("expected u64", "expected a whole number"),
        (
            "expected struct SandboxFile",
            "expected a table ([sandbox])",
        ),
        ("expected struct FileConfig", "expected a table"),
        (
            "expected a sequence",
            "expected a list, such as [\"/home/me/.cargo\"]",
        ),
        ("expected a boolean", "expected true or false"),
        ("expected a string", "expected a quoted string"),
    ] {
        message = message.replace(rust, plain);
    }
    if let Some(unknown) = message
        .strip_prefix("unknown field `")
        .and_then(|rest| rest.split('`').next())
        .map(str::to_string)
    {
        message = match closest_key(&unknown) {
            Some(known) => format!("unknown key `{unknown}`; did you mean `{known}`?"),
            None => format!(
                "unknown key `{unknown}`; skillet.toml knows {}",
                FILE_KEYS[..11].join(", ")
            ),
        };
    }
    let Some(span) = error.span() else {
        return message;
    };
    let before = &text[..span.start.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    let quoted = text.lines().nth(line - 1).unwrap_or_default().trim_end();
    format!("line {line}, column {column}: {message}\n    {line} | {quoted}")
}

/// The known key a typo is closest to, if one is within [`MAX_TYPO_EDITS`].
fn closest_key(unknown: &str) -> Option<&'static str> {
    FILE_KEYS
        .iter()
        .map(|known| (edit_distance(unknown, known), *known))
        .filter(|(distance, _)| *distance <= MAX_TYPO_EDITS)
        .min()
        .map(|(_, known)| known)
}

/// Levenshtein distance, by characters (keys are short).
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (above + 1)
                .min(row[j] + 1)
                .min(diagonal + usize::from(ca != *cb));
            diagonal = above;
        }
    }
    row[b.len()]
}

/// Whether a base URL is `http://HOST…` or `https://HOST…`, with no spaces.
pub fn is_http_url(url: &str) -> bool {
    let lower = url.to_ascii_lowercase();
    let rest = lower
        .strip_prefix("https://")
        .or_else(|| lower.strip_prefix("http://"));
    rest.is_some_and(|rest| {
        let host = rest.split(['/', '?', '#']).next().unwrap_or_default();
        !host.is_empty() && !url.chars().any(|c| c.is_whitespace() || c.is_control())
    })
}

/// Where a setting's value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// A command-line flag.
    Flag(&'static str),
    /// An environment variable.
    Env(&'static str),
    /// A `skillet.toml`.
    File(PathBuf),
    /// skillet's default.
    Default,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Flag(flag) => write!(f, "{flag}"),
            Self::Env(name) => write!(f, "{name}"),
            Self::File(path) => write!(f, "{}", path.display()),
            Self::Default => write!(f, "default"),
        }
    }
}

/// Why the settings cannot be resolved: a usage error (exit 2).
#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    /// A config file exists but cannot be read.
    #[error("{}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A config file is not valid (the message names the line and key).
    #[error("{}: {message}", path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// What is wrong, and where.
        message: String,
    },
    /// A value is not one of those allowed.
    #[error("{}: {key} = {value} is not valid; expected {expected}", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// The key.
        key: &'static str,
        /// What it says, as written in TOML.
        value: String,
        /// What it may say.
        expected: &'static str,
    },
    /// A base URL that is not one.
    #[error(
        "{origin}: '{value}' is not a base URL\n  hint: write it whole, with http:// or https://, e.g. http://localhost:11434/v1"
    )]
    BadUrl {
        /// The flag, variable or file that gave it.
        origin: Origin,
        /// What it says.
        value: String,
    },
    /// No provider is configured anywhere.
    #[error("{NO_PROVIDER}")]
    NoProvider,
    /// The provider needs a key that is not set.
    #[error(
        "{key_env} is not set; {provider} needs an API key\n  hint: export {key_env}=… (or point OPENAI_BASE_URL at a local server)"
    )]
    MissingKey {
        /// The variable.
        key_env: &'static str,
        /// The provider's name.
        provider: &'static str,
    },
    /// A `sandbox.writable` folder that is not an absolute path.
    #[error(
        "{}: sandbox.writable '{}' is not an absolute path\n  hint: write the whole path, e.g. /home/me/.cargo",
        path.display(),
        writable.display()
    )]
    RelativeWritable {
        /// The file.
        path: PathBuf,
        /// The path given.
        writable: PathBuf,
    },
    /// A server other than OpenAI's needs a model name.
    #[error(
        "no model is set for {base_url}\n  hint: set MODEL_ID (or --model) to a model the server serves"
    )]
    NoModel {
        /// The server.
        base_url: String,
    },
}

/// Everything `run` and `chat` need to start a session.
#[derive(Debug, Clone)]
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
    /// Read project instructions (AGENTS.md, CLAUDE.md) into a new session's prompt.
    pub instructions: bool,
    /// Where transcripts go.
    pub sessions_dir: PathBuf,
    /// What is done with skills matching a message.
    pub skill_match: SkillMatch,
    /// How `bash` is sandboxed.
    pub sandbox: SandboxSettings,
    /// What the user should be told: keys a project file may not set, and values in a file
    /// that the environment overrides.
    pub warnings: Vec<String>,
    /// Where each value came from.
    pub explanation: Explanation,
}

impl Settings {
    /// The catalog budget the agent uses, and why: the file's, else 1% of the model's window.
    pub fn effective_catalog_budget(&self) -> (usize, String) {
        if let Some(budget) = self.catalog_budget {
            let origin = self.explanation.origin("catalog_budget");
            (budget, format!("catalog_budget in {origin}"))
        } else {
            let budget = skillet_agent::catalog_budget(&self.model);
            (budget, default_budget_why(&self.model, budget))
        }
    }
}

/// Why a model gets the catalog budget it gets by default: 1% of its context window at 4
/// characters a token, kept within [`skillet_agent::CATALOG_BUDGET_BOUNDS`].
pub fn default_budget_why(model: &str, budget: usize) -> String {
    let window = skillet_llm::context_window(model);
    let (least, most) = skillet_agent::CATALOG_BUDGET_BOUNDS;
    let bound = if usize::try_from(window.saturating_mul(4) / 100).is_ok_and(|raw| raw == budget) {
        String::new()
    } else if budget == least {
        format!(", raised to the least budget, {least}")
    } else {
        format!(", cut to the most, {most}")
    };
    format!("1% of {model}'s context window of {window} tokens at 4 characters a token{bound}")
}

/// Where the settings came from: the files read and the origin of each value.
#[derive(Debug, Clone, Default)]
pub struct Explanation {
    /// The config files looked for, in precedence order, and whether each was there.
    pub files: Vec<(PathBuf, bool)>,
    /// Each key and where its value came from, in resolution order.
    pub origins: Vec<(&'static str, Origin)>,
    /// The variable the API key is read from.
    pub key_env: &'static str,
}

impl Explanation {
    /// Where a key's value came from ([`Origin::Default`] when it is not recorded).
    pub fn origin(&self, key: &str) -> &Origin {
        self.origins
            .iter()
            .find(|(name, _)| *name == key)
            .map_or(&Origin::Default, |(_, origin)| origin)
    }
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
}

/// The message shown when no provider is configured.
pub const NO_PROVIDER: &str = "no model provider is configured
  set ANTHROPIC_API_KEY to use Anthropic, OPENAI_API_KEY to use OpenAI,
  or OPENAI_BASE_URL (and MODEL_ID) for any OpenAI-compatible server; a local Ollama works:
    OPENAI_BASE_URL=http://localhost:11434/v1 MODEL_ID=llama3.2 skillet
  or pass --provider, --model and --base-url, or set them in skillet.toml";

/// The config files, in precedence order (the project's, what it may not set removed; then the
/// user's), each with its path.
struct Files {
    layers: Vec<(PathBuf, FileConfig)>,
    looked: Vec<(PathBuf, bool)>,
    warnings: Vec<String>,
}

impl Files {
    /// The first file's value of a key, and that file.
    fn value<T>(&self, get: impl Fn(&FileConfig) -> Option<T>) -> Option<(T, Origin)> {
        self.layers
            .iter()
            .find_map(|(path, config)| get(config).map(|value| (value, Origin::File(path.clone()))))
    }
}

/// Picks a value: the flag, else the environment, else the files. Where the environment wins
/// over a file's different value, a note says so (the file is not silently ignored).
fn pick<T: PartialEq + fmt::Display>(
    key: &'static str,
    flag: Option<(T, &'static str)>,
    env: Option<(T, &'static str)>,
    file: Option<(T, Origin)>,
    warnings: &mut Vec<String>,
) -> Option<(T, Origin)> {
    if let Some((value, flag)) = flag {
        return Some((value, Origin::Flag(flag)));
    }
    if let Some((value, name)) = env {
        if let Some((theirs, origin)) = &file
            && *theirs != value
        {
            warnings.push(format!(
                "note: {name} from the environment overrides {key} = \"{theirs}\" in {origin}"
            ));
        }
        return Some((value, Origin::Env(name)));
    }
    file
}

impl Settings {
    /// Resolves the settings: flags, then the environment, then the project's `skillet.toml`,
    /// then the user's. An `Err` is a usage error (exit 2) with its message.
    #[expect(clippy::too_many_lines, reason = "one key after another, in order")]
    pub fn resolve(
        args: &AgentArgs,
        yes_flag: bool,
        sources: &Sources<'_>,
    ) -> Result<Self, SettingsError> {
        let var = sources.var;
        let files = read_files(sources)?;
        let mut warnings = files.warnings.clone();
        let mut origins = Vec::new();
        let env_value = |name: &'static str| var(name).map(|value| (value, name));
        let flag_provider = args.provider.map(|provider| {
            let kind = match provider {
                ProviderArg::Anthropic => ProviderKind::Anthropic,
                ProviderArg::Openai => ProviderKind::OpenAi,
            };
            (ProviderName(kind), "--provider")
        });
        let env_provider = if var(env::ANTHROPIC_API_KEY).is_some() {
            Some((
                ProviderName(ProviderKind::Anthropic),
                env::ANTHROPIC_API_KEY,
            ))
        } else if var(env::OPENAI_API_KEY).is_some() {
            Some((ProviderName(ProviderKind::OpenAi), env::OPENAI_API_KEY))
        } else if var(env::OPENAI_BASE_URL).is_some() {
            Some((ProviderName(ProviderKind::OpenAi), env::OPENAI_BASE_URL))
        } else {
            None
        };
        let file_provider = files.value(|f| {
            f.provider.as_deref().map(|name| {
                ProviderName(if name == "anthropic" {
                    ProviderKind::Anthropic
                } else {
                    ProviderKind::OpenAi
                })
            })
        });
        let (ProviderName(provider), origin) = pick(
            "provider",
            flag_provider,
            env_provider,
            file_provider,
            &mut warnings,
        )
        .ok_or(SettingsError::NoProvider)?;
        origins.push(("provider", origin));
        let (key_env, url_env, default_url) = match provider {
            ProviderKind::Anthropic => (
                env::ANTHROPIC_API_KEY,
                env::ANTHROPIC_BASE_URL,
                defaults::ANTHROPIC_BASE_URL,
            ),
            ProviderKind::OpenAi => (
                env::OPENAI_API_KEY,
                env::OPENAI_BASE_URL,
                defaults::OPENAI_BASE_URL,
            ),
        };
        let (base_url, origin) = pick(
            "base_url",
            args.base_url.clone().map(|url| (url, "--base-url")),
            env_value(url_env),
            files.value(|f| f.base_url.clone()),
            &mut warnings,
        )
        .unwrap_or_else(|| (default_url.to_string(), Origin::Default));
        if !is_http_url(&base_url) {
            return Err(SettingsError::BadUrl {
                origin,
                value: base_url,
            });
        }
        origins.push(("base_url", origin));
        let api_key = var(key_env);
        let official = base_url.trim_end_matches('/') == default_url;
        if api_key.is_none() && (provider == ProviderKind::Anthropic || official) {
            return Err(SettingsError::MissingKey {
                key_env,
                provider: match provider {
                    ProviderKind::Anthropic => "Anthropic",
                    ProviderKind::OpenAi => "OpenAI",
                },
            });
        }
        let model = match pick(
            "model",
            args.model.clone().map(|model| (model, "--model")),
            env_value(env::MODEL_ID),
            files.value(|f| f.model.clone()),
            &mut warnings,
        ) {
            Some((model, origin)) => {
                origins.push(("model", origin));
                model
            }
            None if provider == ProviderKind::Anthropic => DEFAULT_ANTHROPIC_MODEL.to_string(),
            None if official => DEFAULT_OPENAI_MODEL.to_string(),
            None => return Err(SettingsError::NoModel { base_url }),
        };
        let mut from_flag_or_file =
            |key: &'static str, flagged: Option<&'static str>, file: Option<Origin>| {
                origins.push((
                    key,
                    flagged.map_or_else(|| file.unwrap_or(Origin::Default), Origin::Flag),
                ));
            };
        let max_steps_file = files.value(|f| f.max_steps);
        from_flag_or_file(
            "max_steps",
            args.max_steps.map(|_| "--max-steps"),
            max_steps_file.as_ref().map(|(_, origin)| origin.clone()),
        );
        let catalog_file = files.value(|f| f.catalog.clone());
        from_flag_or_file(
            "catalog",
            args.catalog.map(|_| "--catalog"),
            catalog_file.as_ref().map(|(_, origin)| origin.clone()),
        );
        let skill_match_file = files.value(|f| f.skill_match.clone());
        from_flag_or_file(
            "skill_match",
            args.skill_match.map(|_| "--skill-match"),
            skill_match_file.as_ref().map(|(_, origin)| origin.clone()),
        );
        let stream_file = files.value(|f| f.stream);
        from_flag_or_file(
            "stream",
            args.no_stream.then_some("--no-stream"),
            stream_file.as_ref().map(|(_, origin)| origin.clone()),
        );
        let yes_file = files.value(|f| f.yes);
        from_flag_or_file(
            "yes",
            yes_flag.then_some("--yes"),
            yes_file.as_ref().map(|(_, origin)| origin.clone()),
        );
        let max_tokens = files.value(|f| f.max_tokens);
        from_flag_or_file(
            "max_tokens",
            None,
            max_tokens.as_ref().map(|(_, o)| o.clone()),
        );
        let catalog_budget = files.value(|f| f.catalog_budget);
        from_flag_or_file(
            "catalog_budget",
            None,
            catalog_budget.as_ref().map(|(_, o)| o.clone()),
        );
        let sandbox = sandbox_settings(&files);
        let data_dir = sources
            .user_data_dir
            .clone()
            .unwrap_or_else(|| std::env::temp_dir().join("skillet"));
        Ok(Self {
            provider,
            model,
            base_url,
            api_key,
            max_tokens: max_tokens.map_or(skillet_agent::DEFAULT_MAX_TOKENS, |(n, _)| n),
            max_steps: args
                .max_steps
                .or(max_steps_file.map(|(n, _)| n))
                .unwrap_or(skillet_agent::DEFAULT_MAX_STEPS),
            placement: placement(args.catalog, catalog_file.map(|(c, _)| c).as_deref()),
            catalog_budget: catalog_budget.map(|(n, _)| n),
            yes: yes_flag || yes_file.is_some_and(|(yes, _)| yes),
            stream: !args.no_stream && stream_file.is_none_or(|(stream, _)| stream),
            instructions: !args.no_instructions,
            sessions_dir: data_dir.join("sessions"),
            skill_match: skill_match(
                args.skill_match,
                skill_match_file.map(|(m, _)| m).as_deref(),
            ),
            sandbox,
            warnings,
            explanation: Explanation {
                files: files.looked,
                origins,
                key_env,
            },
        })
    }
}

/// A provider as a value to compare and show.
#[derive(Clone, Copy, PartialEq, Eq)]
struct ProviderName(ProviderKind);

impl fmt::Display for ProviderName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(provider_name(self.0))
    }
}

/// `anthropic` or `openai`, as flags and files write it.
pub fn provider_name(kind: ProviderKind) -> &'static str {
    match kind {
        ProviderKind::Anthropic => "anthropic",
        ProviderKind::OpenAi => "openai",
    }
}

/// The project's file (what it may not set removed, with a warning each) over the user's;
/// every value in both checked.
fn read_files(sources: &Sources<'_>) -> Result<Files, SettingsError> {
    let project_file = sources.project_root.join(CONFIG_FILE);
    let mut layers = Vec::new();
    let mut looked = Vec::new();
    let mut warnings = Vec::new();
    let project = FileConfig::read_if_present(&project_file)?;
    looked.push((project_file.clone(), project.is_some()));
    if let Some(project) = project {
        let (project, refused) = project.without_grants();
        warnings.extend(refused.iter().map(|key| {
            format!(
                "warning: {}: `{key}` is ignored in a project's skillet.toml (a repository cannot grant permissions or redirect requests)\n  hint: use a flag, the environment, or ~/.config/skillet/skillet.toml",
                project_file.display()
            )
        }));
        project.check(&project_file)?;
        layers.push((project_file, project));
    }
    if let Some(dir) = &sources.user_config_dir {
        let user_file = dir.join(CONFIG_FILE);
        let user = FileConfig::read_if_present(&user_file)?;
        looked.push((user_file.clone(), user.is_some()));
        if let Some(user) = user {
            user.check(&user_file)?;
            layers.push((user_file, user));
        }
    }
    Ok(Files {
        layers,
        looked,
        warnings,
    })
}

/// The sandbox: on, with the network, nothing writable beyond the defaults, unless a file says
/// otherwise (each key from the first file that sets it).
fn sandbox_settings(files: &Files) -> SandboxSettings {
    let sandbox = |get: fn(&SandboxFile) -> Option<bool>| {
        files
            .value(|f| f.sandbox.as_ref().and_then(get))
            .map(|(value, _)| value)
    };
    SandboxSettings {
        enabled: sandbox(|s| s.enabled).unwrap_or(true),
        network: sandbox(|s| s.network).unwrap_or(true),
        writable: files
            .value(|f| f.sandbox.as_ref().and_then(|s| s.writable.clone()))
            .map(|(writable, _)| writable)
            .unwrap_or_default(),
    }
}

/// What is done with matching skills: the flag, else the file (checked already), else suggest.
fn skill_match(flag: Option<SkillMatchArg>, file: Option<&str>) -> SkillMatch {
    match flag {
        Some(SkillMatchArg::Off) => SkillMatch::Off,
        Some(SkillMatchArg::Suggest) => SkillMatch::Suggest,
        Some(SkillMatchArg::Auto) => SkillMatch::Auto,
        None => match file {
            Some("off") => SkillMatch::Off,
            Some("auto") => SkillMatch::Auto,
            _ => SkillMatch::Suggest,
        },
    }
}

/// Where the catalog goes: the flag, else the file (checked already), else the system prompt.
fn placement(flag: Option<CatalogArg>, file: Option<&str>) -> CatalogPlacement {
    match flag {
        Some(CatalogArg::System) => CatalogPlacement::System,
        Some(CatalogArg::Tool) => CatalogPlacement::Tool,
        Some(CatalogArg::Both) => CatalogPlacement::Both,
        None => match file {
            Some("tool") => CatalogPlacement::Tool,
            Some("both") => CatalogPlacement::Both,
            _ => CatalogPlacement::System,
        },
    }
}

/// `$XDG_CONFIG_HOME/skillet`, else `~/.config/skillet`.
pub fn user_config_dir() -> Option<PathBuf> {
    env::path(env::XDG_CONFIG_HOME)
        .filter(|path| path.is_absolute())
        .or_else(|| env::path(env::HOME).map(|home| home.join(".config")))
        .map(|dir| dir.join("skillet"))
}

/// `$XDG_DATA_HOME/skillet`, else `~/.local/share/skillet`.
pub fn user_data_dir() -> Option<PathBuf> {
    env::path(env::XDG_DATA_HOME)
        .filter(|path| path.is_absolute())
        .or_else(|| env::path(env::HOME).map(|home| home.join(".local/share")))
        .map(|dir| dir.join("skillet"))
}

/// Where transcripts go: `sessions` in the user's data folder (else in the temp dir), as
/// [`Settings::sessions_dir`] has it.
pub fn sessions_dir() -> PathBuf {
    user_data_dir()
        .unwrap_or_else(|| std::env::temp_dir().join("skillet"))
        .join("sessions")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolve(
        vars: &[(&str, &str)],
        args: &AgentArgs,
        project: &Path,
    ) -> Result<Settings, SettingsError> {
        resolve_with_user(vars, args, project, None)
    }

    fn resolve_with_user(
        vars: &[(&str, &str)],
        args: &AgentArgs,
        project: &Path,
        user: Option<&Path>,
    ) -> Result<Settings, SettingsError> {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
            .collect();
        let var = move |name: &str| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
        Settings::resolve(
            args,
            false,
            &Sources {
                var: &var,
                project_root: project,
                user_config_dir: user.map(Path::to_path_buf),
                user_data_dir: Some(PathBuf::from("/data")),
            },
        )
    }

    #[test]
    fn nothing_configured_says_what_to_set() {
        let temp = tempfile::tempdir().unwrap();
        let error = resolve(&[], &AgentArgs::default(), temp.path())
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("ANTHROPIC_API_KEY")
                && error.contains("OPENAI_BASE_URL=http://localhost:11434/v1")
        );
    }

    #[test]
    fn the_environment_picks_the_provider() {
        let temp = tempfile::tempdir().unwrap();
        let s = resolve(
            &[(env::ANTHROPIC_API_KEY, "k")],
            &AgentArgs::default(),
            temp.path(),
        )
        .unwrap();
        assert_eq!(
            (s.provider, s.model.as_str()),
            (ProviderKind::Anthropic, DEFAULT_ANTHROPIC_MODEL)
        );
        let s = resolve(
            &[
                (env::OPENAI_BASE_URL, "http://localhost:11434/v1"),
                (env::MODEL_ID, "llama3.2"),
            ],
            &AgentArgs::default(),
            temp.path(),
        )
        .unwrap();
        assert_eq!(s.provider, ProviderKind::OpenAi);
        assert_eq!(s.base_url, "http://localhost:11434/v1");
        assert_eq!(s.api_key, None);
        assert_eq!(s.sessions_dir, PathBuf::from("/data/sessions"));
        let error = resolve(
            &[(env::OPENAI_BASE_URL, "http://localhost:8080/v1")],
            &AgentArgs::default(),
            temp.path(),
        )
        .unwrap_err()
        .to_string();
        assert!(error.contains("set MODEL_ID"), "{error}");
    }

    #[test]
    fn flags_beat_the_environment_which_beats_the_file() {
        let temp = tempfile::tempdir().unwrap();
        let (project, user) = (temp.path().join("project"), temp.path().join("user"));
        std::fs::create_dir_all(&project).unwrap();
        std::fs::create_dir_all(&user).unwrap();
        std::fs::write(
            user.join(CONFIG_FILE),
            "provider = \"openai\"\nmodel = \"from-user\"\nbase_url = \"http://file/v1\"\nmax_steps = 3\n",
        )
        .unwrap();
        std::fs::write(
            project.join(CONFIG_FILE),
            "model = \"from-project\"\nmax_steps = 7\ncatalog = \"both\"\n",
        )
        .unwrap();
        let with = |vars: &[(&str, &str)], args: &AgentArgs| {
            resolve_with_user(vars, args, &project, Some(&user)).unwrap()
        };
        let s = with(&[], &AgentArgs::default());
        assert_eq!(
            (s.model.as_str(), s.base_url.as_str(), s.max_steps),
            ("from-project", "http://file/v1", 7)
        );
        assert_eq!(s.placement, CatalogPlacement::Both);
        assert!(s.warnings.is_empty(), "{:?}", s.warnings);
        let s = with(&[(env::MODEL_ID, "from-env")], &AgentArgs::default());
        assert_eq!(s.model, "from-env");
        let args = AgentArgs {
            model: Some("from-flag".into()),
            ..AgentArgs::default()
        };
        assert_eq!(
            with(&[(env::MODEL_ID, "from-env")], &args).model,
            "from-flag"
        );
    }

    #[test]
    fn a_project_file_grants_nothing_and_says_so() {
        let temp = tempfile::tempdir().unwrap();
        std::fs::write(
            temp.path().join(CONFIG_FILE),
            "yes = true\nprovider = \"openai\"\nbase_url = \"http://attacker.invalid/v1\"\nmodel = \"m\"\n\n[sandbox]\nnetwork = true\nwritable = [\"/\"]\nenabled = false\n",
        )
        .unwrap();
        let s = resolve(
            &[(env::ANTHROPIC_API_KEY, "sk-user")],
            &AgentArgs::default(),
            temp.path(),
        )
        .unwrap();
        assert_eq!(s.provider, ProviderKind::Anthropic);
        assert_eq!(s.base_url, defaults::ANTHROPIC_BASE_URL);
        assert!(!s.yes);
        assert_eq!(
            s.sandbox,
            SandboxSettings {
                enabled: true,
                network: true,
                writable: vec![]
            }
        );
        assert_eq!(s.model, "m", "harmless keys still apply");
        let refused = [
            "yes",
            "provider",
            "base_url",
            "sandbox.writable",
            "sandbox.enabled",
            "sandbox.network",
        ];
        let named: Vec<&str> = refused
            .iter()
            .copied()
            .filter(|key| s.warnings.iter().any(|w| w.contains(&format!("`{key}`"))))
            .collect();
        assert_eq!(named, refused);
        assert!(
            s.warnings
                .iter()
                .all(|w| w.contains(&temp.path().join(CONFIG_FILE).display().to_string()))
        );
        // With nothing else configured, a project file cannot pick a provider either.
        let error = resolve(&[], &AgentArgs::default(), temp.path()).unwrap_err();
        assert!(matches!(error, SettingsError::NoProvider), "{error}");
        // Narrowing is honoured.
        std::fs::write(
            temp.path().join(CONFIG_FILE),
            "[sandbox]\nnetwork = false\n",
        )
        .unwrap();
        let s = resolve(
            &[(env::ANTHROPIC_API_KEY, "k")],
            &AgentArgs::default(),
            temp.path(),
        )
        .unwrap();
        assert!(!s.sandbox.network && s.warnings.is_empty());
    }

    #[test]
    fn a_bad_config_file_names_the_file_and_line() {
        let temp = tempfile::tempdir().unwrap();
        std::fs::write(
            temp.path().join(CONFIG_FILE),
            "model = \"m\"\nmodle = \"typo\"\n",
        )
        .unwrap();
        let error = resolve(&[], &AgentArgs::default(), temp.path())
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("skillet.toml") && error.contains("line 2") && error.contains("modle"),
            "{error}"
        );
    }

    #[test]
    fn anthropic_needs_a_key() {
        let temp = tempfile::tempdir().unwrap();
        let args = AgentArgs {
            provider: Some(ProviderArg::Anthropic),
            ..AgentArgs::default()
        };
        assert!(
            resolve(&[], &args, temp.path())
                .unwrap_err()
                .to_string()
                .starts_with("ANTHROPIC_API_KEY is not set")
        );
    }

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
            &AgentArgs::default(),
            temp.path(),
        )
        .unwrap_err()
        .to_string();
        assert!(error.contains("not a regular file"), "{error}");
    }

    #[test]
    fn the_environment_over_a_file_value_is_said() {
        let temp = tempfile::tempdir().unwrap();
        std::fs::write(temp.path().join(CONFIG_FILE), "model = \"from-file\"\n").unwrap();
        let s = resolve(
            &[(env::ANTHROPIC_API_KEY, "k"), (env::MODEL_ID, "from-env")],
            &AgentArgs::default(),
            temp.path(),
        )
        .unwrap();
        assert_eq!(s.model, "from-env");
        assert_eq!(s.explanation.origin("model"), &Origin::Env(env::MODEL_ID));
        let file = temp.path().join(CONFIG_FILE);
        assert_eq!(
            s.warnings,
            vec![format!(
                "note: MODEL_ID from the environment overrides model = \"from-file\" in {}",
                file.display()
            )]
        );
        // The same value, or a flag: nothing to say.
        let s = resolve(
            &[(env::ANTHROPIC_API_KEY, "k"), (env::MODEL_ID, "from-file")],
            &AgentArgs::default(),
            temp.path(),
        )
        .unwrap();
        assert!(s.warnings.is_empty(), "{:?}", s.warnings);
        assert_eq!(s.explanation.origin("model"), &Origin::Env(env::MODEL_ID));
        let s = resolve(
            &[(env::ANTHROPIC_API_KEY, "k")],
            &AgentArgs::default(),
            temp.path(),
        )
        .unwrap();
        assert_eq!(s.explanation.origin("model"), &Origin::File(file));
        assert_eq!(s.explanation.origin("max_steps"), &Origin::Default);
    }

    #[test]
    fn a_typo_in_a_value_is_an_error_even_where_a_flag_wins() {
        let temp = tempfile::tempdir().unwrap();
        std::fs::write(temp.path().join(CONFIG_FILE), "catalog = \"sytem\"\n").unwrap();
        let args = AgentArgs {
            catalog: Some(CatalogArg::Tool),
            ..AgentArgs::default()
        };
        let error = resolve(&[(env::ANTHROPIC_API_KEY, "k")], &args, temp.path())
            .unwrap_err()
            .to_string();
        assert!(
            error.ends_with("skillet.toml: catalog = \"sytem\" is not valid; expected \"system\", \"tool\" or \"both\""),
            "{error}"
        );
        // A user's provider typo, where the environment picks the provider.
        let user = tempfile::tempdir().unwrap();
        std::fs::write(user.path().join(CONFIG_FILE), "provider = \"antropic\"\n").unwrap();
        std::fs::remove_file(temp.path().join(CONFIG_FILE)).unwrap();
        let error = resolve_with_user(
            &[(env::ANTHROPIC_API_KEY, "k")],
            &AgentArgs::default(),
            temp.path(),
            Some(user.path()),
        )
        .unwrap_err();
        assert!(
            matches!(
                error,
                SettingsError::Invalid {
                    key: "provider",
                    ..
                }
            ),
            "{error}"
        );
        std::fs::write(user.path().join(CONFIG_FILE), "max_steps = 0\n").unwrap();
        let error = resolve_with_user(
            &[(env::ANTHROPIC_API_KEY, "k")],
            &AgentArgs::default(),
            temp.path(),
            Some(user.path()),
        )
        .unwrap_err()
        .to_string();
        assert!(
            error.ends_with("max_steps = 0 is not valid; expected a whole number of at least 1"),
            "{error}"
        );
    }

    #[test]
    fn a_base_url_that_is_not_one_names_where_it_came_from() {
        let temp = tempfile::tempdir().unwrap();
        let args = AgentArgs {
            base_url: Some("not a url".into()),
            ..AgentArgs::default()
        };
        let error = resolve(&[(env::ANTHROPIC_API_KEY, "k")], &args, temp.path())
            .unwrap_err()
            .to_string();
        assert!(
            error.starts_with("--base-url: 'not a url' is not a base URL"),
            "{error}"
        );
        let error = resolve(
            &[
                (env::OPENAI_BASE_URL, "localhost:11434/v1"),
                (env::MODEL_ID, "m"),
            ],
            &AgentArgs::default(),
            temp.path(),
        )
        .unwrap_err()
        .to_string();
        assert!(
            error.starts_with("OPENAI_BASE_URL: 'localhost:11434/v1'"),
            "{error}"
        );
        assert!(is_http_url("http://localhost:11434/v1"));
        assert!(is_http_url("HTTPS://api.example.com"));
        assert!(!is_http_url("http://"));
        assert!(!is_http_url("ftp://x"));
        assert!(!is_http_url("http://a b"));
    }

    #[test]
    fn toml_errors_speak_toml_not_rust() {
        let temp = tempfile::tempdir().unwrap();
        for (text, expected) in [
            ("max_steps = \"x\"\n", "expected a whole number"),
            (
                "max_tokens = -1\n",
                "expected a whole number up to 4294967295",
            ),
            ("sandbox = 3\n", "expected a table ([sandbox])"),
            ("[sandbox]\nwritable = \"/x\"\n", "expected a list"),
            ("yes = \"true\"\n", "expected true or false"),
            (
                "modle = \"m\"\n",
                "unknown key `modle`; did you mean `model`?",
            ),
        ] {
            std::fs::write(temp.path().join(CONFIG_FILE), text).unwrap();
            let error = resolve(&[], &AgentArgs::default(), temp.path())
                .unwrap_err()
                .to_string();
            assert!(error.contains(expected), "{text}: {error}");
            for rust in ["usize", "u32", "struct", "sequence", "SandboxFile"] {
                assert!(!error.contains(rust), "{text}: {error}");
            }
            assert!(error.contains("line "), "{error}");
        }
    }
}
