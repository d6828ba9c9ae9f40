//! Walking the roots for skill folders, and the resulting [`Library`].
//!
//! Rules, in the order they apply:
//! - Roots are walked in precedence order; within a root, entries in byte order of their names,
//!   depth first, a folder before what it holds. The first skill found with a name wins; every
//!   later copy is reported as shadowed, with both paths.
//! - A walk goes at most [`MAX_DEPTH`] folders deep and reads at most [`MAX_DIRS_PER_ROOT`]
//!   folders ([`MAX_DIRS_PER_EXPLICIT_ROOT`] for a root the user named), and at most
//!   [`MAX_ENTRIES_PER_FOLDER`] entries of each; a warning says when a bound cut the walk.
//! - `.git` and `node_modules` are never entered. Other hidden folders (`.name`) are skipped in
//!   project and user roots, where they are caches and tool state, but walked in explicit roots:
//!   a collection named on purpose may keep skills there (openai/skills' `.curated/`).
//! - Skill folders are walked too, so skills nested inside skills are found.
//! - Every path is resolved to its real location. A link whose target lies outside the root it
//!   was found in is not followed and is reported; a link is followed once, and never back into
//!   a folder that holds it (a cycle); the same real `SKILL.md` reached twice loads once.
//! - A skill file is read only when it is a regular file (or a link, inside the root, to one):
//!   a `SKILL.md` that is a FIFO, a socket or a device, or a link to one, is reported and
//!   skipped without being opened, and the open itself neither blocks nor follows a link that
//!   was swapped in after the check ([`crate::regular`]). Reading it is bounded too
//!   ([`crate::MAX_FRONTMATTER_BYTES`]).

use std::collections::{HashMap, HashSet};
use std::ffi::{OsStr, OsString};
use std::fs;
use std::io;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, mpsc};

use crate::diagnostic::Diagnostic;
use crate::dir::{DirHandle, Kind};
use crate::error::Error;
use crate::regular::describe;
use crate::roots::{Layout, Root, RootKind};
use crate::skill::{Form, Opener, SKILL_FILE_NAMES, Skill, SkillLocation, read_skill};

/// How many folders deep below a root the walk goes.
pub const MAX_DEPTH: usize = 6;
/// How many folders of a project or user root the walk reads at most.
pub const MAX_DIRS_PER_ROOT: usize = 2_000;
/// How many folders of an explicit root the walk reads at most: the user named it, so large
/// collections are walked whole.
pub const MAX_DIRS_PER_EXPLICIT_ROOT: usize = 100_000;
/// Folder names never entered.
pub const ALWAYS_SKIPPED: [&str; 2] = [".git", "node_modules"];
/// How many entries of one folder the walk reads at most; past it, a warning says the rest of
/// that folder was not searched (its own skill file, if it has one, is still found).
pub const MAX_ENTRIES_PER_FOLDER: usize = 100_000;
/// The most threads used to read frontmatters.
const MAX_READ_THREADS: usize = 8;
/// How many found skills may wait for a reader; each holds an open folder, so this bounds the
/// descriptors discovery keeps open.
const READ_QUEUE: usize = 128;

/// The skills found under a set of roots, with every problem met on the way.
#[derive(Debug, Clone, Default)]
pub struct Library {
    skills: Vec<Skill>,
    by_name: HashMap<String, usize>,
    diagnostics: Vec<Diagnostic>,
    folders: Vec<PathBuf>,
}

impl Library {
    /// Every skill found, in precedence order (no two with the same name).
    pub fn skills(&self) -> &[Skill] {
        &self.skills
    }

    /// The skills the model may load, in precedence order.
    pub fn model_invocable(&self) -> impl Iterator<Item = &Skill> {
        self.skills.iter().filter(|skill| skill.model_invocable())
    }

    /// The skill with this name.
    pub fn get(&self, name: &str) -> Option<&Skill> {
        self.by_name.get(name).map(|&index| &self.skills[index])
    }

    /// Problems not attached to one skill: unreadable files and folders, links out of a root,
    /// cut walks, shadowed copies.
    pub fn diagnostics(&self) -> &[Diagnostic] {
        &self.diagnostics
    }

    /// The real path of every folder the walk read, in the walk's order: what a watcher
    /// watches to see every change discovery would see, and nothing it would not (links out of a
    /// root, skipped folders, folders past a bound).
    pub fn folders(&self) -> &[PathBuf] {
        &self.folders
    }

