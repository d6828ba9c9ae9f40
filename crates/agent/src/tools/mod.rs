//! The tools, one file each, and the table of a session's tools.

pub mod bash;
pub mod blocklist;
pub mod change;
pub mod edit_file;
pub mod glob;
pub mod grep;
pub mod load_skill;
pub mod read_file;
pub mod save_skill;
pub mod search_skills;
pub mod secrets;
pub mod task;
pub mod todo_write;
pub mod write_file;

use skillet_llm::ToolSpec;

use crate::tool::{Tool, ToolContext};

/// The tools of a session, in a fixed order.
pub struct ToolTable {
    tools: Vec<std::sync::Arc<dyn Tool>>,
}

impl ToolTable {
    /// Every tool; `with_task` adds the subagent tool (subagents get the table without it).
    pub fn standard(with_task: bool) -> Self {
        Self::with(with_task, false)
    }

    /// The standard tools, plus `search_skills` when the catalog could not list every skill or
    /// a skill source is searched too.
    pub fn with(with_task: bool, with_search: bool) -> Self {
        let mut tools: Vec<std::sync::Arc<dyn Tool>> = vec![
            std::sync::Arc::new(load_skill::LoadSkill),
            std::sync::Arc::new(bash::Bash),
            std::sync::Arc::new(read_file::ReadFile),
            std::sync::Arc::new(write_file::WriteFile),
            std::sync::Arc::new(edit_file::EditFile),
            std::sync::Arc::new(glob::Glob),
            std::sync::Arc::new(grep::Grep),
            std::sync::Arc::new(todo_write::TodoWrite),
            std::sync::Arc::new(save_skill::SaveSkill),
        ];
        if with_search {
            tools.push(std::sync::Arc::new(search_skills::SearchSkills));
        }
        if with_task {
            tools.push(std::sync::Arc::new(task::Task));
        }
        Self { tools }
    }

    /// These tools, then `more` (another source's), leaving out any whose name is taken.
    #[must_use]
    pub fn and(mut self, more: Vec<std::sync::Arc<dyn Tool>>) -> Self {
        for tool in more {
            if self.get(tool.name()).is_none() {
                self.tools.push(tool);
            }
        }
        self
    }

    /// The tool with this name.
    pub fn get(&self, name: &str) -> Option<&dyn Tool> {
        self.tools
            .iter()
            .find(|tool| tool.name() == name)
            .map(AsRef::as_ref)
    }

    /// The definitions sent to the model, built once per session.
    pub fn specs(&self, context: &ToolContext) -> Vec<ToolSpec> {
        self.tools
            .iter()
            .map(|tool| ToolSpec {
                name: tool.name().to_string(),
                description: tool.description(context),
                input_schema: tool.input_schema(context),
            })
            .collect()
    }
}
