//! The agent loop: send, stream the answer, run every tool call of the turn in order, answer
//! them one to one in a single message, repeat until the model stops calling tools.
//!
//! The system prompt and the tool definitions are built once and never change within a
//! session; the history is append-only. That keeps the provider's prompt cache hitting.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use serde_json::Value;
use skillet_llm::{
    ContentBlock, Message, Provider, Request, Role, StopReason, StreamEvent, ToolSpec, Usage,
    context_window,
};
use skillet_skills::{BudgetReport, CatalogFormat, Library, render_catalog};

use crate::skill_index::SkillIndex;

use crate::error::AgentError;
use crate::permission::{ApprovalRequest, Gate, Permissions};
use crate::prompt::system_prompt;
use crate::tool::{
    BoxFuture, CatalogPlacement, Subagent, ToolContext, ToolError, ToolKind, ToolTable,
};
use crate::transcript::{
    SessionHeader, Transcript, TranscriptEvent, answer_open_calls, new_session_id,
};

/// The default step limit per turn.
pub const DEFAULT_MAX_STEPS: usize = 50;
/// The default output limit per request.
pub const DEFAULT_MAX_TOKENS: u32 = 8_192;
/// The catalog budget as a share of the context window: 1% (Claude Code's), 4 characters a
/// token, within these bounds.
pub const CATALOG_BUDGET_BOUNDS: (usize, usize) = (2_000, 32_000);
/// How many characters of a tool result the previews show.
pub const PREVIEW_CHARS: usize = 200;

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
    /// Where the catalog goes.
    pub placement: CatalogPlacement,
    /// The catalog budget in characters; `None` sizes it from the model's context window.
    pub catalog_budget: Option<usize>,
    /// Who may write and run commands.
    pub permissions: Permissions,
    /// Whether each user message is matched against the skills, and what is done with a match.
    pub skill_match: SkillMatch,
    /// The index matches come from (none: no matching). With it, a library too large for the
    /// catalog gets the `search_skills` tool.
    pub skill_index: Option<Arc<SkillIndex>>,
    /// The session's first message, when known at the start (`run`): a catalog that must leave
    /// skills out lists those most relevant to it first.
    pub first_message: Option<String>,
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

/// At most this many skills are suggested.
pub const MAX_SUGGESTIONS: usize = 3;
/// The hybrid score the best skill must reach to be loaded by `auto` (above the relevance
/// threshold that suggestions need).
pub const AUTO_LOAD_SCORE: f32 = 0.5;

impl AgentConfig {
    /// Defaults for a working directory, with writes and commands denied.
    pub fn new(cwd: PathBuf) -> Self {
        Self {
            cwd,
            max_tokens: DEFAULT_MAX_TOKENS,
            max_steps: DEFAULT_MAX_STEPS,
            stream: true,
            placement: CatalogPlacement::System,
            catalog_budget: None,
            permissions: Permissions::Deny {
                reason: "writes and commands are not allowed in this session".into(),
            },
            skill_match: SkillMatch::Suggest,
            skill_index: None,
            first_message: None,
        }
    }
}

/// What happens during a turn, for the user interface.
#[derive(Debug, Clone, PartialEq)]
pub enum AgentEvent {
    /// Streamed answer text.
    Text(String),
    /// The model calls a tool.
    ToolCall {
        /// The call's id.
        id: String,
        /// The tool.
        name: String,
        /// Its arguments.
        input: Value,
    },
    /// A tool returned.
    ToolResult {
        /// The call's id.
        id: String,
        /// The tool.
        name: String,
        /// What it returned.
        content: String,
        /// Whether it failed.
        is_error: bool,
    },
    /// A request is retried.
    Retrying {
        /// The next attempt.
        attempt: u32,
        /// The wait before it.
        delay_ms: u64,
        /// Why.
        reason: String,
    },
    /// Something the user should know.
    Notice(String),
    /// One request's token counts.
    Usage(Usage),
}

