//! The sandbox every command runs in: `bash`, skills' dynamic context and their scripts.
//!
//! On Linux with bubblewrap, each command gets its own namespaces ([`namespace`]): the file
//! system read-only except the working directory (and folders the user's config adds), the
//! protected paths inside it read-only too, existing or not ([`protect`]), private `/tmp` and
//! `/run`, its own `/proc` and PID namespace (nothing it starts outlives it), no capabilities,
//! and no network when the policy says so. A protected file cannot be changed, so nothing has
//! to be put back.
//!
//! Where namespaces cannot be made (no bwrap, a container without user namespaces), Landlock
//! alone: a command may read anywhere the user can, write only beneath the working directory,
//! the temp dir and the user's folders, not signal processes outside, not reach abstract UNIX
//! sockets made outside, and (with `network = false`) make no TCP connection. Landlock can only
//! allow, so there protected files are copied before a command nobody reviewed and put back
//! after it ([`crate::guard`]), and sockets on disk stay reachable before Landlock ABI 9;
//! [`probe`] says so, for the user to be told once. Landlock restricts a thread and what it
//! starts, so the command is spawned from a fresh thread that restricts itself first.
//!
//! Where the kernel has neither (or the user turned the sandbox off), commands run unsandboxed
//! and [`probe`] says so.

use std::path::{Path, PathBuf};

#[cfg(unix)]
pub mod aftermath;
#[cfg(unix)]
pub mod gitlinks;
pub mod host;
#[cfg(unix)]
mod inherited;
#[cfg(unix)]
pub mod moved_refs;
#[cfg(target_os = "linux")]
mod namespace;
#[cfg(target_os = "linux")]
pub mod objects;
#[cfg(target_os = "linux")]
mod placeholders;
#[cfg(unix)]
pub mod planted;
pub mod protect;
#[cfg(target_os = "linux")]
mod seccomp;

/// What a command may do.
#[derive(Debug, Clone, PartialEq, Eq)]
#[allow(
    clippy::struct_excessive_bools,
    reason = "independent switches of the user's config"
)]
pub struct SandboxPolicy {
    /// Sandbox commands at all.
    pub enabled: bool,
    /// Let commands make TCP connections and bind TCP ports.
    pub network: bool,
    /// Folders writable besides the working directory and the temp dir (the user's config).
    pub writable: Vec<PathBuf>,
    /// Folders added for the session (`--add-dir`, real paths): writable, and protected as the
    /// working directory is (its `.git`, `.envrc`, agents' folders…).
    pub added: Vec<PathBuf>,
    /// Variables passed to commands although they look like credentials (the user's config
    /// names them on purpose).
    pub pass_env: Vec<String>,
    /// Let commands make UNIX sockets (else `socket(AF_UNIX, …)` fails with `EPERM` in the inner
    /// layer, so no server on disk is reachable: Docker's, an SSH or password agent's in the
    /// home folder). Pairs (`socketpair`) always work.
    pub unix_sockets: bool,
    /// Use namespaces where they can be made (else Landlock alone); off only to compare the
    /// two mechanisms (tests, benchmarks).
    pub namespaces: bool,
    /// A binary that runs the inner Landlock layer inside the namespaces when started with
    /// [`INNER_ARG`] (skillet's own: [`inner_layer_if_asked`]); none: namespaces alone.
    pub inner: Option<PathBuf>,
    /// Folders of the program's own that commands nobody reviewed never change, wherever they
    /// fall inside a writable folder (skillet's: its config with the trust records, its data
    /// with the sessions, its cache).
    pub own: Vec<PathBuf>,
    /// The user's home folder: when a writable folder is it or holds it, its top and hidden
    /// entries (shells' startup files, tools' settings) stay read-only to commands nobody
    /// reviewed, and only its visible folders are writable.
    pub home: Option<PathBuf>,
    /// Where the sandbox keeps what it learnt between processes (the repositories nested in
    /// each workspace, so none can be pushed out of reach by a command of an earlier session);
    /// it should lie in one of [`SandboxPolicy::own`]. None: learnt anew by each process.
    pub state: Option<PathBuf>,
}

impl SandboxPolicy {
    /// What the layout of a command nobody reviewed protects besides its workspaces'
    /// protected paths: `roots` (the skill roots) and [`SandboxPolicy::own`], and the home folder.
    pub fn guarded<'a>(&'a self, roots: &'a [PathBuf]) -> protect::Guarded<'a> {
        protect::Guarded {
            roots,
            own: &self.own,
            home: self.home.as_deref(),
            state: self.state.as_deref(),
        }
    }
}

