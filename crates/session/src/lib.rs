//! One place that builds a skillet session, below the command line: where it works and which
//! skill folders it reads ([`Workspace`]), its settings from flags, the environment and
//! `skillet.toml` ([`settings`]), and the variables it reads ([`env`]). `skillet run`,
//! `skillet chat` and the tests build sessions through it; the CLI parses arguments and renders.

pub mod builder;
pub mod env;
mod flags;
pub mod hooks;
pub mod mcp;
pub mod prepare;
pub mod sessions;
pub mod settings;
pub mod trust;
mod workspace;

pub use flags::Flags;
pub use workspace::Workspace;
