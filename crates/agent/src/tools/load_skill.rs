//! `load_skill {name}`: Layer 2, the engine's output verbatim.

use serde_json::{Value, json};
use skillet_skills::Invoker;

use crate::tool::{
    BoxFuture, CatalogPlacement, Tool, ToolContext, ToolError, ToolKind, string_arg,
};

/// The most skills whose names become an `enum` in the schema.
pub const MAX_ENUM_SKILLS: usize = 200;

/// Loads a skill's instructions.
pub struct LoadSkill;

impl Tool for LoadSkill {
    fn name(&self) -> &'static str {
        "load_skill"
    }

    fn description(&self, context: &ToolContext) -> String {
        let mut text = String::from(
            "Load a skill: its full instructions, its folder, and the list of its files. Call it \
             before doing a task that matches a skill's description, then follow the skill. \
             Paths inside a skill are relative to its folder; read them with read_file and run \
             its scripts with bash.",
        );
        if context.placement != CatalogPlacement::System && !context.catalog.is_empty() {
            text.push_str("\n\nAvailable skills:\n");
            text.push_str(&context.catalog);
        }
        text
    }

    fn input_schema(&self, context: &ToolContext) -> Value {
        let names: Vec<&str> = context
            .library
            .model_invocable()
            .map(|skill| skill.name.as_str())
            .collect();
        let mut name = json!({"type": "string", "description": "The skill's name, as listed"});
        if context.placement != CatalogPlacement::System
            && !names.is_empty()
            && names.len() <= MAX_ENUM_SKILLS
        {
            name["enum"] = json!(names);
        }
        json!({"type": "object", "properties": {"name": name}, "required": ["name"]})
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
            let name = string_arg(input, "name")?;
            context
                .library
                .load(name, Invoker::Model)
                .map_err(|error| ToolError::new(error.to_string()))
        })
    }
}
