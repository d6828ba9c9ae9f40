//! What a session's main loop and its subagents share ([`Core`]): the provider, the fixed
//! prompt and tools, the usage so far.

use std::sync::{Arc, Mutex};

use skillet_llm::{Provider, ToolSpec, Usage};

use crate::config::AgentConfig;
use crate::permission::Gate;
use crate::tool::{Audited, Fetched, LiveSkills, Subagent, ToolContext};
use crate::tools::ToolTable;

/// What the main loop and subagents share: the provider, the fixed prompt and tools.
pub(crate) struct Core {
    pub(crate) provider: Provider,
    pub(crate) system: String,
    pub(crate) specs: Vec<ToolSpec>,
    pub(crate) tools: ToolTable,
    pub(crate) context: ToolContext,
    pub(crate) config: AgentConfig,
    pub(crate) usage: Arc<Mutex<Usage>>,
    /// Skill folders audited on load this session (shared with subagents): each is told once.
    pub(crate) audited: Audited,
    /// The tokens of this conversation's last request (input, cached or not, and output), as the
    /// provider counted them: how full the context window is.
    pub(crate) last_context_tokens: std::sync::atomic::AtomicU64,
}

/// What a session's main loop and its subagents share.
pub(crate) struct Shared {
    pub(crate) gate: Arc<Gate>,
    pub(crate) usage: Arc<Mutex<Usage>>,
    pub(crate) fetched: Fetched,
    pub(crate) added_dirs: crate::tool::AddedDirs,
}

pub(crate) fn build_core(
    provider: Provider,
    system: String,
    skills: &Arc<LiveSkills>,
    catalog: &str,
    config: &AgentConfig,
    (subagent, search): (Option<Arc<dyn Subagent>>, bool),
    shared: &Shared,
) -> Core {
    let tools = ToolTable::with(subagent.is_some(), search).and(
        config
            .tool_source
            .as_ref()
            .map(|source| source.tools())
            .unwrap_or_default(),
    );
    let context = ToolContext {
        cwd: config.cwd.clone(),
        skills: Arc::clone(skills),
        catalog: catalog.to_string(),
        placement: config.placement,
        todos: Mutex::new(Vec::new()),
        subagent,
        gate: Arc::clone(&shared.gate),
        protected: config.protected.clone(),
        sandbox: config.sandbox.clone(),
        skill_trust: config.skill_trust.clone(),
        skill_shell: config.skill_shell,
        save_skills: config.save_skills.clone(),
        source: config.skill_source.clone(),
        fetched: Arc::clone(&shared.fetched),
        notices: crate::tool::Notices::default(),
        added_dirs: Arc::clone(&shared.added_dirs),
        hooks: config.hooks.clone(),
    };
    let specs = tools.specs(&context);
    Core {
        provider,
        system,
        specs,
        tools,
        context,
        config: config.clone(),
        usage: Arc::clone(&shared.usage),
        audited: Arc::default(),
        last_context_tokens: std::sync::atomic::AtomicU64::new(0),
    }
}
