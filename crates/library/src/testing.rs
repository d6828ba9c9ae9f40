//! What the facts' and the word indexes' tests share: a library of skills in a temporary
//! folder, and its cache folder.

use std::fs;
use std::path::{Path, PathBuf};

use skillet_skills::{Library, Root, RootKind, discover};

/// Writes `text` to `path`, making its folder.
pub(crate) fn write(path: &Path, text: &str) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

/// A `SKILL.md` named `name` with `body`.
pub(crate) fn skill(name: &str, body: &str) -> String {
    format!("---\nname: {name}\ndescription: a skill called {name}\n---\n{body}\n")
}

/// Skills in a temporary folder, and the cache folder beside them.
pub(crate) struct Fixture {
    _temp: tempfile::TempDir,
    pub(crate) skills: PathBuf,
    pub(crate) cache: PathBuf,
}

impl Fixture {
    /// A folder of the skills `(name, body)`.
    pub(crate) fn with(skills: &[(&str, &str)]) -> Self {
        let temp = tempfile::tempdir().unwrap();
        let base = fs::canonicalize(temp.path()).unwrap();
        let folder = base.join("skills");
        for (name, body) in skills {
            write(&folder.join(name).join("SKILL.md"), &skill(name, body));
        }
        Self {
            _temp: temp,
            skills: folder,
            cache: base.join("cache/index"),
        }
    }

    /// The skills as discovery finds them now.
    pub(crate) fn library(&self) -> Library {
        discover(&[Root::new(self.skills.clone(), RootKind::Explicit)])
    }
}

/// Past the second within which a file just changed is not trusted as unchanged.
pub(crate) fn settle() {
    std::thread::sleep(std::time::Duration::from_millis(1_100));
}
