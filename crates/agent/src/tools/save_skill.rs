//! `save_skill {name, description, body, files?, overwrite?}`: what the model just worked out,
//! kept as a skill for later sessions. The skill is written into the folder the session saves
//! skills in ([`SaveSkills`]: the project's `.agents/skills` unless the user's config says their
//! own), validated as `skillet skills validate` would before anything is written, never over an
//! existing one unless `overwrite` is asked, and only with the user's approval: skill folders
//! are protected paths (a skill steers the model later), so `chat` asks each time and `run`
//! refuses. Once written, the session's skills are found again: `load_skill` loads it at once,
//! and the next message announces it as live reload does.

use std::fmt::Write as _;
use std::path::{Component, Path, PathBuf};

use serde_json::{Value, json};
use skillet_skills::confine::Beneath;
use skillet_skills::{discover, name_problems, validate_text};

use crate::permission::ApprovalRequest;
use crate::tool::{BoxFuture, Tool, ToolContext, ToolError, ToolKind, string_arg};

/// The most files a saved skill may have besides its `SKILL.md`.
pub const MAX_SAVED_FILES: usize = 32;
/// The most bytes a saved skill may have in all.
pub const MAX_SAVED_BYTES: usize = 1024 * 1024;
/// The most lines of each file shown in the approval question.
const PREVIEW_LINES: usize = 40;

pub use crate::tool::SaveSkills;

/// Saves a skill.
pub struct SaveSkill;

impl Tool for SaveSkill {
    fn name(&self) -> &'static str {
        "save_skill"
    }

    fn description(&self, _context: &ToolContext) -> String {
        "Save what you worked out as a reusable skill for later sessions: a name (lowercase \
         letters, digits and hyphens), a description saying what it does and when to use it, \
         the instructions (Markdown), and optional extra files (scripts/, references/) by \
         relative path. It is validated first; the user approves the write. An existing skill \
         is replaced only with overwrite: true."
            .to_string()
    }

    fn input_schema(&self, _context: &ToolContext) -> Value {
        json!({"type": "object", "properties": {
            "name": {"type": "string", "description": "The skill's name and folder: lowercase letters, digits, hyphens"},
            "description": {"type": "string", "description": "What it does and when to use it (shown in the skill list)"},
            "body": {"type": "string", "description": "The instructions, in Markdown"},
            "files": {"type": "object", "additionalProperties": {"type": "string"}, "description": "Other files of the skill: relative path -> text content"},
            "overwrite": {"type": "boolean", "description": "Replace the files of an existing skill of that name"}
        }, "required": ["name", "description", "body"]})
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
            let save = context
                .save_skills
                .as_ref()
                .ok_or_else(|| ToolError::new("saving skills is not available in this session"))?;
            let skill = Draft::read(input)?;
            let dir = save.dir.join(&skill.name);
            let text = skill.text();
            let validation = validate_text(&text, &dir.join("SKILL.md"), &dir);
            let errors: Vec<String> = validation
                .diagnostics
                .iter()
                .filter(|diagnostic| diagnostic.is_error())
                .map(|diagnostic| diagnostic.message.clone())
                .collect();
            if !errors.is_empty() {
                return Err(ToolError::new(format!(
                    "the skill does not validate, nothing was written:\n- {}",
                    errors.join("\n- ")
                )));
            }
            // Where it really lands (a linked `.agents` leads elsewhere): shown and written there.
            let real_dir = crate::paths::real_path(&dir);
            let exists = std::fs::symlink_metadata(&dir).is_ok();
            if exists && !skill.overwrite {
                return Err(ToolError::new(format!(
                    "a skill folder {} exists; nothing was written. Choose another name, or pass overwrite: true to replace its files",
                    dir.display()
                )));
            }
            context.approve(
                &ApprovalRequest {
                    tool: self.name().to_string(),
                    kind: ToolKind::Write,
                    summary: if real_dir == dir {
                        dir.display().to_string()
                    } else {
                        format!("{} (really {})", dir.display(), real_dir.display())
                    },
                    detail: Some(skill.preview(&text)),
                    protected: Some(
                        "is a skill folder (a skill steers the model in later sessions)",
                    ),
                    always: Vec::new(),
                },
                input,
            )?;
            std::fs::create_dir_all(&save.dir)
                .map_err(|error| ToolError::new(format!("{}: {error}", save.dir.display())))?;
            let beneath = Beneath::open(&save.dir)
                .map_err(|error| ToolError::new(format!("{}: {error}", save.dir.display())))?;
            let root = Path::new(&skill.name);
            let mut written = Vec::new();
            for (relative, content) in std::iter::once((PathBuf::from("SKILL.md"), text.as_str()))
                .chain(
                    skill
                        .files
                        .iter()
                        .map(|(path, content)| (path.clone(), content.as_str())),
                )
            {
                let path = root.join(&relative);
                let shown = dir.join(&relative).display().to_string();
                beneath
                    .write_atomic(&path, &shown, content.as_bytes())
                    .map_err(|error| ToolError::new(error.to_string()))?;
                written.push(relative.display().to_string());
            }
            // Found again now, so load_skill has it at once (the chat's next message announces
            // it; matching ranks it once the index is rebuilt).
            let library = std::sync::Arc::new(discover(&save.roots));
            let found = library
                .get(&skill.name)
                .is_some_and(|found| found.dir == dir);
            context.skills.replace(library, context.skills.index());
            let mut result = format!(
                "saved skill '{}' in {} ({})",
                skill.name,
                dir.display(),
                written.join(", ")
            );
            if found {
                result.push_str("; load_skill loads it now");
            } else {
                result.push_str(
                    "; another skill of that name takes precedence, so load_skill gives that one",
                );
            }
            Ok(result)
        })
    }
}

