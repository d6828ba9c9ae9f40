//! What the agent, the CLI and the MCP server share, so that none of them depends on another:
//! the discovered skills ready to rank ([`index`]: the skill index and its embedding cache), and
//! the embedding model ([`model`]: where it is found, downloading it, building the index with it),
//! watching the skill roots for changes ([`watch`]), which projects the user trusts to act
//! ([`trust`]), sources of skills beyond the folders such as the shared registry ([`source`]:
//! the trait, and a fetched skill shown as untrusted text), whether a skill can be told from
//! the others ([`findability`]), and the rule deciding which skills a request triggers, with the trigger tests
//! built on it ([`triggers`]).
//!
//! It sits above the pure engines (`skillet-skills`, `skillet-retrieval`) and below `agent`,
//! `mcp` and `cli`: the agent ranks with a [`index::SkillIndex`] it is given, the CLI and the MCP
//! server build one. It reads no environment variable and prints nothing: the caller passes what
//! it read ([`model::ModelEnv`]) and is told what happens ([`model::ModelEvent`]), to print or
//! to log.

pub mod facts;
pub mod findability;
pub mod index;
pub mod model;
pub mod source;
pub mod triggers;
pub mod trust;
pub mod watch;
pub mod words;

#[cfg(test)]
mod testing;
