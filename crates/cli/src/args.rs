//! The command-line interface, as clap structs.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// skillet: an agent that uses Agent Skills, and tools for skill authors.
///
/// With no command it is `skillet chat`: `skillet "PROMPT"` starts a chat with that first
/// message, and every chat flag works here too.
#[derive(Debug, Parser)]
#[command(
    name = "skillet",
    version = crate::VERSION,
    long_version = crate::LONG_VERSION,
    about
)]
pub struct Cli {
    /// Options every command takes.
    #[command(flatten)]
    pub global: GlobalArgs,
    /// The chat's options, when no command is given.
    #[command(flatten)]
    pub chat: ChatArgs,
    /// What to do (default: chat).
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// Options every command takes.
#[derive(Debug, Args)]
pub struct GlobalArgs {
    /// A folder of skills to use instead of the default roots (repeatable; first wins on a
    /// name collision)
    #[arg(long = "skills-dir", value_name = "DIR", global = true)]
    pub skills_dirs: Vec<PathBuf>,
    /// Work as if started in this folder
    #[arg(long, value_name = "DIR", global = true)]
    pub cwd: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run one task without interaction: the answer on stdout, tool previews on stderr
    Run(RunArgs),
    /// Talk with the agent (the default)
    Chat(ChatArgs),
    /// List this project's sessions, newest first
    Sessions(SessionsArgs),
    /// Show the setup: files read, provider, model, base URL, budgets, roots, and why
    Config(ConfigArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell)
    Completions {
        /// The shell
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Discover, inspect, validate and create skills
    #[command(subcommand)]
    Skills(SkillsCommand),
    /// Serve the skill library to MCP clients (Claude Code, Cursor, VS Code, …) on stdio;
    /// `skillet mcp list` shows the MCP servers whose tools skillet's own agent uses
    Mcp(McpArgs),
    /// Trust this project: let its skills run their commands and grant tools, and its
    /// skillet.toml grant what only you may (shows what that unlocks first)
    Trust(TrustArgs),
    /// A shared skill registry on PostgreSQL + pgvector: publish, search, install, update,
    /// list, yank
    Registry(RegistryArgs),
}

/// `skillet registry`.
#[derive(Debug, Args)]
pub struct RegistryArgs {
    /// The registry, a PostgreSQL URL (else SKILLET_REGISTRY_URL, else registry_url in
    /// skillet.toml)
    #[arg(long, value_name = "URL", global = true)]
    pub registry: Option<String>,
    /// The registry command
    #[command(subcommand)]
    pub command: RegistryCommand,
}

#[derive(Debug, Subcommand)]
pub enum RegistryCommand {
    /// Create or migrate the registry's schema (safe to run from many machines at once)
    Init {
        /// Print the report as JSON
        #[arg(long)]
        json: bool,
        /// Also recount the search statistics against the search table, repairing what a
        /// fault left out of step (takes no lock; done once anyway when upgrading)
        #[arg(long)]
        recount: bool,
    },
    /// Publish skills: each DIR is a skill folder, or a folder whose skills are all published
    Publish {
        /// Skill folders or roots (default: the current folder)
        #[arg(value_name = "DIR")]
        dirs: Vec<PathBuf>,
        /// Who publishes (the skill becomes OWNER/NAME)
        #[arg(long)]
        owner: String,
        /// Refuse unless the skill's latest version is N (0: not published yet); one skill only
        #[arg(long, value_name = "N")]
        expect_seq: Option<i32>,
        /// A folder holding the embedding model (else SKILLET_EMBED_MODEL or the Hugging Face
        /// cache); without it skills are published for search by words only
        #[arg(long, value_name = "DIR")]
        embed_model: Option<PathBuf>,
        /// Print the results as JSON
        #[arg(long)]
        json: bool,
    },
    /// Search the registry by words and meaning, ranked as `skills match` ranks
    Search {
        /// What the skill should do
        query: String,
        /// How many results
        #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u16).range(1..=100))]
        top_k: u16,
        /// How to rank (hybrid falls back to words when the model is missing)
        #[arg(long, value_enum, default_value_t = MatchModeArg::Hybrid)]
        mode: MatchModeArg,
        /// A folder holding the embedding model
        #[arg(long, value_name = "DIR")]
        embed_model: Option<PathBuf>,
        /// Print the results as JSON
        #[arg(long)]
        json: bool,
    },
    /// Install OWNER/NAME[@SEQ] into the project's .agents/skills (or --user, --dir), verified;
    /// without a skill, every skill the lock file lists, at its recorded version and hash
    Install {
        /// The skill: OWNER/NAME, or OWNER/NAME@SEQ for one version
        #[arg(value_name = "OWNER/NAME[@SEQ]")]
        skill: Option<String>,
        #[command(flatten)]
        target: InstallTargetArgs,
        /// Replace a skill of the same name from elsewhere, or with local changes
        #[arg(long)]
        force: bool,
        /// Print the result as JSON
        #[arg(long)]
        json: bool,
    },
    /// Update installed skills (all in the lock file, or those named) to their latest version
    Update {
        /// Names (NAME or OWNER/NAME) to update; none: every one in the lock file
        names: Vec<String>,
        #[command(flatten)]
        target: InstallTargetArgs,
        /// Replace local changes
        #[arg(long)]
        force: bool,
        /// Print the results as JSON
        #[arg(long)]
        json: bool,
    },
    /// List the registry's skills, or one skill's versions (seq, hash, yanked)
    List {
        /// OWNER/NAME: its versions
        #[arg(value_name = "OWNER/NAME")]
        skill: Option<String>,
        /// Print as JSON
        #[arg(long)]
        json: bool,
    },
    /// Hide a version from search and install (kept for lock files that name it)
    Yank {
        /// OWNER/NAME@SEQ
        #[arg(value_name = "OWNER/NAME@SEQ")]
        skill: String,
        /// Print the result as JSON
        #[arg(long)]
        json: bool,
    },
    /// Show which database role holds an owner; claim it, or hand it to a team's role
    Owner {
        /// The owner
        owner: String,
        /// Claim it for your database user when nobody holds it
        #[arg(long, conflicts_with = "role")]
        claim: bool,
        /// Hand it to this database role (a team's group role; you must be a member of it
        /// and of the role that holds it now)
        #[arg(long, value_name = "ROLE")]
        role: Option<String>,
        /// Print the result as JSON
        #[arg(long)]
        json: bool,
    },
}

/// Where `install` and `update` work.
#[derive(Debug, Args, Clone)]
pub struct InstallTargetArgs {
    /// The user's skills (~/.agents/skills, lock file in ~/.config/skillet)
    #[arg(long, conflicts_with = "dir")]
    pub user: bool,
    /// Another skills folder (the lock file stays at the project root)
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

/// `skillet trust`.
#[derive(Debug, Args)]
pub struct TrustArgs {
    /// Stop trusting this project (it is asked about again)
    #[arg(long, conflicts_with = "list")]
    pub revoke: bool,
    /// List the projects trusted or declined, and where this one stands
    #[arg(long)]
    pub list: bool,
    /// Trust without the question (what it unlocks is still shown): for scripts
    #[arg(long, conflicts_with_all = ["list", "revoke"])]
    pub yes: bool,
}

/// `skillet mcp`.
#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct McpArgs {
    /// What else to do than serve
    #[command(subcommand)]
    pub action: Option<McpAction>,
    /// Serve over streamable HTTP at http://ADDR/mcp instead of stdio (ADDR: PORT or HOST:PORT;
    /// 127.0.0.1 unless a host is given)
    #[arg(long, value_name = "ADDR")]
    pub http: Option<String>,
    /// Allow --http to bind an address other machines can reach
    #[arg(long, requires = "http")]
    pub allow_remote: bool,
    /// A folder holding the embedding model (else SKILLET_EMBED_MODEL or the Hugging Face cache)
    #[arg(long, value_name = "DIR")]
    pub embed_model: Option<PathBuf>,
    /// A shared registry (a PostgreSQL URL) that search_skills searches too (else
    /// SKILLET_REGISTRY_URL, else registry_url in skillet.toml)
    #[arg(long, value_name = "URL")]
    pub registry: Option<String>,
}

/// `skillet mcp`'s actions besides serving.
#[derive(Debug, Subcommand)]
pub enum McpAction {
    /// The MCP servers skillet's agent uses here (your skillet.toml's, a trusted project's
    /// .mcp.json): each started, with its state and tools
    List,
}

/// `skillet chat` and plain `skillet`.
#[derive(Debug, Args, Default, Clone)]
pub struct ChatArgs {
    /// The first message (the chat goes on after its answer)
    #[arg(value_name = "PROMPT")]
    pub prompt: Option<String>,
    /// Agent options
    #[command(flatten)]
    pub agent: AgentArgs,
}

impl ChatArgs {
    /// The first chat option given, by its flag (`PROMPT` for the message): before a command
    /// it would be ignored, so it is refused instead.
    pub fn first_given(&self) -> Option<&'static str> {
        let agent = &self.agent;
        [
            (self.prompt.is_some(), "PROMPT"),
            (agent.provider.is_some(), "--provider"),
            (agent.model.is_some(), "--model"),
            (agent.base_url.is_some(), "--base-url"),
            (agent.max_steps.is_some(), "--max-steps"),
            (agent.thinking_budget.is_some(), "--thinking-budget"),
            (agent.catalog.is_some(), "--catalog"),
            (agent.no_stream, "--no-stream"),
            (agent.no_instructions, "--no-instructions"),
            (agent.no_skill_shell, "--no-skill-shell"),
            (agent.skill_match.is_some(), "--skill-match"),
            (agent.permission_mode.is_some(), "--permission-mode"),
            (!agent.add_dir.is_empty(), "--add-dir"),
            (agent.resume.is_some(), "--resume"),
            (agent.continue_latest, "--continue"),
        ]
        .into_iter()
        .find_map(|(given, flag)| given.then_some(flag))
    }
}

/// `skillet sessions`.
#[derive(Debug, Args)]
pub struct SessionsArgs {
    /// Print a JSON array instead of a table
    #[arg(long)]
    pub json: bool,
    /// How many to show at most
    #[arg(long, value_name = "N", default_value_t = DEFAULT_LISTED,
          value_parser = at_least_one)]
    pub limit: usize,
}

