//! Where skills are looked for, highest precedence first.

use std::path::{Path, PathBuf};

/// The kind of a root, which decides its precedence and walk rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RootKind {
    /// Named by the user (`--skills-dir`, config). Hidden folders below it are walked.
    Explicit,
    /// Found in the project, between the working directory and the git root.
    Project,
    /// In the user's home or config directory.
    User,
}

impl RootKind {
    /// `explicit`, `project` or `user`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Explicit => "explicit",
            Self::Project => "project",
            Self::User => "user",
        }
    }
}

/// How a root holds its skills.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Layout {
    /// Skill folders, each with a `SKILL.md`.
    #[default]
    Folders,
    /// Claude Code's custom commands: every `NAME.md` file is a skill named `NAME`, invoked as
    /// `/NAME` ([`crate::Form::Command`]); subfolders group them without changing the name.
    Commands,
}

/// A folder to look for skills in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Root {
    /// The folder.
    pub path: PathBuf,
    /// Its kind.
    pub kind: RootKind,
    /// How it holds its skills.
    pub layout: Layout,
}

impl Root {
    /// A root of the given kind, holding skill folders.
    pub fn new(path: impl Into<PathBuf>, kind: RootKind) -> Self {
        Self {
            path: path.into(),
            kind,
            layout: Layout::Folders,
        }
    }

    /// What the root is, in a listing of roots: its kind, with `commands` for a commands
    /// folder (`project commands`).
    pub fn label(&self) -> String {
        match self.layout {
            Layout::Folders => self.kind.as_str().to_string(),
            Layout::Commands => format!("{} commands", self.kind.as_str()),
        }
    }

    /// A folder of Claude Code's custom commands (`.claude/commands`) of the given kind.
    pub fn commands(path: impl Into<PathBuf>, kind: RootKind) -> Self {
        Self {
            path: path.into(),
            kind,
            layout: Layout::Commands,
        }
    }
}

/// Skill folders of a project, looked for in each directory from the working directory up to
/// the git root, in this order.
pub const PROJECT_ROOT_DIRS: [&str; 4] = [
    ".agents/skills",
    ".claude/skills",
    ".opencode/skills",
    ".opencode/skill",
];

/// The skills folder looked for at the project root only.
pub const PROJECT_TOP_DIR: &str = "skills";

/// Claude Code's custom commands folder, looked for in the user's home, then in each directory
/// from the working directory up to the git root. Commands come after every skill root: a skill
/// and a command of the same name make one `/NAME`, and the skill wins (as in Claude Code); the
/// user's own commands come before a project's, so a repository cannot take one's name.
pub const COMMANDS_DIR: &str = ".claude/commands";

/// Skill folders under the user's home, in this order.
pub const USER_ROOT_DIRS: [&str; 3] = [
    ".agents/skills",
    ".claude/skills",
    ".config/opencode/skills",
];

/// What root resolution needs to know about the process, passed in so the library reads no
/// global state.
#[derive(Debug, Clone, Default)]
pub struct Environment {
    /// The working directory (absolute).
    pub cwd: PathBuf,
    /// The user's home directory, if known.
    pub home: Option<PathBuf>,
    /// `$XDG_CONFIG_HOME`, if set.
    pub xdg_config_home: Option<PathBuf>,
}

impl Environment {
    /// skillet's own user skills folder: `$XDG_CONFIG_HOME/skillet/skills`, defaulting to
    /// `~/.config/skillet/skills`.
    pub fn skillet_skills_dir(&self) -> Option<PathBuf> {
        let config = self
            .xdg_config_home
            .clone()
            .filter(|path| path.is_absolute())
            .or_else(|| self.home.as_ref().map(|home| home.join(".config")))?;
        Some(config.join("skillet").join("skills"))
    }
}

/// The roots to search: the explicit ones when any are given (relative ones resolved against
/// the working directory), else the project roots, then the user roots.
pub fn resolve_roots(explicit: &[PathBuf], env: &Environment) -> Vec<Root> {
    if explicit.is_empty() {
        return default_roots(env);
    }
    explicit
        .iter()
        .map(|path| Root::new(env.cwd.join(path), RootKind::Explicit))
        .collect()
}

