//! Every value in a `skillet.toml` checked, whether or not it will be used, and TOML's errors
//! put in the words of the file rather than of Rust, with a "did you mean" for a mistyped key.

use std::path::Path;

use super::file::FileConfig;
use super::{Origin, SettingsError};

impl FileConfig {
    /// Each `[mcp_servers.NAME]` table read as a server would be.
    fn check_mcp_servers(&self, path: &Path) -> Result<(), SettingsError> {
        for (name, server) in self.mcp_servers.iter().flatten() {
            let origin = skillet_mcp_client::Origin::User(path.to_path_buf());
            if let Err(error) = skillet_mcp_client::ServerConfig::from_file(name, server, origin) {
                return Err(SettingsError::Parse {
                    path: path.to_path_buf(),
                    message: format!("[mcp_servers.{name}]: {}", error.message),
                });
            }
        }
        Ok(())
    }

    /// Checks every value, whether or not it will be used: a typo in a value a flag or the
    /// environment overrides is still a typo.
    pub(super) fn check(&self, path: &Path) -> Result<(), SettingsError> {
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
        one_of(
            "save_skills",
            &self.save_skills,
            &["project", "user"],
            "\"project\" or \"user\"",
        )?;
        one_of(
            "mcp.tool_search",
            &self.mcp.as_ref().and_then(|mcp| mcp.tool_search.clone()),
            &["auto", "on", "off"],
            "\"auto\", \"on\" or \"off\"",
        )?;
        self.check_mcp_servers(path)?;
        one_of(
            "permissions.default_mode",
            &self
                .permissions
                .as_ref()
                .and_then(|permissions| permissions.default_mode.clone()),
            &["default", "accept-edits", "acceptEdits", "plan"],
            "\"default\", \"accept-edits\" or \"plan\"",
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
        if let Some(budget) = self.thinking_budget
            && !thinking_budget_ok(budget)
        {
            return invalid("thinking_budget", budget.to_string(), THINKING_BUDGET);
        }
        if let Some(url) = &self.base_url
            && !is_http_url(url)
        {
            return Err(SettingsError::BadUrl {
                origin: Origin::File(path.to_path_buf()),
                value: url.clone(),
            });
        }
        if let Some(url) = &self.registry_url
            && !is_postgres_url(url)
        {
            return invalid(
                "registry_url",
                format!("{:?}", super::redacted_url(url)),
                "a PostgreSQL URL (postgresql://USER@HOST:PORT/DB)",
            );
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

/// What a thinking budget must be.
pub const THINKING_BUDGET: &str =
    "0 (no thinking) or a number of tokens from 1024 (Anthropic's smallest budget) to 128000";

/// Whether `budget` is a thinking budget: 0 (off), or from
/// [`skillet_llm::MIN_THINKING_BUDGET`] to [`skillet_llm::MAX_THINKING_BUDGET`].
pub fn thinking_budget_ok(budget: u32) -> bool {
    budget == 0
        || (skillet_llm::MIN_THINKING_BUDGET..=skillet_llm::MAX_THINKING_BUDGET).contains(&budget)
}

/// Whether `url` is a PostgreSQL URL (`postgres://` or `postgresql://`, no blank or control
/// character); the registry's client checks the rest when it connects.
pub fn is_postgres_url(url: &str) -> bool {
    let lower = url.to_ascii_lowercase();
    (lower.starts_with("postgresql://") || lower.starts_with("postgres://"))
        && !url.chars().any(|c| c.is_whitespace() || c.is_control())
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

#[cfg(test)]
mod tests {
    use super::*;
    use skillet_agent::tool::CatalogPlacement;

    use crate::Flags;
    use crate::env;
    use crate::settings::CONFIG_FILE;
    use crate::settings::testing::{resolve, resolve_with_user};

    #[test]
    fn a_bad_config_file_names_the_file_and_line() {
        let temp = tempfile::tempdir().unwrap();
        std::fs::write(
            temp.path().join(CONFIG_FILE),
            "model = \"m\"\nmodle = \"typo\"\n",
        )
        .unwrap();
        let error = resolve(&[], &Flags::default(), temp.path())
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("skillet.toml") && error.contains("line 2") && error.contains("modle"),
            "{error}"
        );
    }

    #[test]
    fn a_typo_in_a_value_is_an_error_even_where_a_flag_wins() {
        let temp = tempfile::tempdir().unwrap();
        std::fs::write(temp.path().join(CONFIG_FILE), "catalog = \"sytem\"\n").unwrap();
        let args = Flags {
            catalog: Some(CatalogPlacement::Tool),
            ..Flags::default()
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
            &Flags::default(),
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
            &Flags::default(),
            temp.path(),
            Some(user.path()),
        )
        .unwrap_err()
        .to_string();
        assert!(
            error.ends_with("max_steps = 0 is not valid; expected a whole number of at least 1"),
            "{error}"
        );
        // A thinking budget past the largest, or below Anthropic's smallest; 0 is off, and
        // the flag wins.
        let user_error = |text: &str| {
            std::fs::write(user.path().join(CONFIG_FILE), text).unwrap();
            resolve_with_user(
                &[(env::ANTHROPIC_API_KEY, "k")],
                &Flags::default(),
                temp.path(),
                Some(user.path()),
            )
            .unwrap_err()
            .to_string()
        };
        let error = user_error("thinking_budget = 4294967295\n");
        assert!(
            error.contains("thinking_budget = 4294967295 is not valid"),
            "{error}"
        );
        let error = user_error("thinking_budget = 500\n");
        assert!(
            error.ends_with("thinking_budget = 500 is not valid; expected 0 (no thinking) or a number of tokens from 1024 (Anthropic's smallest budget) to 128000"),
            "{error}"
        );
        for (file, flag, expected) in [
            ("thinking_budget = 0\n", None, None),
            ("thinking_budget = 4096\n", None, Some(4096)),
            ("thinking_budget = 128000\n", None, Some(128_000)),
            ("thinking_budget = 4096\n", Some(0), None),
            ("max_steps = 3\n", Some(2048), Some(2048)),
        ] {
            std::fs::write(user.path().join(CONFIG_FILE), file).unwrap();
            let flags = Flags {
                thinking_budget: flag,
                ..Flags::default()
            };
            let settings = resolve_with_user(
                &[(env::ANTHROPIC_API_KEY, "k")],
                &flags,
                temp.path(),
                Some(user.path()),
            )
            .unwrap();
            assert_eq!(settings.thinking, expected, "{file} {flag:?}");
        }
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
            (
                "[[sandbox]]\nnetwork = false\n",
                "`[[sandbox]]` makes a list of tables, and `sandbox` is one table: write `[sandbox]`",
            ),
            ("[sandbox]\nwritable = \"/x\"\n", "expected a list"),
            ("yes = \"true\"\n", "expected true or false"),
            (
                "modle = \"m\"\n",
                "unknown key `modle`; did you mean `model`?",
            ),
        ] {
            std::fs::write(temp.path().join(CONFIG_FILE), text).unwrap();
            let error = resolve(&[], &Flags::default(), temp.path())
                .unwrap_err()
                .to_string();
            assert!(error.contains(expected), "{text}: {error}");
            for rust in ["usize", "u32", "struct", "sequence", "SandboxFile"] {
                assert!(!error.contains(rust), "{text}: {error}");
            }
            assert!(error.contains("line "), "{error}");
        }
    }

    #[test]
    fn is_http_url_wants_http_or_https_and_a_host() {
        assert!(is_http_url("http://localhost:11434/v1"));
        assert!(is_http_url("HTTPS://api.example.com"));
        assert!(!is_http_url("http://"));
        assert!(!is_http_url("ftp://x"));
        assert!(!is_http_url("http://a b"));
    }
}
