//! What the `bash` tool's sandbox costs per call.
//!
//! - `bash_tool`: one call of the `bash` tool with `{"command": "true"}` (secret variables
//!   removed, its own process group, output read, group killed on return) with the sandbox off,
//!   on with network, and on without network. The difference between `off` and the others is
//!   what the sandbox adds to a command.
//! - `spawn_true`: `/bin/true` started and waited for through a plain
//!   `tokio::process::Command`, under Landlock alone (the fallback), and in namespaces with and
//!   without network and in a git repository (the protected layout worked out, placeholders
//!   made and removed), and in one of 10,000 folders with four nested clones (the walk for
//!   nested repositories): the sandbox's cost without bash's own start-up.
//! - `setup`: [`sandbox::probe`] alone (a fresh thread that builds the Landlock ruleset and
//!   restricts itself), against a bare thread spawn and join: the Landlock set-up cost itself.
//!
//! Every case starts a process or a thread, so sample counts are kept low (the run takes well
//! under a minute). Where the kernel does not enforce Landlock, a line says so first: the
//! sandboxed figures then measure the fallback, not Landlock.
//!
//! ```sh
//! cargo bench -p skillet-agent --bench sandbox
//! ```

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stderr,
    reason = "benchmark setup"
)]

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use serde_json::json;
use skillet_agent::permission::{Gate, Permissions};
use skillet_agent::sandbox::{self, SandboxPolicy, SandboxStatus};
use skillet_agent::tool::{CatalogPlacement, ToolContext};
use skillet_agent::tools::ToolTable;
use skillet_skills::Library;

/// Samples per case; each sample is one call (a process or a thread start is long enough to
/// time alone).
const SAMPLES: u32 = 200;

fn main() {
    let temp = tempfile::tempdir().unwrap();
    let cwd = temp.path().canonicalize().unwrap();
    for (name, policy) in [("network", policy(true)), ("no network", policy(false))] {
        match sandbox::probe(&policy, &cwd) {
            SandboxStatus::Enforced => eprintln!("sandbox ({name}): namespaces"),
            status => eprintln!(
                "sandbox ({name}): NOT in namespaces ({status:?}): the sandboxed figures \
                 measure the fallback"
            ),
        }
    }
    drop(temp);
    divan::main();
}

fn policy(network: bool) -> SandboxPolicy {
    SandboxPolicy {
        enabled: true,
        network,
        writable: Vec::new(),
        ..SandboxPolicy::default()
    }
}

