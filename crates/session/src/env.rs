//! Every environment variable skillet reads, in one place.

use std::path::PathBuf;

/// The user's home directory.
pub const HOME: &str = "HOME";
/// The base of user configuration folders.
pub const XDG_CONFIG_HOME: &str = "XDG_CONFIG_HOME";
/// The base of user data folders (sessions, chat history).
pub const XDG_DATA_HOME: &str = "XDG_DATA_HOME";
/// The Anthropic API key; when set (and no --provider is given) it picks Anthropic.
pub const ANTHROPIC_API_KEY: &str = "ANTHROPIC_API_KEY";
/// The Anthropic base URL.
pub const ANTHROPIC_BASE_URL: &str = "ANTHROPIC_BASE_URL";
/// An OpenAI(-compatible) API key; when set it picks the OpenAI-compatible provider.
pub const OPENAI_API_KEY: &str = "OPENAI_API_KEY";
/// An OpenAI-compatible base URL (Ollama: http://localhost:11434/v1); it picks that provider.
pub const OPENAI_BASE_URL: &str = "OPENAI_BASE_URL";
/// The model.
pub const MODEL_ID: &str = "MODEL_ID";
/// A folder holding the embedding model (config.json, tokenizer.json, model.safetensors).
pub const SKILLET_EMBED_MODEL: &str = "SKILLET_EMBED_MODEL";
/// The Hugging Face home (its `hub` cache is searched for the embedding model).
pub const HF_HOME: &str = "HF_HOME";
/// The Hugging Face hub's address (a mirror; tests point it at loopback).
pub const HF_ENDPOINT: &str = "HF_ENDPOINT";
/// Set to 1 (or true/yes/on): never try to download the embedding model.
pub const HF_HUB_OFFLINE: &str = "HF_HUB_OFFLINE";
/// The base of user cache folders (the embedding cache).
pub const XDG_CACHE_HOME: &str = "XDG_CACHE_HOME";
/// The shared skill registry, a PostgreSQL URL (`skillet registry`).
pub const SKILLET_REGISTRY_URL: &str = "SKILLET_REGISTRY_URL";
/// How much `skillet mcp` logs on stderr: `off`, `error`, `info` (the default) or `debug`.
pub const SKILLET_LOG: &str = "SKILLET_LOG";

/// A variable's value, when set and not empty.
pub fn var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|value| !value.is_empty())
}

/// A path from an environment variable, when set and not empty.
pub fn path(name: &str) -> Option<PathBuf> {
    std::env::var_os(name)
        .filter(|value| !value.is_empty())
        .map(PathBuf::from)
}

/// Whether a variable is set to a true value (1, true, yes, on).
pub fn flag(name: &str) -> bool {
    var(name).is_some_and(|value| {
        matches!(
            value.to_ascii_lowercase().as_str(),
            "1" | "true" | "yes" | "on"
        )
    })
}
