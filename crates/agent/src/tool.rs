//! The tool trait, what every tool call gets to work with, and the table tools are dispatched
//! from.

use std::collections::HashSet;
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use serde_json::Value;
use skillet_library::index::SkillIndex;
use skillet_skills::{Library, Root, Skill};

/// A boxed future, for trait objects.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

pub use crate::permission::ToolKind;

/// A failure the model should see and can recover from (a bad path, no match, a timeout).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ToolError(pub String);

impl ToolError {
    /// An error with this message.
    pub fn new(message: impl Into<String>) -> Self {
        Self(message.into())
    }
}

/// One tool: a name, a description and an input schema for the model, and the call.
pub trait Tool: Send + Sync {
    /// The name the model calls it by.
    fn name(&self) -> &str;
    /// What it does, for the model.
    fn description(&self, context: &ToolContext) -> String;
    /// JSON Schema of its input.
    fn input_schema(&self, context: &ToolContext) -> Value;
    /// What it may do.
    fn kind(&self) -> ToolKind;
    /// Runs it. An `Err` goes back to the model as an error result.
    fn call<'a>(
        &'a self,
        input: &'a Value,
        context: &'a ToolContext,
    ) -> BoxFuture<'a, Result<String, ToolError>>;
}

/// Tools from beyond skillet (other MCP servers' tools): fixed for the session, so the
/// tools array and the system prompt never change under the prompt cache.
pub trait ToolSource: Send + Sync {
    /// The tools it adds after skillet's own, in a fixed order.
    fn tools(&self) -> Vec<std::sync::Arc<dyn Tool>>;
    /// What the system prompt says of them (none: nothing).
    fn prompt(&self) -> Option<String>;
    /// Where they stand, for the user (`/mcp`).
    fn report(&self) -> String {
        String::new()
    }
    /// Commands the user may give in chat (`/mcp__server__prompt`): name and description.
    fn commands(&self) -> Vec<(String, String)> {
        Vec::new()
    }
    /// The message command `name` with `arguments` sends (`None`: not one of its commands).
    fn expand<'a>(
        &'a self,
        name: &'a str,
        arguments: &'a str,
    ) -> BoxFuture<'a, Option<Result<String, String>>> {
        let _ = (name, arguments);
        Box::pin(std::future::ready(None))
    }
}

/// A step of the model's visible plan.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TodoItem {
    /// What to do.
    pub content: String,
    /// `pending`, `in_progress` or `done`.
    pub status: String,
}

/// Where skills go in the prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CatalogPlacement {
    /// In the system prompt.
    #[default]
    System,
    /// In the `load_skill` tool's description (its `name` an enum of the skills when few).
    Tool,
    /// Both.
    Both,
}

/// Where a session saves skills, and the roots to find the skills again in once it has.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SaveSkills {
    /// The skills folder a new skill's folder goes in (absolute).
    pub dir: PathBuf,
    /// The session's skill roots.
    pub roots: Vec<Root>,
}

/// The source's skills loaded in a session (each named by its reference, its folder the
/// verified copy), shared by the session and its subagents.
pub type Fetched = Arc<Mutex<Vec<Skill>>>;

/// The skill folders audited on load in a session, shared by the session and its subagents.
pub(crate) type Audited = Arc<Mutex<HashSet<PathBuf>>>;

/// What every tool call gets: the working directory, the skills, the plan, and a way to run a
/// subagent.
pub struct ToolContext {
    /// The working directory (real path); file tools are confined to it.
    pub cwd: PathBuf,
    /// The discovered skills as they are now (their folders are readable too), and the index
    /// `search_skills` and matching rank them with; replaced between turns when the skill
    /// folders change ([`crate::Agent::reload_skills`]).
    pub skills: Arc<LiveSkills>,
    /// The catalog text (Layer 1) and where it goes.
    pub catalog: String,
    /// Where the catalog goes.
    pub placement: CatalogPlacement,
    /// The model's plan, as `todo_write` last set it.
    pub todos: Mutex<Vec<TodoItem>>,
    /// Runs a subagent for the `task` tool: (prompt) → its final text.
    pub subagent: Option<Arc<dyn Subagent>>,
    /// Asks before writes and commands.
    pub gate: Arc<crate::permission::Gate>,
    /// Folders a write never touches without asking each time (the skill roots).
    pub protected: Vec<PathBuf>,
    /// How `bash` commands are contained.
    pub sandbox: crate::sandbox::SandboxPolicy,
    /// Which skills may run their dynamic context and grant tools.
    pub skill_trust: skillet_library::trust::SkillTrust,
    /// Whether skills' dynamic context runs at all (`--no-skill-shell` turns it off).
    pub skill_shell: bool,
    /// Where `save_skill` writes (none: it is refused).
    pub save_skills: Option<SaveSkills>,
    /// Skills beyond the folders (the shared registry): `search_skills` searches it too, and
    /// `load_skill` loads its skills by reference (`OWNER/NAME@SEQ`) as text only.
    pub source: Option<Arc<dyn skillet_library::source::SkillSource>>,
    /// The source's skills loaded in this session (shared with subagents): their folders are
    /// readable as a discovered skill's are.
    pub fetched: Fetched,
    /// What tools tell the user directly, beside the results the model gets.
    pub notices: Notices,
    /// Folders added for the session (`--add-dir`, `/add-dir`; real paths, shared with
    /// subagents): file tools read and write beneath them as beneath the working directory,
    /// and commands may write there (what runs code later stays protected, as in the working
    /// directory).
    pub added_dirs: AddedDirs,
    /// The hooks run around calls, messages and the turn's end.
    pub hooks: crate::hooks::Hooks,
}

