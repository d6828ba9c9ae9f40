//! One turn: send, stream the answer, run every tool call of the answer in order, answer them
//! one to one in a single message, repeat until the model stops calling tools.
//!
//! The history the providers receive stays valid by construction: every call of an answer is
//! answered in the next message, in order (calls that did not run, because the output limit cut
//! them or their arguments are not JSON, are answered with an error the model can act on); no
//! empty message or text block is appended; nothing appended is changed later. Results of calls
//! that finished are kept in [`Pending`] as they come, so a cancelled turn answers those with
//! what they really returned. `skillet_llm` checks the same rules before every request.

use serde_json::Value;
use skillet_llm::{ContentBlock, Message, Role, StopReason, StreamEvent};

use crate::error::AgentError;
use crate::event::{AgentEvent, TurnOutcome};
use crate::state::Core;
use crate::tool::{BoxFuture, Subagent, ToolError};
use crate::transcript::TranscriptEvent;

/// What a call cut by the output limit is answered with.
pub const CUT_CALL: &str = "error: the output limit cut this call off before its arguments were complete, so it did not run; call it again with less content (write a large file in smaller pieces, e.g. write_file then edit_file)";
/// What a cut answer without calls is followed by.
pub const CONTINUE: &str =
    "Your answer was cut off by the output limit. Continue exactly where you stopped.";
/// What a call left open by a cancelled turn is answered with.
pub const CANCELLED_CALL: &str = "error: the user cancelled the turn before this call ran";
/// What the call running when the turn was cancelled is answered with.
pub const INTERRUPTED_CALL: &str = "error: the user cancelled the turn while this call ran; it was stopped and may have done part of its work, so check its effects before running it again";

/// The results of the calls of the latest answer that have finished, in order.
#[derive(Debug, Default)]
pub struct Pending {
    results: Vec<ContentBlock>,
    /// The call running now, if any.
    running: Option<String>,
}

impl Pending {
    /// Answers every call of `answer`: finished ones with their results, the rest with `why`.
    /// `None` when the answer has no calls.
    /// The call running when the turn stopped gets [`INTERRUPTED_CALL`] instead.
    pub fn close(&mut self, answer: &Message, why: &str) -> Option<Message> {
        let done = std::mem::take(&mut self.results);
        let running = self.running.take();
        let content: Vec<ContentBlock> = answer
            .tool_uses()
            .map(|(id, _, _)| {
                done.iter()
                    .find(|result| {
                        matches!(result, ContentBlock::ToolResult { tool_use_id, .. } if tool_use_id == id)
                    })
                    .cloned()
                    .unwrap_or_else(|| ContentBlock::ToolResult {
                        tool_use_id: id.to_string(),
                        content: if running.as_deref() == Some(id) {
                            INTERRUPTED_CALL
                        } else {
                            why
                        }
                        .to_string(),
                        is_error: true,
                    })
            })
            .collect();
        (!content.is_empty()).then_some(Message {
            role: Role::User,
            content,
        })
    }
}

tokio::task_local! {
    /// Where a subagent started by the current call sends what it does.
    static CALL_SINK: CallSink;
}

/// A subagent's event, on its way to the parent's interface and transcript.
enum SubEvent {
    Event(AgentEvent),
    Record(TranscriptEvent),
}

#[derive(Clone)]
struct CallSink(tokio::sync::mpsc::UnboundedSender<SubEvent>);

/// The loop of one turn.
pub(crate) async fn run_loop(
    core: &Core,
    history: &mut Vec<Message>,
    pending: &mut Pending,
    events: &mut (dyn FnMut(AgentEvent) + Send),
    record: &mut (dyn FnMut(TranscriptEvent) + Send),
) -> Result<TurnOutcome, AgentError> {
    let mut stop_count = Some(0);
    run_loop_on(
        core,
        &core.provider,
        (history, pending, &mut stop_count),
        events,
        record,
    )
    .await
}

