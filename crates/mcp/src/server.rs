//! The MCP handler: initialize (capabilities, instructions), tools, prompts, resources and the
//! Skills extension, each answered from the snapshot current when the request arrives. Work
//! that reads files or embeds a query runs on a blocking thread, so one slow request does not
//! hold the others.

use rmcp::model::SubscriptionFilter;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, GetPromptRequestParams, GetPromptResponse,
    GetPromptResult, GetSkillRequestParams, GetSkillResult, Implementation, JsonObject,
    ListPromptsResult, ListResourcesResult, ListSkillsResult, ListToolsResult,
    PaginatedRequestParams, Prompt, PromptArgument, PromptMessage, ReadResourceRequestParams,
    ReadResourceResponse, Role, ServerCapabilities, ServerConfig,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::Value;
use skillet_skills::Invoker;

use crate::state::{Changes, Shared, Snapshot};
use crate::{manifest, resources, tools};

/// Prompts per `prompts/list` page.
pub const PROMPT_PAGE: usize = 200;
/// The prompt argument holding the arguments as typed after `/name`.
const ARGUMENTS: &str = "arguments";

/// The names a skill declares for its arguments (its frontmatter's `arguments` list), in order,
/// as prompt arguments (one named like the catch-all is left to it).
fn declared(skill: &skillet_skills::Skill) -> impl Iterator<Item = &str> {
    skill
        .frontmatter
        .arguments
        .iter()
        .map(String::as_str)
        .filter(|name| *name != ARGUMENTS)
}

