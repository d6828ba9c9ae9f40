//! The system prompt, built once per session.

use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::tool::CatalogPlacement;
use crate::transcript::civil;

/// Builds the system prompt: a short preamble (working directory, platform, date), then the
/// project's instructions when there are any (`instructions`: the section
/// [`crate::Instructions::render`] makes, or empty), then the skills section when there are
/// skills.
pub fn system_prompt(
    cwd: &Path,
    instructions: &str,
    catalog: &str,
    placement: CatalogPlacement,
    total_skills: usize,
) -> String {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs());
    let (year, month, day, ..) = civil(now);
    let mut prompt = format!(
        "You are skillet, an agent that carries out tasks in a project folder.\n\n\
         Working directory: {}\nPlatform: {} ({})\nDate: {year:04}-{month:02}-{day:02}\n\n\
         Use the tools to read and change files and to run commands. File tools work inside \
         the working directory; the folders of skills are readable too. Be brief in what you \
         say; let the work show.",
        cwd.display(),
        std::env::consts::OS,
        std::env::consts::ARCH,
    );
    if !instructions.is_empty() {
        prompt.push_str("\n\n");
        prompt.push_str(instructions);
    }
    if total_skills == 0 {
        return prompt;
    }
    prompt.push_str(
        "\n\n# Skills\n\nSkills are folders of instructions, scripts and references for \
         particular tasks. When a task matches a skill's description, call load_skill with its \
         name before starting, then follow the skill. Paths inside a skill are relative to its \
         folder: read its files with read_file and run its scripts with bash.",
    );
    match placement {
        CatalogPlacement::System | CatalogPlacement::Both if !catalog.is_empty() => {
            prompt.push_str("\n\nAvailable skills:\n");
            prompt.push_str(catalog);
        }
        _ => prompt.push_str("\n\nThe load_skill tool lists the available skills."),
    }
    prompt
}
