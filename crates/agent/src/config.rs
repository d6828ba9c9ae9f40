//! How a session is set up ([`AgentConfig`]) and what is done with the skills matching a
//! message ([`SkillMatch`]).

use std::path::PathBuf;
use std::sync::Arc;

use skillet_library::index::SkillIndex;

use crate::permission::Permissions;
use crate::sandbox::SandboxPolicy;
use crate::tool::CatalogPlacement;

/// The default step limit per turn.
pub const DEFAULT_MAX_STEPS: usize = 50;
/// The default output limit per request.
pub const DEFAULT_MAX_TOKENS: u32 = 8_192;

/// How a session is set up.
#[derive(Clone)]
pub struct AgentConfig {
    /// The working directory (real path).
    pub cwd: PathBuf,
    /// Most output tokens per request.
    pub max_tokens: u32,
    /// Most model requests per user turn.
    pub max_steps: usize,
    /// Stream answers.
    pub stream: bool,
    /// Let the model think first, with at most this many tokens (Anthropic's extended
    /// thinking; at least [`skillet_llm::MIN_THINKING_BUDGET`]); `None`: no thinking.
    pub thinking: Option<u32>,
    /// Where the catalog goes.
    pub placement: CatalogPlacement,
    /// The catalog budget in characters; `None` sizes it from the model's context window.
    pub catalog_budget: Option<usize>,
    /// Who may write and run commands.
    pub permissions: Permissions,
    /// Standing rules: what is denied, asked about or allowed whatever `permissions` says
    /// ([`crate::rules`]).
    pub rules: crate::rules::Rules,
    /// The permission mode the session starts in (`--permission-mode`).
    pub mode: crate::permission::Mode,
    /// Whether each user message is matched against the skills, and what is done with a match.
    pub skill_match: SkillMatch,
    /// The index matches come from (none: no matching). With it, a library too large for the
    /// catalog gets the `search_skills` tool.
    pub skill_index: Option<Arc<SkillIndex>>,
    /// The session's first message, when known at the start (`run`): a catalog that must leave
    /// skills out lists those most relevant to it first.
    pub first_message: Option<String>,
    /// Folders (absolute) a write never touches without asking each time: the skill roots.
    pub protected: Vec<PathBuf>,
    /// How `bash` commands are contained.
    pub sandbox: SandboxPolicy,
    /// Put the project's instructions (`AGENTS.md`, else `CLAUDE.md`, from the git root down to
    /// the working directory; see [`crate::instructions`]) into the system prompt of a new
    /// session.
    pub instructions: bool,
    /// The user's own instructions file for every project, read first when it exists
    /// ([`crate::instructions::user_instructions_path`] gives the usual one); `None`: none.
    pub user_instructions: Option<PathBuf>,
    /// Which skills may run their dynamic context and grant tools (the project's only when the
    /// user trusts it).
    pub skill_trust: skillet_library::trust::SkillTrust,
    /// Whether skills' dynamic context (`` !`command` ``) runs at all.
    pub skill_shell: bool,
    /// Where `save_skill` writes new skills, and the roots to find them in (none: refused).
    pub save_skills: Option<crate::tool::SaveSkills>,
    /// Skills beyond the folders, such as the shared registry: with one, `search_skills` is
    /// offered and searches it too, and its skills load by reference as text only.
    pub skill_source: Option<Arc<dyn skillet_library::source::SkillSource>>,
    /// Tools from beyond skillet (other MCP servers'), fixed for the session; subagents get
    /// them too.
    pub tool_source: Option<Arc<dyn crate::tool::ToolSource>>,
    /// Claude Code's hooks the session runs ([`crate::hooks`]): the user's, and a trusted
    /// project's.
    pub hooks: crate::hooks::Hooks,
}

/// What is done with the skills that match a user message (always by appending to that
/// message, never by editing what was sent).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SkillMatch {
    /// Nothing.
    Off,
    /// A short note naming up to three relevant skills is appended to the message.
    #[default]
    Suggest,
    /// As `Suggest`, and the best skill's Layer 2 is appended too when it matches strongly,
    /// at most once per skill and session.
    Auto,
}

/// At most this many skills are suggested; the score `auto` needs to load the best (the rule
/// lives with the trigger tests that check it: [`skillet_library::triggers`]).
pub use skillet_library::triggers::{AUTO_LOAD_SCORE, MAX_SUGGESTIONS};

impl AgentConfig {
    /// The most output tokens a request asks for: `max_tokens`, plus the thinking budget when
    /// the model thinks (Anthropic counts thinking within its `max_tokens`).
    pub fn output_tokens(&self) -> u64 {
        u64::from(self.max_tokens) + u64::from(self.thinking.unwrap_or(0))
    }

    /// Defaults for a working directory, with writes and commands denied.
    pub fn new(cwd: PathBuf) -> Self {
        Self {
            cwd,
            max_tokens: DEFAULT_MAX_TOKENS,
            max_steps: DEFAULT_MAX_STEPS,
            stream: true,
            thinking: None,
            placement: CatalogPlacement::System,
            catalog_budget: None,
            permissions: Permissions::Deny {
                reason: "writes and commands are not allowed in this session".into(),
            },
            rules: crate::rules::Rules::default(),
            mode: crate::permission::Mode::Default,
            skill_match: SkillMatch::Suggest,
            skill_index: None,
            first_message: None,
            protected: Vec::new(),
            sandbox: SandboxPolicy::default(),
            instructions: true,
            user_instructions: None,
            skill_trust: skillet_library::trust::SkillTrust::untrusted(),
            skill_shell: true,
            save_skills: None,
            skill_source: None,
            tool_source: None,
            hooks: crate::hooks::Hooks::default(),
        }
    }
}
