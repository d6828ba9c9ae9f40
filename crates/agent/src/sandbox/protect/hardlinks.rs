//! Protected files with another name. A read-only mount keeps a path from being written, not
//! the file behind it: a file in a writable folder that is a hard link to a protected one
//! (`ln .git/config notes.txt`, shipped by an archive) would let a command change the protected
//! file through the writable name. No mount can pin a name that is not known, and finding it
//! would mean walking every writable folder; so where a protected file has more than one name,
//! the command gets no writable folder at all (fail closed), and the user is told which file
//! and how to give it one name again.
//!
//! The links inside protected folders are followed too: what they lead to is protected.
//!
//! Hard links from a writable folder to files elsewhere (a package manager's store that pnpm or
//! uv links into `node_modules` or `.venv`) are not caught: see docs/sandbox.md's limits.

use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};

/// The most entries of protected folders (inside writable ones) looked at for files with
/// another name; past it, the rest are not looked at, and the user is told.
pub const MAX_PROTECTED_ENTRIES: usize = 20_000;

/// The most files with another name kept to name them.
const NAMED: usize = 3;

/// What the look found.
#[derive(Debug, Default)]
pub struct Shared {
    /// Protected files with another name (at most a few are kept, to name them).
    pub files: Vec<PathBuf>,
    /// Protected folders that could not be read (their files' names unknown): as bad.
    pub unreadable: Vec<PathBuf>,
    /// The links inside protected folders and where they lead (`.git/hooks/pre-commit ->
    /// ../../scripts/pre-commit.sh`), as written: git and the agents read through them, so
    /// what they lead to is protected too.
    pub link_targets: Vec<(PathBuf, PathBuf)>,
    /// Whether [`MAX_PROTECTED_ENTRIES`] stopped the look.
    pub overflow: bool,
}

impl Shared {
    /// Whether a command must get no writable folder: a protected file with another name, or
    /// a protected folder whose files could not be listed.
    pub fn fail_closed(&self) -> bool {
        !self.files.is_empty() || !self.unreadable.is_empty()
    }
}

/// The regular files among `read_only` (and beneath its folders, but for `skipped` ones: those
/// bound writable again, the home folder's caches) that lie in a writable folder and have more
/// than one name.
pub fn shared(read_only: &[PathBuf], writable: &[PathBuf], skipped: &[PathBuf]) -> Shared {
    let mut found = Shared::default();
    let mut budget = MAX_PROTECTED_ENTRIES;
    for path in read_only {
        if writable.iter().any(|root| path.starts_with(root)) {
            look(path, skipped, &mut budget, &mut found);
        }
    }
    found
}

fn look(path: &Path, reopened: &[PathBuf], budget: &mut usize, found: &mut Shared) {
    // The object store's packs and `info`: `git clone` of a local repository links them to
    // the original's, and git never writes them in place; one changed through another name
    // is told after the command ([`crate::sandbox::objects`]), since failing every command of
    // every such clone would leave commands nothing.
    if reopened.iter().any(|open| open == path)
        || path.ends_with("objects/pack")
        || path.ends_with("objects/info")
    {
        return;
    }
    if *budget == 0 {
        found.overflow = true;
        return;
    }
    *budget -= 1;
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return;
    };
    if meta.is_symlink() {
        if let Ok(target) = std::fs::read_link(path) {
            let target = path
                .parent()
                .map_or(target.clone(), |dir| dir.join(&target));
            // As written, not resolved: the layout walks it as the kernel does, so a link on
            // the way (`cfg -> real` in `../cfg/claude.json`) is noted and its replacement
            // told after, and a `..` after a link leaves where that link leads.
            found.link_targets.push((path.to_path_buf(), target));
        }
        return;
    }
    if meta.is_file() && meta.nlink() > 1 {
        // A few are kept, to name them; one is enough to fail closed.
        if found.files.len() < NAMED {
            found.files.push(path.to_path_buf());
        }
        return;
    }
    if meta.is_dir() {
        let Ok(entries) = std::fs::read_dir(path) else {
            found.unreadable.push(path.to_path_buf());
            return;
        };
        for entry in entries.flatten() {
            look(&entry.path(), reopened, budget, found);
            if found.overflow {
                return;
            }
        }
    }
}

