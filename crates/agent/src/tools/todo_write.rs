//! `todo_write {items}`: the model's visible plan.

use std::fmt::Write as _;

use serde_json::{Value, json};

use crate::tool::{BoxFuture, TodoItem, Tool, ToolContext, ToolError, ToolKind};

/// The statuses a step may have.
pub const STATUSES: [&str; 3] = ["pending", "in_progress", "done"];

/// Sets the plan.
pub struct TodoWrite;

impl Tool for TodoWrite {
    fn name(&self) -> &'static str {
        "todo_write"
    }

    fn description(&self, _context: &ToolContext) -> String {
        "Write your plan for a multi-step task as a list of steps, each pending, in_progress \
         or done. Each call replaces the whole list; keep one step in_progress at a time."
            .to_string()
    }

    fn input_schema(&self, _context: &ToolContext) -> Value {
        json!({"type": "object", "properties": {
            "items": {"type": "array", "items": {"type": "object", "properties": {
                "content": {"type": "string"},
                "status": {"type": "string", "enum": STATUSES}
            }, "required": ["content", "status"]}}
        }, "required": ["items"]})
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
            let items: Vec<TodoItem> = input
                .get("items")
                .cloned()
                .map(serde_json::from_value)
                .transpose()
                .map_err(|error| {
                    ToolError::new(format!(
                        "items must be a list of {{content, status}}: {error}"
                    ))
                })?
                .ok_or_else(|| ToolError::new("missing required argument 'items'"))?;
            if let Some(bad) = items
                .iter()
                .find(|item| !STATUSES.contains(&item.status.as_str()))
            {
                return Err(ToolError::new(format!(
                    "status '{}' is not one of pending, in_progress, done",
                    bad.status
                )));
            }
            let rendered = render(&items);
            if let Ok(mut todos) = context.todos.lock() {
                *todos = items;
            }
            Ok(rendered)
        })
    }
}

/// `[x] done step` / `[>] current step` / `[ ] later step`.
pub fn render(items: &[TodoItem]) -> String {
    let mut out = String::new();
    for item in items {
        let mark = match item.status.as_str() {
            "done" => "[x]",
            "in_progress" => "[>]",
            _ => "[ ]",
        };
        let _ = writeln!(out, "{mark} {}", item.content);
    }
    if out.is_empty() {
        out.push_str("(the plan is empty)");
    }
    out.trim_end().to_string()
}