    /// The same library with only the skills `keep` keeps (their diagnostics, the walk's and
    /// the folders it read unchanged, so a watcher still sees every change). A skill left out
    /// does not bring back a copy it shadowed.
    #[must_use]
    pub fn retain(&self, keep: impl Fn(&Skill) -> bool) -> Self {
        let mut library = Self {
            diagnostics: self.diagnostics.clone(),
            folders: self.folders.clone(),
            ..Self::default()
        };
        for skill in self.skills.iter().filter(|skill| keep(skill)) {
            library
                .by_name
                .insert(skill.name.clone(), library.skills.len());
            library.skills.push(skill.clone());
        }
        library
    }

    fn add(&mut self, skill: Skill) {
        if let Some(&index) = self.by_name.get(&skill.name) {
            let winner = &mut self.skills[index];
            self.diagnostics.push(
                Diagnostic::warning(
                    &skill.file,
                    format!(
                        "skill '{}' is shadowed by {}, which comes first",
                        skill.name,
                        winner.file.display()
                    ),
                )
                .with_field("name")
                .with_hint("rename one of them, or remove the copy you do not want"),
            );
            winner.shadowed.push(skill.file);
            return;
        }
        self.by_name.insert(skill.name.clone(), self.skills.len());
        self.skills.push(skill);
    }
}

/// Finds every skill under `roots` (highest precedence first) and reads their frontmatter.
/// Roots that do not exist are empty. Never fails: problems become diagnostics.
///
/// The walk runs on the calling thread while reader threads parse the files it finds, so the
/// two overlap (as `find | xargs` does); the result keeps the walk's order.
pub fn discover(roots: &[Root]) -> Library {
    let readers = std::thread::available_parallelism()
        .map_or(1, std::num::NonZero::get)
        .clamp(1, MAX_READ_THREADS);
    let (sender, receiver) = mpsc::sync_channel::<Found>(READ_QUEUE);
    let receiver = Mutex::new(receiver);
    let (walk, mut results) = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..readers)
            .map(|_| scope.spawn(|| read_from(&receiver)))
            .collect();
        let mut walk = Walk {
            sink: Some(sender),
            ..Walk::default()
        };
        for root in roots {
            walk.root(root);
        }
        // Closing the channel lets the readers finish.
        walk.sink = None;
        let results: Vec<_> = handles
            .into_iter()
            .flat_map(|handle| match handle.join() {
                Ok(results) => results,
                // A panic in a reader thread is a bug; surface it where it happened.
                Err(payload) => std::panic::resume_unwind(payload),
            })
            .collect();
        (walk, results)
    });
    results.sort_unstable_by_key(|(index, _)| *index);
    let mut diagnostics = walk.diagnostics;
    let mut library = Library::default();
    for (_, result) in results {
        match result {
            Ok(skill) => library.add(skill),
            Err(diagnostic) => diagnostics.push(diagnostic),
        }
    }
    diagnostics.append(&mut library.diagnostics);
    diagnostics.extend(look_alikes(&library.skills));
    library.diagnostics = diagnostics;
    library.folders = walk.folders;
    library
}

/// The longest name compared for look-alikes, in characters (twice the longest valid name);
/// longer names are invalid anyway, and the comparison stays bounded.
const MAX_LOOK_ALIKE_NAME_CHARS: usize = 128;

/// A warning for each skill whose name differs from an earlier one's only in case, width or
/// characters drawn alike (`pdf`, `PDF`, Cyrillic `рdf`, fullwidth `ｐｄｆ`): a model or a
/// person may take one for the other. Names are compared by their UTS #39 skeletons, after
/// NFKC and lowercasing.
fn look_alikes(skills: &[Skill]) -> Vec<Diagnostic> {
    use unicode_normalization::UnicodeNormalization as _;
    let mut seen: HashMap<String, &Skill> = HashMap::new();
    let mut diagnostics = Vec::new();
    for skill in skills {
        if skill.name.chars().count() > MAX_LOOK_ALIKE_NAME_CHARS {
            continue;
        }
        let folded: String = skill.name.nfkc().collect::<String>().to_lowercase();
        let key: String = unicode_security::skeleton(&folded)
            .collect::<String>()
            .to_lowercase();
        match seen.get(&key) {
            Some(first) if first.name != skill.name => diagnostics.push(
                Diagnostic::warning(
                    &skill.file,
                    format!(
                        "skill '{}' looks like '{}' ({}): the names differ only in case, width or characters drawn alike",
                        crate::clean::escape_invisible(&skill.name),
                        crate::clean::escape_invisible(&first.name),
                        first.file.display()
                    ),
                )
                .with_field("name")
                .with_hint("rename one of them so a model or a person cannot take one for the other"),
            ),
            Some(_) => {}
            None => {
                seen.insert(key, skill);
            }
        }
    }
    diagnostics
}

