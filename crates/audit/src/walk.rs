//! The files of one skill folder, within bounds.

use std::collections::HashSet;
use std::ffi::{OsStr, OsString};
use std::fs;
use std::path::{Path, PathBuf};

use skillet_skills::ALWAYS_SKIPPED;

use crate::Note;

/// The most files of one skill folder that are scanned.
pub const MAX_FILES_PER_SKILL: usize = 500;
/// The most folder entries read in one skill folder, all its folders together.
pub const MAX_ENTRIES_PER_SKILL: usize = 10_000;
/// How many folders deep below a skill folder files are scanned.
pub const MAX_DEPTH_IN_SKILL: usize = 8;
/// The most files in folders never scanned as text (`node_modules`, `.git`) whose first
/// [`HEAD_BYTES`] are read to find executables, per skill.
pub const MAX_HEADS_PER_SKILL: usize = 2_000;
/// How many leading bytes of a file in a folder never scanned as text are read.
pub const HEAD_BYTES: u64 = 4096;

/// A file to scan: the path shown (the skill folder joined with the path inside it) and the
/// real path to open.
pub(crate) struct Entry {
    pub(crate) shown: PathBuf,
    pub(crate) real: PathBuf,
    /// In a folder never scanned as text: only the file's first [`HEAD_BYTES`] are looked at.
    pub(crate) head_only: bool,
}

/// A place of the skill that was not scanned (or not wholly), and why: a `SCAN_INCOMPLETE`
/// finding.
pub(crate) struct Gap {
    pub(crate) path: PathBuf,
    pub(crate) why: String,
}

/// What a skill folder's walk found.
pub(crate) struct Walked {
    /// The files, in walk order: every file scanned as text first, then those only looked at.
    pub(crate) files: Vec<Entry>,
    /// What was left out.
    pub(crate) gaps: Vec<Gap>,
}

/// The files of the skill folder `dir`, in name order, depth first. Links are followed only
/// when they lead to somewhere inside the folder, each real folder once; folders in `skip`
/// (other skills, audited on their own) are left out. `.git` and `node_modules` are not
/// scanned as text: each is a [`Gap`], and once the rest is walked, their files are listed
/// `head_only` (within what is left of the bounds). Whatever a bound or an error left out is a
/// gap; links out of the folder and the like are notes.
pub(crate) fn skill_files(dir: &Path, skip: &HashSet<PathBuf>, notes: &mut Vec<Note>) -> Walked {
    let mut gaps = Vec::new();
    let real_root = match fs::canonicalize(dir) {
        Ok(real) => real,
        Err(error) => {
            gaps.push(Gap {
                path: dir.to_path_buf(),
                why: format!("cannot open the skill folder: {error}"),
            });
            return Walked {
                files: Vec::new(),
                gaps,
            };
        }
    };
    let mut walk = Walk {
        skip,
        notes,
        gaps,
        visited: HashSet::from([real_root.clone()]),
        real_root: real_root.clone(),
        files: Vec::new(),
        budget: MAX_ENTRIES_PER_SKILL,
        more_files: 0,
        heads: 0,
        never_entered: Vec::new(),
        head_only: false,
    };
    let cut = walk.run(vec![(dir.to_path_buf(), real_root, 0)]);
    if walk.more_files > 0 {
        let more = walk.more_files;
        walk.gap(
            dir,
            format!("{more} more files not scanned (at most {MAX_FILES_PER_SKILL} per skill)"),
        );
    }
    // Folders never scanned as text: only executables are looked for in them, with what is
    // left of the entry budget.
    if !cut {
        walk.head_only = true;
        let folders: Vec<Folder> = std::mem::take(&mut walk.never_entered)
            .into_iter()
            .filter(|(_, real, _)| walk.visited.insert(real.clone()))
            .rev()
            .collect();
        walk.run(folders);
    }
    Walked {
        files: walk.files,
        gaps: walk.gaps,
    }
}

fn note(notes: &mut Vec<Note>, path: &Path, message: String) {
    notes.push(Note {
        path: path.to_path_buf(),
        message,
    });
}

/// A folder to walk: the path shown, the real path, the depth.
type Folder = (PathBuf, PathBuf, usize);

/// The state of one skill folder's walk.
struct Walk<'a> {
    skip: &'a HashSet<PathBuf>,
    notes: &'a mut Vec<Note>,
    gaps: Vec<Gap>,
    real_root: PathBuf,
    visited: HashSet<PathBuf>,
    files: Vec<Entry>,
    /// Folder entries that may still be read.
    budget: usize,
    /// Files past [`MAX_FILES_PER_SKILL`].
    more_files: usize,
    /// Files listed `head_only`.
    heads: usize,
    /// `.git` and `node_modules` folders met, to walk last.
    never_entered: Vec<Folder>,
    /// Whether the folders walked are never scanned as text.
    head_only: bool,
}

