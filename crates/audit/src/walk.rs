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

/// A file to scan: the path shown (the skill folder joined with the path inside it) and the
/// real path to open.
pub(crate) struct Entry {
    pub(crate) shown: PathBuf,
    pub(crate) real: PathBuf,
}

/// The files of the skill folder `dir`, in name order, depth first. Links are followed only
/// when they lead to somewhere inside the folder, each real folder once; `.git` and
/// `node_modules` are not entered; folders in `skip` (other skills, audited on their own) are
/// left out. Everything left out that is worth a word becomes a note.
pub(crate) fn skill_files(
    dir: &Path,
    skip: &HashSet<PathBuf>,
    notes: &mut Vec<Note>,
) -> Vec<Entry> {
    let real_root = match fs::canonicalize(dir) {
        Ok(real) => real,
        Err(error) => {
            note(notes, dir, format!("cannot open the skill folder: {error}"));
            return Vec::new();
        }
    };
    let mut walk = Walk {
        skip,
        notes,
        visited: HashSet::from([real_root.clone()]),
        real_root: real_root.clone(),
        files: Vec::new(),
        budget: MAX_ENTRIES_PER_SKILL,
        more_files: 0,
    };
    // (shown, real, depth), popped from the end: pushed in reverse name order.
    let mut stack = vec![(dir.to_path_buf(), real_root, 0_usize)];
    while let Some((shown_dir, real_dir, depth)) = stack.pop() {
        let Some((entries, cut)) = walk.read_folder(&shown_dir, &real_dir) else {
            continue;
        };
        let mut subdirs = Vec::new();
        for (name, file_type) in entries {
            if let Some(subdir) = walk.entry(&shown_dir, &real_dir, &name, file_type, depth) {
                subdirs.push(subdir);
            }
        }
        if cut {
            break;
        }
        stack.extend(subdirs.into_iter().rev());
    }
    if walk.more_files > 0 {
        let more = walk.more_files;
        note(
            walk.notes,
            dir,
            format!("{more} more files not scanned (at most {MAX_FILES_PER_SKILL} per skill)"),
        );
    }
    walk.files
}

fn note(notes: &mut Vec<Note>, path: &Path, message: String) {
    notes.push(Note {
        path: path.to_path_buf(),
        message,
    });
}

/// The state of one skill folder's walk.
struct Walk<'a> {
    skip: &'a HashSet<PathBuf>,
    notes: &'a mut Vec<Note>,
    real_root: PathBuf,
    visited: HashSet<PathBuf>,
    files: Vec<Entry>,
    /// Folder entries that may still be read.
    budget: usize,
    /// Files past [`MAX_FILES_PER_SKILL`].
    more_files: usize,
}

impl Walk<'_> {
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
                note(self.notes, shown, format!("cannot read folder: {error}"));
                return None;
            }
        };
        let mut entries = Vec::new();
        let mut cut = false;
        for entry in reader {
            if self.budget == 0 {
                note(
                    self.notes,
                    shown,
                    format!(
                        "stopped after reading {MAX_ENTRIES_PER_SKILL} entries in this skill; the rest was not scanned"
                    ),
                );
                cut = true;
                break;
            }
            self.budget -= 1;
            match entry.and_then(|e| Ok((e.file_name(), e.file_type()?))) {
                Ok(entry) => entries.push(entry),
                Err(error) => note(self.notes, shown, format!("cannot read an entry: {error}")),
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
    ) -> Option<(PathBuf, PathBuf, usize)> {
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
            if self.files.len() < MAX_FILES_PER_SKILL {
                self.files.push(Entry { shown, real });
            } else {
                self.more_files += 1;
            }
            return None;
        }
        if name.to_str().is_some_and(|n| ALWAYS_SKIPPED.contains(&n)) {
            note(
                self.notes,
                &shown,
                "not scanned (never entered)".to_string(),
            );
            return None;
        }
        if self.skip.contains(&real) || !self.visited.insert(real.clone()) {
            // Another skill, audited on its own; or a folder already walked.
            return None;
        }
        if depth + 1 > MAX_DEPTH_IN_SKILL {
            let message =
                format!("deeper than {MAX_DEPTH_IN_SKILL} folders inside the skill; not scanned");
            note(self.notes, &shown, message);
            return None;
        }
        Some((shown, real, depth + 1))
    }
}
