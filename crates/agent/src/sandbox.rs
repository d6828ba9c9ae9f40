//! The sandbox `bash` commands run in, where the kernel has one: Landlock on Linux.
//!
//! A command may read anywhere the user can, write only beneath the working directory, the
//! temp dir and any folder the user's own config adds, and (with `network = false`) make no TCP
//! connection and bind no TCP port. It cannot signal processes outside the sandbox, reach
//! abstract UNIX sockets made outside it, or write to the terminal. Before Landlock ABI 9 the
//! kernel does not control connecting to UNIX sockets on disk (a Docker or systemd socket is a
//! door out); [`crate::tools::bash`] drops the variables that point at the usual ones. Landlock
//! restricts a thread and what it starts, so the command is spawned from a fresh thread that
//! restricts itself first and ends right after: skillet's own threads keep their rights, and no
//! `unsafe` `pre_exec` hook is needed.
//!
//! Where the kernel has no Landlock (or the user turned the sandbox off), commands run
//! unsandboxed and [`probe`] says so, for the user to be told once.

use std::path::PathBuf;

/// What a command may do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxPolicy {
    /// Sandbox commands at all.
    pub enabled: bool,
    /// Let commands make TCP connections and bind TCP ports.
    pub network: bool,
    /// Folders writable besides the working directory and the temp dir (the user's config).
    pub writable: Vec<PathBuf>,
}

impl Default for SandboxPolicy {
    fn default() -> Self {
        Self {
            enabled: true,
            network: true,
            writable: Vec::new(),
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

/// Spawns `command` under `policy`, with `cwd` writable ([`probe`] says how it is contained).
/// A sandbox that the kernel supports but that cannot be set up is an error: the command does
/// not run.
pub async fn spawn(
    mut command: tokio::process::Command,
    policy: &SandboxPolicy,
    cwd: &std::path::Path,
) -> std::io::Result<tokio::process::Child> {
    if !policy.enabled {
        return command.spawn();
    }
    let writable = writable_roots(policy, cwd);
    let network = policy.network;
    let handle = tokio::runtime::Handle::current();
    let (sender, receiver) = tokio::sync::oneshot::channel();
    std::thread::Builder::new()
        .name("skillet-sandbox".into())
        .spawn(move || {
            let result = imp::restrict(&writable, network).and_then(|_| {
                let _runtime = handle.enter();
                command.spawn()
            });
            // Cancelled while starting: nobody will wait for the command, so stop it whole.
            if let Err(Ok(child)) = sender.send(result) {
                crate::tools::bash::kill_group(child.id());
            }
        })?;
    receiver.await.map_err(|_| {
        std::io::Error::other("the sandbox thread ended without starting the command")
    })?
}

/// How a command would be contained, without running one (for telling the user at the start).
pub fn probe(policy: &SandboxPolicy, cwd: &std::path::Path) -> SandboxStatus {
    if !policy.enabled {
        return SandboxStatus::Off;
    }
    let writable = writable_roots(policy, cwd);
    let network = policy.network;
    std::thread::spawn(move || imp::restrict(&writable, network))
        .join()
        .unwrap_or_else(|_| Err(std::io::Error::other("the probe thread panicked")))
        .unwrap_or_else(|error| SandboxStatus::Unavailable(error.to_string()))
}

fn writable_roots(policy: &SandboxPolicy, cwd: &std::path::Path) -> Vec<PathBuf> {
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