/// `skillet config`: the flags that change what `run` and `chat` would use.
#[derive(Debug, Args)]
pub struct ConfigArgs {
    /// anthropic or openai
    #[arg(long, value_enum)]
    pub provider: Option<ProviderArg>,
    /// The model (also MODEL_ID)
    #[arg(long)]
    pub model: Option<String>,
    /// The API base URL (also ANTHROPIC_BASE_URL, OPENAI_BASE_URL)
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
}

/// `skillet run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The task; read from stdin when it is `-` or not given (and stdin is not a terminal)
    pub prompt: Option<String>,
    /// Print the event stream as JSON lines instead of text
    #[arg(long)]
    pub json: bool,
    /// Allow writes and commands inside the working directory
    #[arg(long, short = 'y')]
    pub yes: bool,
    /// Trust this project for this run only (its skills' commands and tool grants, its
    /// skillet.toml's grants), without recording it: for scripts and CI
    #[arg(long)]
    pub trust_project: bool,
    /// Send an image with the prompt (PNG, JPEG, GIF or WebP; repeatable)
    #[arg(long, value_name = "FILE")]
    pub image: Vec<std::path::PathBuf>,
    /// Agent options
    #[command(flatten)]
    pub agent: AgentArgs,
}

/// Options of `run` and `chat`.
#[derive(Debug, Args, Default, Clone)]
#[expect(
    clippy::struct_excessive_bools,
    reason = "independent command-line switches"
)]
pub struct AgentArgs {
    /// anthropic or openai (any OpenAI-compatible server: OpenAI, Ollama, vLLM, llama.cpp)
    #[arg(long, value_enum)]
    pub provider: Option<ProviderArg>,
    /// The model (also MODEL_ID)
    #[arg(long)]
    pub model: Option<String>,
    /// The API base URL (also ANTHROPIC_BASE_URL, OPENAI_BASE_URL)
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
    /// Most model requests per turn (at least 1)
    #[arg(long, value_name = "N", value_parser = at_least_one)]
    pub max_steps: Option<usize>,
    /// Let the model think first with up to TOKENS (Anthropic's extended thinking, at least
    /// 1024; 0: off). Its thinking shows dimmed
    #[arg(long, value_name = "TOKENS", value_parser = thinking_budget)]
    pub thinking_budget: Option<u32>,
    /// Where the skill catalog goes: the system prompt, the load_skill tool, or both
    #[arg(long, value_enum)]
    pub catalog: Option<CatalogArg>,
    /// Wait for whole answers instead of streaming them
    #[arg(long)]
    pub no_stream: bool,
    /// Do not read the project's AGENTS.md / CLAUDE.md (or your own) into a new session's prompt
    #[arg(long)]
    pub no_instructions: bool,
    /// Do not run skills' dynamic context (`!`command`` lines): each becomes a note
    #[arg(long)]
    pub no_skill_shell: bool,
    /// Match each message against the skills: off, suggest (note the best fits) or auto (also
    /// load the best one)
    #[arg(long, value_enum)]
    pub skill_match: Option<SkillMatchArg>,
    /// default (ask before writes and commands), accept-edits (file edits run unasked) or plan
    /// (reading tools only; the turn ends with a plan to approve)
    #[arg(long, value_enum, value_name = "MODE")]
    pub permission_mode: Option<PermissionModeArg>,
    /// Also let file tools read and write beneath DIR, and commands write there (repeatable)
    #[arg(long = "add-dir", value_name = "DIR")]
    pub add_dir: Vec<PathBuf>,
    /// Continue a session: its id, or without one this project's latest (chat: a picker)
    #[arg(long, value_name = "ID", num_args = 0..=1, default_missing_value = LATEST)]
    pub resume: Option<String>,
    /// Continue this project's latest session
    #[arg(long = "continue", short = 'c', conflicts_with = "resume")]
    pub continue_latest: bool,
    /// The chat's first message (`skillet "PROMPT"`, `skillet chat "PROMPT"`, or a
    /// `--resume` value that is no session id); not a flag of its own.
    #[arg(skip)]
    pub initial_prompt: Option<String>,
}

