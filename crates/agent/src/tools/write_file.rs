//! `write_file {path, content}`: creates or replaces a file in the working directory.

use serde_json::{Value, json};

use crate::paths::{Access, display, resolve};
use crate::tool::{BoxFuture, Tool, ToolContext, ToolError, ToolKind, string_arg};

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
            let path = resolve(context, requested, Access::Write)?;
            let shown = display(context, &path);
            if path.is_dir() {
                return Err(ToolError::new(format!("{shown} is a folder")));
            }
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).map_err(|error| {
                    ToolError::new(format!("cannot create the folder for {shown}: {error}"))
                })?;
            }
            let existed = path.exists();
            std::fs::write(&path, text)
                .map_err(|error| ToolError::new(format!("cannot write {shown}: {error}")))?;
            Ok(format!(
                "{} {shown} ({} bytes, {} lines)",
                if existed { "replaced" } else { "created" },
                text.len(),
                text.lines().count()
            ))
        })
    }
}
