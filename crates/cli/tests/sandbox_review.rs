//! The second red team's ways out of the namespace sandbox, end to end through `skillet run
//! --yes` with the model's `bash` calls scripted: programs the sandbox runs on the host taken
//! from a folder commands write, git's other indirections (a gitfile naming another
//! repository, other worktrees, a bare repository at the top, the user's relative hooks path,
//! hook managers, a hooks folder that is a link), servers on sockets in the home folder, the
//! inner layer's binary inside the project, and credentials under still other names.

#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::panic, reason = "tests")]

mod common;

use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;
use std::process::Command as StdCommand;

use common::Sandbox;
use common::escapes::{
    HOOK, assert_not_pwned, attack, attack_through, attack_told, attack_with, git, namespaces,
    repository, scripted,
};

/// A shell command that connects to the UNIX socket at `socket` and prints `connected`, or
/// the error's last line.
fn connect(socket: &Path) -> String {
    format!(
        "python3 -c \"import socket; s = socket.socket(socket.AF_UNIX); s.connect('{}'); print('connected')\" 2>&1 | tail -1",
        socket.display()
    )
}

/// A script that writes `marker` and then runs what it was asked to (`exec PROGRAM "$@"`).
fn wrapper(marker: &Path, program: &str) -> String {
    format!(
        "printf '#!/bin/sh\\ntouch {}\\nexec {program} \"$@\"\\n'",
        marker.display()
    )
}

