//! `edit_file {path, old_text, new_text}`: replaces text that occurs exactly once.

use serde_json::{Value, json};

use crate::paths::{Access, resolve};
use crate::tool::{BoxFuture, Tool, ToolContext, ToolError, ToolKind, string_arg};
use crate::tools::change;

/// Edits a file in place.
pub struct EditFile;

impl Tool for EditFile {
    fn name(&self) -> &'static str {
        "edit_file"
    }

    fn description(&self, _context: &ToolContext) -> String {
        "Replace old_text with new_text in a file of the working directory. old_text must \
         occur exactly once: include enough surrounding lines to make it unique."
            .to_string()
    }

    fn input_schema(&self, _context: &ToolContext) -> Value {
        json!({"type": "object", "properties": {
            "path": {"type": "string"},
            "old_text": {"type": "string", "description": "Exact text to replace, occurring once"},
            "new_text": {"type": "string", "description": "Its replacement"}
        }, "required": ["path", "old_text", "new_text"]})
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
            let old_text = string_arg(input, "old_text")?;
            let new_text = string_arg(input, "new_text")?;
            if old_text.is_empty() {
                return Err(ToolError::new(
                    "old_text is empty; use write_file to create a file",
                ));
            }
            let resolved = resolve(context, requested, Access::Write)?;
            let shown = &resolved.shown;
            let (target, old) = change::current(&resolved).await?;
            let Some(old) = old else {
                return Err(ToolError::new(format!(
                    "{shown} does not exist; use write_file to create it"
                )));
            };
            let text = std::str::from_utf8(&old)
                .map_err(|_| ToolError::new(format!("{shown} is not a UTF-8 text file")))?;
            match text.matches(old_text).count() {
                0 => Err(ToolError::new(format!(
                    "old_text does not occur in {shown}; read the file and copy the text exactly"
                ))),
                1 => {
                    let updated = text.replacen(old_text, new_text, 1);
                    change::apply(context, self.name(), &resolved, target, Some(&old), updated)
                        .await?;
                    Ok(format!("edited {shown}: replaced 1 occurrence"))
                }
                n => Err(ToolError::new(format!(
                    "old_text occurs {n} times in {shown}; include more surrounding text so it occurs once"
                ))),
            }
        })
    }
}