/// What `--resume` without an id stands for.
impl AgentArgs {
    /// The flags the settings read, as values.
    pub fn flags(&self) -> skillet_session::Flags {
        skillet_session::Flags {
            provider: self.provider.map(|provider| match provider {
                ProviderArg::Anthropic => skillet_llm::ProviderKind::Anthropic,
                ProviderArg::Openai => skillet_llm::ProviderKind::OpenAi,
            }),
            model: self.model.clone(),
            base_url: self.base_url.clone(),
            max_steps: self.max_steps,
            thinking_budget: self.thinking_budget,
            catalog: self.catalog.map(|catalog| match catalog {
                CatalogArg::System => skillet_agent::tool::CatalogPlacement::System,
                CatalogArg::Tool => skillet_agent::tool::CatalogPlacement::Tool,
                CatalogArg::Both => skillet_agent::tool::CatalogPlacement::Both,
            }),
            no_stream: self.no_stream,
            no_instructions: self.no_instructions,
            no_skill_shell: self.no_skill_shell,
            skill_match: self.skill_match.map(|skill_match| match skill_match {
                SkillMatchArg::Off => skillet_agent::SkillMatch::Off,
                SkillMatchArg::Suggest => skillet_agent::SkillMatch::Suggest,
                SkillMatchArg::Auto => skillet_agent::SkillMatch::Auto,
            }),
            permission_mode: self.permission_mode.map(PermissionModeArg::mode),
            add_dirs: self.add_dir.clone(),
        }
    }
}