/// The project roots (working directory up to the git root) then the user roots, then the
/// commands folders of both ([`COMMANDS_DIR`]). Roots that do not exist are kept: discovery
/// treats them as empty.
pub fn default_roots(env: &Environment) -> Vec<Root> {
    let mut roots = Vec::new();
    let project_root = find_git_root(&env.cwd);
    let project_top = project_root.clone().unwrap_or_else(|| env.cwd.clone());
    let mut levels = Vec::new();
    let mut dir = Some(env.cwd.as_path());
    while let Some(current) = dir {
        levels.push(current);
        for relative in PROJECT_ROOT_DIRS {
            roots.push(Root::new(current.join(relative), RootKind::Project));
        }
        if current == project_top {
            break;
        }
        // Without a git root, only the working directory counts as the project.
        dir = if project_root.is_some() {
            current.parent()
        } else {
            None
        };
    }
    roots.push(Root::new(
        project_top.join(PROJECT_TOP_DIR),
        RootKind::Project,
    ));
    if let Some(home) = &env.home {
        for relative in USER_ROOT_DIRS {
            roots.push(Root::new(home.join(relative), RootKind::User));
        }
    }
    if let Some(own) = env.skillet_skills_dir() {
        roots.push(Root::new(own, RootKind::User));
    }
    // The user's own commands before a project's: a repository cannot take the name of one
    // (a project's skill still comes before every command, as in Claude Code).
    if let Some(home) = &env.home {
        roots.push(Root::commands(home.join(COMMANDS_DIR), RootKind::User));
    }
    for level in levels {
        roots.push(Root::commands(level.join(COMMANDS_DIR), RootKind::Project));
    }
    roots
}

/// The nearest directory at or above `start` holding `.git` (a folder, or a file for worktrees).
pub fn find_git_root(start: &Path) -> Option<PathBuf> {
    start
        .ancestors()
        .find(|dir| dir.join(".git").exists())
        .map(Path::to_path_buf)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn paths(roots: &[Root]) -> Vec<String> {
        roots
            .iter()
            .map(|root| format!("{} {}", root.kind.as_str(), root.path.display()))
            .collect()
    }

    #[test]
    fn defaults_walk_up_to_the_git_root() {
        let temp = tempfile::tempdir().unwrap();
        let repo = temp.path().join("repo");
        std::fs::create_dir_all(repo.join(".git")).unwrap();
        std::fs::create_dir_all(repo.join("sub")).unwrap();
        let env = Environment {
            cwd: repo.join("sub"),
            home: Some(PathBuf::from("/home/u")),
            xdg_config_home: None,
        };
        let r = repo.display().to_string();
        assert_eq!(
            paths(&default_roots(&env)),
            [
                format!("project {r}/sub/.agents/skills"),
                format!("project {r}/sub/.claude/skills"),
                format!("project {r}/sub/.opencode/skills"),
                format!("project {r}/sub/.opencode/skill"),
                format!("project {r}/.agents/skills"),
                format!("project {r}/.claude/skills"),
                format!("project {r}/.opencode/skills"),
                format!("project {r}/.opencode/skill"),
                format!("project {r}/skills"),
                "user /home/u/.agents/skills".to_string(),
                "user /home/u/.claude/skills".to_string(),
                "user /home/u/.config/opencode/skills".to_string(),
                "user /home/u/.config/skillet/skills".to_string(),
                "user /home/u/.claude/commands".to_string(),
                format!("project {r}/sub/.claude/commands"),
                format!("project {r}/.claude/commands"),
            ]
        );
    }

    #[test]
    fn without_git_only_the_working_directory_is_the_project() {
        let temp = tempfile::tempdir().unwrap();
        let env = Environment {
            cwd: temp.path().to_path_buf(),
            home: None,
            xdg_config_home: Some(PathBuf::from("/xdg")),
        };
        let roots = default_roots(&env);
        assert_eq!(roots.len(), 7);
        assert_eq!(roots[4].path, temp.path().join("skills"));
        assert_eq!(roots[5].path, PathBuf::from("/xdg/skillet/skills"));
        assert_eq!(roots[6].path, temp.path().join(".claude/commands"));
        assert_eq!(roots[6].layout, Layout::Commands);
    }

    #[test]
    fn explicit_roots_replace_defaults() {
        let env = Environment {
            cwd: PathBuf::from("/work"),
            ..Environment::default()
        };
        let roots = resolve_roots(&[PathBuf::from("a"), PathBuf::from("/b")], &env);
        assert_eq!(paths(&roots), ["explicit /work/a", "explicit /b"]);
    }
}
