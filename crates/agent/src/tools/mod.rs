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
pub mod task;
pub mod todo_write;
pub mod write_file;

use skillet_llm::ToolSpec;

use crate::tool::{Tool, ToolContext};

/// The tools of a session, in a fixed order.
pub struct ToolTable {
    tools: Vec<Box<dyn Tool>>,
}

impl ToolTable {
    /// Every tool; `with_task` adds the subagent tool (subagents get the table without it).
    pub fn standard(with_task: bool) -> Self {
        Self::with(with_task, false)
    }

    /// The standard tools, plus `search_skills` when the catalog could not list every skill or
    /// a skill source is searched too.
    pub fn with(with_task: bool, with_search: bool) -> Self {
        let mut tools: Vec<Box<dyn Tool>> = vec![
            Box::new(load_skill::LoadSkill),
            Box::new(bash::Bash),
            Box::new(read_file::ReadFile),
            Box::new(write_file::WriteFile),
            Box::new(edit_file::EditFile),
            Box::new(glob::Glob),
            Box::new(grep::Grep),
            Box::new(todo_write::TodoWrite),
            Box::new(save_skill::SaveSkill),
        ];
        if with_search {
            tools.push(Box::new(search_skills::SearchSkills));
        }
        if with_task {
            tools.push(Box::new(task::Task));
        }
        Self { tools }
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