impl Walk<'_> {
    /// What the walk left out: a gap where text goes unscanned, a note inside folders that
    /// are never scanned as text anyway (their gap is already said).
    fn gap(&mut self, path: &Path, why: String) {
        if self.head_only {
            note(self.notes, path, why);
        } else {
            self.gaps.push(Gap {
                path: path.to_path_buf(),
                why,
            });
        }
    }

    /// Walks the folders of `stack` (popped from the end) and every folder below them;
    /// whether the entry budget ran out.
    fn run(&mut self, mut stack: Vec<Folder>) -> bool {
        while let Some((shown_dir, real_dir, depth)) = stack.pop() {
            let Some((entries, cut)) = self.read_folder(&shown_dir, &real_dir) else {
                continue;
            };
            let mut subdirs = Vec::new();
            for (name, file_type) in entries {
                if let Some(subdir) = self.entry(&shown_dir, &real_dir, &name, file_type, depth) {
                    subdirs.push(subdir);
                }
            }
            if cut {
                return true;
            }
            // Pushed in reverse name order, so popped in name order.
            stack.extend(subdirs.into_iter().rev());
        }
        false
    }

    /// A folder's entries in name order, and whether the entry budget ran out in it (the walk
    /// then stops).
    fn read_folder(
        &mut self,
        shown: &Path,
        real: &Path,
    ) -> Option<(Vec<(OsString, fs::FileType)>, bool)> {
        let reader = match fs::read_dir(real) {
            Ok(reader) => reader,
            Err(error) => {
                self.gap(shown, format!("cannot read this folder: {error}"));
                return None;
            }
        };
        let mut entries = Vec::new();
        let mut cut = false;
        for entry in reader {
            if self.budget == 0 {
                self.gap(
                    shown,
                    format!(
                        "the walk stopped here, after reading {MAX_ENTRIES_PER_SKILL} entries in this skill; the rest was not scanned"
                    ),
                );
                cut = true;
                break;
            }
            self.budget -= 1;
            match entry.and_then(|e| Ok((e.file_name(), e.file_type()?))) {
                Ok(entry) => entries.push(entry),
                Err(error) => self.gap(shown, format!("cannot read an entry: {error}")),
            }
        }
        entries.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        Some((entries, cut))
    }

    /// Takes one entry: a file is kept, a folder to walk is returned, anything else is noted.
    fn entry(
        &mut self,
        shown_dir: &Path,
        real_dir: &Path,
        name: &OsStr,
        file_type: fs::FileType,
        depth: usize,
    ) -> Option<Folder> {
        let shown = shown_dir.join(name);
        let path = real_dir.join(name);
        let (real, is_dir) = if file_type.is_symlink() {
            let Ok(real) = fs::canonicalize(&path) else {
                note(self.notes, &shown, "a broken link; not scanned".to_string());
                return None;
            };
            if !real.starts_with(&self.real_root) {
                let message = format!(
                    "a link to {}, outside the skill folder; not followed",
                    real.display()
                );
                note(self.notes, &shown, message);
                return None;
            }
            let is_dir = fs::metadata(&real).is_ok_and(|m| m.is_dir());
            (real, is_dir)
        } else {
            (path, file_type.is_dir())
        };
        if !is_dir {
            self.file(shown, real);
            return None;
        }
        if self.skip.contains(&real) {
            // Another skill, audited on its own.
            return None;
        }
        // Not marked visited yet: a `node_modules` that links to `scripts/` must not keep
        // `scripts/` from being scanned as text.
        if !self.head_only && name.to_str().is_some_and(|n| ALWAYS_SKIPPED.contains(&n)) {
            // A skill installed as a git clone has a `.git` of git's own objects: only its
            // executables matter, and saying it was not read as text would flag most clones.
            if name != ".git" {
                self.gap(
                    &shown,
                    format!(
                        "a folder never scanned as text (like every {}); only executables were looked for in it",
                        name.to_string_lossy()
                    ),
                );
            }
            self.never_entered.push((shown, real, depth + 1));
            return None;
        }
        if !self.visited.insert(real.clone()) {
            // A folder already walked.
            return None;
        }
        if depth + 1 > MAX_DEPTH_IN_SKILL {
            let message =
                format!("deeper than {MAX_DEPTH_IN_SKILL} folders inside the skill; not scanned");
            self.gap(&shown, message);
            return None;
        }
        Some((shown, real, depth + 1))
    }

    /// Keeps a file, within the bounds.
    fn file(&mut self, shown: PathBuf, real: PathBuf) {
        let head_only = self.head_only;
        if head_only {
            if self.heads < MAX_HEADS_PER_SKILL {
                self.heads += 1;
            } else {
                if self.heads == MAX_HEADS_PER_SKILL {
                    self.heads += 1;
                    let message = format!(
                        "more than {MAX_HEADS_PER_SKILL} files in folders never scanned as text; the rest were not looked at"
                    );
                    note(self.notes, &shown, message);
                }
                return;
            }
        } else if self.files.len() >= MAX_FILES_PER_SKILL {
            self.more_files += 1;
            return;
        }
        self.files.push(Entry {
            shown,
            real,
            head_only,
        });
    }
}
