//! Programs the sandbox itself runs on the host, outside any sandbox: `bwrap`, and `git` to
//! read a config's hooks path and includes. A command may write its writable folders, so a
//! program found there (a `bwrap` in a `bin/` of the project on `PATH`, a `.venv/bin/git`) is
//! the command's, not the user's: it would run with the user's full rights the next time. Such
//! candidates are skipped, as is any that only a link leads out of or into them.

use std::path::{Path, PathBuf};

/// The folders commands may write, real paths: `cwd`, the user's extra writable folders and
/// the temp dir (writable to commands when namespaces cannot be made).
pub fn untrusted_roots(cwd: &Path, writable: &[PathBuf]) -> Vec<PathBuf> {
    let mut roots: Vec<PathBuf> = std::iter::once(cwd.to_path_buf())
        .chain(writable.iter().cloned())
        .chain(std::iter::once(std::env::temp_dir()))
        .collect();
    let real: Vec<PathBuf> = roots
        .iter()
        .filter_map(|root| std::fs::canonicalize(root).ok())
        .collect();
    roots.extend(real);
    roots.sort();
    roots.dedup();
    roots
}

/// The first executable `name` on `PATH` (absolute entries only) that lies outside every
/// folder in `untrusted`, both as named and as its real path.
pub fn find(name: &str, untrusted: &[PathBuf]) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(name))
        .find(|candidate| trusted(candidate, untrusted))
}

/// Whether `path` is an executable file outside every folder in `untrusted` (as named, and
/// its real path).
pub fn trusted(path: &Path, untrusted: &[PathBuf]) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    let Ok(real) = std::fs::canonicalize(path) else {
        return false;
    };
    let executable =
        std::fs::metadata(&real).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0);
    executable
        && !untrusted
            .iter()
            .any(|root| path.starts_with(root) || real.starts_with(root))
}

/// Variables the host's git keeps from skillet's environment: what finds programs and the
/// user's own git config, wherever the user's git reads it (its hooks path and includes
/// matter). Nothing else reaches it, no key above all: whatever a repository makes it run sees
/// none.
const GIT_KEPT_VARIABLES: [&str; 7] = [
    "PATH",
    "HOME",
    "XDG_CONFIG_HOME",
    "LANG",
    "GIT_CONFIG_GLOBAL",
    "GIT_CONFIG_SYSTEM",
    "GIT_CONFIG_NOSYSTEM",
];

/// Config every host git (and every git it starts, submodules' included) runs with: nothing a
/// repository wrote may run or fetch. A partial clone's missing object would otherwise be
/// fetched through the repository's own `uploadpack` command. (The commands it runs, `ls-files`
/// and `config`, run no hooks; the hooks path is read, so it is not set here.)
const GIT_SAFE_CONFIG: [(&str, &str); 3] = [
    ("core.fsmonitor", "false"),
    ("protocol.allow", "never"),
    ("submodule.recurse", "false"),
];

/// Runs the host's git `command` until `deadline`, its output read by `read` beside it:
/// whether it exited with 0, and what `read` made of it. None when it did not start or did not
/// end in time (then it is killed). It gets no input, its errors are unread, and its
/// environment is only [`GIT_KEPT_VARIABLES`] with [`GIT_SAFE_CONFIG`] and no lazy fetching,
/// prompts or protocols, which the gits it starts inherit.
pub fn run_until<T: Send + 'static>(
    mut command: std::process::Command,
    deadline: std::time::Instant,
    read: impl FnOnce(std::process::ChildStdout) -> T + Send + 'static,
) -> Option<(bool, T)> {
    if std::time::Instant::now() >= deadline {
        return None;
    }
    command.env_clear();
    for name in GIT_KEPT_VARIABLES {
        if let Some(value) = std::env::var_os(name) {
            command.env(name, value);
        }
    }
    command
        .env("GIT_NO_LAZY_FETCH", "1")
        // An allow-list in the environment beats a repository's `protocol.<name>.allow`.
        .env("GIT_ALLOW_PROTOCOL", "none")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_PROTOCOL_FROM_USER", "0")
        .env("GIT_CONFIG_COUNT", GIT_SAFE_CONFIG.len().to_string());
    for (index, (key, value)) in GIT_SAFE_CONFIG.iter().enumerate() {
        command
            .env(format!("GIT_CONFIG_KEY_{index}"), key)
            .env(format!("GIT_CONFIG_VALUE_{index}"), value);
    }
    let output = command
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn();
    let Ok(mut child) = output else {
        return None;
    };
    let stdout = child.stdout.take()?;
    let reader = std::thread::spawn(move || read(stdout));
    let success = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status.success(),
            Ok(None) if std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(2));
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    };
    reader.join().ok().map(|read| (success, read))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_program_inside_a_writable_folder_is_not_trusted_even_through_a_link() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("project");
        let bin = project.join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        let program = bin.join("tool");
        std::fs::write(&program, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
        let outside = dir.path().join("outside");
        std::fs::create_dir_all(&outside).unwrap();
        std::os::unix::fs::symlink(&program, outside.join("tool")).unwrap();
        let untrusted = untrusted_roots(&project, &[]);
        assert!(!trusted(&program, &untrusted));
        assert!(
            !trusted(&outside.join("tool"), &untrusted),
            "a link into the project"
        );
        let elsewhere = [std::fs::canonicalize(&outside).unwrap()];
        assert!(trusted(&program, &elsewhere));
        // A folder named through a link is the same folder.
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&project, &link).unwrap();
        assert!(!trusted(&program, &untrusted_roots(&link, &[])));
    }
}
