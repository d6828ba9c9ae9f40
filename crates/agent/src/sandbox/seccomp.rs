//! The inner layer's seccomp filter: `socket(AF_UNIX, …)` fails with `EPERM`, so a command
//! cannot connect to a server listening on a socket on disk that the mounts leave visible
//! (Docker's in `~/.docker`, an SSH, GPG or password-manager agent's in the home folder), as
//! Claude Code's sandbox runtime does. Stream and packet socket pairs (`socketpair`) still work:
//! they reach no one outside; datagram pairs, which could `sendto` a socket on disk, and
//! io_uring, which makes sockets without `socket`, are refused. Without the network,
//! `socket(AF_VSOCK, …)` fails too: a network namespace does not hold back sockets to the
//! hypervisor's host (or, under WSL2, to Windows). Programs of another architecture (32-bit
//! ones on x86-64) are stopped, since their system calls are numbered otherwise and the filter
//! could not see theirs.

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

/// `AF_UNIX`, the same on every Linux architecture.
const AF_UNIX: u64 = 1;
/// `AF_VSOCK`: sockets to the hypervisor's host (and, under WSL2, to Windows), which no
/// network namespace holds back.
const AF_VSOCK: u64 = 40;
/// `EPERM`, what the refused call returns.
const EPERM: u32 = 1;

/// `SOCK_DGRAM`, in the low bits of a socket's type.
const SOCK_DGRAM: u64 = 2;
/// The bits of a socket's type that say which type it is (the rest are flags).
const SOCK_TYPE_MASK: u64 = 0xf;
/// x86-64's x32 ABI numbers its calls apart by this bit.
const X32: i64 = 0x4000_0000;

/// This architecture's numbers for `socket`, `socketpair` and io_uring's three calls.
struct Calls {
    socket: Vec<i64>,
    socketpair: Vec<i64>,
    io_uring: Vec<i64>,
}

fn calls() -> Result<Calls, String> {
    let io_uring = vec![0x1a9, 0x1aa, 0x1ab];
    match std::env::consts::ARCH {
        "x86_64" => Ok(Calls {
            socket: vec![0x29, 0x29 | X32],
            socketpair: vec![0x35, 0x35 | X32],
            io_uring: io_uring
                .iter()
                .chain(&io_uring.iter().map(|call| call | X32).collect::<Vec<_>>())
                .copied()
                .collect(),
        }),
        "aarch64" | "riscv64" => Ok(Calls {
            socket: vec![0xc6],
            socketpair: vec![0xc7],
            io_uring,
        }),
        other => Err(format!(
            "UNIX sockets cannot be refused on {other}; set sandbox.unix_sockets = true in your config to run commands anyway"
        )),
    }
}

/// Installs the filter on the calling thread (and what it starts): UNIX sockets refused unless
/// `unix`, vsock sockets unless `network`; nothing when both are allowed. `no_new_privs` must
/// be set already (Landlock's restriction sets it).
pub fn deny_sockets(unix: bool, network: bool) -> Result<(), String> {
    if unix && network {
        return Ok(());
    }
    let arch = TargetArch::try_from(std::env::consts::ARCH).map_err(|error| error.to_string())?;
    let text = |error: seccompiler::BackendError| error.to_string();
    let family = |family: u64| {
        SeccompCondition::new(0, SeccompCmpArgLen::Dword, SeccompCmpOp::Eq, family)
            .and_then(|condition| SeccompRule::new(vec![condition]))
            .map_err(text)
    };
    let calls = calls()?;
    let mut rules = BTreeMap::new();
    let mut refused = Vec::new();
    if !unix {
        refused.push(AF_UNIX);
    }
    if !network {
        refused.push(AF_VSOCK);
    }
    for call in calls.socket {
        let families = refused
            .iter()
            .map(|refused| family(*refused))
            .collect::<Result<Vec<_>, _>>()?;
        rules.insert(call, families);
    }
    // io_uring makes sockets without the `socket` call: refused whole.
    for call in calls.io_uring {
        rules.insert(call, vec![]);
    }
    if unix {
        return install(rules, arch);
    }
    let unix = || SeccompCondition::new(0, SeccompCmpArgLen::Dword, SeccompCmpOp::Eq, AF_UNIX);
    // A datagram pair can still `sendto` (or `connect`) any socket on disk: only stream and
    // packet pairs, which reach no one else.
    for call in calls.socketpair {
        let datagram = SeccompCondition::new(
            1,
            SeccompCmpArgLen::Dword,
            SeccompCmpOp::MaskedEq(SOCK_TYPE_MASK),
            SOCK_DGRAM,
        )
        .map_err(text)?;
        rules.insert(
            call,
            vec![SeccompRule::new(vec![unix().map_err(text)?, datagram]).map_err(text)?],
        );
    }
    install(rules, arch)
}

/// Installs `rules` (each call refused with `EPERM` where a rule matches, or always where it
/// has none).
fn install(rules: BTreeMap<i64, Vec<SeccompRule>>, arch: TargetArch) -> Result<(), String> {
    let text = |error: seccompiler::BackendError| error.to_string();
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(EPERM),
        arch,
    )
    .map_err(|error| error.to_string())?;
    let program: BpfProgram = filter.try_into().map_err(text)?;
    seccompiler::apply_filter(&program).map_err(|error| error.to_string())
}
