//! `search_skills {query, top_k?}`: finds skills by what they do, for libraries too large for
//! the catalog. Offered only when the catalog left skills out.

use std::fmt::Write as _;

use serde_json::{Value, json};
use skillet_retrieval::Mode;

use crate::tool::{BoxFuture, Tool, ToolContext, ToolError, ToolKind, string_arg, usize_arg};

/// Results when the model asks for no particular number.
pub const DEFAULT_TOP_K: usize = 8;
/// The most results one call returns.
pub const MAX_TOP_K: usize = 25;

/// Searches the skills.
pub struct SearchSkills;

impl Tool for SearchSkills {
    fn name(&self) -> &'static str {
        "search_skills"
    }

    fn description(&self, context: &ToolContext) -> String {
        format!(
            "Search the {} available skills by what you need done; returns names, descriptions \
             and scores (higher is closer). Then call load_skill with a name.",
            context.skills.library().model_invocable().count()
        )
    }

    fn input_schema(&self, _context: &ToolContext) -> Value {
        json!({"type": "object", "properties": {
            "query": {"type": "string", "description": "What you need done, in plain words"},
            "top_k": {"type": "integer", "minimum": 1, "maximum": MAX_TOP_K}
        }, "required": ["query"]})
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
            let query = string_arg(input, "query")?;
            let k = usize_arg(input, "top_k")?
                .unwrap_or(DEFAULT_TOP_K)
                .clamp(1, MAX_TOP_K);
            let index = context
                .skills
                .index()
                .ok_or_else(|| ToolError::new("skill search is not available in this session"))?;
            let library = context.skills.library();
            // Ask for more than needed: skills the model may not load are filtered out.
            let (_, ranked) = index
                .rank(query, Mode::Hybrid, k * 2)
                .map_err(|error| ToolError::new(format!("skill search failed: {error}")))?;
            let mut out = String::new();
            let mut shown = 0;
            for hit in ranked {
                let Some(skill) = library.get(index.name(hit.index)) else {
                    continue;
                };
                if !skill.model_invocable() || shown == k {
                    continue;
                }
                let description: String = skill.description.chars().take(300).collect();
                let _ = writeln!(out, "{} ({:.3}): {description}", skill.name, hit.score);
                shown += 1;
            }
            if out.is_empty() {
                return Ok(format!("no skill matches '{query}'"));
            }
            Ok(out.trim_end().to_string())
        })
    }
}