/// [`run_loop`] with the requests sent through `provider` (a forked skill's own model, a
/// subagent's); `stop_count` counts the times `Stop` hooks sent the turn on (`None`: they do not run,
/// as for a subagent).
async fn run_loop_on(
    core: &Core,
    provider: &skillet_llm::Provider,
    (history, pending, stop_count): (&mut Vec<Message>, &mut Pending, &mut Option<usize>),
    events: &mut (dyn FnMut(AgentEvent) + Send),
    record: &mut (dyn FnMut(TranscriptEvent) + Send),
) -> Result<TurnOutcome, AgentError> {
    let mut steps = 0;
    let mut cut_before = false;
    loop {
        if steps == core.config.max_steps {
            return Err(AgentError::StepLimit { steps });
        }
        steps += 1;
        let request = skillet_llm::Request {
            system: &core.system,
            messages: history,
            tools: &core.specs,
            max_tokens: core.config.max_tokens,
            stream: core.config.stream,
            thinking: core.config.thinking,
        };
        let mut forward = |event: StreamEvent| {
            if let Some(event) = shown(event) {
                events(event);
            }
        };
        let response = provider.send(request, &mut forward).await?;
        count(core, response.usage);
        events(AgentEvent::Usage(response.usage));
        record(TranscriptEvent::Usage {
            usage: response.usage,
        });
        let mut message = response.message;
        thinking_apart(&mut message, core.config.stream, events);
        // Blank text blocks were dropped by the provider layer (`skillet_llm`'s answer).
        let renamed = unique_call_ids(&mut message, history);
        let text = message.text();
        if !core.config.stream && !text.is_empty() {
            // Nothing was streamed: show the answer whole.
            events(AgentEvent::Text(text.clone()));
        }
        if message.content.is_empty() {
            // Nothing to append (an empty answer): the turn ends here, and the user is told
            // why nothing was shown. The history stays valid: the next user message follows
            // this one.
            let notice = empty_answer_notice(&response.stop_reason);
            events(AgentEvent::Notice(notice.clone()));
            record(TranscriptEvent::Notice { text: notice });
            return Ok(TurnOutcome { text, steps });
        }
        let answer = message.clone();
        record(TranscriptEvent::Message { message });
        history.push(answer.clone());
        if response.stop_reason == StopReason::MaxTokens {
            let then = if cut_before {
                "stopping the turn"
            } else {
                "asking it to continue once"
            };
            let limit = match core.config.thinking {
                Some(budget) => format!(
                    "max_tokens {} with thinking's {budget}",
                    core.config.max_tokens
                ),
                None => format!("max_tokens {}", core.config.max_tokens),
            };
            let notice = format!("the model reached its output limit ({limit}); {then}");
            events(AgentEvent::Notice(notice.clone()));
            record(TranscriptEvent::Notice { text: notice });
            // Calls of a cut answer never run: their arguments may be incomplete.
            if let Some(results) = Pending::default().close(&answer, CUT_CALL) {
                append(history, record, results.content);
            } else if !cut_before {
                append(history, record, vec![ContentBlock::text(CONTINUE)]);
            }
            if cut_before {
                return Ok(TurnOutcome { text, steps });
            }
            cut_before = true;
            continue;
        }
        if answer.tool_uses().next().is_none() {
            if sent_on_by_stop_hook(core, stop_count, history, events, record).await {
                continue;
            }
            return Ok(TurnOutcome { text, steps });
        }
        let malformed: Vec<(String, String)> = response
            .malformed_calls
            .iter()
            .map(|call| {
                let id = renamed
                    .iter()
                    .find(|(old, _)| *old == call.id)
                    .map_or_else(|| call.id.clone(), |(_, new)| new.clone());
                (id, call.error.clone())
            })
            .collect();
        run_calls(core, &answer, &malformed, pending, events, record).await;
        if let Some(results) = pending.close(&answer, CANCELLED_CALL) {
            append(history, record, results.content);
        }
        // Stopped at an approval prompt: every call is answered, and no request follows.
        if core.context.gate.stopped() {
            return Err(AgentError::Cancelled);
        }
    }
}

/// What the interface is told of a streamed event.
fn shown(event: StreamEvent) -> Option<AgentEvent> {
    match event {
        StreamEvent::TextDelta(text) => Some(AgentEvent::Text(text)),
        StreamEvent::ThinkingDelta(text) => Some(AgentEvent::Thinking(text)),
        StreamEvent::Retrying {
            attempt,
            delay_ms,
            reason,
        } => Some(AgentEvent::Retrying {
            attempt,
            delay_ms,
            reason,
        }),
        StreamEvent::ToolUseStart { .. } => None,
    }
}