type ReadResult = (usize, Result<Skill, Diagnostic>);

/// A skill file found by the walk: its place in the walk's order, where it is, and how to open
/// it (relative to its open folder, or at its real path when it was found through a link).
type Found = (usize, SkillLocation, Opener);

/// A reader thread: parses locations until the walk closes the channel. It never stops early,
/// even if parsing one file panicked (a bug, reported as that file's diagnostic), since the walk
/// waits on readers when the queue is full.
fn read_from(receiver: &Mutex<mpsc::Receiver<Found>>) -> Vec<ReadResult> {
    let mut results = Vec::new();
    loop {
        let next = receiver
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .recv();
        let Ok((index, location, opener)) = next else {
            return results;
        };
        let file = location.file.clone();
        let result = std::panic::catch_unwind(AssertUnwindSafe(|| read_skill(location, &opener)))
            .unwrap_or_else(|_| {
                Err(
                    Diagnostic::error(file, "internal error while reading this skill; skipped")
                        .with_hint("please report this file to the skillet developers"),
                )
            });
        results.push((index, result));
    }
}

/// Finds every skill file under `roots` without reading any, with the problems met on the way.
/// Each real file appears once, in precedence order.
pub fn locate(roots: &[Root]) -> (Vec<SkillLocation>, Vec<Diagnostic>) {
    let mut walk = Walk::default();
    for root in roots {
        walk.root(root);
    }
    (walk.locations, walk.diagnostics)
}

/// The state of a walk over all roots.
#[derive(Default)]
struct Walk {
    /// Where found skills go: to reader threads when set, else into `locations`.
    sink: Option<mpsc::SyncSender<Found>>,
    found: usize,
    locations: Vec<SkillLocation>,
    diagnostics: Vec<Diagnostic>,
    /// Real paths of the roots and link targets walked, so none is walked twice.
    visited_dirs: HashSet<PathBuf>,
    /// Real paths of every `SKILL.md` found, so none loads twice.
    seen_files: HashSet<PathBuf>,
    /// Every folder read, by its real path.
    folders: Vec<PathBuf>,
}

/// A folder waiting to be read: a child of an open folder, or a path (a root, a link target).
struct Pending {
    parent: Option<DirHandle>,
    name: OsString,
    path: PathBuf,
    depth: usize,
}

impl Pending {
    fn open(&self) -> io::Result<DirHandle> {
        match &self.parent {
            Some(parent) => parent.open_child(&self.name, self.path.clone()),
            None => DirHandle::open(&self.path),
        }
    }
}

impl Walk {
    fn root(&mut self, root: &Root) {
        let real_root = match fs::canonicalize(&root.path) {
            Ok(path) => path,
            Err(error) if error.kind() == io::ErrorKind::NotFound => return,
            Err(error) => {
                self.diagnostics.push(Diagnostic::warning(
                    &root.path,
                    format!("cannot open skills root: {error}"),
                ));
                return;
            }
        };
        if !real_root.is_dir() {
            self.diagnostics.push(
                Diagnostic::warning(&root.path, "skills root is not a folder; skipped")
                    .with_hint("a root is a folder holding skill folders"),
            );
            return;
        }
        if !self.visited_dirs.insert(real_root.clone()) {
            return;
        }
        let max_dirs = match root.kind {
            RootKind::Explicit => MAX_DIRS_PER_EXPLICIT_ROOT,
            RootKind::Project | RootKind::User => MAX_DIRS_PER_ROOT,
        };
        let mut stack = vec![Pending {
            parent: None,
            name: OsString::new(),
            path: real_root.clone(),
            depth: 0,
        }];
        let mut dirs_read = 0;
        let mut too_deep = 0;
        while let Some(pending) = stack.pop() {
            if dirs_read == max_dirs {
                self.diagnostics.push(
                    Diagnostic::warning(
                        &root.path,
                        format!(
                            "stopped after reading {max_dirs} folders; {} more not searched",
                            stack.len() + 1
                        ),
                    )
                    .with_hint("name the folder that holds your skills with --skills-dir"),
                );
                break;
            }
            dirs_read += 1;
            let dir = match pending.open() {
                Ok(dir) => dir,
                Err(error) => {
                    self.diagnostics.push(Diagnostic::warning(
                        &pending.path,
                        format!("cannot read folder: {error}"),
                    ));
                    continue;
                }
            };
            self.folders.push(dir.path().to_path_buf());
            let subdirs = self.read_dir(root, &real_root, &dir, pending.depth + 1);
            if pending.depth == MAX_DEPTH {
                too_deep += subdirs.len();
                continue;
            }
            stack.extend(subdirs.into_iter().rev());
        }
        if too_deep > 0 {
            self.diagnostics.push(
                Diagnostic::warning(
                    &root.path,
                    format!(
                        "{too_deep} folders lie deeper than {MAX_DEPTH} levels and were not searched"
                    ),
                )
                .with_hint("name a deeper folder with --skills-dir"),
            );
        }
    }

