//! [`Settings::resolve`]: each key in turn, from the flag, the environment or a file, made into
//! the typed value `run` and `chat` use.

use std::fmt;
use std::path::PathBuf;

use skillet_agent::SkillMatch;
use skillet_agent::tool::CatalogPlacement;
use skillet_llm::{ProviderKind, defaults};

use super::check::is_http_url;
use super::layers::{pick, read_files, registry_url_in, sandbox_settings};
use super::{
    DEFAULT_ANTHROPIC_MODEL, DEFAULT_OPENAI_MODEL, Explanation, Origin, Settings, SettingsError,
    Sources,
};
use crate::Flags;
use crate::env;

impl Settings {
    /// Resolves the settings: flags, then the environment, then the project's `skillet.toml`,
    /// then the user's. An `Err` is a usage error (exit 2) with its message.
    #[expect(clippy::too_many_lines, reason = "one key after another, in order")]
    pub fn resolve(
        args: &Flags,
        yes_flag: bool,
        sources: &Sources<'_>,
    ) -> Result<Self, SettingsError> {
        let var = sources.var;
        let files = read_files(sources)?;
        let mut warnings = files.warnings.clone();
        let mut origins = Vec::new();
        let env_value = |name: &'static str| var(name).map(|value| (value, name));
        let flag_provider = args.provider.map(|kind| (ProviderName(kind), "--provider"));
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
        .ok_or_else(|| SettingsError::NoProvider {
            ignored: warnings.clone(),
        })?;
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
        let skill_shell_file = files.value(|f| f.skill_shell);
        from_flag_or_file(
            "skill_shell",
            args.no_skill_shell.then_some("--no-skill-shell"),
            skill_shell_file.as_ref().map(|(_, origin)| origin.clone()),
        );
        let save_skills_file = files.value(|f| f.save_skills.clone());
        from_flag_or_file(
            "save_skills",
            None,
            save_skills_file.as_ref().map(|(_, origin)| origin.clone()),
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
        let thinking_file = files.value(|f| f.thinking_budget);
        from_flag_or_file(
            "thinking_budget",
            args.thinking_budget.map(|_| "--thinking-budget"),
            thinking_file.as_ref().map(|(_, o)| o.clone()),
        );
        let catalog_budget = files.value(|f| f.catalog_budget);
        from_flag_or_file(
            "catalog_budget",
            None,
            catalog_budget.as_ref().map(|(_, o)| o.clone()),
        );
        let sandbox = sandbox_settings(&files);
        let registry_url = registry_url_in(None, var, &files, &mut warnings);
        let claude_user =
            super::permissions::ClaudeUser::read(var(env::HOME).map(PathBuf::from).as_deref());
        let (permission_mode, add_dirs) =
            super::permissions::mode_and_dirs(args, &files, &claude_user, &mut warnings);
        let mut permission_rules = super::permissions::from_files(&files);
        permission_rules.extend(super::permissions::from_claude(
            sources.project_root,
            &claude_user,
            &mut warnings,
        ));
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
            thinking: args
                .thinking_budget
                .or(thinking_file.map(|(n, _)| n))
                .filter(|budget| *budget > 0),
            max_steps: args
                .max_steps
                .or(max_steps_file.map(|(n, _)| n))
                .unwrap_or(skillet_agent::DEFAULT_MAX_STEPS),
            placement: placement(args.catalog, catalog_file.map(|(c, _)| c).as_deref()),
            catalog_budget: catalog_budget.map(|(n, _)| n),
            yes: yes_flag || yes_file.is_some_and(|(yes, _)| yes),
            stream: !args.no_stream && stream_file.is_none_or(|(stream, _)| stream),
            save_to_user: save_skills_file.is_some_and(|(scope, _)| scope == "user"),
            skill_shell: !args.no_skill_shell && skill_shell_file.is_none_or(|(shell, _)| shell),
            instructions: !args.no_instructions,
            sessions_dir: data_dir.join("sessions"),
            skill_match: skill_match(
                args.skill_match,
                skill_match_file.map(|(m, _)| m).as_deref(),
            ),
            sandbox,
            registry_url,
            permission_mode,
            flagged_dirs: args.add_dirs.len(),
            add_dirs,
            permission_rules,
            mcp_servers: mcp_servers(&files, sources.project_root)?,
            mcp_disclosure: mcp_disclosure(&files),
            warnings,
            explanation: Explanation {
                files: files.looked,
                origins,
                key_env,
            },
        })
    }
}