/// Shows an answer's thinking when it was not streamed (nothing was shown yet), and empties
/// an answer of thinking alone: thinking and no answer is no answer, and is not kept.
fn thinking_apart(
    message: &mut Message,
    streamed: bool,
    events: &mut (dyn FnMut(AgentEvent) + Send),
) {
    if !streamed {
        for block in &message.content {
            if let ContentBlock::Thinking { thinking, .. } = block
                && !thinking.is_empty()
            {
                events(AgentEvent::Thinking(thinking.clone()));
            }
        }
    }
    if message.content.iter().all(ContentBlock::is_thinking) {
        message.content.clear();
    }
}

/// Gives the calls of a new answer ids the APIs accept: only `[A-Za-z0-9_-]`, none empty, none
/// used before in the session or twice in the answer (some servers number calls `call_0` on
/// every answer; one repeated id would make every later request fail). Returns the renamings
/// (old, new). The answer has not been sent back yet, so nothing sent is edited.
fn unique_call_ids(message: &mut Message, history: &[Message]) -> Vec<(String, String)> {
    let mut used: std::collections::HashSet<String> = history
        .iter()
        .flat_map(Message::tool_uses)
        .map(|(id, ..)| id.to_string())
        .collect();
    let mut renamed = Vec::new();
    for block in &mut message.content {
        let ContentBlock::ToolUse { id, .. } = block else {
            continue;
        };
        let mut clean: String = id
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        if clean.is_empty() {
            clean = "call".to_string();
        }
        let mut candidate = clean.clone();
        let mut n = 2;
        while used.contains(&candidate) {
            candidate = format!("{clean}_{n}");
            n += 1;
        }
        used.insert(candidate.clone());
        if candidate != *id {
            renamed.push((std::mem::replace(id, candidate.clone()), candidate));
        }
    }
    renamed
}

/// Adds a request's usage to the session's, and keeps its size: how full the context window is.
fn count(core: &Core, used: skillet_llm::Usage) {
    core.last_context_tokens.store(
        used.input_tokens + used.cache_read_tokens + used.cache_write_tokens + used.output_tokens,
        std::sync::atomic::Ordering::SeqCst,
    );
    if let Ok(mut usage) = core.usage.lock() {
        usage.add(used);
    }
}

/// Runs the calls of one answer in order, keeping each result in `pending` as it finishes.
async fn run_calls(
    core: &Core,
    answer: &Message,
    malformed: &[(String, String)],
    pending: &mut Pending,
    events: &mut (dyn FnMut(AgentEvent) + Send),
    record: &mut (dyn FnMut(TranscriptEvent) + Send),
) {
    for (id, name, input) in answer.tool_uses() {
        // The user stopped the turn: the calls after that one do not run (they are answered
        // as cancelled).
        if core.context.gate.stopped() {
            break;
        }
        events(AgentEvent::ToolCall {
            id: id.to_string(),
            name: name.to_string(),
            input: input.clone(),
        });
        pending.running = Some(id.to_string());
        let outcome = match malformed.iter().find(|(bad, _)| bad == id) {
            Some((_, error)) => Err(ToolError::new(format!(
                "{error}; the call did not run. Call it again with complete JSON arguments (write large content in smaller pieces)"
            ))),
            None => run_scoped(core, id, name, input, events, record).await,
        };
        pending.running = None;
        let (mut content, is_error) = match outcome {
            Ok(content) => (content, false),
            Err(error) => (format!("error: {error}"), true),
        };
        if let Some(why) = post_tool_hook(
            core,
            (id, name, input),
            (&content, is_error),
            events,
            record,
        )
        .await
        {
            content = format!(
                "{content}\n\nA PostToolUse hook said:\n{}",
                crate::hooks::quoted(crate::hooks::HookEvent::PostToolUse, &why)
            );
        }
        events(AgentEvent::ToolResult {
            id: id.to_string(),
            name: name.to_string(),
            content: content.clone(),
            is_error,
        });
        pending.results.push(ContentBlock::ToolResult {
            tool_use_id: id.to_string(),
            content,
            is_error,
        });
        if !is_error
            && let Some(notice) = crate::tools::load_skill::audit_notice(core, name, input).await
        {
            events(AgentEvent::Notice(notice.clone()));
            record(TranscriptEvent::Notice { text: notice });
        }
        for notice in core.context.notices.take() {
            events(AgentEvent::Notice(notice.clone()));
            record(TranscriptEvent::Notice { text: notice });
        }
    }
}

