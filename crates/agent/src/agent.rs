//! A session: set-up (the catalog, the system prompt, the tools, built once), the history, the
//! transcript, and the entry points of a turn ([`crate::turn`] runs it) and of a resumed session
//! ([`crate::repair`] makes an old history valid again).
//!
//! The system prompt and the tool definitions are built once and never change within a
//! session; the history is append-only. That keeps the provider's prompt cache hitting.

use std::fmt::Write as _;
use std::sync::{Arc, Mutex};

use skillet_llm::{Message, Provider, Usage};
use skillet_skills::{BudgetReport, Library};

use crate::catalog::{catalog_budget, session_catalog};
use crate::compact::CompactOutcome;
use crate::config::AgentConfig;
use crate::error::AgentError;
use crate::event::{AgentEvent, TurnOutcome};
use crate::instructions::Instructions;
use crate::permission::{Gate, Mode};
use crate::prompt::system_prompt;
use crate::sandbox::SandboxStatus;
use crate::state::{Core, Shared, build_core};
use crate::tool::{LiveSkills, Subagent};
use crate::transcript::{SessionHeader, Transcript, TranscriptEvent, new_session_id};
use crate::turn::{CANCELLED_CALL, Pending, SubagentRunner, append, run_loop};

/// A session: the fixed prompt and tools, the append-only history, the usage so far.
pub struct Agent {
    core: Arc<Core>,
    history: Vec<Message>,
    /// Skills `auto` has loaded in this session.
    injected: std::collections::HashSet<String>,
    transcript: Option<Transcript>,
    header: SessionHeader,
    catalog_report: BudgetReport,
    /// Results of the calls of the current answer that have finished.
    pending: Pending,
    /// Events to write once a transcript is attached (a resumed session's repairs).
    unrecorded: Vec<TranscriptEvent>,
    /// What resuming repaired, to tell the user.
    repairs: Vec<String>,
    /// The project instructions read into a new session's prompt (none for a resumed one).
    instructions: Instructions,
    /// The skills as the model was last told of them (the catalog, then each change note).
    skills_announced: crate::reload::SkillsSeen,
    /// The skills as they are now.
    skills_now: crate::reload::SkillsSeen,
    /// Changes not yet told to the model: appended to the next user message.
    skills_untold: Option<crate::reload::SkillChanges>,
    /// The permission mode as the model was last told of it (a new session: default, untold).
    mode_told: Mode,
    /// How many of the added folders the model was told of.
    dirs_told: usize,
    /// The next message is a skill the user invoked by hand (`/NAME`): it is not matched
    /// against the skills (it would only suggest itself).
    invoked_next: bool,
}

impl Agent {
    /// Starts a session: builds the catalog (within its budget), the system prompt and the
    /// tool definitions, once.
    pub fn new(provider: Provider, library: &Arc<Library>, config: &AgentConfig) -> Self {
        Self::build(provider, library, config, None, Vec::new())
    }

    /// Continues a session from its transcript: its system prompt and tools are used as they
    /// were sent, its history as it was, repaired where the real APIs would reject it (calls
    /// left unanswered anywhere, empty text); the repairs are written to the transcript once it
    /// is attached, and [`Agent::repairs`] says what they were. `config.cwd` should be the
    /// session's own working directory.
    pub fn resume(
        provider: Provider,
        library: &Arc<Library>,
        config: &AgentConfig,
        header: SessionHeader,
        history: &[Message],
    ) -> Self {
        let repaired = crate::repair::repair(history);
        let mut agent = Self::build(provider, library, config, Some(header), repaired.messages);
        agent.unrecorded = repaired.record;
        agent.repairs = repaired.notes;
        agent
    }

