//! `task {description, prompt}`: a subagent with a fresh history and the same tools except
//! `task`; only its final text comes back.

use serde_json::{Value, json};

use crate::tool::{BoxFuture, Tool, ToolContext, ToolError, ToolKind, string_arg};

/// Runs a subagent.
pub struct Task;

impl Tool for Task {
    fn name(&self) -> &'static str {
        "task"
    }

    fn description(&self, _context: &ToolContext) -> String {
        "Hand a self-contained piece of work to a subagent: it starts with a fresh history and \
         the same tools (except task), and returns only its final answer. Use it for searches \
         or investigations whose details you do not need to keep. Say everything it needs in \
         the prompt."
            .to_string()
    }

    fn input_schema(&self, _context: &ToolContext) -> Value {
        json!({"type": "object", "properties": {
            "description": {"type": "string", "description": "A few words saying what the subagent does"},
            "prompt": {"type": "string", "description": "The whole task for the subagent"}
        }, "required": ["description", "prompt"]})
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Read
    }

    fn call<'a>(
        &'a self,
        input: &'a Value,
        context: &'a ToolContext,
    ) -> BoxFuture<'a, Result<String, ToolError>> {
        Box::pin(async move {
            let prompt = string_arg(input, "prompt")?;
            let subagent = context
                .subagent
                .as_ref()
                .ok_or_else(|| ToolError::new("subagents are not available here"))?;
            subagent.run(prompt).await
        })
    }
}