pub use skillet_session::sessions::LATEST;

/// How many sessions `skillet sessions` lists unless `--limit` says otherwise.
pub const DEFAULT_LISTED: usize = 20;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ProviderArg {
    /// The Anthropic Messages API
    Anthropic,
    /// OpenAI-compatible Chat Completions
    Openai,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PermissionModeArg {
    /// Ask before writes and commands
    Default,
    /// File edits in the working directory run without asking; commands are asked about
    AcceptEdits,
    /// Reading tools only; the turn ends with a plan to approve
    Plan,
}

impl PermissionModeArg {
    /// The mode it names.
    pub fn mode(self) -> skillet_agent::permission::Mode {
        match self {
            Self::Default => skillet_agent::permission::Mode::Default,
            Self::AcceptEdits => skillet_agent::permission::Mode::AcceptEdits,
            Self::Plan => skillet_agent::permission::Mode::Plan,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SkillMatchArg {
    /// No matching
    Off,
    /// Append a note naming the skills that fit
    Suggest,
    /// Also load the best skill when it fits strongly
    Auto,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CatalogArg {
    /// In the system prompt
    System,
    /// In the load_skill tool's description
    Tool,
    /// Both
    Both,
}

#[derive(Debug, Subcommand)]
pub enum SkillsCommand {
    /// List every discovered skill (diagnostics go to stderr)
    List {
        /// Print a JSON array instead of a table
        #[arg(long)]
        json: bool,
    },
    /// Print a skill as the model receives it when it loads it (Layer 2)
    Show {
        /// The skill's name
        name: String,
    },
    /// Print the catalog the model sees (Layer 1); what the budget cut goes to stderr
    Catalog {
        /// How the catalog is written
        #[arg(long, value_enum, default_value_t = CatalogFormatArg::List)]
        format: CatalogFormatArg,
        /// The catalog's budget in characters (default: what `run` and `chat` give the
        /// configured model)
        #[arg(long, value_name = "CHARS", value_parser = at_least_one)]
        budget: Option<usize>,
        /// Show the catalog for this model (default: the configured one)
        #[arg(long)]
        model: Option<String>,
        /// A session's first message: when the skills do not all fit, the catalog lists those
        /// closest to it first, as a session does
        #[arg(long = "for", value_name = "MESSAGE")]
        first_message: Option<String>,
    },
    /// Check skills against the specification; exit 1 when any has errors
    Validate {
        /// Skill folders, SKILL.md files, or roots to walk (default: every discovered skill)
        paths: Vec<PathBuf>,
        /// Print a JSON array instead of text
        #[arg(long)]
        json: bool,
    },
    /// Scan skill folders for hidden text, risky commands and binaries; exit 1 on a critical
    /// finding
    Audit {
        /// Skill folders, SKILL.md files, or roots to walk (default: every discovered skill)
        paths: Vec<PathBuf>,
        /// Print a JSON document instead of text
        #[arg(long)]
        json: bool,
    },
    /// Rank skills for a request, by words and meaning
    Match {
        /// The request
        query: String,
        /// How many skills to show
        #[arg(long, default_value_t = 5, value_parser = at_least_one)]
        top_k: usize,
        /// lexical, semantic or hybrid (default: hybrid when the model is present)
        #[arg(long, value_enum)]
        mode: Option<MatchModeArg>,
        /// Print a JSON array
        #[arg(long)]
        json: bool,
        /// Say why each skill scored as it did: the words matched and their share, the cosine,
        /// the relevance score against its threshold, the blend that ranks it
        #[arg(long)]
        explain: bool,
        /// Also say where this skill ranked and what beat it (implies --explain)
        #[arg(long, value_name = "NAME")]
        skill: Option<String>,
        /// The embedding model's folder (also SKILLET_EMBED_MODEL)
        #[arg(long, value_name = "DIR")]
        embed_model: Option<PathBuf>,
    },
    /// Trigger tests: would each request of a skill's evals/triggers.json suggest it? Exit 1
    /// when a `should` request misses or a `should_not` one fires
    Test {
        /// The skills to test (default: every discovered skill with a trigger file)
        names: Vec<String>,
        /// Read the requests from this file instead of each skill's evals/triggers.json (one
        /// skill named), or from NAME.json in this folder for each skill
        #[arg(long, value_name = "PATH")]
        queries: Option<PathBuf>,
        /// Print a JSON document
        #[arg(long)]
        json: bool,
        /// Also ask the configured model, given the real catalog, whether it would load the
        /// skill for each request (three tries each; the rate is reported)
        #[arg(long)]
        model: bool,
        /// The embedding model's folder (also SKILLET_EMBED_MODEL)
        #[arg(long, value_name = "DIR")]
        embed_model: Option<PathBuf>,
    },
    /// Build or refresh the embedding cache of every discovered skill
    Index {
        /// The embedding model's folder (also SKILLET_EMBED_MODEL)
        #[arg(long, value_name = "DIR")]
        embed_model: Option<PathBuf>,
    },
    /// Create a new skill from a template that passes `validate`
    New {
        /// The skill's name: lowercase letters, digits and hyphens
        name: String,
        /// The folder to create it in (default: the project's skill root: .agents/skills, or
        /// .claude/skills when only that one exists)
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum MatchModeArg {
    /// Words (BM25)
    Lexical,
    /// Meaning (embeddings)
    Semantic,
    /// Both
    Hybrid,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum CatalogFormatArg {
    /// `  - name: description [tags]` lines
    List,
    /// `<available_skills>` XML
    Xml,
}

/// A whole number of at least 1, for counts and limits: `0`, `-1` or `x` are refused saying
/// so (clap's own range message would name `u64::MAX`).
fn thinking_budget(text: &str) -> Result<u32, String> {
    match text.trim().parse::<u32>() {
        Ok(budget) if skillet_session::settings::thinking_budget_ok(budget) => Ok(budget),
        _ => Err(format!(
            "`{text}` is not {}",
            skillet_session::settings::THINKING_BUDGET
        )),
    }
}

fn at_least_one(text: &str) -> Result<usize, String> {
    match text.trim().parse::<usize>() {
        Ok(0) => Err("must be at least 1".to_string()),
        Ok(count) => Ok(count),
        Err(_) => Err(format!("`{text}` is not a whole number (at least 1)")),
    }
}