    /// Reads one folder: records its skill file, if any, and returns the subfolders to walk
    /// (not yet visited), sorted.
    fn read_dir(
        &mut self,
        root: &Root,
        real_root: &Path,
        handle: &DirHandle,
        child_depth: usize,
    ) -> Vec<Pending> {
        let dir = handle.path();
        let Some(mut entries) = self.entries(handle) else {
            return Vec::new();
        };
        entries.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        let mut subdirs = Vec::new();
        // (preference index, path as found, real path, how to open it)
        let mut skill_file: Option<(usize, PathBuf, PathBuf, Opener)> = None;
        // In a commands folder, every `NAME.md` is a skill of its own.
        let commands = root.layout == Layout::Commands;
        let mut command_files: Vec<(PathBuf, PathBuf, Opener)> = Vec::new();
        for (name, kind) in entries {
            let rank = if commands {
                is_command_file(&name).then_some(0)
            } else {
                SKILL_FILE_NAMES.iter().position(|n| OsStr::new(n) == name)
            };
            if let (Some(_), Kind::Other(what)) = (rank, kind) {
                // A FIFO, socket or device named SKILL.md: never opened (it could block).
                self.diagnostics.push(
                    Error::NotRegular {
                        path: dir.join(&name),
                        kind: what,
                        through_link: false,
                    }
                    .to_diagnostic(),
                );
                continue;
            }
            let maybe_dir = matches!(kind, Kind::Dir | Kind::Symlink);
            if (rank.is_none() && !maybe_dir) || (maybe_dir && !is_walked(&name, root.kind)) {
                continue; // an ordinary file, or a folder never walked
            }
            let path = dir.join(&name);
            if kind == Kind::Dir {
                // Plain folders form a tree and are reached once.
                subdirs.push(Pending {
                    parent: Some(handle.clone()),
                    name,
                    path,
                    depth: child_depth,
                });
                continue;
            }
            let (real, target, opener) = if kind == Kind::Symlink {
                match self.follow_link(&path, real_root) {
                    Some((real, target)) => {
                        let opener = Opener::Resolved(real.clone());
                        (real, target, opener)
                    }
                    None => continue,
                }
            } else {
                let opener = Opener::InDir(handle.clone(), name.clone());
                (path.clone(), Target::File, opener)
            };
            match target {
                Target::Dir => {
                    // A link is followed once, and never back to a folder that holds it (a
                    // cycle). A folder reached both through a link and directly is walked
                    // twice, but its skill files load once.
                    if dir.starts_with(&real) || !self.visited_dirs.insert(real.clone()) {
                        continue;
                    }
                    subdirs.push(Pending {
                        parent: None,
                        name,
                        path: real,
                        depth: child_depth,
                    });
                }
                Target::File if commands => {
                    if rank.is_some() {
                        command_files.push((path, real, opener));
                    }
                }
                Target::File => {
                    if let Some(rank) = rank
                        && skill_file.as_ref().is_none_or(|(best, ..)| rank < *best)
                    {
                        skill_file = Some((rank, path, real, opener));
                    }
                }
                Target::Other(what) => {
                    if rank.is_some() {
                        self.diagnostics.push(
                            Error::NotRegular {
                                path,
                                kind: what,
                                through_link: true,
                            }
                            .to_diagnostic(),
                        );
                    }
                }
            }
        }
        let folder_skill = skill_file.map(|(_, file, real, opener)| (file, real, opener));
        self.found_in(root, real_root, dir, folder_skill, command_files);
        subdirs
    }

    /// Records what one folder holds: its skill file, or (in a commands folder) its commands;
    /// each real file once.
    fn found_in(
        &mut self,
        root: &Root,
        real_root: &Path,
        dir: &Path,
        skill_file: Option<(PathBuf, PathBuf, Opener)>,
        command_files: Vec<(PathBuf, PathBuf, Opener)>,
    ) {
        let namespace = (!command_files.is_empty()).then(|| namespace(dir, real_root));
        let found = skill_file
            .map(|file| (file, Form::Folder))
            .into_iter()
            .chain(command_files.into_iter().map(|file| {
                let namespace = namespace.clone().unwrap_or_default();
                (file, Form::Command { namespace })
            }));
        for ((file, real, opener), form) in found {
            if self.seen_files.insert(real) {
                let location = SkillLocation {
                    file,
                    dir: dir.to_path_buf(),
                    root: real_root.to_path_buf(),
                    root_kind: root.kind,
                    form,
                };
                self.record(location, opener);
            }
        }
    }

