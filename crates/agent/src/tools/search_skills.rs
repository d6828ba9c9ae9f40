//! `search_skills {query, top_k?}`: finds skills by what they do, for libraries too large for
//! the catalog and in the session's skill source (the shared registry), whose results are
//! marked "not installed" and named `OWNER/NAME@SEQ` for `load_skill`. Offered when the catalog
//! left skills out or a source is configured. A source that fails is said, and the local
//! results still come.

use std::fmt::Write as _;

use serde_json::{Value, json};
use skillet_library::source::{Found, Origin, search_with};
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
        let also = context
            .source
            .as_ref()
            .map(|source| format!(" and the skills shared in {}", source.label()))
            .unwrap_or_default();
        format!(
            "Search the {} available skills{also} by what you need done; returns names, \
             descriptions and scores (higher is closer). Then call load_skill with a name.",
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
            let index = context.skills.index();
            if index.is_none() && context.source.is_none() {
                return Err(ToolError::new(
                    "skill search is not available in this session",
                ));
            }
            let library = context.skills.library();
            let mut local = Vec::new();
            let mut vector = None;
            if let Some(index) = &index {
                // Ask for more than needed: skills the model may not load are filtered out.
                let ranking = index
                    .rank_keeping_vector(query, Mode::Hybrid, k * 2)
                    .map_err(|error| ToolError::new(format!("skill search failed: {error}")))?;
                for hit in ranking.ranked {
                    let Some(skill) = library.get(index.name(hit.index)) else {
                        continue;
                    };
                    if skill.model_invocable() && local.len() < k {
                        local.push(Found {
                            name: skill.name.clone(),
                            description: skill.description.clone(),
                            score: hit.score,
                            relevant: hit.relevant,
                            origin: Origin::Local,
                        });
                    }
                }
                vector = ranking.vector;
            }
            let (found, notes) = match &context.source {
                None => (local, Vec::new()),
                Some(source) => {
                    search_with(
                        source.as_ref(),
                        local,
                        &library,
                        query,
                        vector.as_deref(),
                        k,
                    )
                    .await
                }
            };
            let mut out = String::new();
            for found in &found {
                let description: String = found.description.chars().take(300).collect();
                let origin = match found.origin {
                    Origin::Local => String::new(),
                    Origin::Source { installed: None } => ", not installed".to_string(),
                    Origin::Source {
                        installed: Some(seq),
                    } => format!(", not installed (@{seq} is)"),
                };
                let _ = writeln!(
                    out,
                    "{} ({:.3}{origin}): {description}",
                    found.name, found.score
                );
            }
            if found.is_empty() {
                let _ = writeln!(out, "no skill matches '{query}'");
            }
            for note in notes {
                let _ = writeln!(out, "({note})");
            }
            Ok(out.trim_end().to_string())
        })
    }
}
