//! Commands in their own Linux namespaces, through bubblewrap (`bwrap`), the tool Flatpak and
//! Claude Code's sandbox runtime use: user, mount, PID, IPC and UTS namespaces, and network
//! when the policy has none. What the command sees:
//!
//! - the whole file system read-only (`--ro-bind / /`), except the working directory, the
//!   folders the user's config adds and git directories outside the working directory (commits
//!   from a subfolder or a linked worktree);
//! - inside those, every protected path read-only ([`super::protect`]), placeholders mounted
//!   over the ones that do not exist yet;
//! - private `/tmp`, `/var/tmp`, `/run` and `/dev/shm` (empty tmpfs): no socket another process
//!   made there (tmux, an SSH or GPG agent, D-Bus, Docker) is reachable; a fresh `/dev` without
//!   the terminal, and its own `/proc` showing only its own processes;
//! - no capabilities (also when skillet runs as root: the user namespace is always made),
//!   `no_new_privs`, a new session (no `TIOCSTI` into the terminal), no further user namespaces;
//! - when its first process ends, the PID namespace ends and the kernel kills everything the
//!   command started, `setsid` or not; and if skillet dies, bwrap and the command die with it.
//!
//! bwrap is a separate program (LGPL-2.1-or-later, run, never linked), found on `PATH` outside
//! the working directory, and checked once per process by starting `true` in it.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use super::protect::{Layout, Placeholder};

/// Environment variable naming the bwrap to use (tests; a non-standard install).
pub const BWRAP_ENV: &str = "SKILLET_BWRAP";

/// Folders replaced by an empty tmpfs of the command's own.
pub const PRIVATE_FOLDERS: [&str; 3] = ["/tmp", "/var/tmp", "/run"];

/// Finds bwrap: `$SKILLET_BWRAP`, else the first on `PATH` (absolute entries only) outside
/// every folder commands may write (`untrusted`, [`super::host`]), so neither a repository nor
/// an earlier command can put its own in the way. The error says why none is usable.
pub fn find(untrusted: &[PathBuf]) -> Result<PathBuf, String> {
    if let Some(path) = std::env::var_os(BWRAP_ENV) {
        let path = PathBuf::from(path);
        if !path.is_absolute() {
            return Err(format!(
                "{BWRAP_ENV} must name bwrap by an absolute path (it is {})",
                path.display()
            ));
        }
        if !super::host::trusted(&path, untrusted) {
            return Err(format!(
                "{BWRAP_ENV} names {}, which is not an executable outside the folders commands may write",
                path.display()
            ));
        }
        return Ok(path);
    }
    super::host::find("bwrap", untrusted).ok_or_else(|| {
        "bubblewrap (bwrap) is not installed outside the folders commands may write; install it (Debian and Ubuntu: apt install bubblewrap) for commands in their own namespaces".to_string()
    })
}