/// Runs one call; what a subagent it starts does is passed on as the subagent's, marked with
/// the call's id.
async fn run_scoped(
    core: &Core,
    id: &str,
    name: &str,
    input: &Value,
    events: &mut (dyn FnMut(AgentEvent) + Send),
    record: &mut (dyn FnMut(TranscriptEvent) + Send),
) -> Result<String, ToolError> {
    with_sink(id, execute(core, id, name, input), events, record).await
}

/// Tells the user what hooks said (failures, their messages), and records it.
fn hook_notes(
    notes: Vec<String>,
    events: &mut (dyn FnMut(AgentEvent) + Send),
    record: &mut (dyn FnMut(TranscriptEvent) + Send),
) {
    for note in notes {
        events(AgentEvent::Notice(note.clone()));
        record(TranscriptEvent::Notice { text: note });
    }
}

/// The `PostToolUse` hooks of a call that ran: what they add to its result, when they block.
async fn post_tool_hook(
    core: &Core,
    (id, name, input): (&str, &str, &Value),
    (content, is_error): (&str, bool),
    events: &mut (dyn FnMut(AgentEvent) + Send),
    record: &mut (dyn FnMut(TranscriptEvent) + Send),
) -> Option<String> {
    if core.context.hooks.is_empty() {
        return None;
    }
    let (tool, tool_input) = crate::hooks::claude_code_tool(name, input);
    let decision = crate::hooks::run(
        &core.context,
        crate::hooks::HookEvent::PostToolUse,
        Some(&tool),
        serde_json::json!({
            "tool_name": tool,
            "tool_input": tool_input,
            "tool_use_id": id,
            "tool_response": {"content": content, "is_error": is_error},
        }),
    )
    .await;
    hook_notes(decision.notes, events, record);
    decision.block
}

/// The `Stop` hooks when the model ends its turn (`stop_count` times sent on already; `None`:
/// none run): whether one blocked the end, in which case its reason is sent to the model and
/// the turn goes on (at most [`crate::hooks::MAX_STOP_CONTINUATIONS`] times).
async fn sent_on_by_stop_hook(
    core: &Core,
    stop_count: &mut Option<usize>,
    history: &mut Vec<Message>,
    events: &mut (dyn FnMut(AgentEvent) + Send),
    record: &mut (dyn FnMut(TranscriptEvent) + Send),
) -> bool {
    let Some(count) = stop_count.as_mut() else {
        return false;
    };
    let Some(why) = stop_hook(core, *count, events, record).await else {
        return false;
    };
    *count += 1;
    append(
        history,
        record,
        vec![ContentBlock::text(format!(
            "A Stop hook did not let the turn end; what it said:\n{}",
            crate::hooks::quoted(crate::hooks::HookEvent::Stop, &why)
        ))],
    );
    true
}

/// The `Stop` hooks when the model ends its turn (`count` times sent on already): why the turn
/// goes on, when one blocks and [`crate::hooks::MAX_STOP_CONTINUATIONS`] is not reached.
async fn stop_hook(
    core: &Core,
    count: usize,
    events: &mut (dyn FnMut(AgentEvent) + Send),
    record: &mut (dyn FnMut(TranscriptEvent) + Send),
) -> Option<String> {
    if core.context.hooks.is_empty() {
        return None;
    }
    let decision = crate::hooks::run(
        &core.context,
        crate::hooks::HookEvent::Stop,
        None,
        serde_json::json!({"stop_hook_active": count > 0}),
    )
    .await;
    hook_notes(decision.notes, events, record);
    let why = decision.block?;
    if count >= crate::hooks::MAX_STOP_CONTINUATIONS {
        let note = format!(
            "a Stop hook blocked the turn's end {} times; it ends now: {why}",
            count + 1
        );
        hook_notes(vec![note], events, record);
        return None;
    }
    hook_notes(
        vec![format!("a Stop hook sent the turn on: {why}")],
        events,
        record,
    );
    Some(why)
}

/// Runs `work`; what a subagent it starts does is passed on as the subagent's, marked with
/// `id`: to the interface, and to the transcript.
pub(crate) async fn with_sink<T>(
    id: &str,
    work: impl std::future::Future<Output = T>,
    events: &mut (dyn FnMut(AgentEvent) + Send),
    record: &mut (dyn FnMut(TranscriptEvent) + Send),
) -> T {
    let (sender, mut receiver) = tokio::sync::mpsc::unbounded_channel();
    let call = CALL_SINK.scope(CallSink(sender), work);
    tokio::pin!(call);
    let mut pass_on = |event: SubEvent| match event {
        SubEvent::Event(event) => events(AgentEvent::Subagent {
            call_id: id.to_string(),
            event: Box::new(event),
        }),
        SubEvent::Record(event) => record(TranscriptEvent::Subagent {
            call_id: id.to_string(),
            event: Box::new(event),
        }),
    };
    let result = loop {
        tokio::select! {
            result = &mut call => break result,
            Some(event) = receiver.recv() => pass_on(event),
        }
    };
    while let Ok(event) = receiver.try_recv() {
        pass_on(event);
    }
    result
}