/// What the user is told about `found`, when there is anything to tell.
pub fn told(found: &Shared) -> Vec<String> {
    let mut said = Vec::new();
    if let Some(first) = found.files.first() {
        let names: Vec<String> = found
            .files
            .iter()
            .map(|file| file.display().to_string())
            .collect();
        said.push(format!(
            "{} has another name (a hard link), through which a command could change it: commands nobody reviewed write nowhere until it has one name\n  hint: `find . -samefile {}` finds the other; `cp -p FILE FILE.new && mv FILE.new FILE` gives it one",
            names.join(", "),
            first.display()
        ));
    }
    if let Some(folder) = found.unreadable.first() {
        said.push(format!(
            "{} cannot be read, so skillet cannot tell whether a file in it has another name (a hard link) a command could change it through: commands nobody reviewed write nowhere until it can\n  hint: `chmod u+rx {}`",
            folder.display(),
            folder.display()
        ));
    }
    if found.overflow {
        said.push(format!(
            "protected folders hold more than {MAX_PROTECTED_ENTRIES} entries: the rest were not checked for files with another name (a hard link)"
        ));
    }
    said
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_protected_file_with_another_name_is_found_only_in_a_writable_folder() {
        let temp = tempfile::tempdir().unwrap();
        let root = temp.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join(".git/hooks")).unwrap();
        std::fs::write(root.join(".git/config"), "[core]\n").unwrap();
        std::fs::write(root.join(".git/hooks/pre-commit"), "#!/bin/sh\n").unwrap();
        let read_only = [root.join(".git/config"), root.join(".git/hooks")];
        let writable = [root.clone()];
        assert!(shared(&read_only, &writable, &[]).files.is_empty());
        std::fs::hard_link(root.join(".git/hooks/pre-commit"), root.join("notes.txt")).unwrap();
        let found = shared(&read_only, &writable, &[]);
        assert_eq!(found.files, [root.join(".git/hooks/pre-commit")]);
        assert!(told(&found)[0].contains("has another name"));
        // Outside every writable folder, a mount keeps it read-only whatever its names.
        assert!(
            shared(&read_only, &[root.join("elsewhere")], &[])
                .files
                .is_empty()
        );
        // A folder that cannot be read is as bad; a link inside leads to what is protected too.
        let hooks = root.join(".git/hooks");
        std::os::unix::fs::symlink("../../scripts/pre-commit.sh", hooks.join("post-merge"))
            .unwrap();
        let found = shared(std::slice::from_ref(&hooks), &writable, &[]);
        // As written (the layout walks it as the kernel does).
        assert_eq!(
            found.link_targets,
            [(
                hooks.join("post-merge"),
                hooks.join("../../scripts/pre-commit.sh")
            )]
        );
        let mode =
            |mode| <std::fs::Permissions as std::os::unix::fs::PermissionsExt>::from_mode(mode);
        std::fs::set_permissions(&hooks, mode(0o311)).unwrap();
        let unreadable = shared(std::slice::from_ref(&hooks), &writable, &[]);
        std::fs::set_permissions(&hooks, mode(0o755)).unwrap();
        // Root reads any folder: then there is nothing to tell, and that half is skipped,
        // saying so (CI runs the sandbox's end-to-end files as an unprivileged user too).
        if rustix::process::geteuid().is_root() {
            skillet_test_support::skip(
                "as root every folder can be read: the unreadable case is not checked",
            );
        } else {
            assert!(unreadable.fail_closed());
        }
        // Nor in a folder bound writable again.
        assert!(
            shared(&[root.join(".git")], &writable, &[root.join(".git/hooks")])
                .files
                .is_empty()
        );
    }
}