/// A prompt argument's value as text (clients send strings; anything else is taken as JSON).
fn value_text(value: &Value) -> String {
    match value {
        Value::Null => String::new(),
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// The argument text a prompt's arguments make, as if typed after `/name`: each declared
/// argument given, in its place, quoted as one word (an empty one for a name left out before
/// a given one), then the `arguments` text.
fn argument_text(skill: &skillet_skills::Skill, given: &JsonObject) -> String {
    let names: Vec<&str> = declared(skill).collect();
    let last = names
        .iter()
        .rposition(|name| given.get(*name).is_some_and(|value| !value.is_null()));
    let mut words: Vec<String> = names
        .iter()
        .take(last.map_or(0, |last| last + 1))
        .map(|name| {
            let value = given.get(*name).map(value_text).unwrap_or_default();
            format!("'{}'", value.replace('\'', "'\\''"))
        })
        .collect();
    if let Some(rest) = given
        .get(ARGUMENTS)
        .map(value_text)
        .filter(|rest| !rest.is_empty())
    {
        words.push(rest);
    }
    words.join(" ")
}

/// One client's view of the server (every session shares the state).
#[derive(Clone)]
pub struct SkilletServer {
    shared: Shared,
}

impl SkilletServer {
    /// A handler over the shared state.
    pub fn new(shared: Shared) -> Self {
        Self { shared }
    }
}

/// The most `resources/read` calls being read at once; more wait their turn.
pub const MAX_READS_IN_FLIGHT: usize = 4;

/// The permits for [`MAX_READS_IN_FLIGHT`], shared by every session of the process.
static READS_IN_FLIGHT: tokio::sync::Semaphore =
    tokio::sync::Semaphore::const_new(MAX_READS_IN_FLIGHT);

/// Runs `work` on the snapshot on a blocking thread.
pub(crate) async fn blocking<T: Send + 'static>(
    shared: &Shared,
    work: impl FnOnce(&Snapshot) -> T + Send + 'static,
) -> Result<T, McpError> {
    let snapshot = shared.snapshot();
    tokio::task::spawn_blocking(move || work(&snapshot))
        .await
        .map_err(|error| McpError::internal_error(format!("the request failed: {error}"), None))
}

/// A cursor this server gave, as a number; -32602 for anything else.
fn numeric_cursor(request: Option<&PaginatedRequestParams>) -> Result<usize, McpError> {
    match request.and_then(|request| request.cursor.as_deref()) {
        None => Ok(0),
        Some(cursor) => cursor
            .parse()
            .map_err(|_| McpError::invalid_params("unknown cursor", None)),
    }
}

impl ServerHandler for SkilletServer {
    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        self.shared.add_peer(context.peer);
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(requested.clone())
    }

    /// A 2026-07-28 session's stream of list changes, until the client cancels it.
    async fn listen(&self, context: SubscriptionContext) -> Result<(), McpError> {
        let mut changes = self.shared.subscribe();
        let accepted = context.accepted().clone();
        loop {
            let changes = tokio::select! {
                () = context.cancelled() => return Ok(()),
                received = changes.recv() => match received {
                    Ok(changes) => changes,
                    // Fell behind: lists are read whole, so say everything changed.
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => Changes {
                        tools: true,
                        prompts: true,
                        resources: true,
                    },
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => return Ok(()),
                },
            };
            let sink = context.sink();
            let sent = async {
                if changes.tools && accepted.tools_list_changed == Some(true) {
                    sink.notify_tool_list_changed().await?;
                }
                if changes.prompts && accepted.prompts_list_changed == Some(true) {
                    sink.notify_prompt_list_changed().await?;
                }
                if changes.resources && accepted.resources_list_changed == Some(true) {
                    sink.notify_resource_list_changed().await?;
                }
                Ok::<(), rmcp::service::SubscriptionSendError>(())
            };
            if sent.await.is_err() {
                return Ok(());
            }
        }
    }

    fn get_info(&self) -> ServerConfig {
        let snapshot = self.shared.snapshot();
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .enable_prompts()
            .enable_prompts_list_changed()
            .enable_resources()
            .enable_resources_list_changed()
            .enable_skills()
            .build();
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("skillet", env!("CARGO_PKG_VERSION")))
            .with_instructions(crate::instructions::instructions(
                &snapshot.library,
                self.shared.source().map(|source| source.label()),
            ))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(tools::list(
            &self.shared.snapshot(),
            self.shared.source_view().as_ref(),
        )))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let name = request.name.to_string();
        crate::log_at(
            crate::LogLevel::Debug,
            &format!("tools/call {}", tools::echoed(&name)),
        );
        if !tools::exists(&name) {
            return Err(McpError::invalid_params(
                format!("unknown tool '{}'", tools::echoed(&name)),
                None,
            ));
        }
        let arguments = request.arguments.unwrap_or_default();
        if name == "search_skills" {
            // The first search of a warm start ranks as every later one.
            self.shared.ranking_settled().await;
        }
        if let Some(source) = self.shared.source()
            && let Some(result) = crate::remote::call(&self.shared, source, &name, &arguments).await
        {
            return result.map(CallToolResponse::from);
        }
        blocking(&self.shared, move |snapshot| {
            tools::call(snapshot, &name, &arguments)
        })
        .await
        .map(CallToolResponse::from)
    }

    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        let start = numeric_cursor(request.as_ref())?;
        let snapshot = self.shared.snapshot();
        let invocable: Vec<_> = snapshot
            .library
            .skills()
            .iter()
            .filter(|skill| skill.user_invocable())
            .collect();
        if start > invocable.len() {
            return Err(McpError::invalid_params("unknown cursor", None));
        }
        let page: Vec<Prompt> = invocable
            .iter()
            .skip(start)
            .take(PROMPT_PAGE)
            .map(|skill| {
                let hint = skill.frontmatter.argument_hint.clone().unwrap_or_else(|| {
                    "what the skill is for, as you would type it after /name".to_string()
                });
                // Each name the skill declares for its arguments, then the text as typed.
                let mut arguments: Vec<PromptArgument> = declared(skill)
                    .enumerate()
                    .map(|(position, name)| {
                        PromptArgument::new(name)
                            .with_description(format!("argument {position} of the skill (${name})"))
                            .with_required(false)
                    })
                    .collect();
                arguments.push(
                    PromptArgument::new(ARGUMENTS)
                        .with_description(hint)
                        .with_required(false),
                );
                Prompt::new(
                    skill.name.clone(),
                    Some(skill.description.clone()),
                    Some(arguments),
                )
            })
            .collect();
        let end = start.saturating_add(page.len());
        let mut result = ListPromptsResult::with_all_items(page);
        if end < invocable.len() {
            result.next_cursor = Some(end.to_string());
        }
        Ok(result)
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        let given = request.arguments.unwrap_or_default();
        let name = request.name;
        blocking(&self.shared, move |snapshot| {
            let library = &snapshot.library;
            let skill = library
                .get(&name)
                .filter(|skill| skill.user_invocable())
                .ok_or_else(|| {
                    McpError::invalid_params(format!("no prompt '{}'", tools::echoed(&name)), None)
                })?;
            let arguments = argument_text(skill, &given);
            let text = library
                .load_with(&skill.name, Invoker::User, Some(&arguments))
                .map_err(|error| McpError::internal_error(error.to_string(), None))?;
            Ok(
                GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)])
                    .with_description(skill.description.clone()),
            )
        })
        .await?
        .map(GetPromptResponse::from)
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        let start = match request.as_ref().and_then(|r| r.cursor.as_deref()) {
            None => None,
            Some(cursor) => Some(
                resources::Position::parse(cursor)
                    .ok_or_else(|| McpError::invalid_params("unknown cursor", None))?,
            ),
        };
        let (page, next) = blocking(&self.shared, move |snapshot| {
            resources::page(&snapshot.library, start)
                .ok_or_else(|| McpError::invalid_params("unknown cursor", None))
        })
        .await??;
        let mut result = ListResourcesResult::with_all_items(page);
        result.next_cursor = next.map(resources::Position::cursor);
        Ok(result)
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        // At most MAX_READS_IN_FLIGHT files (each up to 20 MiB, and its base64) are read and
        // encoded at once, whatever a client asks for in parallel.
        let _permit = READS_IN_FLIGHT
            .acquire()
            .await
            .map_err(|error| McpError::internal_error(error.to_string(), None))?;
        blocking(&self.shared, move |snapshot| {
            resources::read(&snapshot.library, &request.uri, || {
                manifest::exclusions(snapshot)
            })
        })
        .await?
        .map(ReadResourceResponse::from)
    }

    async fn list_skills(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListSkillsResult, McpError> {
        let start = numeric_cursor(request.as_ref())?;
        let (skills, next) = blocking(&self.shared, move |snapshot| {
            manifest::page(snapshot, start)
                .ok_or_else(|| McpError::invalid_params("unknown cursor", None))
        })
        .await??;
        let mut result = ListSkillsResult::with_all_items(skills);
        result.next_cursor = next.map(|next| next.to_string());
        Ok(result)
    }

    async fn get_skill(
        &self,
        request: GetSkillRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetSkillResult, McpError> {
        let uri = request.uri;
        blocking(&self.shared, move |snapshot| {
            manifest::get(snapshot, &uri).ok_or_else(|| {
                McpError::invalid_params(
                    format!(
                        "no skill at {} (or the extension cannot carry it: see skill://diagnostics)",
                        tools::echoed(&uri)
                    ),
                    None,
                )
            })
        })
        .await?
        .map(GetSkillResult::new)
    }
}