#[test]
fn bwrap_and_git_in_a_folder_commands_write_are_never_run_on_the_host() {
    let sandbox = repository();
    if !namespaces(&sandbox) {
        return;
    }
    let bin = sandbox.project.join("bin");
    let bwrap = StdCommand::new("sh")
        .args(["-c", "command -v bwrap"])
        .output()
        .unwrap();
    let bwrap = String::from_utf8(bwrap.stdout).unwrap().trim().to_string();
    // On PATH through a link, as a folder of the user's might be: the same folder.
    let linked = sandbox.root.join("tools");
    std::os::unix::fs::symlink(&bin, &linked).unwrap();
    let path = format!(
        "{}:{}",
        linked.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let bwrap_marker = sandbox.root.join("PWNED-bwrap");
    let git_marker = sandbox.root.join("PWNED-git");
    let results = attack_with(
        &sandbox,
        &[
            &format!(
                "mkdir -p bin && {} > bin/bwrap && {} > bin/git && chmod +x bin/bwrap bin/git && echo planted",
                wrapper(&bwrap_marker, &bwrap),
                wrapper(&git_marker, "/usr/bin/git"),
            ),
            "echo second",
        ],
        &[("PATH", &path)],
    );
    assert!(results[0].contains("planted"), "{}", results[0]);
    assert!(results[1].contains("second"), "{}", results[1]);
    assert!(!bwrap_marker.exists(), "the project's bwrap ran");
    assert!(!git_marker.exists(), "the project's git ran");
}

#[test]
fn a_gitfile_naming_another_repository_does_not_open_it() {
    let sandbox = Sandbox::empty();
    if !namespaces(&sandbox) {
        return;
    }
    let other = sandbox.root.join("other");
    std::fs::create_dir_all(&other).unwrap();
    git(&other, &["init", "-q", "-b", "main"]);
    // A downloaded archive's `.git` file, pointing at a repository of the user's.
    std::fs::write(sandbox.project.join(".git"), "gitdir: ../other/.git\n").unwrap();
    let description = other.join(".git/description");
    let before = std::fs::read_to_string(&description).unwrap();
    let results = attack(
        &sandbox,
        &[&format!(
            "echo changed > {} 2>&1; mkdir {}/.git/refs/heads/planted 2>&1; echo end",
            description.display(),
            other.display()
        )],
    );
    assert!(results[0].contains("end"), "{}", results[0]);
    assert_eq!(std::fs::read_to_string(&description).unwrap(), before);
    assert!(!other.join(".git/refs/heads/planted").exists());
}

#[test]
fn another_worktrees_git_directory_cannot_be_repointed() {
    let sandbox = repository();
    if !namespaces(&sandbox) {
        return;
    }
    let worktree = sandbox.root.join("wt");
    git(
        &sandbox.project,
        &["worktree", "add", "-q", worktree.to_str().unwrap()],
    );
    let commondir = sandbox.project.join(".git/worktrees/wt/commondir");
    let before = std::fs::read_to_string(&commondir).unwrap();
    let results = attack(
        &sandbox,
        &[
            "echo /tmp/evil > .git/worktrees/wt/commondir 2>&1; echo '[core]' > .git/worktrees/wt/config.worktree 2>&1; echo end",
        ],
    );
    assert!(results[0].contains("end"), "{}", results[0]);
    assert_eq!(std::fs::read_to_string(&commondir).unwrap(), before);
    assert!(
        !sandbox
            .project
            .join(".git/worktrees/wt/config.worktree")
            .exists()
    );
}

#[test]
fn the_working_directory_cannot_be_made_a_bare_repository() {
    let sandbox = Sandbox::empty();
    if !namespaces(&sandbox) {
        return;
    }
    let results = attack(
        &sandbox,
        &[
            "git init -q --bare . 2>&1; git --git-dir=. config core.fsmonitor 'touch PWNED' 2>&1; echo end",
        ],
    );
    assert!(results[0].contains("end"), "{}", results[0]);
    // Git on the host does not find a repository there.
    let status = StdCommand::new("git")
        .args(["rev-parse", "--git-dir"])
        .current_dir(&sandbox.project)
        .env("GIT_CEILING_DIRECTORIES", &sandbox.root)
        .output()
        .unwrap();
    assert!(
        !status.status.success(),
        "a repository at the top: {}",
        String::from_utf8_lossy(&status.stdout)
    );
    assert!(!sandbox.project.join("HEAD").exists());
}

#[test]
fn a_relative_hooks_path_in_the_users_git_config_is_protected() {
    let sandbox = repository();
    if !namespaces(&sandbox) {
        return;
    }
    std::fs::write(
        sandbox.home.join(".gitconfig"),
        "[core]\n\thooksPath = .githooks\n",
    )
    .unwrap();
    let results = attack(
        &sandbox,
        &[&format!(
            "mkdir -p .githooks 2>&1; {HOOK} > .githooks/pre-commit 2>&1; chmod +x .githooks/pre-commit 2>&1; echo end"
        )],
    );
    assert!(results[0].contains("end"), "{}", results[0]);
    assert!(!sandbox.project.join(".githooks/pre-commit").exists());
}

#[test]
fn hook_managers_and_editors_tasks_are_protected() {
    let sandbox = repository();
    if !namespaces(&sandbox) {
        return;
    }
    let results = attack(
        &sandbox,
        &[
            "mkdir -p .husky/_ .vscode 2>&1; echo 'touch PWNED' > .husky/pre-commit 2>&1; printf 'repos: []\\n' > .pre-commit-config.yaml 2>&1; echo '{}' > .vscode/tasks.json 2>&1; echo '[submodule \"x\"]' >> .gitmodules 2>&1; echo end",
        ],
    );
    assert!(results[0].contains("end"), "{}", results[0]);
    for path in [
        ".husky/pre-commit",
        ".pre-commit-config.yaml",
        ".vscode/tasks.json",
        ".gitmodules",
    ] {
        assert!(!sandbox.project.join(path).exists(), "{path} was written");
    }
}

#[test]
fn a_hooks_folder_that_is_a_link_cannot_be_swapped() {
    let sandbox = repository();
    if !namespaces(&sandbox) {
        return;
    }
    // The user keeps the hooks in the tree, linked from the git directory.
    std::fs::create_dir_all(sandbox.project.join("tools/hooks")).unwrap();
    std::fs::remove_dir_all(sandbox.project.join(".git/hooks")).unwrap();
    std::os::unix::fs::symlink("../tools/hooks", sandbox.project.join(".git/hooks")).unwrap();
    let results = attack(
        &sandbox,
        &[&format!(
            "mv .git/hooks .git/hooks.old 2>&1; mkdir .git/hooks 2>&1; {HOOK} > .git/hooks/pre-commit 2>&1; chmod +x .git/hooks/pre-commit 2>&1; {HOOK} > tools/hooks/pre-commit 2>&1; chmod +x tools/hooks/pre-commit 2>&1; echo end"
        )],
    );
    assert!(results[0].contains("end"), "{}", results[0]);
    assert!(
        std::fs::symlink_metadata(sandbox.project.join(".git/hooks"))
            .unwrap()
            .is_symlink()
    );
    assert_not_pwned(&sandbox);
}

#[test]
fn servers_on_sockets_on_disk_are_out_of_reach() {
    let sandbox = repository();
    if !namespaces(&sandbox) {
        return;
    }
    // A socket the command can see (the temp dir, where the home folders of these tests lie,
    // is private to commands anyway): a server's in the project.
    let dir = sandbox.project.join("run");
    std::fs::create_dir_all(&dir).unwrap();
    let socket = dir.join("docker.sock");
    let listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    listener.set_nonblocking(true).unwrap();
    let results = attack(
        &sandbox,
        &[&format!(
            "{}; python3 -c \"import socket; a, b = socket.socketpair(); a.send(b'pair'); print(b.recv(4).decode())\"; python3 -c \"import socket; a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM); print('datagram pair')\" 2>&1 | tail -1",
            connect(&socket)
        )],
    );
    assert!(!results[0].contains("connected"), "{}", results[0]);
    assert!(listener.accept().is_err(), "a connection came in");
    assert!(
        results[0].contains("PermissionError") || results[0].contains("Operation not permitted"),
        "{}",
        results[0]
    );
    assert!(
        results[0].contains("pair"),
        "socket pairs work: {}",
        results[0]
    );
}

#[test]
fn unix_sockets_are_allowed_when_the_users_config_says_so() {
    let sandbox = repository();
    if !namespaces(&sandbox) {
        return;
    }
    std::fs::create_dir_all(sandbox.home.join(".config/skillet")).unwrap();
    std::fs::write(
        sandbox.home.join(".config/skillet/skillet.toml"),
        "[sandbox]\nunix_sockets = true\n",
    )
    .unwrap();
    let socket = sandbox.project.join("allowed.sock");
    let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    let results = attack(&sandbox, &[&connect(&socket)]);
    assert!(results[0].contains("connected"), "{}", results[0]);
}

#[test]
fn the_inner_layer_is_not_taken_from_where_commands_write() {
    let sandbox = repository();
    if !namespaces(&sandbox) {
        return;
    }
    // skillet built inside the project it works on.
    let bin = sandbox.project.join("target");
    std::fs::create_dir_all(&bin).unwrap();
    let skillet = bin.join("skillet");
    std::fs::copy(assert_cmd::cargo::cargo_bin("skillet"), &skillet).unwrap();
    std::fs::set_permissions(&skillet, std::fs::Permissions::from_mode(0o755)).unwrap();
    let marker = sandbox.project.join("INNER-REPLACED");
    let replace = format!(
        "rm -f target/skillet && printf '#!/bin/sh\\ntouch {}\\nshift 4; while [ \"$1\" != -- ]; do shift; done; shift; exec \"$@\"\\n' > target/skillet && chmod +x target/skillet && echo replaced",
        marker.display()
    );
    let commands = [replace.as_str(), "echo second"];
    let server = scripted(&commands);
    let mut command = StdCommand::new(&skillet);
    command
        .current_dir(&sandbox.project)
        .env_clear()
        .envs(common::environment(&sandbox, Some((&server, "sk-test"))));
    let results = attack_through(
        &server,
        commands.len(),
        &mut assert_cmd::Command::from_std(command),
    );
    assert!(results[0].contains("replaced"), "{}", results[0]);
    assert!(results[1].contains("second"), "{}", results[1]);
    assert!(
        !marker.exists(),
        "the replaced binary ran as the inner layer"
    );
}

#[test]
fn credentials_under_still_other_names_are_not_passed_on() {
    let sandbox = repository();
    if !namespaces(&sandbox) {
        return;
    }
    let results = attack_with(
        &sandbox,
        &["env | sort"],
        &[
            ("MYSQL_PWD", "hunter2-mysql"),
            ("SSHPASS", "hunter2-ssh"),
            ("LDAP_BIND_PW", "hunter2-ldap"),
            ("DB_CONN", "host=db user=app password=hunter2-libpq"),
            (
                "ALERTS",
                "https://hooks.slack.com/services/T0/B0/hunter2slack",
            ),
            ("VISIBLE_SETTING", "plain-value"),
        ],
    );
    assert!(!results[0].contains("hunter2"), "{}", results[0]);
    assert!(results[0].contains("plain-value"), "{}", results[0]);
}

#[test]
fn a_commondir_through_a_link_does_not_open_another_repository() {
    let sandbox = Sandbox::empty();
    if !namespaces(&sandbox) {
        return;
    }
    let victim = sandbox.root.join("victim");
    std::fs::create_dir_all(&victim).unwrap();
    git(&victim, &["init", "-q", "-b", "main"]);
    // A git directory in the project whose `commondir` goes through a link the command
    // changes between two commands.
    let project = &sandbox.project;
    std::fs::write(project.join(".git"), "gitdir: .gd\n").unwrap();
    std::fs::create_dir_all(project.join(".gd")).unwrap();
    std::fs::write(project.join(".gd/HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::write(project.join(".gd/gitdir"), "../.git\n").unwrap();
    std::fs::write(project.join(".gd/commondir"), "../cd\n").unwrap();
    std::fs::create_dir_all(project.join("decoy")).unwrap();
    std::os::unix::fs::symlink("decoy", project.join("cd")).unwrap();
    let results = attack(
        &sandbox,
        &[
            &format!("ln -sfn {}/.git cd && echo linked", victim.display()),
            &format!(
                "echo changed > {0}/.git/description 2>&1; mkdir {0}/.git/refs/replace 2>&1; echo end",
                victim.display()
            ),
        ],
    );
    assert!(results[0].contains("linked"), "{}", results[0]);
    assert!(results[1].contains("end"), "{}", results[1]);
    assert!(!victim.join(".git/refs/replace").exists(), "{}", results[1]);
    assert_ne!(
        std::fs::read_to_string(victim.join(".git/description")).unwrap(),
        "changed\n"
    );
}

#[test]
fn a_fifo_where_git_reads_a_file_does_not_hold_skillet() {
    let sandbox = Sandbox::empty();
    if !namespaces(&sandbox) {
        return;
    }
    // The project is a linked worktree of a repository beside it.
    let main = sandbox.root.join("main");
    std::fs::create_dir_all(&main).unwrap();
    git(&main, &["init", "-q", "-b", "main"]);
    std::fs::write(main.join("README.md"), "hello\n").unwrap();
    git(&main, &["add", "README.md"]);
    git(&main, &["commit", "-q", "-m", "first"]);
    std::fs::remove_dir(&sandbox.project).unwrap();
    git(
        &main,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "side",
            sandbox.project.to_str().unwrap(),
        ],
    );
    let commands = [
        "G=$(git rev-parse --git-dir); rm \"$G/gitdir\" && mkfifo \"$G/gitdir\" && echo made",
        "echo second",
    ];
    let server = scripted(&commands);
    let results = attack_through(
        &server,
        commands.len(),
        common::escapes::skillet(&sandbox, &server).timeout(std::time::Duration::from_mins(1)),
    );
    assert!(results[1].contains("second"), "{}", results[1]);
}

/// A descriptor skillet inherited without close-on-exec (an IDE's socket, a wrapper's
/// `exec 7<>…`) is not passed on to commands: bwrap passes on whatever it gets.
#[test]
fn descriptors_skillet_inherited_do_not_reach_commands() {
    let sandbox = repository();
    if !namespaces(&sandbox) {
        return;
    }
    let door = sandbox.root.join("door.txt");
    std::fs::write(&door, "DOOR\n").unwrap();
    let file = std::fs::File::open(&door).unwrap();
    rustix::io::fcntl_setfd(&file, rustix::io::FdFlags::empty()).unwrap();
    let results = attack(
        &sandbox,
        &["for fd in /proc/self/fd/*; do readlink \"$fd\"; done; echo listed"],
    );
    drop(file);
    assert!(results[0].contains("listed"), "{}", results[0]);
    assert!(
        !results[0].contains("door.txt"),
        "an inherited descriptor reached the command: {}",
        results[0]
    );
}

/// A nested repository with its own `core.fsmonitor`, added to the index as a gitlink (the
/// index stays writable so commits work): the user's `git status` at the top would run it. No
/// mount can keep this from happening; the user and the model are told, naming it.
#[test]
fn a_nested_repository_added_to_the_index_is_told() {
    let sandbox = repository();
    if !namespaces(&sandbox) {
        return;
    }
    let (results, stderr) = attack_told(
        &sandbox,
        &[
            "git init -q -b main sub && cd sub && git -c user.email=m@x -c user.name=m commit -q --allow-empty -m x && git config core.fsmonitor 'touch ../PWNED; false' && cd .. && git add sub && echo added",
            "echo unrelated",
        ],
    );
    assert!(results[0].contains("added"), "{}", results[0]);
    assert!(
        results[0].contains("added sub to git's index as nested repositories"),
        "the model was not told: {}",
        results[0]
    );
    assert!(
        stderr.contains("careful: the command added sub to git's index"),
        "the user was not told: {stderr}"
    );
    // Said once: the next command leaves the index alone.
    assert!(!results[1].contains("nested"), "{}", results[1]);
}

/// A rebase left in progress with `exec` lines runs them at the user's `git rebase
/// --continue`: told.
#[test]
fn a_rebase_left_with_exec_lines_is_told() {
    let sandbox = repository();
    if !namespaces(&sandbox) {
        return;
    }
    let (results, stderr) = attack_told(
        &sandbox,
        &[
            "export GIT_AUTHOR_NAME=m GIT_AUTHOR_EMAIL=m@x GIT_COMMITTER_NAME=m GIT_COMMITTER_EMAIL=m@x; echo b > b.txt && git add b.txt && git commit -qm b && GIT_SEQUENCE_EDITOR=true git rebase -q -i --exec false --exec 'touch PWNED' HEAD~1 >/dev/null 2>&1; grep -q 'touch PWNED' .git/rebase-merge/git-rebase-todo && echo left",
        ],
    );
    assert!(results[0].contains("left"), "{}", results[0]);
    assert!(
        stderr.contains("careful: the command left a rebase in progress (.git/rebase-merge)"),
        "the user was not told: {stderr}"
    );
}

/// A hooks path reached through a link (`.githooks -> tools/hooks`): the mount protects
/// `tools/hooks`, but no mount pins the link, so a command can put a folder of hooks in its
/// place. Told, naming the link.
#[test]
fn a_link_to_a_protected_path_replaced_is_told() {
    let sandbox = repository();
    if !namespaces(&sandbox) {
        return;
    }
    std::fs::create_dir_all(sandbox.project.join("tools/hooks")).unwrap();
    std::os::unix::fs::symlink("tools/hooks", sandbox.project.join(".githooks")).unwrap();
    git(&sandbox.project, &["config", "core.hooksPath", ".githooks"]);
    let (results, stderr) = attack_told(
        &sandbox,
        &[&format!(
            "rm .githooks && mkdir .githooks && {HOOK} > .githooks/pre-commit && chmod +x .githooks/pre-commit && echo replaced"
        )],
    );
    assert!(results[0].contains("replaced"), "{}", results[0]);
    assert!(
        stderr.contains(".githooks was a link to tools/hooks (protected)"),
        "the user was not told: {stderr}"
    );
}

/// A repository with a submodule `lib` (from a repository beside the project), committed.
fn with_submodule() -> Sandbox {
    let sandbox = repository();
    let lib = sandbox.root.join("lib-src");
    std::fs::create_dir_all(&lib).unwrap();
    git(&lib, &["init", "-q", "-b", "main"]);
    git(&lib, &["commit", "-q", "--allow-empty", "-m", "lib"]);
    git(
        &sandbox.project,
        &[
            "-c",
            "protocol.file.allow=always",
            "submodule",
            "add",
            "-q",
            &lib.display().to_string(),
            "lib",
        ],
    );
    git(&sandbox.project, &["commit", "-q", "-m", "with lib"]);
    sandbox
}

/// A nested repository added to a submodule's index: `git status` at the top looks into the
/// submodule, and so into it. Told as one at the top is.
#[test]
fn a_nested_repository_added_inside_a_submodule_is_told() {
    let sandbox = with_submodule();
    if !namespaces(&sandbox) {
        return;
    }
    let (results, stderr) = attack_told(
        &sandbox,
        &[
            "cd lib && git init -q nested && cd nested && git -c user.email=m@x -c user.name=m commit -q --allow-empty -m x && git config core.fsmonitor 'touch ../../PWNED; false' && cd .. && git add nested && echo added",
        ],
    );
    assert!(results[0].contains("added"), "{}", results[0]);
    assert!(
        stderr.contains("careful: the command added lib/nested to git's index"),
        "the user was not told: {stderr}"
    );
}

/// A submodule not initialised yet (as after a clone without `--recurse-submodules`): the
/// repository `git submodule update --init` would take under `.git/modules/` cannot be made
/// by a command; nor can a repository be planted where a gitlink is, listed in `.gitmodules`
/// or only in the index.
#[test]
fn no_repository_can_be_planted_for_a_submodule_or_a_gitlink() {
    let sandbox = with_submodule();
    if !namespaces(&sandbox) {
        return;
    }
    git(
        &sandbox.project,
        &["submodule", "deinit", "-q", "-f", "lib"],
    );
    std::fs::remove_dir_all(sandbox.project.join(".git/modules/lib")).unwrap();
    // A gitlink with no `.gitmodules` entry, its folder empty as after a clone.
    let head = git(&sandbox.project, &["rev-parse", "HEAD"]);
    let head = String::from_utf8(head.stdout).unwrap();
    git(
        &sandbox.project,
        &[
            "update-index",
            "--add",
            "--cacheinfo",
            &format!("160000,{},vendor/thing", head.trim()),
        ],
    );
    git(&sandbox.project, &["commit", "-q", "-m", "vendor"]);
    std::fs::create_dir_all(sandbox.project.join("vendor/thing")).unwrap();
    let results = attack(
        &sandbox,
        &[
            "git init -q --bare .git/modules/lib 2>&1 | tail -1; test -d .git/modules/lib/objects && echo planted-module || echo no-module",
            "git init -q vendor/thing 2>&1 | tail -1; test -d vendor/thing/.git/objects && echo planted-gitlink || echo no-gitlink",
            "git init -q lib 2>&1 | tail -1; test -d lib/.git/objects && echo planted-lib || echo no-lib",
        ],
    );
    assert!(results[0].contains("no-module"), "{}", results[0]);
    assert!(results[1].contains("no-gitlink"), "{}", results[1]);
    assert!(results[2].contains("no-lib"), "{}", results[2]);
    assert_not_pwned(&sandbox);
}