/// The servers of every file (the user's first: a name a project's file repeats is the
/// user's); a project's file has none left unless it is trusted ([`FileConfig`]'s grants).
pub(super) fn mcp_servers(
    files: &super::layers::Files,
    project_root: &std::path::Path,
) -> Result<Vec<skillet_mcp_client::ServerConfig>, SettingsError> {
    let project_file = project_root.join(super::CONFIG_FILE);
    let mut servers: Vec<skillet_mcp_client::ServerConfig> = Vec::new();
    for (path, file) in files.layers.iter().rev() {
        let origin = if *path == project_file {
            skillet_mcp_client::Origin::Project(path.clone())
        } else {
            skillet_mcp_client::Origin::User(path.clone())
        };
        for (name, server) in file.mcp_servers.iter().flatten() {
            if servers.iter().any(|known| known.name == *name) {
                continue;
            }
            match skillet_mcp_client::ServerConfig::from_file(name, server, origin.clone()) {
                Ok(Some(server)) => servers.push(server),
                Ok(None) => {}
                Err(error) => {
                    return Err(SettingsError::Parse {
                        path: path.clone(),
                        message: format!("[mcp_servers.{name}]: {}", error.message),
                    });
                }
            }
        }
    }
    Ok(servers)
}

/// The `[mcp]` table of the first file that has one (checked already).
fn mcp_disclosure(files: &super::layers::Files) -> skillet_mcp_client::Disclosure {
    let mut disclosure = skillet_mcp_client::Disclosure::default();
    if let Some((mcp, _)) = files.value(|f| f.mcp.clone()) {
        if let Some(search) = mcp
            .tool_search
            .as_deref()
            .and_then(skillet_mcp_client::ToolSearch::parse)
        {
            disclosure.tool_search = search;
        }
        if let Some(tokens) = mcp.inline_tokens {
            disclosure.inline_tokens = tokens;
        }
    }
    disclosure
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

/// What is done with matching skills: the flag, else the file (checked already), else suggest.
fn skill_match(flag: Option<SkillMatch>, file: Option<&str>) -> SkillMatch {
    match flag {
        Some(given) => given,
        None => match file {
            Some("off") => SkillMatch::Off,
            Some("auto") => SkillMatch::Auto,
            _ => SkillMatch::Suggest,
        },
    }
}

/// Where the catalog goes: the flag, else the file (checked already), else the system prompt.
fn placement(flag: Option<CatalogPlacement>, file: Option<&str>) -> CatalogPlacement {
    match flag {
        Some(given) => given,
        None => match file {
            Some("tool") => CatalogPlacement::Tool,
            Some("both") => CatalogPlacement::Both,
            _ => CatalogPlacement::System,
        },
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::settings::testing::resolve;

    #[test]
    fn nothing_configured_says_what_to_set() {
        let temp = tempfile::tempdir().unwrap();
        let error = resolve(&[], &Flags::default(), temp.path())
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
            &Flags::default(),
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
            &Flags::default(),
            temp.path(),
        )
        .unwrap();
        assert_eq!(s.provider, ProviderKind::OpenAi);
        assert_eq!(s.base_url, "http://localhost:11434/v1");
        assert_eq!(s.api_key, None);
        assert_eq!(s.sessions_dir, PathBuf::from("/data/sessions"));
        let error = resolve(
            &[(env::OPENAI_BASE_URL, "http://localhost:8080/v1")],
            &Flags::default(),
            temp.path(),
        )
        .unwrap_err()
        .to_string();
        assert!(error.contains("set MODEL_ID"), "{error}");
    }

    #[test]
    fn anthropic_needs_a_key() {
        let temp = tempfile::tempdir().unwrap();
        let args = Flags {
            provider: Some(ProviderKind::Anthropic),
            ..Flags::default()
        };
        assert!(
            resolve(&[], &args, temp.path())
                .unwrap_err()
                .to_string()
                .starts_with("ANTHROPIC_API_KEY is not set")
        );
    }

    #[test]
    fn a_base_url_that_is_not_one_names_where_it_came_from() {
        let temp = tempfile::tempdir().unwrap();
        let args = Flags {
            base_url: Some("not a url".into()),
            ..Flags::default()
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
            &Flags::default(),
            temp.path(),
        )
        .unwrap_err()
        .to_string();
        assert!(
            error.starts_with("OPENAI_BASE_URL: 'localhost:11434/v1'"),
            "{error}"
        );
    }
}
