//! Why the settings cannot be resolved: each a usage error (the CLI exits with 2), its message
//! the text the user reads.

use std::path::PathBuf;

use super::Origin;

/// The message shown when no provider is configured.
pub const NO_PROVIDER: &str = "no model provider is configured
  set ANTHROPIC_API_KEY to use Anthropic, OPENAI_API_KEY to use OpenAI,
  or OPENAI_BASE_URL (and MODEL_ID) for any OpenAI-compatible server; a local Ollama works:
    OPENAI_BASE_URL=http://localhost:11434/v1 MODEL_ID=llama3.2 skillet
  or pass --provider, --model and --base-url, or set them in skillet.toml";

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
    /// No provider is configured anywhere (that counts: `ignored` says what a file set that
    /// was not taken, such as an untrusted project's provider).
    #[error("{NO_PROVIDER}{}", ignored.iter().fold(String::new(), |text, line| text + "\n" + line))]
    NoProvider {
        /// What the files said that was ignored, one warning each.
        ignored: Vec<String>,
    },
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