/// A file name standing for `path` (16 hex digits of its FNV-1a hash): the same in every
/// skillet build, so processes of different builds find each other's files (a workspace's
/// placeholder lock, its known nested repositories).
#[cfg(unix)]
fn path_name(path: &Path) -> String {
    use std::os::unix::ffi::OsStrExt as _;
    format!("{:016x}", fnv1a(path.as_os_str().as_bytes()))
}

/// FNV-1a of `bytes`: stable across builds and runs (names of files, digests to compare).
#[cfg(unix)]
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| {
        (hash ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The first argument that makes a binary the sandbox's inner layer.
#[cfg(unix)]
pub use inherited::close_on_exec_inherited;
#[cfg(target_os = "linux")]
pub use namespace::INNER_ARG;

/// Runs the sandbox's inner layer when this process was started as one (its first argument
/// [`INNER_ARG`]): call it first thing in `main` of a binary named as [`SandboxPolicy::inner`].
/// Returns when the process is not one; otherwise never (the command runs in its place, or
/// the process exits 126 saying why not).
pub fn inner_layer_if_asked() {
    #[cfg(target_os = "linux")]
    {
        let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
        if args.get(1).is_some_and(|arg| arg == INNER_ARG) {
            let error = namespace::inner_main(&args[1..]);
            let _ = std::io::Write::write_all(
                &mut std::io::stderr(),
                format!("skillet sandbox: {error}\n").as_bytes(),
            );
            std::process::exit(126);
        }
    }
}

impl Default for SandboxPolicy {
    fn default() -> Self {
        Self {
            enabled: true,
            network: true,
            writable: Vec::new(),
            added: Vec::new(),
            pass_env: Vec::new(),
            unix_sockets: false,
            namespaces: true,
            inner: None,
            own: Vec::new(),
            home: None,
            state: None,
        }
    }
}

/// How commands are contained on this machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SandboxStatus {
    /// Every restriction is enforced.
    Enforced,
    /// Some restrictions could not be enforced (an older kernel); the reason says which.
    Partial(String),
    /// No sandbox: commands can write anywhere the user can; the reason says why.
    Unavailable(String),
    /// The user turned it off.
    Off,
}

impl SandboxStatus {
    /// What to tell the user once, when commands are not fully contained.
    pub fn notice(&self) -> Option<String> {
        match self {
            Self::Enforced => None,
            Self::Partial(why) => Some(format!("the bash sandbox is only partly enforced: {why}")),
            Self::Unavailable(why) => Some(format!(
                "bash commands run without a sandbox ({why}): they can write anywhere you can"
            )),
            Self::Off => Some(
                "bash commands run without a sandbox (sandbox.enabled = false in your config)"
                    .to_string(),
            ),
        }
    }
}

/// Devices a command may write to (output thrown away). Not the terminal: what a command writes
/// there would bypass skillet's neutralising of escape sequences.
pub const WRITABLE_DEVICES: [&str; 3] = ["/dev/null", "/dev/zero", "/dev/full"];

/// How commands are contained here, chosen once per command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mechanism {
    /// Namespaces through this bwrap: protected paths are read-only mounts.
    Namespaces(PathBuf),
    /// Landlock alone (no namespaces here, said in the reason): protected files are copied
    /// before a command nobody reviewed and put back after it.
    Landlock(String),
    /// No sandbox.
    Off,
}

/// The mechanism for commands in `cwd` under `policy`.
pub fn mechanism(policy: &SandboxPolicy, cwd: &Path) -> Mechanism {
    mechanism_in(policy, &host::untrusted_roots(cwd, &policy.writable))
}

