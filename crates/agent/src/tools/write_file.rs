//! `write_file {path, content}`: creates or replaces a file in the working directory,
//! atomically, after approval of its diff.

use serde_json::{Value, json};

use crate::paths::{Access, resolve};
use crate::tool::{BoxFuture, Tool, ToolContext, ToolError, ToolKind, string_arg};
use crate::tools::change;

/// Writes a file.
pub struct WriteFile;

impl Tool for WriteFile {
    fn name(&self) -> &'static str {
        "write_file"
    }

    fn description(&self, _context: &ToolContext) -> String {
        "Create or replace a file in the working directory with the given content. Folders \
         are created as needed. To change part of a file, use edit_file."
            .to_string()
    }

    fn input_schema(&self, _context: &ToolContext) -> Value {
        json!({"type": "object", "properties": {
            "path": {"type": "string", "description": "File path, relative to the working directory"},
            "content": {"type": "string", "description": "The whole new content"}
        }, "required": ["path", "content"]})
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Write
    }

    fn call<'a>(
        &'a self,
        input: &'a Value,
        context: &'a ToolContext,
    ) -> BoxFuture<'a, Result<String, ToolError>> {
        Box::pin(async move {
            let requested = string_arg(input, "path")?;
            let text = string_arg(input, "content")?;
            let resolved = resolve(context, requested, Access::Write)?;
            let (target, old) = change::current(&resolved).await?;
            let created = change::apply(
                context,
                self.name(),
                &resolved,
                target,
                old.as_deref(),
                text.to_string(),
            )
            .await?;
            Ok(format!(
                "{} {} ({} bytes, {} lines)",
                if created { "created" } else { "replaced" },
                resolved.shown,
                text.len(),
                text.lines().count()
            ))
        })
    }
}