    fn build(
        provider: Provider,
        library: &Arc<Library>,
        config: &AgentConfig,
        resumed: Option<SessionHeader>,
        history: Vec<Message>,
    ) -> Self {
        let budget = config
            .catalog_budget
            .unwrap_or_else(|| catalog_budget(provider.model()));
        let (catalog, search) = session_catalog(
            library,
            budget,
            config.skill_index.as_deref(),
            config.first_message.as_deref(),
        );
        let total = library.model_invocable().count();
        // A resumed session sends its stored prompt: its instructions are not read again.
        let instructions = if resumed.is_none() && config.instructions {
            Instructions::load(&config.cwd, config.user_instructions.as_deref())
        } else {
            Instructions::default()
        };
        let mut system = system_prompt(
            &config.cwd,
            &instructions.render(),
            &catalog.text,
            config.placement,
            total,
        );
        if search {
            let _ = write!(
                system,
                "\n\nThere are {total} skills; the list shows {} of them. Use search_skills to find the others by what they do.",
                catalog.listed
            );
        }
        if let Some(source) = &config.skill_source {
            let _ = write!(
                system,
                "\n\nsearch_skills also searches {}, whose skills are shared by others and not in the list. A result marked \"not installed\" loads with load_skill by its OWNER/NAME@SEQ, as text only: it runs nothing and grants no tools.",
                source.label()
            );
        }
        if let Some(text) = config
            .tool_source
            .as_ref()
            .and_then(|source| source.prompt())
        {
            system.push_str("\n\n");
            system.push_str(&text);
        }
        // A resumed session keeps the tools it was given: one that had search_skills answers
        // its calls (saying so when there is nothing to search now).
        let search = search
            || config.skill_source.is_some()
            || resumed
                .as_ref()
                .is_some_and(|header| header.tools.iter().any(|tool| tool.name == "search_skills"));
        let gate = Gate::with_rules(config.permissions.clone(), config.rules.clone());
        gate.set_mode(config.mode);
        let shared = Shared {
            gate: Arc::new(gate),
            usage: Arc::new(Mutex::new(Usage::default())),
            fetched: crate::tool::Fetched::default(),
            added_dirs: Arc::new(Mutex::new(Vec::new())),
        };
        let skills = Arc::new(LiveSkills::new(
            Arc::clone(library),
            config.skill_index.clone(),
        ));
        let build_core =
            |subagent: Option<Arc<dyn Subagent>>, provider: Provider, system: String| {
                build_core(
                    provider,
                    system,
                    &skills,
                    &catalog.text,
                    config,
                    (subagent, search),
                    &shared,
                )
            };
        let subagent_core = build_core(None, provider.clone(), system.clone());
        let audited = Arc::clone(&subagent_core.audited);
        let runner: Arc<dyn Subagent> = Arc::new(SubagentRunner {
            core: Arc::new(subagent_core),
        });
        let mut core = build_core(Some(runner), provider, system);
        core.audited = audited;
        if let Some(header) = resumed {
            // A resumed session sends its prompt and tools byte for byte as before.
            core.system.clone_from(&header.system);
            core.specs.clone_from(&header.tools);
            return Self::assemble(core, history, header, catalog.report, instructions);
        }
        let header = SessionHeader {
            id: new_session_id(),
            created: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |elapsed| elapsed.as_secs()),
            cwd: config.cwd.clone(),
            provider: core.provider.kind().as_str().to_string(),
            model: core.provider.model().to_string(),
            system: core.system.clone(),
            tools: core.specs.clone(),
        };
        Self::assemble(core, history, header, catalog.report, instructions)
    }

    fn assemble(
        core: Core,
        history: Vec<Message>,
        header: SessionHeader,
        catalog_report: BudgetReport,
        instructions: Instructions,
    ) -> Self {
        let seen = crate::reload::SkillsSeen::of(&core.context.skills.library());
        Self {
            skills_announced: seen.clone(),
            skills_now: seen,
            skills_untold: None,
            core: Arc::new(core),
            history,
            injected: std::collections::HashSet::new(),
            transcript: None,
            header,
            catalog_report,
            pending: Pending::default(),
            unrecorded: Vec::new(),
            repairs: Vec::new(),
            instructions,
            mode_told: Mode::Default,
            dirs_told: 0,
            invoked_next: false,
        }
    }

    /// Adds a folder for the session (`--add-dir`, `/add-dir`): file tools read and write
    /// beneath it, commands may write in it, with the same rules and protections as the working
    /// directory. Returns its real path; an error says why it cannot be added (not a folder,
    /// already reachable).
    pub fn add_dir(&self, dir: &std::path::Path) -> Result<std::path::PathBuf, String> {
        let context = &self.core.context;
        let places = context.gate.rules().places();
        let real = crate::paths::folder_to_add(
            &context.cwd,
            (places.home.as_deref(), places.config_dir.as_deref()),
            dir,
        )?;
        if real.starts_with(&context.cwd) || context.added().iter().any(|d| real.starts_with(d)) {
            return Err(format!(
                "{} is already inside a folder the session works in",
                real.display()
            ));
        }
        let mut added = context
            .added_dirs
            .lock()
            .map_err(|_| "the session's folders cannot be changed now".to_string())?;
        // A folder that holds one added before replaces it.
        added.retain(|d| !d.starts_with(&real));
        added.push(real.clone());
        Ok(real)
    }

    /// A new session whose model never answered (the provider could not be reached, refused
    /// the key): its transcript is removed, so it is not listed as a session, and true is
    /// returned. A resumed session, or one with an answer, stays.
    pub fn discard_if_unanswered(&mut self) -> bool {
        let answered = self
            .history
            .iter()
            .any(|message| message.role == skillet_llm::Role::Assistant);
        if answered || self.transcript.as_ref().is_none_or(|t| !t.is_new()) {
            return false;
        }
        if let Some(transcript) = self.transcript.take() {
            transcript.discard();
        }
        true
    }

    /// The folders added for the session.
    pub fn added_dirs(&self) -> Vec<std::path::PathBuf> {
        self.core.context.added()
    }

    /// The permission mode ([`Mode`]).
    pub fn permission_mode(&self) -> Mode {
        self.core.context.gate.mode()
    }

    /// Switches the permission mode, for this session and its subagents; the model is told with
    /// the next message (the system prompt and tools never change).
    pub fn set_permission_mode(&self, mode: Mode) {
        self.core.context.gate.set_mode(mode);
    }

    /// The rules "always" added in this session, as written.
    pub fn approved_rules(&self) -> Vec<String> {
        self.core.context.gate.approved()
    }

    /// Writes every later event to this transcript (a new session writes its header first;
    /// a resumed one writes its repairs now).
    pub fn attach_transcript(&mut self, mut transcript: Transcript) -> Result<(), AgentError> {
        self.core
            .context
            .hooks
            .set_session(&self.header().id, Some(transcript.path()));
        for event in std::mem::take(&mut self.unrecorded) {
            transcript.record(&event)?;
        }
        transcript.sync()?;
        self.transcript = Some(transcript);
        Ok(())
    }

    /// Audits a skill the user invokes by hand the first time in this session (as loading it
    /// any other way does): the notice to show when it has a critical finding.
    pub fn audit_notice(&self, skill: &skillet_skills::Skill) -> Option<String> {
        crate::tools::load_skill::audit_once(&self.core.audited, skill)
    }

    /// A skill the user invokes by hand (`/name args`): the text to send as their message, its
    /// dynamic context run where it may ([`crate::invoke`]), its rules active for the turn that
    /// message starts. A forked skill (`context: fork`) runs as a subagent now, and the text
    /// is its answer. An `Err` says why it was not invoked (nothing ran after the failing
    /// command, nothing is sent).
    ///
    /// What a forked skill's subagent does goes to `events` and the transcript, marked as the
    /// subagent's of a call `invoke-NAME`.
    pub async fn invoke_skill(
        &mut self,
        skill: &skillet_skills::Skill,
        arguments: &str,
        events: &mut (dyn FnMut(AgentEvent) + Send),
    ) -> Result<String, crate::tool::ToolError> {
        let context = &self.core.context;
        context.gate.begin_invocation();
        let invoked = crate::invoke::invoke(context, skill, Some(arguments)).await?;
        self.invoked_next = true;
        let context = &self.core.context;
        if !crate::invoke::is_forked(skill) {
            context.gate.activate_next_turn(invoked.rules);
            return Ok(invoked.text);
        }
        let Self {
            core, transcript, ..
        } = self;
        let context = &core.context;
        let mut record = |event: TranscriptEvent| {
            if let Some(transcript) = transcript.as_mut() {
                let _ = transcript.record(&event);
            }
        };
        let id = format!("invoke-{}", skill.name);
        let result = crate::turn::with_sink(
            &id,
            crate::invoke::run_forked(context, skill, invoked),
            events,
            &mut record,
        )
        .await;
        if let Some(transcript) = transcript.as_mut() {
            let _ = transcript.sync();
        }
        result
    }

    /// The skills found again (the roots changed): from the next turn on, `load_skill`,
    /// `search_skills` and matching see these, ranked with `index`; the next user message gets
    /// a note of what changed since the model was last told. The system prompt and tools stay.
    /// What changed (empty: nothing the model would see).
    pub fn reload_skills(
        &mut self,
        library: Arc<Library>,
        index: Option<Arc<skillet_library::index::SkillIndex>>,
    ) -> crate::reload::SkillChanges {
        self.skills_now = crate::reload::SkillsSeen::of(&library);
        let changes = crate::reload::SkillChanges::between(
            &self.skills_announced,
            &self.skills_now,
            &library,
        );
        self.core.context.skills.replace(library, index);
        self.skills_untold = (!changes.is_empty()).then(|| changes.clone());
        changes
    }

    /// Whether the model, given this session's prompt and tools (the real catalog) and only
    /// `request` as the user's message, would load a skill first: the name it asks `load_skill`
    /// for, `None` when its answer calls no `load_skill`. One request; nothing runs, nothing is
    /// recorded, the history is untouched (`skills test --model`).
    pub async fn probe_load(&self, request: &str) -> Result<Option<String>, AgentError> {
        let messages = [skillet_llm::Message::user(request)];
        let response = self
            .core
            .provider
            .send(
                skillet_llm::Request {
                    system: &self.core.system,
                    messages: &messages,
                    tools: &self.core.specs,
                    max_tokens: self.core.config.max_tokens,
                    stream: false,
                    thinking: self.core.config.thinking,
                },
                &mut |_| {},
            )
            .await?;
        if let Ok(mut usage) = self.core.usage.lock() {
            usage.add(response.usage);
        }
        Ok(response
            .message
            .tool_uses()
            .find(|(_, name, _)| *name == "load_skill")
            .and_then(|(_, _, input)| input.get("name").and_then(serde_json::Value::as_str))
            .map(str::to_string))
    }

    /// What resuming repaired in the history, one line each.
    pub fn repairs(&self) -> &[String] {
        &self.repairs
    }

    /// How `bash` commands will be contained on this machine (for telling the user once).
    pub fn sandbox_status(&self) -> SandboxStatus {
        crate::sandbox::probe(&self.core.config.sandbox, &self.core.config.cwd)
    }

    /// The project instructions in the system prompt, to list at the start: each file with its
    /// size and whether the budget cut it, and the files skipped. Empty for a resumed session,
    /// which sends its stored prompt (with the instructions as they were) and reads none.
    pub fn instructions(&self) -> &Instructions {
        &self.instructions
    }

    /// Where the tools from beyond skillet stand (other MCP servers: `/mcp`); `None` when the
    /// session has none.
    pub fn tool_source_report(&self) -> Option<String> {
        self.core
            .config
            .tool_source
            .as_ref()
            .map(|source| source.report())
    }

    /// Chat commands from beyond skillet (MCP servers' prompts): name and description.
    pub fn tool_source_commands(&self) -> Vec<(String, String)> {
        self.core
            .config
            .tool_source
            .as_ref()
            .map(|source| source.commands())
            .unwrap_or_default()
    }

    /// The message such a command sends (`None`: no such command).
    pub async fn expand_tool_source_command(
        &self,
        name: &str,
        arguments: &str,
    ) -> Option<Result<String, String>> {
        match &self.core.config.tool_source {
            Some(source) => source.expand(name, arguments).await,
            None => None,
        }
    }

    /// What the catalog budget cut, to tell the user.
    pub fn catalog_report(&self) -> &BudgetReport {
        &self.catalog_report
    }

    /// The session's header (id, prompt, tools).
    pub fn header(&self) -> &SessionHeader {
        &self.header
    }

    /// The system prompt, fixed for the session.
    pub fn system_prompt(&self) -> &str {
        &self.core.system
    }

    /// The history so far.
    pub fn history(&self) -> &[Message] {
        &self.history
    }

    /// Tokens used so far in the session (subagents included).
    pub fn usage(&self) -> Usage {
        self.core
            .usage
            .lock()
            .map_or_else(|_| Usage::default(), |usage| *usage)
    }

    /// How much of the model's context window the last request filled: its tokens (0 before
    /// the first answer) and the window's size.
    pub fn context_use(&self) -> (u64, u64) {
        let used = self
            .core
            .last_context_tokens
            .load(std::sync::atomic::Ordering::SeqCst);
        (
            used,
            skillet_llm::context_window(self.core.provider.model()),
        )
    }

    /// The model the next request asks for (the header keeps the one the session started
    /// with).
    pub fn model(&self) -> &str {
        self.core.provider.model()
    }

    /// Asks for another model from the next request on, subagents included (`/model`): same
    /// provider, server and key. The system prompt and the tools stay byte for byte; the
    /// header keeps the model the session started with, and the switch is recorded in the
    /// transcript as a `model` event (a resumed session goes on with it). `Ok(false)`: not
    /// switched, because a turn holds the session (never the case between turns); `Err`: not
    /// switched, because the event could not be written.
    pub fn set_model(&mut self, model: &str) -> Result<bool, AgentError> {
        let Some(core) = Arc::get_mut(&mut self.core) else {
            return Ok(false);
        };
        if let Some(transcript) = self.transcript.as_mut() {
            transcript.record(&TranscriptEvent::Model {
                model: model.to_string(),
            })?;
            transcript.sync()?;
        }
        core.provider.set_model(model);
        if let Some(subagent) = core.context.subagent.as_mut().and_then(Arc::get_mut) {
            subagent.set_model(model);
        }
        Ok(true)
    }

    /// The thinking budget in tokens; `None`: the model does not think first.
    pub fn thinking(&self) -> Option<u32> {
        self.core.config.thinking
    }

    /// Thinks with another budget from the next request on, subagents included (`/thinking`;
    /// `None`: not at all). The budget must be at least [`skillet_llm::MIN_THINKING_BUDGET`]
    /// (the caller checks it). `false`: not switched, because a turn holds the session.
    pub fn set_thinking(&mut self, budget: Option<u32>) -> bool {
        let Some(core) = Arc::get_mut(&mut self.core) else {
            return false;
        };
        core.config.thinking = budget;
        if let Some(subagent) = core.context.subagent.as_mut().and_then(Arc::get_mut) {
            subagent.set_thinking(budget);
        }
        true
    }

    /// The model's current plan.
    pub fn todos(&self) -> Vec<crate::tool::TodoItem> {
        self.core
            .context
            .todos
            .lock()
            .map(|todos| todos.clone())
            .unwrap_or_default()
    }

    /// The files `text` mentions (`@path`), read as the file tools read
    /// ([`crate::mentions`]): the blocks to send with it ([`Agent::run_turn_with`]) and a note
    /// for each.
    pub fn attachments(&self, text: &str) -> crate::mentions::Attachments {
        crate::mentions::attach(&self.core.context, text)
    }

    /// Appends a user message (the text of a turn, or a skill invoked by hand) and runs the
    /// loop until the model answers without calling tools.
    pub async fn run_turn(
        &mut self,
        user_text: &str,
        events: &mut (dyn FnMut(AgentEvent) + Send),
    ) -> Result<TurnOutcome, AgentError> {
        self.run_turn_with(user_text, Vec::new(), events).await
    }

    /// [`Agent::run_turn`] with `attached` (files, images) sent after the message's text.
    pub async fn run_turn_with(
        &mut self,
        user_text: &str,
        attached: Vec<skillet_llm::ContentBlock>,
        events: &mut (dyn FnMut(AgentEvent) + Send),
    ) -> Result<TurnOutcome, AgentError> {
        let mut attached = attached;
        if !user_text.trim().is_empty() && !self.core.context.hooks.is_empty() {
            let decision = crate::hooks::run(
                &self.core.context,
                crate::hooks::HookEvent::UserPromptSubmit,
                None,
                serde_json::json!({"prompt": user_text}),
            )
            .await;
            for note in decision.notes {
                events(AgentEvent::Notice(note));
            }
            if let Some(why) = decision.block {
                return Err(AgentError::PromptBlocked(why));
            }
            for context in decision.context {
                // The hook's words: shown to the model as what they are, nothing hidden.
                attached.push(skillet_llm::ContentBlock::text(crate::hooks::quoted(
                    crate::hooks::HookEvent::UserPromptSubmit,
                    &context,
                )));
            }
        }
        if !user_text.trim().is_empty() {
            self.compact_if_full(events).await;
        }
        // The turn starts before the message is composed: a skill matching loads for it is
        // active in it.
        self.core.context.gate.start_turn();
        let invoked = std::mem::take(&mut self.invoked_next);
        let content = crate::suggest::compose_user_message(
            invoked,
            &self.core.config,
            &self.core.context,
            &mut self.injected,
            &self.core.audited,
            user_text,
            events,
        );
        if content.is_empty() && attached.is_empty() {
            return Err(AgentError::EmptyMessage);
        }
        let mut content = content;
        content.extend(attached);
        let mode = self.core.context.gate.mode();
        if let Some(note) = mode_note(mode, self.mode_told) {
            content.push(skillet_llm::ContentBlock::text(note));
        }
        self.mode_told = mode;
        let added = self.core.context.added();
        if added.len() != self.dirs_told {
            self.dirs_told = added.len();
            let list: Vec<String> = added.iter().map(|d| d.display().to_string()).collect();
            content.push(skillet_llm::ContentBlock::text(format!(
                "<system-reminder>Besides the working directory, the user added these folders for the session: file tools read and write in them (absolute paths), and commands may write there: {}</system-reminder>",
                list.join(", ")
            )));
        }
        if let Some(changes) = self.skills_untold.take() {
            content.push(skillet_llm::ContentBlock::text(changes.note()));
            self.skills_announced = self.skills_now.clone();
        }
        let Self {
            core,
            history,
            transcript,
            pending,
            ..
        } = self;
        let mut failure: Option<String> = None;
        let mut record = |event: TranscriptEvent| {
            if let Some(transcript) = transcript.as_mut()
                && let Err(error) = transcript.record(&event)
            {
                failure.get_or_insert_with(|| error.to_string());
            }
        };
        append(history, &mut record, content);
        let result = run_loop(core, history, pending, events, &mut record).await;
        if let Err(error) = &result {
            record(TranscriptEvent::Error {
                message: error.to_string(),
            });
        }
        // The turn's end: make it durable before the user sees the answer as done.
        if let Some(transcript) = transcript.as_mut()
            && let Err(error) = transcript.sync()
        {
            failure.get_or_insert_with(|| error.to_string());
        }
        if let Some(failure) = failure {
            events(AgentEvent::Notice(format!(
                "{failure}; the transcript may be incomplete"
            )));
        }
        result
    }
}