/// The folders added for a session ([`ToolContext::added_dirs`]).
pub type AddedDirs = Arc<Mutex<Vec<PathBuf>>>;

/// What tools tell the user directly, beside their results (which go to the model): the turn
/// shows them as notices after each call and records them.
#[derive(Debug, Default, Clone)]
pub struct Notices(Arc<Mutex<Vec<String>>>);

impl Notices {
    /// Adds a notice.
    pub fn push(&self, notice: String) {
        if let Ok(mut notices) = self.0.lock() {
            notices.push(notice);
        }
    }

    /// The notices not taken yet.
    pub fn take(&self) -> Vec<String> {
        self.0
            .lock()
            .map(|mut notices| std::mem::take(&mut *notices))
            .unwrap_or_default()
    }
}

/// The skills a session sees: the library and its index, swapped whole between turns (shared by
/// the session and its subagents). A tool takes them once per call, so one call never sees two.
pub struct LiveSkills {
    current: std::sync::RwLock<(Arc<Library>, Option<Arc<SkillIndex>>)>,
}

impl LiveSkills {
    /// These skills, ranked with `index` (none: no matching or search).
    pub fn new(library: Arc<Library>, index: Option<Arc<SkillIndex>>) -> Self {
        Self {
            current: std::sync::RwLock::new((library, index)),
        }
    }

    /// The library now.
    pub fn library(&self) -> Arc<Library> {
        self.current.read().map_or_else(
            |poisoned| Arc::clone(&poisoned.get_ref().0),
            |current| Arc::clone(&current.0),
        )
    }

    /// The index now.
    pub fn index(&self) -> Option<Arc<SkillIndex>> {
        self.current.read().map_or_else(
            |poisoned| poisoned.get_ref().1.clone(),
            |current| current.1.clone(),
        )
    }

    /// Replaces both.
    pub(crate) fn replace(&self, library: Arc<Library>, index: Option<Arc<SkillIndex>>) {
        match self.current.write() {
            Ok(mut current) => *current = (library, index),
            Err(poisoned) => *poisoned.into_inner() = (library, index),
        }
    }
}

impl ToolContext {
    /// The folders added for the session, now.
    pub fn added(&self) -> Vec<PathBuf> {
        self.added_dirs
            .lock()
            .map(|dirs| dirs.clone())
            .unwrap_or_default()
    }

    /// Every folder file tools and commands may write in: the working directory, then the
    /// added ones.
    pub fn writable_roots(&self) -> Vec<PathBuf> {
        std::iter::once(self.cwd.clone())
            .chain(self.added())
            .collect()
    }

    /// How `bash` is contained now: the configured policy, the added folders writable too
    /// and protected as the working directory is.
    pub fn sandbox_policy(&self) -> crate::sandbox::SandboxPolicy {
        let mut policy = self.sandbox.clone();
        let added = self.added();
        policy.writable.extend(added.iter().cloned());
        policy.added = added;
        policy
    }

    /// Asks the gate about a write or a command (`input`: the call's, which a skill's `Bash(…)`
    /// rule reads); `Err` is what the model is told.
    pub fn approve(
        &self,
        request: &crate::permission::ApprovalRequest,
        input: &Value,
    ) -> Result<(), ToolError> {
        self.gate.check(request, input).map_err(ToolError::new)
    }
}

/// Runs a subagent with a fresh history.
pub trait Subagent: Send + Sync {
    /// Runs `prompt` to completion and returns the final text.
    fn run<'a>(&'a self, prompt: &'a str) -> BoxFuture<'a, Result<String, ToolError>>;

    /// [`Subagent::run`] on another model (`None`: the session's).
    fn run_on<'a>(
        &'a self,
        prompt: &'a str,
        model: Option<&'a str>,
    ) -> BoxFuture<'a, Result<String, ToolError>> {
        let _ = model;
        self.run(prompt)
    }

    /// Uses another model from the next run on (`/model`); by default the model stays.
    fn set_model(&mut self, model: &str) {
        let _ = model;
    }

    /// Thinks with another budget from the next run on (`/thinking`; `None`: not at all); by
    /// default the budget stays.
    fn set_thinking(&mut self, budget: Option<u32>) {
        let _ = budget;
    }
}

/// A required string argument.
pub fn string_arg<'a>(input: &'a Value, name: &str) -> Result<&'a str, ToolError> {
    input
        .get(name)
        .and_then(Value::as_str)
        .ok_or_else(|| ToolError::new(format!("missing required string argument '{name}'")))
}

/// An optional non-negative integer argument.
pub fn usize_arg(input: &Value, name: &str) -> Result<Option<usize>, ToolError> {
    match input.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(value) => value
            .as_u64()
            .and_then(|n| usize::try_from(n).ok())
            .map(Some)
            .ok_or_else(|| {
                ToolError::new(format!("argument '{name}' must be a non-negative integer"))
            }),
    }
}