/// The skill as the model gave it, checked.
struct Draft {
    name: String,
    description: String,
    body: String,
    files: Vec<(PathBuf, String)>,
    overwrite: bool,
}

impl Draft {
    fn read(input: &Value) -> Result<Self, ToolError> {
        let name = string_arg(input, "name")?.trim().to_string();
        let problems = name_problems(&name);
        if !problems.is_empty() {
            return Err(ToolError::new(format!(
                "the name '{name}' cannot be used: {}",
                problems.join("; ")
            )));
        }
        let description = string_arg(input, "description")?.trim().to_string();
        let body = string_arg(input, "body")?.trim().to_string();
        let overwrite = match input.get("overwrite") {
            None | Some(Value::Null) => false,
            Some(Value::Bool(flag)) => *flag,
            Some(_) => return Err(ToolError::new("'overwrite' must be true or false")),
        };
        let mut files = Vec::new();
        match input.get("files") {
            None | Some(Value::Null) => {}
            Some(Value::Object(map)) => {
                for (path, content) in map {
                    let Some(content) = content.as_str() else {
                        return Err(ToolError::new(format!(
                            "files: '{path}' must map to the file's text"
                        )));
                    };
                    files.push((file_path(path)?, content.to_string()));
                }
            }
            Some(_) => {
                return Err(ToolError::new(
                    "'files' must be an object of relative path -> text",
                ));
            }
        }
        if files.len() > MAX_SAVED_FILES {
            return Err(ToolError::new(format!(
                "{} files: a saved skill may have at most {MAX_SAVED_FILES} besides SKILL.md",
                files.len()
            )));
        }
        let total = body.len()
            + description.len()
            + files
                .iter()
                .map(|(_, content)| content.len())
                .sum::<usize>();
        if total > MAX_SAVED_BYTES {
            return Err(ToolError::new(format!(
                "{total} bytes: a saved skill may hold at most {MAX_SAVED_BYTES}"
            )));
        }
        Ok(Self {
            name,
            description,
            body,
            files,
            overwrite,
        })
    }

    /// The `SKILL.md`: the frontmatter (the description as a JSON string, which YAML reads as
    /// a double-quoted scalar whatever it holds), then the body.
    fn text(&self) -> String {
        let description =
            serde_json::to_string(&self.description).unwrap_or_else(|_| "\"\"".to_string());
        format!(
            "---\nname: {}\ndescription: {description}\n---\n\n{}\n",
            self.name, self.body
        )
    }

    /// What the user is shown before approving: the commands its body would run (dynamic
    /// context) in full, then each file's first [`PREVIEW_LINES`] lines.
    fn preview(&self, text: &str) -> String {
        let mut preview = String::new();
        let commands = skillet_skills::dynamic::commands(&self.body);
        if !commands.is_empty() {
            let _ = writeln!(
                preview,
                "its body runs these commands when loaded (in a trusted project):"
            );
            for command in commands {
                for line in command.lines() {
                    let _ = writeln!(preview, "  ! {line}");
                }
            }
        }
        let files = std::iter::once(("SKILL.md".to_string(), text)).chain(
            self.files
                .iter()
                .map(|(path, content)| (path.display().to_string(), content.as_str())),
        );
        for (path, content) in files {
            let _ = writeln!(preview, "+++ {path}");
            for line in content.lines().take(PREVIEW_LINES) {
                let _ = writeln!(preview, "+{line}");
            }
            let more = content.lines().count().saturating_sub(PREVIEW_LINES);
            if more > 0 {
                let _ = writeln!(preview, "… {more} more lines");
            }
        }
        preview
    }
}

/// A file's path inside the skill: relative, plain names only, none hidden, no skill file.
fn file_path(path: &str) -> Result<PathBuf, ToolError> {
    let bad = |why: &str| ToolError::new(format!("files: '{path}' {why}"));
    let relative = PathBuf::from(path);
    if relative.as_os_str().is_empty() {
        return Err(bad("is empty"));
    }
    for component in relative.components() {
        match component {
            Component::Normal(name) if !name.to_string_lossy().starts_with('.') => {}
            Component::Normal(_) => return Err(bad("is hidden; skills list no hidden files")),
            _ => return Err(bad("must be a plain relative path inside the skill")),
        }
    }
    // A skill file anywhere inside would be a skill of its own, never validated here.
    if relative.file_name().is_some_and(|name| {
        skillet_skills::SKILL_FILE_NAMES
            .iter()
            .any(|skill_file| name.eq_ignore_ascii_case(skill_file))
    }) {
        return Err(bad(
            "is a skill file: give the skill's text as body (a skill file in a subfolder would be another skill)",
        ));
    }
    Ok(relative)
}
