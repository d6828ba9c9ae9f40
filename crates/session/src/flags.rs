//! The flags of a session that its settings read, as values (the CLI parses them).

use skillet_agent::SkillMatch;
use skillet_agent::tool::CatalogPlacement;
use skillet_llm::ProviderKind;

/// What the user said on the command line for this session; `None` and `false`: not said, so
/// the environment or a file decides.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Flags {
    /// `--provider`.
    pub provider: Option<ProviderKind>,
    /// `--model`.
    pub model: Option<String>,
    /// `--base-url`.
    pub base_url: Option<String>,
    /// `--max-steps`.
    pub max_steps: Option<usize>,
    /// `--thinking-budget` (`Some(0)`: no thinking, whatever a file says).
    pub thinking_budget: Option<u32>,
    /// `--catalog`.
    pub catalog: Option<CatalogPlacement>,
    /// `--no-stream`.
    pub no_stream: bool,
    /// `--no-instructions`.
    pub no_instructions: bool,
    /// `--no-skill-shell`.
    pub no_skill_shell: bool,
    /// `--skill-match`.
    pub skill_match: Option<SkillMatch>,
    /// `--permission-mode`.
    pub permission_mode: Option<skillet_agent::permission::Mode>,
    /// `--add-dir`, each as given.
    pub add_dirs: Vec<std::path::PathBuf>,
}