/// What the model is told of the permission mode with a message: in plan mode every time (so it
/// never forgets), and once when the mode changed.
fn mode_note(mode: Mode, told: Mode) -> Option<&'static str> {
    match mode {
        Mode::Plan => Some(
            "<system-reminder>The session is in plan mode: only reading tools run (writes and commands are refused). Explore what you need, then end your turn with a concise, numbered plan as your answer. The user approves it before anything is changed.</system-reminder>",
        ),
        _ if mode == told => None,
        Mode::AcceptEdits => Some(
            "<system-reminder>The permission mode is now accept-edits: file edits in the working directory run without asking; commands are still asked about.</system-reminder>",
        ),
        Mode::Default => Some(
            "<system-reminder>The permission mode is now default: writes and commands may run, asked about as usual (plan mode, if it was on, has ended).</system-reminder>",
        ),
    }
}

impl Agent {
    /// Replaces the history with a summary the model writes of it (`/compact`), keeping the
    /// system prompt and tools byte for byte; `instructions` are the user's, for the summary
    /// (what to keep, what to focus on). Only between turns. The transcript records the new
    /// history, so a resumed session continues from it. See [`crate::compact`].
    pub async fn compact(
        &mut self,
        instructions: Option<&str>,
        events: &mut (dyn FnMut(AgentEvent) + Send),
    ) -> Result<CompactOutcome, AgentError> {
        let outcome = crate::compact::compact(
            &self.core,
            &mut self.history,
            &mut self.transcript,
            instructions,
            events,
        )
        .await?;
        // The skills `auto` loaded were in the messages the summary replaced: they may load again.
        self.injected.clear();
        self.pending = Pending::default();
        Ok(outcome)
    }

