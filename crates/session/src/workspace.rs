//! Where a session works and which skill folders it reads.

use std::path::PathBuf;

use skillet_skills::{Environment, Root, resolve_roots};

/// What every command needs: where it works and where skills are.
#[derive(Debug, Clone)]
pub struct Workspace {
    /// The working directory (real path), the home and config folders.
    pub env: Environment,
    /// The skill roots, in precedence order.
    pub roots: Vec<Root>,
    /// The `--skills-dir` folders, absolute.
    explicit: Vec<PathBuf>,
}

impl Workspace {
    /// Working in `env.cwd`, reading skills from `explicit` folders (absolute) when given, else
    /// from the default roots.
    pub fn new(env: Environment, explicit: Vec<PathBuf>) -> Self {
        let roots = resolve_roots(&explicit, &env);
        Self {
            env,
            roots,
            explicit,
        }
    }

    /// The project's root: the git root above the working directory, else the directory.
    pub fn project_root(&self) -> PathBuf {
        skillet_skills::find_git_root(&self.env.cwd).unwrap_or_else(|| self.env.cwd.clone())
    }

    /// The same workspace, working in another folder (a resumed session's own).
    #[must_use]
    pub fn at(&self, cwd: PathBuf) -> Self {
        let env = Environment {
            cwd,
            home: self.env.home.clone(),
            xdg_config_home: self.env.xdg_config_home.clone(),
        };
        Self::new(env, self.explicit.clone())
    }

    /// Every skill root a write must not touch without asking: the default ones of this
    /// folder (also when `--skills-dir` replaces them for discovery) and those in use, as
    /// written and, for links, where they lead.
    pub fn skill_roots(&self) -> Vec<PathBuf> {
        let mut roots: Vec<PathBuf> = skillet_skills::default_roots(&self.env)
            .into_iter()
            .map(|root| root.path)
            .chain(self.roots.iter().map(|root| root.path.clone()))
            .filter_map(|path| skillet_skills::confine::normalize(&path))
            // A root that is a link is protected where it leads too.
            .flat_map(|path| {
                let real = std::fs::canonicalize(&path).ok();
                std::iter::once(path).chain(real)
            })
            .collect();
        roots.sort();
        roots.dedup();
        roots
    }
}