/// [`mechanism`], the folders commands may write worked out already
/// ([`host::untrusted_roots`]).
fn mechanism_in(policy: &SandboxPolicy, untrusted: &[PathBuf]) -> Mechanism {
    if !policy.enabled {
        return Mechanism::Off;
    }
    if !policy.namespaces {
        return Mechanism::Landlock("namespaces are turned off for these commands".to_string());
    }
    #[cfg(target_os = "linux")]
    {
        let usable = namespace::find(untrusted).and_then(|bwrap| {
            let inner = inner_binary(policy, untrusted)?;
            namespace::usable(&bwrap, inner.as_deref()).map(|()| bwrap)
        });
        match usable {
            Ok(bwrap) => Mechanism::Namespaces(bwrap),
            Err(why) => Mechanism::Landlock(why),
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = untrusted;
        Mechanism::Landlock("namespaces are Linux's".to_string())
    }
}

/// The inner layer's binary as mounted ([`namespace::Sources::inner_binary`]), if any.
#[cfg(target_os = "linux")]
fn inner_binary(policy: &SandboxPolicy, untrusted: &[PathBuf]) -> Result<Option<PathBuf>, String> {
    let Some(inner) = &policy.inner else {
        return Ok(None);
    };
    namespace::Sources::get()?
        .inner_binary(inner, untrusted)
        .map(Some)
}

/// One command's sandbox, prepared: build the command with [`Launch::command`], start it with
/// [`Launch::spawn`], and drop the launch once the command has ended (that removes the
/// placeholders it mounted over).
pub struct Launch {
    mechanism: Mechanism,
    prefix: Vec<std::ffi::OsString>,
    network: bool,
    writable: Vec<PathBuf>,
    #[cfg(target_os = "linux")]
    placeholders: Option<placeholders::Made>,
    /// Links on the way to protected paths, and what each read (see [`aftermath`]).
    links: Vec<(PathBuf, PathBuf)>,
    /// What the layout could not look into ([`protect::Layout::incomplete`]).
    incomplete: Vec<String>,
    /// Whether git's packs are read-only to the command ([`GIT_LOOSE_SETTINGS`] then apply).
    packs_read_only: bool,
}

/// Where git takes `git -c` settings from the environment.
pub const GIT_CONFIG_PARAMETERS: &str = "GIT_CONFIG_PARAMETERS";

/// Git's settings for a command whose object store takes only loose objects (its packs are
/// read-only): no automatic repacking, and fetched objects kept loose rather than in a pack,
/// so `git commit` and `git pull` work and `git gc` is left to the user. Given as
/// `GIT_CONFIG_PARAMETERS` (what `git -c` passes on), after any the user's environment holds.
pub const GIT_LOOSE_SETTINGS: [&str; 5] = [
    "gc.auto=0",
    "maintenance.auto=false",
    "fetch.unpackLimit=2147483647",
    "transfer.unpackLimit=2147483647",
    "fetch.writeCommitGraph=false",
];

impl Launch {
    /// Prepares a command in `cwd`. `protect` holds the skill roots to protect when nobody
    /// reviews the command (none: the user approved this very command, which may change
    /// anything in the working directory).
    pub fn prepare(
        policy: &SandboxPolicy,
        cwd: &Path,
        protect: Option<&[PathBuf]>,
    ) -> std::io::Result<Self> {
        let untrusted = host::untrusted_roots(cwd, &policy.writable);
        let mechanism = mechanism_in(policy, &untrusted);
        let mut launch = Self {
            mechanism,
            prefix: Vec::new(),
            network: policy.network,
            writable: writable_roots(policy, cwd),
            #[cfg(target_os = "linux")]
            placeholders: None,
            links: Vec::new(),
            incomplete: Vec::new(),
            packs_read_only: false,
        };
        #[cfg(target_os = "linux")]
        if let Mechanism::Namespaces(bwrap) = &launch.mechanism {
            let sources = namespace::Sources::get().map_err(std::io::Error::other)?;
            let mut writable = vec![cwd.to_path_buf()];
            writable.extend(
                policy
                    .writable
                    .iter()
                    .filter_map(|dir| std::fs::canonicalize(dir).ok()),
            );
            let workspaces: Vec<PathBuf> = std::iter::once(cwd.to_path_buf())
                .chain(policy.added.iter().cloned())
                .collect();
            let layout = protect
                .map(|roots| protect::layout_for(&workspaces, &writable, &policy.guarded(roots)));
            if let Some(layout) = &layout {
                launch.packs_read_only = true;
                launch.links.clone_from(&layout.links);
                launch.incomplete.clone_from(&layout.incomplete);
                launch.placeholders = Some(placeholders::Made::create(
                    |path| sources.lock(path),
                    &layout.missing,
                )?);
            }
            launch.prefix.push(bwrap.as_os_str().to_os_string());
            launch.prefix.extend(namespace::args(
                policy.network,
                policy.unix_sockets,
                cwd,
                &writable,
                layout.as_ref(),
                sources,
                inner_binary(policy, &untrusted)
                    .map_err(std::io::Error::other)?
                    .as_deref(),
            ));
        }
        let _ = protect;
        Ok(launch)
    }

    /// How this command is contained.
    pub fn mechanism(&self) -> &Mechanism {
        &self.mechanism
    }

    /// Links met on the way to protected paths (a command nobody reviewed, in namespaces), and
    /// what each read: a command can replace them ([`aftermath`]).
    pub fn links(&self) -> &[(PathBuf, PathBuf)] {
        &self.links
    }

    /// What could not be protected because it could not be looked into (a workspace too large
    /// to walk for nested repositories): the user is to be told, once.
    pub fn incomplete(&self) -> &[String] {
        &self.incomplete
    }

    /// Whether protected files must be copied and put back around this command: only where
    /// namespaces cannot keep them read-only.
    pub fn needs_put_back(&self) -> bool {
        matches!(self.mechanism, Mechanism::Landlock(_))
    }

    /// A command running `program` in the sandbox; add its arguments, environment and stdio.
    pub fn command(&self, program: &str) -> tokio::process::Command {
        match self.prefix.split_first() {
            Some((bwrap, args)) => {
                let mut command = tokio::process::Command::new(bwrap);
                command.args(args).arg(program);
                command
            }
            None => tokio::process::Command::new(program),
        }
    }

    /// The variable that gives the command [`GIT_LOOSE_SETTINGS`] when its packs are read-only,
    /// after `user`'s (the user's own `git -c` settings as the command may see them; none when
    /// withheld): set it after the withheld variables are removed.
    pub fn git_settings(
        &self,
        user: Option<std::ffi::OsString>,
    ) -> Option<(&'static str, std::ffi::OsString)> {
        if !self.packs_read_only {
            return None;
        }
        let mut parameters = user.unwrap_or_default();
        for setting in GIT_LOOSE_SETTINGS {
            if !parameters.is_empty() {
                parameters.push(" ");
            }
            parameters.push(format!("'{setting}'"));
        }
        Some((GIT_CONFIG_PARAMETERS, parameters))
    }

    /// Starts `command` (from [`Launch::command`]). A sandbox that the kernel supports but that
    /// cannot be set up is an error: the command does not run.
    pub async fn spawn(
        &self,
        mut command: tokio::process::Command,
    ) -> std::io::Result<tokio::process::Child> {
        match &self.mechanism {
            Mechanism::Off | Mechanism::Namespaces(_) => command.spawn(),
            Mechanism::Landlock(_) => {
                let writable = self.writable.clone();
                let network = self.network;
                let handle = tokio::runtime::Handle::current();
                let (sender, receiver) = tokio::sync::oneshot::channel();
                std::thread::Builder::new()
                    .name("skillet-sandbox".into())
                    .spawn(move || {
                        let result = imp::restrict(&writable, network).and_then(|_| {
                            let _runtime = handle.enter();
                            command.spawn()
                        });
                        // Cancelled while starting: nobody will wait for the command, so stop
                        // it whole.
                        if let Err(Ok(child)) = sender.send(result) {
                            kill_group(child.id());
                        }
                    })?;
                receiver.await.map_err(|_| {
                    std::io::Error::other("the sandbox thread ended without starting the command")
                })?
            }
        }
    }
}

/// Spawns `command` (a plain command, not from a [`Launch`]) under `policy` with Landlock, as
/// the fallback does; for benchmarks comparing the two mechanisms.
pub async fn spawn_landlocked(
    command: tokio::process::Command,
    policy: &SandboxPolicy,
    cwd: &Path,
) -> std::io::Result<tokio::process::Child> {
    let launch = Launch {
        mechanism: Mechanism::Landlock(String::new()),
        prefix: Vec::new(),
        network: policy.network,
        writable: writable_roots(policy, cwd),
        #[cfg(target_os = "linux")]
        placeholders: None,
        links: Vec::new(),
        incomplete: Vec::new(),
        packs_read_only: false,
    };
    launch.spawn(command).await
}

/// How a command would be contained, without running one (for telling the user at the start).
pub fn probe(policy: &SandboxPolicy, cwd: &Path) -> SandboxStatus {
    match mechanism(policy, cwd) {
        Mechanism::Off => SandboxStatus::Off,
        Mechanism::Namespaces(_) => SandboxStatus::Enforced,
        Mechanism::Landlock(why) => {
            let writable = writable_roots(policy, cwd);
            let network = policy.network;
            let landlock = std::thread::spawn(move || imp::restrict(&writable, network))
                .join()
                .unwrap_or_else(|_| Err(std::io::Error::other("the probe thread panicked")))
                .unwrap_or_else(|error| SandboxStatus::Unavailable(error.to_string()));
            match landlock {
                SandboxStatus::Enforced | SandboxStatus::Partial(_) => {
                    SandboxStatus::Partial(format!(
                        "no namespaces ({why}): Landlock only, so commands nobody reviews have git's config and hooks, instruction files and skill folders copied and put back, and can reach sockets on disk"
                    ))
                }
                other => other,
            }
        }
    }
}

/// How commands are contained, in one line for `skillet config`.
pub fn describe(policy: &SandboxPolicy, cwd: &Path) -> String {
    match mechanism(policy, cwd) {
        Mechanism::Off => "none (sandbox.enabled = false)".to_string(),
        Mechanism::Namespaces(bwrap) => format!(
            "namespaces through {}: protected paths read-only, private /tmp and /run, own PID namespace{}",
            bwrap.display(),
            if policy.inner.is_some() {
                ", Landlock inside"
            } else {
                ""
            }
        ),
        Mechanism::Landlock(why) => match probe(policy, cwd) {
            SandboxStatus::Partial(_) => format!(
                "Landlock only ({why}); protected files are put back after commands nobody reviews"
            ),
            other => other
                .notice()
                .unwrap_or_else(|| "Landlock only".to_string()),
        },
    }
}

fn writable_roots(policy: &SandboxPolicy, cwd: &Path) -> Vec<PathBuf> {
    let mut roots = vec![cwd.to_path_buf(), std::env::temp_dir()];
    roots.extend(policy.writable.iter().cloned());
    roots
}

#[cfg(target_os = "linux")]
mod imp {
    use std::path::PathBuf;

    use landlock::{
        ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, Ruleset, RulesetAttr,
        RulesetCreatedAttr, RulesetStatus, Scope, path_beneath_rules,
    };

    use super::{SandboxStatus, WRITABLE_DEVICES};

    /// The Landlock ABI whose rights are asked for (6: file system, TCP, signal and abstract
    /// socket scoping). Older kernels enforce what they know ("best effort").
    const TARGET_ABI: ABI = ABI::V6;

    /// Restricts the calling thread (and everything it starts from now on).
    pub(super) fn restrict(writable: &[PathBuf], network: bool) -> std::io::Result<SandboxStatus> {
        let error = |error: landlock::RulesetError| std::io::Error::other(error.to_string());
        // Abstract UNIX sockets (X11, some session buses) are local doors out of the sandbox,
        // closed whatever the network setting.
        let mut ruleset = Ruleset::default()
            .set_compatibility(CompatLevel::BestEffort)
            .handle_access(AccessFs::from_all(TARGET_ABI))
            .map_err(error)?
            .scope(Scope::Signal | Scope::AbstractUnixSocket)
            .map_err(error)?;
        if !network {
            ruleset = ruleset
                .handle_access(AccessNet::BindTcp | AccessNet::ConnectTcp)
                .map_err(error)?;
        }
        let status = ruleset
            .create()
            .map_err(error)?
            .add_rules(path_beneath_rules(["/"], AccessFs::from_read(TARGET_ABI)))
            .map_err(error)?
            .add_rules(path_beneath_rules(writable, AccessFs::from_all(TARGET_ABI)))
            .map_err(error)?
            .add_rules(path_beneath_rules(
                WRITABLE_DEVICES,
                AccessFs::WriteFile | AccessFs::ReadFile | AccessFs::Truncate,
            ))
            .map_err(error)?
            .restrict_self()
            .map_err(error)?;
        Ok(match status.ruleset {
            RulesetStatus::FullyEnforced => SandboxStatus::Enforced,
            RulesetStatus::PartiallyEnforced => SandboxStatus::Partial(format!(
                "this kernel's Landlock lacks some of ABI {} (a newer kernel enforces all)",
                TARGET_ABI as i32
            )),
            RulesetStatus::NotEnforced => {
                SandboxStatus::Unavailable("this kernel has no Landlock".to_string())
            }
        })
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    use std::path::PathBuf;

    use super::SandboxStatus;

    pub(super) fn restrict(
        _writable: &[PathBuf],
        _network: bool,
    ) -> std::io::Result<SandboxStatus> {
        Ok(SandboxStatus::Unavailable(
            "skillet has a sandbox only on Linux so far".to_string(),
        ))
    }
}

/// Kills the command's whole process group (it may have started children). The group is the
/// child's own (`process_group(0)`): the kernel never gives a new process the id of an existing
/// group, so no other group can be hit.
#[cfg(unix)]
pub(crate) fn kill_group(pid: Option<u32>) {
    let Some(pid) = pid
        .and_then(|pid| i32::try_from(pid).ok())
        .and_then(rustix::process::Pid::from_raw)
    else {
        return;
    };
    let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
}

/// Elsewhere only the shell itself is stopped (when the child is dropped).
#[cfg(not(unix))]
pub(crate) fn kill_group(_pid: Option<u32>) {}