/// How a turn ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnOutcome {
    /// The final answer's text.
    pub text: String,
    /// Model requests made.
    pub steps: usize,
}

/// What the main loop and subagents share: the provider, the fixed prompt and tools.
struct Core {
    provider: Provider,
    system: String,
    specs: Vec<ToolSpec>,
    tools: ToolTable,
    context: ToolContext,
    config: AgentConfig,
    gate: Arc<Gate>,
    usage: Arc<Mutex<Usage>>,
}

/// A session: the fixed prompt and tools, the append-only history, the usage so far.
pub struct Agent {
    core: Arc<Core>,
    history: Vec<Message>,
    /// Skills `auto` has loaded in this session.
    injected: std::collections::HashSet<String>,
    transcript: Option<Transcript>,
    header: SessionHeader,
    catalog_report: BudgetReport,
}

impl Agent {
    /// Starts a session: builds the catalog (within its budget), the system prompt and the
    /// tool definitions, once.
    pub fn new(provider: Provider, library: &Arc<Library>, config: &AgentConfig) -> Self {
        Self::build(provider, library, config, None, Vec::new())
    }

    /// Continues a session from its transcript: its system prompt and tools are used as they
    /// were sent, its history as it was.
    pub fn resume(
        provider: Provider,
        library: &Arc<Library>,
        config: &AgentConfig,
        header: SessionHeader,
        history: Vec<Message>,
    ) -> Self {
        Self::build(provider, library, config, Some(header), history)
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
        let mut catalog = render_catalog(library.skills(), CatalogFormat::List, budget);
        let total = library.model_invocable().count();
        // Too many skills for the catalog: list those closest to the first message (when known)
        // and offer search_skills for the rest.
        let search = !catalog.report.dropped.is_empty() && config.skill_index.is_some();
        if search
            && let (Some(index), Some(first)) = (&config.skill_index, &config.first_message)
            && let Ok((_, ranked)) = index.rank(
                first,
                skillet_retrieval::Mode::Hybrid,
                library.skills().len(),
            )
        {
            let mut ordered: Vec<&skillet_skills::Skill> =
                ranked.iter().map(|r| &library.skills()[r.index]).collect();
            let listed: std::collections::HashSet<&str> =
                ordered.iter().map(|s| s.name.as_str()).collect();
            ordered.extend(
                library
                    .skills()
                    .iter()
                    .filter(|s| !listed.contains(s.name.as_str())),
            );
            catalog = render_catalog(ordered, CatalogFormat::List, budget);
        }
        let mut system = system_prompt(&config.cwd, &catalog.text, config.placement, total);
        if search {
            let _ = write!(
                system,
                "\n\nThere are {total} skills; the list shows {} of them. Use search_skills to find the others by what they do.",
                catalog.listed
            );
        }
        let gate = Arc::new(Gate::new(config.permissions.clone()));
        let usage = Arc::new(Mutex::new(Usage::default()));
        let subagent_core = Arc::new(build_core(
            provider.clone(),
            system.clone(),
            library,
            &catalog.text,
            config,
            (None, search),
            Arc::clone(&gate),
            Arc::clone(&usage),
        ));
        let runner: Arc<dyn Subagent> = Arc::new(SubagentRunner {
            core: subagent_core,
        });
        let mut core = build_core(
            provider,
            system,
            library,
            &catalog.text,
            config,
            (Some(runner), search),
            gate,
            usage,
        );
        if let Some(header) = resumed {
            // A resumed session sends its prompt and tools byte for byte as before.
            core.system.clone_from(&header.system);
            core.specs.clone_from(&header.tools);
            return Self {
                core: Arc::new(core),
                history,
                injected: std::collections::HashSet::new(),
                transcript: None,
                header,
                catalog_report: catalog.report,
            };
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
        Self {
            core: Arc::new(core),
            history,
            injected: std::collections::HashSet::new(),
            transcript: None,
            header,
            catalog_report: catalog.report,
        }
    }

    /// Writes every later event to this transcript (a new session writes its header first).
    pub fn attach_transcript(&mut self, transcript: Transcript) {
        self.transcript = Some(transcript);
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

    /// The model's current plan.
    pub fn todos(&self) -> Vec<crate::tool::TodoItem> {
        self.core
            .context
            .todos
            .lock()
            .map(|todos| todos.clone())
            .unwrap_or_default()
    }

    /// Appends a user message (the text of a turn, or a skill invoked by hand) and runs the
    /// loop until the model answers without calling tools.
    pub async fn run_turn(
        &mut self,
        user_text: &str,
        events: &mut (dyn FnMut(AgentEvent) + Send),
    ) -> Result<TurnOutcome, AgentError> {
        let content = self.compose_user_message(user_text, events);
        let Self {
            core,
            history,
            transcript,
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
        let result = run_loop(core, history, events, &mut record).await;
        if let Err(error) = &result {
            record(TranscriptEvent::Error {
                message: error.to_string(),
            });
        }
        if let Some(failure) = failure {
            events(AgentEvent::Notice(format!(
                "{failure}; the transcript may be incomplete"
            )));
        }
        result
    }
}

impl Agent {
    /// The blocks of a new user message: the text, then (when skill matching is on) a note of
    /// the skills that fit and, for `auto`, the best one's Layer 2.
    fn compose_user_message(
        &mut self,
        user_text: &str,
        events: &mut (dyn FnMut(AgentEvent) + Send),
    ) -> Vec<ContentBlock> {
        let mut content = vec![ContentBlock::text(user_text)];
        let config = &self.core.config;
        let (Some(index), mode) = (&config.skill_index, config.skill_match) else {
            return content;
        };
        if mode == SkillMatch::Off {
            return content;
        }
        let ranked = match index.rank(user_text, skillet_retrieval::Mode::Hybrid, MAX_SUGGESTIONS) {
            Ok((_, ranked)) => ranked,
            Err(error) => {
                events(AgentEvent::Notice(format!(
                    "skill matching failed: {error}"
                )));
                return content;
            }
        };
        let library = &self.core.context.library;
        let relevant: Vec<_> = ranked
            .iter()
            .filter(|r| r.relevant)
            .filter_map(|r| library.get(index.name(r.index)).map(|skill| (r, skill)))
            .filter(|(_, skill)| skill.model_invocable())
            .collect();
        if relevant.is_empty() {
            return content;
        }
        let mut note = String::from(
            "<skill_suggestions>\nThese skills may fit this request; load one with load_skill if it does:\n",
        );
        for (_, skill) in &relevant {
            let description: String = skill.description.chars().take(200).collect();
            let _ = writeln!(note, "- {}: {description}", skill.name);
        }
        note.push_str("</skill_suggestions>");
        content.push(ContentBlock::text(note));
        let names: Vec<&str> = relevant.iter().map(|(_, s)| s.name.as_str()).collect();
        events(AgentEvent::Notice(format!(
            "suggested skills: {}",
            names.join(", ")
        )));
        if mode == SkillMatch::Auto
            && let Some((best, skill)) = relevant.first()
            && best.score >= AUTO_LOAD_SCORE
            && !self.injected.contains(&skill.name)
            && let Ok(body) = library.load(&skill.name, skillet_skills::Invoker::Model)
        {
            self.injected.insert(skill.name.clone());
            content.push(ContentBlock::text(body));
            events(AgentEvent::Notice(format!(
                "loaded skill {} for this request",
                skill.name
            )));
        }
        content
    }

    /// After a cancelled turn: answers calls left open with "cancelled" results (appended,
    /// like everything else), so the history stays valid for the next request.
    pub fn close_cancelled_turn(&mut self) {
        let Some(answer) = answer_open_calls(&self.history, "error: the user cancelled this call")
        else {
            return;
        };
        if let Some(transcript) = self.transcript.as_mut() {
            let _ = transcript.record(&TranscriptEvent::Message {
                message: answer.clone(),
            });
        }
        self.history.push(answer);
    }
}

/// The catalog budget for a model: 1% of its context window at 4 characters a token.
pub fn catalog_budget(model: &str) -> usize {
    let window = usize::try_from(context_window(model)).unwrap_or(usize::MAX);
    (window.saturating_mul(4) / 100).clamp(CATALOG_BUDGET_BOUNDS.0, CATALOG_BUDGET_BOUNDS.1)
}

#[expect(clippy::too_many_arguments, reason = "one private constructor")]
fn build_core(
    provider: Provider,
    system: String,
    library: &Arc<Library>,
    catalog: &str,
    config: &AgentConfig,
    (subagent, search): (Option<Arc<dyn Subagent>>, bool),
    gate: Arc<Gate>,
    usage: Arc<Mutex<Usage>>,
) -> Core {
    let tools = ToolTable::with(subagent.is_some(), search);
    let context = ToolContext {
        cwd: config.cwd.clone(),
        library: Arc::clone(library),
        catalog: catalog.to_string(),
        placement: config.placement,
        todos: Mutex::new(Vec::new()),
        subagent,
        skill_index: config.skill_index.clone(),
    };
    let specs = tools.specs(&context);
    Core {
        provider,
        system,
        specs,
        tools,
        context,
        config: config.clone(),
        gate,
        usage,
    }
}

/// Runs a subagent: a fresh history, the same tools except `task`, only the final text back.
struct SubagentRunner {
    core: Arc<Core>,
}

impl Subagent for SubagentRunner {
    fn run<'a>(&'a self, prompt: &'a str) -> BoxFuture<'a, Result<String, ToolError>> {
        Box::pin(async move {
            let mut history = vec![Message::user(prompt)];
            let mut ignore = |_: AgentEvent| {};
            let mut record = |_: TranscriptEvent| {};
            run_loop(&self.core, &mut history, &mut ignore, &mut record)
                .await
                .map(|outcome| outcome.text)
                .map_err(|error| ToolError::new(format!("the subagent failed: {error}")))
        })
    }
}

/// The loop of one turn.
async fn run_loop(
    core: &Core,
    history: &mut Vec<Message>,
    events: &mut (dyn FnMut(AgentEvent) + Send),
    record: &mut (dyn FnMut(TranscriptEvent) + Send),
) -> Result<TurnOutcome, AgentError> {
    let mut steps = 0;
    let mut continued = false;
    loop {
        if steps == core.config.max_steps {
            return Err(AgentError::StepLimit { steps });
        }
        steps += 1;
        let request = Request {
            system: &core.system,
            messages: history,
            tools: &core.specs,
            max_tokens: core.config.max_tokens,
            stream: core.config.stream,
        };
        let mut forward = |event: StreamEvent| match event {
            StreamEvent::TextDelta(text) => events(AgentEvent::Text(text)),
            StreamEvent::Retrying {
                attempt,
                delay_ms,
                reason,
            } => events(AgentEvent::Retrying {
                attempt,
                delay_ms,
                reason,
            }),
            StreamEvent::ToolUseStart { .. } => {}
        };
        let response = core.provider.send(request, &mut forward).await?;
        if let Ok(mut usage) = core.usage.lock() {
            usage.add(response.usage);
        }
        events(AgentEvent::Usage(response.usage));
        record(TranscriptEvent::Usage {
            usage: response.usage,
        });
        let message = response.message;
        let calls: Vec<(String, String, Value)> = message
            .tool_uses()
            .map(|(id, name, input)| (id.to_string(), name.to_string(), input.clone()))
            .collect();
        let text = message.text();
        if !core.config.stream && !text.is_empty() {
            // Nothing was streamed: show the answer whole.
            events(AgentEvent::Text(text.clone()));
        }
        if !message.content.is_empty() {
            record(TranscriptEvent::Message {
                message: message.clone(),
            });
            history.push(message);
        }
        if response.stop_reason == StopReason::MaxTokens {
            if continued {
                let notice = max_tokens_notice(core, "stopping the turn");
                events(AgentEvent::Notice(notice.clone()));
                record(TranscriptEvent::Notice { text: notice });
                return Ok(TurnOutcome { text, steps });
            }
            continued = true;
            let notice = max_tokens_notice(core, "asking it to continue once");
            events(AgentEvent::Notice(notice.clone()));
            record(TranscriptEvent::Notice { text: notice });
            append(history, record, cut_off_answer(&calls));
            continue;
        }
        if calls.is_empty() {
            return Ok(TurnOutcome { text, steps });
        }
        let results = run_calls(core, calls, events).await;
        append(history, record, results);
    }
}

fn max_tokens_notice(core: &Core, then: &str) -> String {
    format!(
        "the model reached its output limit (max_tokens {}); {then}",
        core.config.max_tokens
    )
}

/// What answers a cut-off answer: error results for its calls, or a request to go on.
fn cut_off_answer(calls: &[(String, String, Value)]) -> Vec<ContentBlock> {
    if calls.is_empty() {
        return vec![ContentBlock::text(
            "Your answer was cut off by the output limit. Continue exactly where you stopped.",
        )];
    }
    calls
        .iter()
        .map(|(id, ..)| ContentBlock::ToolResult {
            tool_use_id: id.clone(),
            content: "error: this call was cut off by the output limit and did not run; call it again with less content".into(),
            is_error: true,
        })
        .collect()
}

/// Runs the calls of one answer in order; their results, one to one.
async fn run_calls(
    core: &Core,
    calls: Vec<(String, String, Value)>,
    events: &mut (dyn FnMut(AgentEvent) + Send),
) -> Vec<ContentBlock> {
    let mut results = Vec::with_capacity(calls.len());
    for (id, name, input) in calls {
        events(AgentEvent::ToolCall {
            id: id.clone(),
            name: name.clone(),
            input: input.clone(),
        });
        let (content, is_error) = match execute(core, &name, &input).await {
            Ok(content) => (content, false),
            Err(error) => (format!("error: {error}"), true),
        };
        events(AgentEvent::ToolResult {
            id: id.clone(),
            name,
            content: content.clone(),
            is_error,
        });
        results.push(ContentBlock::ToolResult {
            tool_use_id: id,
            content,
            is_error,
        });
    }
    results
}

/// Appends a user message of these blocks and records it.
fn append(
    history: &mut Vec<Message>,
    record: &mut (dyn FnMut(TranscriptEvent) + Send),
    content: Vec<ContentBlock>,
) {
    let message = Message {
        role: Role::User,
        content,
    };
    record(TranscriptEvent::Message {
        message: message.clone(),
    });
    history.push(message);
}

/// Runs one tool call, after the permission check.
async fn execute(core: &Core, name: &str, input: &Value) -> Result<String, ToolError> {
    let Some(tool) = core.tools.get(name) else {
        let names: Vec<&str> = core.specs.iter().map(|spec| spec.name.as_str()).collect();
        return Err(ToolError::new(format!(
            "unknown tool '{name}'; the tools are: {}",
            names.join(", ")
        )));
    };
    if !input.is_object() {
        return Err(ToolError::new("the arguments must be a JSON object"));
    }
    let kind = tool.kind();
    if kind != ToolKind::Read {
        let summary = match kind {
            ToolKind::Execute => input.get("command").and_then(Value::as_str),
            _ => input.get("path").and_then(Value::as_str),
        }
        .unwrap_or_default()
        .to_string();
        core.gate
            .check(&ApprovalRequest {
                tool: name.to_string(),
                kind,
                summary,
            })
            .map_err(ToolError::new)?;
    }
    tool.call(input, &core.context).await
}

/// The first [`PREVIEW_CHARS`] characters of a result, on one line.
pub fn preview(content: &str) -> String {
    let one_line: String = content.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() > PREVIEW_CHARS {
        let cut: String = one_line.chars().take(PREVIEW_CHARS).collect();
        format!("{cut}…")
    } else {
        one_line
    }
}
