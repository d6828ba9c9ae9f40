//! skillet's agent as an MCP client. Servers come from the user's `skillet.toml`
//! (`[mcp_servers.NAME]`, as Codex writes them) and a trusted project's `.mcp.json` (as Claude
//! Code writes it) ([`config`]); the [`hub`] starts them on a thread of its own and keeps them
//! for the session; their tools reach the model as [`tools::McpTools`] says: natively
//! (`mcp__SERVER__TOOL`) while their definitions are few, else through `search_tools`, ranked
//! by skillet's own matcher ([`search`]), and `call_tool`, so the tools array and the system
//! prompt stay fixed and the prompt cache holds.
//!
//! What a server sends is untrusted: descriptions and results are cleaned of what hides text
//! and capped ([`catalog`], [`render`]), messages are capped where they are read
//! ([`connect::MAX_MESSAGE_BYTES`]), arguments are checked against the schema before they are
//! sent ([`arguments`]), and every call is an action the user approves.

pub mod arguments;
pub mod catalog;
pub mod config;
pub mod connect;
pub mod extras;
pub mod hub;
pub mod mcp_json;
pub mod render;
pub mod search;
pub mod tools;

pub use config::{MCP_JSON, Origin, ServerConfig, ServerFile, Transport};
pub use hub::{Hub, ServerReport, Status};
pub use tools::{Disclosure, McpTools, ToolSearch};