fn off() -> SandboxPolicy {
    SandboxPolicy {
        enabled: false,
        ..SandboxPolicy::default()
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// A working directory in a temp dir, kept for as long as the value lives.
struct Workdir {
    _temp: tempfile::TempDir,
    cwd: PathBuf,
}

fn workdir() -> Workdir {
    let temp = tempfile::tempdir().unwrap();
    let cwd = temp.path().canonicalize().unwrap().join("work");
    std::fs::create_dir_all(&cwd).unwrap();
    Workdir { _temp: temp, cwd }
}

mod bash_tool {
    use super::{
        Arc, CatalogPlacement, Gate, Library, Mutex, Permissions, SAMPLES, SandboxPolicy,
        ToolContext, ToolTable, json, off, policy, runtime, workdir,
    };

    fn bench(bencher: divan::Bencher, sandbox: SandboxPolicy) {
        let dir = workdir();
        let context = ToolContext {
            cwd: dir.cwd.clone(),
            skills: Arc::new(skillet_agent::tool::LiveSkills::new(
                Arc::new(Library::default()),
                None,
            )),
            catalog: String::new(),
            placement: CatalogPlacement::System,
            todos: Mutex::new(Vec::new()),
            subagent: None,
            gate: Arc::new(Gate::new(Permissions::Allow)),
            protected: Vec::new(),
            sandbox,
            skill_trust: skillet_library::trust::SkillTrust::untrusted(),
            skill_shell: true,
            save_skills: None,
            source: None,
            fetched: Arc::default(),
            notices: skillet_agent::tool::Notices::default(),
            added_dirs: std::sync::Arc::default(),
            hooks: skillet_agent::hooks::Hooks::default(),
        };
        let tools = ToolTable::standard(false);
        let bash = tools.get("bash").expect("the bash tool");
        let input = json!({"command": "true"});
        let runtime = runtime();
        // Once outside the timing, so a failure shows and the first-call costs are paid.
        assert_eq!(
            runtime.block_on(bash.call(&input, &context)).unwrap(),
            "(no output)"
        );
        bencher.bench_local(|| runtime.block_on(bash.call(&input, &context)).unwrap());
    }

    #[divan::bench(sample_count = SAMPLES, sample_size = 1)]
    fn sandbox_off(bencher: divan::Bencher) {
        bench(bencher, off());
    }

    #[divan::bench(sample_count = SAMPLES, sample_size = 1)]
    fn sandbox_network(bencher: divan::Bencher) {
        bench(bencher, policy(true));
    }

    #[divan::bench(sample_count = SAMPLES, sample_size = 1)]
    fn sandbox_no_network(bencher: divan::Bencher) {
        bench(bencher, policy(false));
    }
}

mod spawn_true {
    use super::{SAMPLES, SandboxPolicy, policy, runtime, sandbox, workdir};

    fn command() -> tokio::process::Command {
        let mut command = tokio::process::Command::new("/bin/true");
        command.stdin(std::process::Stdio::null());
        command
    }

    #[divan::bench(sample_count = SAMPLES, sample_size = 1)]
    fn plain(bencher: divan::Bencher) {
        let runtime = runtime();
        bencher.bench_local(|| {
            runtime.block_on(async {
                let status = command().spawn().unwrap().wait().await.unwrap();
                assert!(status.success());
            });
        });
    }

    /// Landlock alone (the fallback where namespaces cannot be made).
    #[divan::bench(sample_count = SAMPLES, sample_size = 1)]
    fn landlock(bencher: divan::Bencher) {
        let dir = workdir();
        let runtime = runtime();
        let policy = policy(true);
        bencher.bench_local(|| {
            runtime.block_on(async {
                let mut child = sandbox::spawn_landlocked(command(), &policy, &dir.cwd)
                    .await
                    .unwrap();
                assert!(child.wait().await.unwrap().success());
            });
        });
    }

    fn git_init(dir: &std::path::Path) {
        let status = std::process::Command::new("git")
            .args(["init", "-q"])
            .current_dir(dir)
            .status()
            .unwrap();
        assert!(status.success());
    }

    /// Namespaces, the layout worked out and the placeholders made for each command (as for a
    /// command nobody reviews), in a git repository when `repository`; with `folders` folders
    /// in it (100 of 100 each), four of them nested clones.
    fn namespaces(
        bencher: divan::Bencher,
        policy: &SandboxPolicy,
        repository: bool,
        folders: usize,
    ) {
        let dir = workdir();
        if repository {
            git_init(&dir.cwd);
        }
        for index in 0..folders {
            let folder = dir.cwd.join(format!("d{}/e{}", index / 100, index % 100));
            std::fs::create_dir_all(&folder).unwrap();
            if index % (folders / 4).max(1) == 1 {
                git_init(&folder);
            }
        }
        let runtime = runtime();
        bencher.bench_local(|| {
            runtime.block_on(async {
                let launch = sandbox::Launch::prepare(policy, &dir.cwd, Some(&[])).unwrap();
                let mut child = launch.spawn(launch.command("/bin/true")).await.unwrap();
                assert!(child.wait().await.unwrap().success());
            });
        });
    }

    #[divan::bench(sample_count = SAMPLES, sample_size = 1)]
    fn namespaces_network(bencher: divan::Bencher) {
        namespaces(bencher, &policy(true), false, 0);
    }

    #[divan::bench(sample_count = SAMPLES, sample_size = 1)]
    fn namespaces_no_network(bencher: divan::Bencher) {
        namespaces(bencher, &policy(false), false, 0);
    }

    #[divan::bench(sample_count = SAMPLES, sample_size = 1)]
    fn namespaces_git_repository(bencher: divan::Bencher) {
        namespaces(bencher, &policy(true), true, 0);
    }

    /// The walk for nested repositories over 10,000 folders (remembered between commands, so
    /// each later command checks every folder's times once).
    #[divan::bench(sample_count = SAMPLES, sample_size = 1)]
    fn namespaces_git_repository_10k_folders_4_nested(bencher: divan::Bencher) {
        namespaces(bencher, &policy(true), true, 10_000);
    }
}

mod setup {
    use super::{SAMPLES, policy, sandbox, workdir};

    /// The thread every sandboxed spawn starts, with nothing done on it.
    #[divan::bench(sample_count = SAMPLES, sample_size = 1)]
    fn thread_spawn_join() {
        std::thread::spawn(|| divan::black_box(1)).join().unwrap();
    }

    #[divan::bench(sample_count = SAMPLES, sample_size = 1)]
    fn probe_network(bencher: divan::Bencher) {
        let dir = workdir();
        let policy = policy(true);
        bencher.bench_local(|| sandbox::probe(&policy, &dir.cwd));
    }

    #[divan::bench(sample_count = SAMPLES, sample_size = 1)]
    fn probe_no_network(bencher: divan::Bencher) {
        let dir = workdir();
        let policy = policy(false);
        bencher.bench_local(|| sandbox::probe(&policy, &dir.cwd));
    }
}
