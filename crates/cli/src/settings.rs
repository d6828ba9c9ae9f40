//! Typed settings for `run` and `chat`, resolved once from flags, then the environment, then
//! `skillet.toml` (the project's, then the user's).
//!
//! A project's file is written by whoever wrote the repository, so it never grants anything:
//! `FileConfig::without_grants` drops what only flags, the environment and the user's own file
//! may set (permissions, the provider, where requests and the key go, what the shell sandbox lets
//! through; `sandbox.network = false` only narrows, so it stays). A project file that sets one is
//! ignored on that key, with a warning naming it.

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
    /// Reads one file; a missing file is an empty config. Only a regular file of at most [`MAX_CONFIG_BYTES`] is read: a repository's FIFO named
    /// `skillet.toml` must not hang skillet, nor a huge one fill its memory.
    pub fn read(path: &Path) -> Result<Self, SettingsError> {
        let failed = |source| SettingsError::Read {
            path: path.to_path_buf(),
            source,
        };
        match std::fs::metadata(path) {
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Self::default());
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
        toml::from_str(&text).map_err(|error| SettingsError::Parse {
            path: path.to_path_buf(),
            message: error.to_string(),
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

    /// Fields of `self` win over `other`'s.
    fn or(self, other: Self) -> Self {
        Self {
            provider: self.provider.or(other.provider),
            model: self.model.or(other.model),
            base_url: self.base_url.or(other.base_url),
            max_tokens: self.max_tokens.or(other.max_tokens),
            max_steps: self.max_steps.or(other.max_steps),
            catalog: self.catalog.or(other.catalog),
            catalog_budget: self.catalog_budget.or(other.catalog_budget),
            yes: self.yes.or(other.yes),
            stream: self.stream.or(other.stream),
            skill_match: self.skill_match.or(other.skill_match),
            sandbox: match (self.sandbox, other.sandbox) {
                (Some(mine), Some(theirs)) => Some(SandboxFile {
                    network: mine.network.or(theirs.network),
                    writable: mine.writable.or(theirs.writable),
                    enabled: mine.enabled.or(theirs.enabled),
                }),
                (mine, theirs) => mine.or(theirs),
            },
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
        /// What the TOML parser said.
        message: String,
    },
    /// A value is not one of those allowed.
    #[error("skillet.toml: {key} '{value}' is not one of {allowed}")]
    Invalid {
        /// The key.
        key: &'static str,
        /// What it says.
        value: String,
        /// What it may say.
        allowed: &'static str,
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
        "skillet.toml: sandbox.writable '{}' is not an absolute path\n  hint: write the whole path, e.g. /home/me/.cargo",
        path.display()
    )]
    RelativeWritable {
        /// The path given.
        path: PathBuf,
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
    /// Where transcripts go.
    pub sessions_dir: PathBuf,
    /// What is done with skills matching a message.
    pub skill_match: SkillMatch,
    /// How `bash` is sandboxed.
    pub sandbox: SandboxSettings,
    /// What the user should be told (keys a project file may not set).
    pub warnings: Vec<String>,
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

impl Settings {
    /// Resolves the settings: flags, then the environment, then the project's `skillet.toml`,
    /// then the user's. An `Err` is a usage error (exit 2) with its message.
    pub fn resolve(
        args: &AgentArgs,
        yes_flag: bool,
        sources: &Sources<'_>,
    ) -> Result<Self, SettingsError> {
        let var = sources.var;
        let (file, warnings) = read_files(sources)?;
        let provider = match args.provider {
            Some(ProviderArg::Anthropic) => ProviderKind::Anthropic,
            Some(ProviderArg::Openai) => ProviderKind::OpenAi,
            None if var(env::ANTHROPIC_API_KEY).is_some() => ProviderKind::Anthropic,
            None if var(env::OPENAI_API_KEY).is_some() || var(env::OPENAI_BASE_URL).is_some() => {
                ProviderKind::OpenAi
            }
            None => match file.provider.as_deref() {
                Some("anthropic") => ProviderKind::Anthropic,
                Some("openai") => ProviderKind::OpenAi,
                Some(other) => {
                    return Err(SettingsError::Invalid {
                        key: "provider",
                        value: other.to_string(),
                        allowed: "anthropic, openai",
                    });
                }
                None => return Err(SettingsError::NoProvider),
            },
        };
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
        let base_url = args
            .base_url
            .clone()
            .or_else(|| var(url_env))
            .or(file.base_url)
            .unwrap_or_else(|| default_url.to_string());
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
        let model = match args
            .model
            .clone()
            .or_else(|| var(env::MODEL_ID))
            .or(file.model)
        {
            Some(model) => model,
            None if provider == ProviderKind::Anthropic => DEFAULT_ANTHROPIC_MODEL.to_string(),
            None if official => DEFAULT_OPENAI_MODEL.to_string(),
            None => return Err(SettingsError::NoModel { base_url }),
        };
        let placement = placement(args.catalog, file.catalog.as_deref())?;
        let sandbox = sandbox_settings(file.sandbox)?;
        let data_dir = sources
            .user_data_dir
            .clone()
            .unwrap_or_else(|| std::env::temp_dir().join("skillet"));
        Ok(Self {
            provider,
            model,
            base_url,
            api_key,
            max_tokens: file.max_tokens.unwrap_or(skillet_agent::DEFAULT_MAX_TOKENS),
            max_steps: args
                .max_steps
                .or(file.max_steps)
                .unwrap_or(skillet_agent::DEFAULT_MAX_STEPS),
            placement,
            catalog_budget: file.catalog_budget,
            yes: yes_flag || file.yes.unwrap_or(false),
            stream: !args.no_stream && file.stream.unwrap_or(true),
            sessions_dir: data_dir.join("sessions"),
            skill_match: skill_match(args.skill_match, file.skill_match.as_deref())?,
            sandbox,
            warnings,
        })
    }
}

/// The project's file (what it may not set removed, with a warning each) over the user's.
fn read_files(sources: &Sources<'_>) -> Result<(FileConfig, Vec<String>), SettingsError> {
    let project_file = sources.project_root.join(CONFIG_FILE);
    let (project, refused) = FileConfig::read(&project_file)?.without_grants();
    let warnings = refused
        .iter()
        .map(|key| {
            format!(
                "warning: {}: `{key}` is ignored in a project's skillet.toml (a repository cannot grant permissions or redirect requests)\n  hint: use a flag, the environment, or ~/.config/skillet/skillet.toml",
                project_file.display()
            )
        })
        .collect();
    let user = match &sources.user_config_dir {
        Some(dir) => FileConfig::read(&dir.join(CONFIG_FILE))?,
        None => FileConfig::default(),
    };
    Ok((project.or(user), warnings))
}

/// The sandbox: on, with the network, nothing writable beyond the defaults, unless the file
/// says otherwise; extra writable folders must be absolute.
fn sandbox_settings(file: Option<SandboxFile>) -> Result<SandboxSettings, SettingsError> {
    let file = file.unwrap_or_default();
    let writable = file.writable.unwrap_or_default();
    if let Some(path) = writable.iter().find(|path| !path.is_absolute()) {
        return Err(SettingsError::RelativeWritable { path: path.clone() });
    }
    Ok(SandboxSettings {
        enabled: file.enabled.unwrap_or(true),
        network: file.network.unwrap_or(true),
        writable,
    })
}

/// What is done with matching skills: the flag, else the file, else suggest.
fn skill_match(
    flag: Option<SkillMatchArg>,
    file: Option<&str>,
) -> Result<SkillMatch, SettingsError> {
    Ok(match flag {
        Some(SkillMatchArg::Off) => SkillMatch::Off,
        Some(SkillMatchArg::Suggest) => SkillMatch::Suggest,
        Some(SkillMatchArg::Auto) => SkillMatch::Auto,
        None => match file {
            None | Some("suggest") => SkillMatch::Suggest,
            Some("off") => SkillMatch::Off,
            Some("auto") => SkillMatch::Auto,
            Some(other) => {
                return Err(SettingsError::Invalid {
                    key: "skill_match",
                    value: other.to_string(),
                    allowed: "off, suggest, auto",
                });
            }
        },
    })
}

/// Where the catalog goes: the flag, else the file, else the system prompt.
fn placement(
    flag: Option<CatalogArg>,
    file: Option<&str>,
) -> Result<CatalogPlacement, SettingsError> {
    Ok(match flag {
        Some(CatalogArg::System) => CatalogPlacement::System,
        Some(CatalogArg::Tool) => CatalogPlacement::Tool,
        Some(CatalogArg::Both) => CatalogPlacement::Both,
        None => match file {
            None | Some("system") => CatalogPlacement::System,
            Some("tool") => CatalogPlacement::Tool,
            Some("both") => CatalogPlacement::Both,
            Some(other) => {
                return Err(SettingsError::Invalid {
                    key: "catalog",
                    value: other.to_string(),
                    allowed: "system, tool, both",
                });
            }
        },
    })
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
}