/// Appends a user message of these blocks and records it.
pub(crate) fn append(
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

/// Runs one tool call. Tools that write or run ask the gate themselves, once they know what
/// they will do.
async fn execute(core: &Core, id: &str, name: &str, input: &Value) -> Result<String, ToolError> {
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
    if let Some(refusal) = core.context.gate.refusal(name, input) {
        return Err(ToolError::new(refusal));
    }
    if !core.context.hooks.is_empty() {
        let (tool_name, tool_input) = crate::hooks::claude_code_tool(name, input);
        let decision = crate::hooks::run(
            &core.context,
            crate::hooks::HookEvent::PreToolUse,
            Some(&tool_name),
            serde_json::json!({"tool_name": tool_name, "tool_input": tool_input, "tool_use_id": id}),
        )
        .await;
        for note in decision.notes {
            core.context.notices.push(note);
        }
        if let Some(why) = decision.block {
            return Err(ToolError::new(format!(
                "a PreToolUse hook refused this call:\n{}",
                crate::hooks::quoted(crate::hooks::HookEvent::PreToolUse, &why)
            )));
        }
    }
    tool.call(input, &core.context).await
}

/// Runs a subagent: a fresh history, the same tools except `task`, only the final text back.
/// What it does goes to the parent's interface and transcript, marked as the subagent's.
pub(crate) struct SubagentRunner {
    pub(crate) core: std::sync::Arc<Core>,
}

impl Subagent for SubagentRunner {
    fn set_model(&mut self, model: &str) {
        if let Some(core) = std::sync::Arc::get_mut(&mut self.core) {
            core.provider.set_model(model);
        }
    }

    fn set_thinking(&mut self, budget: Option<u32>) {
        if let Some(core) = std::sync::Arc::get_mut(&mut self.core) {
            core.config.thinking = budget;
        }
    }

    fn run<'a>(&'a self, prompt: &'a str) -> BoxFuture<'a, Result<String, ToolError>> {
        self.run_on(prompt, None)
    }

    fn run_on<'a>(
        &'a self,
        prompt: &'a str,
        model: Option<&'a str>,
    ) -> BoxFuture<'a, Result<String, ToolError>> {
        Box::pin(async move {
            let mut provider = self.core.provider.clone();
            if let Some(model) = crate::invoke::fork_model(provider.kind(), model) {
                provider.set_model(&model);
            }
            if prompt.trim().is_empty() {
                return Err(ToolError::new(
                    "the prompt is empty; say what the subagent should do",
                ));
            }
            let sink = CALL_SINK.try_with(Clone::clone).ok();
            let send = |event: SubEvent| {
                if let Some(CallSink(sender)) = &sink {
                    let _ = sender.send(event);
                }
            };
            let mut events = |event: AgentEvent| send(SubEvent::Event(event));
            let mut record = |event: TranscriptEvent| send(SubEvent::Record(event));
            let mut history = Vec::new();
            append(&mut history, &mut record, vec![ContentBlock::text(prompt)]);
            let mut pending = Pending::default();
            let result = run_loop_on(
                &self.core,
                &provider,
                (&mut history, &mut pending, &mut None),
                &mut events,
                &mut record,
            )
            .await;
            if let Err(error) = &result {
                record(TranscriptEvent::Error {
                    message: error.to_string(),
                });
            }
            result
                .map(|outcome| outcome.text)
                .map_err(|error| ToolError::new(format!("the subagent failed: {error}")))
        })
    }
}

/// What the user is told when the model answers with nothing at all.
fn empty_answer_notice(stop: &StopReason) -> String {
    let reason = match stop {
        StopReason::EndTurn => "end of turn",
        StopReason::ToolUse => "tool use",
        StopReason::MaxTokens => "output limit",
        StopReason::StopSequence => "stop sequence",
        StopReason::Other(other) => other.as_str(),
    };
    format!("the model sent an empty answer (no text, no tool calls; stop reason: {reason})")
}