    /// Compacts the session when its last request filled [`crate::compact::AUTO_COMPACT_SHARE`]
    /// of the model's context window (less where that leaves no room for the summary request:
    /// the window less `max_tokens` with the thinking budget, and
    /// [`crate::compact::COMPACT_MARGIN_TOKENS`]), saying so; a compaction that fails is said too, and the
    /// conversation goes on as it was.
    async fn compact_if_full(&mut self, events: &mut (dyn FnMut(AgentEvent) + Send)) {
        use std::sync::atomic::Ordering;
        let used = self.core.last_context_tokens.load(Ordering::SeqCst);
        let window = skillet_llm::context_window(self.core.provider.model());
        #[expect(
            clippy::cast_precision_loss,
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "a share of a token count"
        )]
        let share = (window as f64 * crate::compact::AUTO_COMPACT_SHARE) as u64;
        // A small window (a local model's 32k) leaves too little room at 80% for the summary
        // request and its answer: compact earlier there.
        // Never below half the window: a large max_tokens must not compact every turn. The
        // room each request asks for holds the thinking budget too.
        let limit = share
            .min(window.saturating_sub(
                self.core.config.output_tokens() + crate::compact::COMPACT_MARGIN_TOKENS,
            ))
            .max(window / 2);
        if used == 0 || used < limit {
            return;
        }
        match self.compact(None, events).await {
            Ok(outcome) => {
                self.core.last_context_tokens.store(0, Ordering::SeqCst);
                events(AgentEvent::Notice(format!(
                    "the conversation filled {used} of the model's {window} tokens: compacted it into a summary (about {} tokens before, {} after; the skills loaded so far kept)",
                    outcome.tokens_before, outcome.tokens_after
                )));
            }
            Err(error) => events(AgentEvent::Notice(format!(
                "the conversation is near the model's context window ({used} of {window} tokens) and could not be compacted: {error}"
            ))),
        }
    }

    /// After a cancelled turn: answers the calls of the last answer, if it is the model's and
    /// they are open: those that finished with what they returned, the others as cancelled
    /// (appended, like everything else), so the history stays valid for the next request.
    pub fn close_cancelled_turn(&mut self) {
        self.answer_cancelled_calls();
        // The turn's end, however it ended: what it wrote is made durable.
        if let Some(transcript) = self.transcript.as_mut() {
            let _ = transcript.sync();
        }
    }

    fn answer_cancelled_calls(&mut self) {
        let Some(last) = self
            .history
            .last()
            .filter(|m| m.role == skillet_llm::Role::Assistant)
        else {
            self.pending = Pending::default();
            return;
        };
        let Some(answer) = self.pending.close(last, CANCELLED_CALL) else {
            return;
        };
        let transcript = &mut self.transcript;
        let mut record = |event: TranscriptEvent| {
            if let Some(transcript) = transcript.as_mut() {
                let _ = transcript.record(&event);
            }
        };
        append(&mut self.history, &mut record, answer.content);
    }
}