/// Whether namespaces can be made here with `bwrap`, with the inner layer from `inner` when
/// given (checked once per process for each pair, by starting `true` that way): the error
/// when not (no user namespaces in a container, an AppArmor rule, an inner layer that fails).
pub fn usable(bwrap: &Path, inner: Option<&Path>) -> Result<(), String> {
    /// Each pair checked, and what the check found.
    type Checked = std::sync::Mutex<Vec<((PathBuf, Option<PathBuf>), Result<(), String>)>>;
    static CHECKED: OnceLock<Checked> = OnceLock::new();
    let checked = CHECKED.get_or_init(Default::default);
    let key = (bwrap.to_path_buf(), inner.map(Path::to_path_buf));
    if let Ok(list) = checked.lock()
        && let Some((_, result)) = list.iter().find(|(pair, _)| *pair == key)
    {
        return result.clone();
    }
    let mut args = base_args(false);
    args.extend(["--ro-bind", "/", "/", "--tmpfs", "/run"].map(OsString::from));
    if let Some(inner) = inner {
        args.extend([
            "--ro-bind".into(),
            inner.as_os_str().to_os_string(),
            INNER_PATH.into(),
        ]);
        args.extend(
            ["--", INNER_PATH, INNER_ARG, "no-network", "no-unix", "/tmp"].map(OsString::from),
        );
    }
    args.extend(["--", "true"].map(OsString::from));
    let mut probe = std::process::Command::new(bwrap);
    // Nothing of skillet's environment (its keys) in a process others of the user can read.
    probe.env_clear();
    if let Some(path) = std::env::var_os("PATH") {
        probe.env("PATH", path);
    }
    let result = match probe
        .args(&args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .output()
    {
        Ok(output) if output.status.success() => Ok(()),
        Ok(output) => Err(format!(
            "{} cannot make namespaces here: {}",
            bwrap.display(),
            String::from_utf8_lossy(&output.stderr).trim()
        )),
        Err(error) => Err(format!("cannot run {}: {error}", bwrap.display())),
    };
    if let Ok(mut list) = checked.lock() {
        list.push((key, result.clone()));
    }
    result
}

/// The namespaces and process rules, before any mount.
fn base_args(network: bool) -> Vec<OsString> {
    let mut args: Vec<OsString> = [
        "--unshare-user",
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--disable-userns",
        "--die-with-parent",
        "--new-session",
        "--cap-drop",
        "ALL",
    ]
    .map(OsString::from)
    .to_vec();
    if !network {
        args.push("--unshare-net".into());
    }
    args
}

/// Read-only sources for placeholders: an empty folder, an empty file, a `commondir` of `.`.
#[derive(Debug)]
pub struct Sources {
    folder: PathBuf,
    empty: PathBuf,
    commondir: PathBuf,
    locks: PathBuf,
}

impl Sources {
    /// The lock file sandboxed commands in `cwd` hold while they run
    /// ([`super::placeholders`]): one per working directory (named by a stable hash of its
    /// path), so commands elsewhere never keep this one's placeholders in place.
    pub fn lock(&self, cwd: &Path) -> PathBuf {
        self.locks.join(super::path_name(cwd))
    }

    /// The source for a placeholder.
    fn of(&self, placeholder: &Placeholder) -> &Path {
        match placeholder {
            Placeholder::Folder => &self.folder,
            Placeholder::File(b"") => &self.empty,
            Placeholder::File(_) => &self.commondir,
        }
    }

    /// Made once per process in a private folder of the temp dir (`skillet-sandbox-UID`, mode
    /// 0700, checked to be the user's own real folder; else one for this process): commands
    /// never see it (their `/tmp` is their own).
    pub fn get() -> Result<&'static Self, String> {
        static SOURCES: OnceLock<Result<Sources, String>> = OnceLock::new();
        SOURCES
            .get_or_init(|| {
                let base = std::env::temp_dir();
                let uid = rustix::process::getuid().as_raw();
                Self::make(&base.join(format!("skillet-sandbox-{uid}")))
                    .or_else(|_| {
                        Self::make(
                            &base.join(format!("skillet-sandbox-{uid}-{}", std::process::id())),
                        )
                    })
                    .map_err(|error| format!("cannot make the sandbox's placeholders: {error}"))
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    fn make(dir: &Path) -> std::io::Result<Self> {
        use std::os::unix::fs::{DirBuilderExt as _, MetadataExt as _, PermissionsExt as _};
        match std::fs::DirBuilder::new().mode(0o700).create(dir) {
            Ok(()) => {}
            Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(error) => return Err(error),
        }
        let metadata = std::fs::symlink_metadata(dir)?;
        if !metadata.is_dir()
            || metadata.uid() != rustix::process::getuid().as_raw()
            || metadata.mode() & 0o777 != 0o700
        {
            return Err(std::io::Error::other(format!(
                "{} is not a private folder of this user",
                dir.display()
            )));
        }
        let sources = Self {
            folder: dir.join("folder"),
            empty: dir.join("empty"),
            commondir: dir.join("commondir"),
            locks: dir.join("locks"),
        };
        for (folder, mode) in [(&sources.folder, 0o500), (&sources.locks, 0o700)] {
            match std::fs::DirBuilder::new().mode(mode).create(folder) {
                Ok(()) => {}
                Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(error) => return Err(error),
            }
        }
        for (file, bytes) in [
            (&sources.empty, &b""[..]),
            (&sources.commondir, &b".\n"[..]),
        ] {
            if std::fs::read(file).ok().as_deref() != Some(bytes) {
                let _ = std::fs::remove_file(file);
                std::fs::write(file, bytes)?;
            }
            std::fs::set_permissions(file, std::fs::Permissions::from_mode(0o400))?;
        }
        if std::fs::read_dir(&sources.folder)?.next().is_some() {
            return Err(std::io::Error::other("the empty folder is not empty"));
        }
        Ok(sources)
    }
}

/// How long a copy of an inner-layer binary is kept once made (another build's copy removes
/// it past this; a process whose copy went makes it again).
const INNER_COPY_KEPT: std::time::Duration = std::time::Duration::from_hours(1);

impl Sources {
    /// The inner layer's binary as mounted: `inner` itself, or, when it lies in a folder
    /// commands may write (skillet built inside the project it works on), a copy in this
    /// private folder, made once per build: a command cannot replace what the next command
    /// runs as its second layer.
    pub fn inner_binary(&self, inner: &Path, untrusted: &[PathBuf]) -> Result<PathBuf, String> {
        use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};
        /// Each binary asked for, and its copy: the first copy of a process stays its copy.
        static COPIES: OnceLock<std::sync::Mutex<Vec<(PathBuf, PathBuf)>>> = OnceLock::new();
        if super::host::trusted(inner, untrusted) {
            return Ok(inner.to_path_buf());
        }
        let copies = COPIES.get_or_init(Default::default);
        if let Ok(list) = copies.lock()
            && let Some((_, copy)) = list.iter().find(|(asked, _)| asked == inner)
            && copy.exists()
        {
            return Ok(copy.clone());
        }
        // This process's own binary is copied from what runs, not from the path, which a
        // command may have replaced since.
        let source = if std::env::current_exe().ok().as_deref() == Some(inner) {
            PathBuf::from("/proc/self/exe")
        } else {
            inner.to_path_buf()
        };
        let dir = self.folder.parent().unwrap_or(&self.folder);
        let metadata = std::fs::metadata(&source)
            .map_err(|error| format!("cannot read {}: {error}", inner.display()))?;
        let name = format!(
            "inner-{}-{}-{}-{}",
            metadata.dev(),
            metadata.ino(),
            metadata.size(),
            metadata.mtime_nsec() + metadata.mtime() * 1_000_000_000
        );
        let copy = dir.join(&name);
        let remember = |copy: &PathBuf| {
            if let Ok(mut list) = copies.lock() {
                list.retain(|(asked, _)| asked != inner);
                list.push((inner.to_path_buf(), copy.clone()));
            }
        };
        if std::fs::metadata(&copy).is_ok_and(|m| m.size() == metadata.size()) {
            remember(&copy);
            return Ok(copy);
        }
        let partial = dir.join(format!("{name}.{}", std::process::id()));
        let made = std::fs::copy(&source, &partial)
            .and_then(|_| {
                std::fs::set_permissions(&partial, std::fs::Permissions::from_mode(0o500))
            })
            .and_then(|()| std::fs::rename(&partial, &copy));
        if let Err(error) = made {
            let _ = std::fs::remove_file(&partial);
            return Err(format!(
                "cannot copy {} out of the folders commands may write: {error}",
                inner.display()
            ));
        }
        // Copies of other builds, unused for a while, go.
        if let Ok(entries) = std::fs::read_dir(dir) {
            for entry in entries.filter_map(Result::ok) {
                let stale = entry.file_name().to_string_lossy().starts_with("inner-")
                    && entry.file_name() != name.as_str()
                    && entry
                        .metadata()
                        .and_then(|m| m.modified())
                        .ok()
                        .and_then(|at| at.elapsed().ok())
                        .is_some_and(|age| age > INNER_COPY_KEPT);
                if stale {
                    let _ = std::fs::remove_file(entry.path());
                }
            }
        }
        remember(&copy);
        Ok(copy)
    }
}

/// The first argument that makes skillet's binary the sandbox's inner layer
/// ([`inner_main`]).
pub const INNER_ARG: &str = "__skillet-sandbox-inner";
/// Where the binary holding the inner layer is mounted inside the sandbox (read-only, in its
/// private `/run`), so it is found whatever the command's view of the file system.
const INNER_PATH: &str = "/run/skillet-sandbox-inner";
/// Folders the inner layer lets commands write besides the writable roots: their own.
const PRIVATE_WRITABLE: [&str; 4] = ["/tmp", "/var/tmp", "/run", "/dev/shm"];

/// The inner layer, run as the sandbox's first process: restricts itself with Landlock (writes
/// only beneath the writable folders, no signals out, no abstract UNIX sockets made outside
/// the sandbox, no TCP without the network) and, unless the policy lets them, refuses UNIX
/// sockets ([`super::seccomp`]), then becomes the command. Arguments:
/// `INNER_ARG network|no-network unix|no-unix WRITABLE… -- PROGRAM ARGS…`. Returns only when it cannot go
/// on (the command does not run): the error, for the caller to print.
pub fn inner_main(args: &[OsString]) -> String {
    use std::os::unix::process::CommandExt as _;
    let Some(split) = args.iter().position(|arg| arg == "--") else {
        return "the sandbox's inner layer was started without a command".to_string();
    };
    let (head, command) = (&args[..split], &args[split + 1..]);
    let (Some(network), Some(unix), Some((program, program_args))) =
        (head.get(1), head.get(2), command.split_first())
    else {
        return "the sandbox's inner layer was started without a command".to_string();
    };
    let network = network == "network";
    let writable: Vec<PathBuf> = head.iter().skip(3).map(PathBuf::from).collect();
    // bwrap passes on every descriptor it got: none but stdio reaches the command.
    if let Err(error) = super::close_on_exec_inherited() {
        return format!("cannot close inherited file descriptors to the command: {error}");
    }
    if let Err(error) = super::imp::restrict(&writable, network) {
        return format!("cannot restrict the command with Landlock: {error}");
    }
    if let Err(error) = super::seccomp::deny_sockets(unix == "unix", network) {
        return format!("cannot refuse UNIX or vsock sockets to the command: {error}");
    }
    let error = std::process::Command::new(program)
        .args(program_args)
        .exec();
    format!("cannot run {}: {error}", program.to_string_lossy())
}

/// bwrap's arguments up to and including `--`, for a command in `cwd` writing to `writable`
/// (real paths), with `layout` protected (none: a command the user reviewed), and the inner
/// Landlock layer run from `inner` (skillet's binary) when given.
pub fn args(
    network: bool,
    unix_sockets: bool,
    cwd: &Path,
    writable: &[PathBuf],
    layout: Option<&Layout>,
    sources: &Sources,
    inner: Option<&Path>,
) -> Vec<OsString> {
    let mut args = base_args(network);
    let mut push = |flag: &str, paths: &[&Path]| {
        args.push(flag.into());
        args.extend(paths.iter().map(|path| path.as_os_str().to_os_string()));
    };
    push("--ro-bind", &[Path::new("/"), Path::new("/")]);
    push("--dev", &[Path::new("/dev")]);
    push("--proc", &[Path::new("/proc")]);
    for folder in PRIVATE_FOLDERS {
        push("--tmpfs", &[Path::new(folder)]);
    }
    // Name resolution often goes through /run (systemd-resolved's stub file): that one file
    // stays readable.
    if let Ok(resolv) = std::fs::canonicalize("/etc/resolv.conf")
        && resolv.starts_with("/run")
    {
        push("--ro-bind-try", &[&resolv, &resolv]);
    }
    for folder in writable
        .iter()
        .chain(layout.iter().flat_map(|layout| layout.git_writable.iter()))
    {
        push("--bind", &[folder, folder]);
    }
    if let Some(layout) = layout {
        // Outermost first, so a mount inside another lands on top of it: a folder pinned or
        // bound writable again inside a read-only one, a protected path inside that.
        let mut mounts: Vec<(&str, &Path, &Path)> = Vec::new();
        mounts.extend(
            layout
                .pinned
                .iter()
                .map(|path| ("--bind", &**path, &**path)),
        );
        mounts.extend(
            layout
                .read_only
                .iter()
                .map(|path| ("--ro-bind", &**path, &**path)),
        );
        mounts.extend(
            layout
                .reopened
                .iter()
                .map(|path| ("--bind", &**path, &**path)),
        );
        mounts.extend(
            layout
                .missing
                .iter()
                .map(|(path, placeholder)| ("--ro-bind", sources.of(placeholder), &**path)),
        );
        mounts.sort_by_key(|(_, _, target)| target.components().count());
        for (flag, source, target) in mounts {
            push(flag, &[source, target]);
        }
    }
    if let Some(inner) = inner {
        push("--ro-bind", &[inner, Path::new(INNER_PATH)]);
    }
    push("--chdir", &[cwd]);
    args.push("--setenv".into());
    args.push("TMPDIR".into());
    args.push("/tmp".into());
    args.push("--".into());
    if inner.is_some() {
        args.push(INNER_PATH.into());
        args.push(INNER_ARG.into());
        args.push(if network { "network" } else { "no-network" }.into());
        args.push(if unix_sockets { "unix" } else { "no-unix" }.into());
        for folder in writable
            .iter()
            .chain(layout.iter().flat_map(|layout| layout.git_writable.iter()))
        {
            args.push(folder.as_os_str().to_os_string());
        }
        args.extend(PRIVATE_WRITABLE.map(OsString::from));
        args.push("--".into());
    }
    args
}
