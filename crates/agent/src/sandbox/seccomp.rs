//! The inner layer's seccomp filter: `socket(AF_UNIX, …)` fails with `EPERM`, so a command
//! cannot connect to a server listening on a socket on disk that the mounts leave visible
//! (Docker's in `~/.docker`, an SSH, GPG or password-manager agent's in the home folder), as
//! Claude Code's sandbox runtime does. Socket pairs (`socketpair`) still work: they reach no one
//! outside. Programs of another architecture (32-bit ones on x86-64) are stopped, since their
//! system calls are numbered otherwise and the filter could not see theirs.

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

/// `AF_UNIX`, the same on every Linux architecture.
const AF_UNIX: u64 = 1;
/// `EPERM`, what the refused call returns.
const EPERM: u32 = 1;

/// The `socket` system call's numbers on this architecture (x86-64's x32 ABI numbers it apart).
fn socket_calls() -> Result<Vec<i64>, String> {
    match std::env::consts::ARCH {
        "x86_64" => Ok(vec![0x29, 0x29 | 0x4000_0000]),
        "aarch64" | "riscv64" => Ok(vec![0xc6]),
        other => Err(format!(
            "UNIX sockets cannot be refused on {other}; set sandbox.unix_sockets = true in your config to run commands anyway"
        )),
    }
}

/// Installs the filter on the calling thread (and what it starts). `no_new_privs` must be set
/// already (Landlock's restriction sets it).
pub fn deny_unix_sockets() -> Result<(), String> {
    let arch = TargetArch::try_from(std::env::consts::ARCH).map_err(|error| error.to_string())?;
    let mut rules = BTreeMap::new();
    for call in socket_calls()? {
        let unix = SeccompCondition::new(0, SeccompCmpArgLen::Dword, SeccompCmpOp::Eq, AF_UNIX)
            .map_err(|error| error.to_string())?;
        rules.insert(
            call,
            vec![SeccompRule::new(vec![unix]).map_err(|error| error.to_string())?],
        );
    }
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(EPERM),
        arch,
    )
    .map_err(|error| error.to_string())?;
    let program: BpfProgram = filter
        .try_into()
        .map_err(|error: seccompiler::BackendError| error.to_string())?;
    seccompiler::apply_filter(&program).map_err(|error| error.to_string())
}