    /// A folder's entries, at most [`MAX_ENTRIES_PER_FOLDER`] (with a warning when there were
    /// more) plus its skill files; `None` (with a warning) when it cannot be read.
    fn entries(&mut self, handle: &DirHandle) -> Option<Vec<(OsString, Kind)>> {
        let dir = handle.path();
        let entries = match handle.entries(MAX_ENTRIES_PER_FOLDER) {
            Ok((entries, false)) => entries,
            Ok((mut entries, true)) => {
                self.diagnostics.push(
                    Diagnostic::warning(
                        dir,
                        format!(
                            "folder has more than {MAX_ENTRIES_PER_FOLDER} entries; only {MAX_ENTRIES_PER_FOLDER} were searched"
                        ),
                    )
                    .with_hint("move what is not a skill out of the skills folder"),
                );
                // The folder's own skill file is looked up by name, wherever it lies.
                for name in SKILL_FILE_NAMES {
                    let name = OsStr::new(name);
                    if !entries.iter().any(|(entry, _)| entry == name)
                        && let Some(kind) = handle.kind_of(name)
                    {
                        entries.push((name.to_os_string(), kind));
                    }
                }
                entries
            }
            Err(error) => {
                self.diagnostics.push(Diagnostic::warning(
                    dir,
                    format!("cannot read folder: {error}"),
                ));
                return None;
            }
        };
        Some(entries)
    }

    /// Hands a skill file found to the readers, or keeps it when nothing is read.
    fn record(&mut self, location: SkillLocation, opener: Opener) {
        match &self.sink {
            Some(sink) => {
                // Readers only stop once the channel closes, so sending cannot fail.
                let _ = sink.send((self.found, location, opener));
            }
            None => self.locations.push(location),
        }
        self.found += 1;
    }

    /// Resolves a link; `None` (with a diagnostic where it matters) when it is broken or leads
    /// outside the root. Returns the real path and what is there (checked without opening it).
    fn follow_link(&mut self, link: &Path, real_root: &Path) -> Option<(PathBuf, Target)> {
        let real = match fs::canonicalize(link) {
            Ok(real) => real,
            Err(error) => {
                self.diagnostics.push(Diagnostic::warning(
                    link,
                    format!("broken link, skipped: {error}"),
                ));
                return None;
            }
        };
        if !real.starts_with(real_root) {
            self.diagnostics.push(
                Diagnostic::warning(
                    link,
                    format!(
                        "link points outside its skills root (to {}); not loaded",
                        real.display()
                    ),
                )
                .with_hint(format!(
                    "skills may not pull in files from outside {}; add the target's folder as a root with --skills-dir instead",
                    real_root.display()
                )),
            );
            return None;
        }
        let target = match fs::metadata(&real) {
            Ok(metadata) if metadata.is_dir() => Target::Dir,
            Ok(metadata) if metadata.is_file() => Target::File,
            Ok(metadata) => Target::Other(describe(metadata.file_type())),
            Err(error) => {
                self.diagnostics.push(Diagnostic::warning(
                    link,
                    format!("broken link, skipped: {error}"),
                ));
                return None;
            }
        };
        Some((real, target))
    }
}

/// What a link inside a root leads to.
enum Target {
    Dir,
    File,
    /// A FIFO, a socket, a device: never opened.
    Other(&'static str),
}

/// Whether a file of a commands folder is a command: `NAME.md`, not hidden, `NAME` not empty.
fn is_command_file(name: &OsStr) -> bool {
    let bytes = name.as_encoded_bytes();
    bytes.len() > ".md".len() && bytes.ends_with(b".md") && bytes.first() != Some(&b'.')
}

/// A commands subfolder's namespace: the folders from the root to it, joined by `:` (empty at
/// the root).
fn namespace(dir: &Path, real_root: &Path) -> String {
    dir.strip_prefix(real_root)
        .map(|relative| {
            relative
                .components()
                .map(|part| part.as_os_str().to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join(":")
        })
        .unwrap_or_default()
}

/// Whether a folder with this name is walked in a root of this kind.
fn is_walked(name: &OsStr, kind: RootKind) -> bool {
    if ALWAYS_SKIPPED
        .iter()
        .any(|skipped| OsStr::new(skipped) == name)
    {
        return false;
    }
    let hidden = name.as_encoded_bytes().first() == Some(&b'.');
    !hidden || kind == RootKind::Explicit
}
