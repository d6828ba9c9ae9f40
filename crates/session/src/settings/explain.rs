//! Where each value came from, as `skillet config` shows it, and why the catalog budget is
//! what it is.

use std::fmt;
use std::path::PathBuf;

use super::Settings;

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
