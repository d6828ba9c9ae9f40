//! The fourth review of the sandbox: a hostile repository and a misled model (tool calls
//! scripted on the strict mock provider) against `skillet run --yes`, each case a way a red
//! team found to change, later, what runs outside the sandbox, or to read a credential.

#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::panic, reason = "tests")]

mod common;

use std::process::Command as StdCommand;

use common::Sandbox;
use common::escapes::{API_KEY, assert_not_pwned, attack, attack_with, namespaces, repository};

/// What git printed in the project, trimmed.
fn git_out(sandbox: &Sandbox, args: &[&str]) -> String {
    let out = common::escapes::git(&sandbox.project, args);
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

#[test]
fn a_protected_file_with_another_name_leaves_commands_nothing_to_write() {
    let sandbox = repository();
    if !namespaces(&sandbox) {
        return;
    }
    // An archive can ship a hard link: `notes.txt` is `.git/config` under another name.
    let config = sandbox.project.join(".git/config");
    let before = std::fs::read_to_string(&config).unwrap();
    std::fs::hard_link(&config, sandbox.project.join("notes.txt")).unwrap();
    let results = attack(
        &sandbox,
        &[
            "printf '[core]\\n\\tfsmonitor = \"touch PWNED\"\\n' >> notes.txt; echo x > other.txt; echo end",
        ],
    );
    assert!(
        results[0].contains("Read-only file system"),
        "{}",
        results[0]
    );
    assert_eq!(std::fs::read_to_string(&config).unwrap(), before);
    assert!(!sandbox.project.join("other.txt").exists());
    assert_not_pwned(&sandbox);
}

#[test]
fn other_tools_settings_that_run_code_are_read_only() {
    let sandbox = repository();
    if !namespaces(&sandbox) {
        return;
    }
    std::fs::write(sandbox.project.join(".envrc"), "use devenv\n").unwrap();
    let names = [
        "lefthook-local.yml",
        ".lefthook-local.yml",
        "lefthook.yaml",
        "opencode.json",
        ".crush.json",
        ".aider.conf.yml",
        ".huskyrc",
        "mise.local.toml",
        ".clinerules",
        "devenv.nix",
        "devenv.yaml",
        ".devcontainer.json",
        "QWEN.md",
        ".goosehints",
        ".yarnrc",
        ".pnpmfile.cjs",
        "bunfig.toml",
    ];
    let writes: Vec<String> = names
        .iter()
        .map(|name| format!("echo x > {name} 2>/dev/null || echo refused {name}"))
        .collect();
    let results = attack(
        &sandbox,
        &[
            &writes.join("; "),
            "mkdir -p .hg .github/prompts .github/hooks .devcontainer 2>&1; echo '{}' > .github/hooks/h.json 2>&1; echo '{}' > .devcontainer/devcontainer.json 2>&1; printf '[hooks]\\npre-status = touch PWNED\\n' >> .hg/hgrc 2>&1; echo x > .github/copilot-instructions.md 2>&1; echo x > .github/prompts/p.md 2>&1; echo end",
        ],
    );
    for name in names {
        assert!(
            results[0].contains(&format!("refused {name}")),
            "{name}: {}",
            results[0]
        );
        assert!(!sandbox.project.join(name).exists(), "{name}");
    }
    assert!(!sandbox.project.join(".hg/hgrc").exists(), "{}", results[1]);
    assert!(
        !sandbox
            .project
            .join(".github/copilot-instructions.md")
            .exists()
    );
    assert!(!sandbox.project.join(".github/prompts/p.md").exists());
    assert!(!sandbox.project.join(".github/hooks/h.json").exists());
    assert!(
        !sandbox
            .project
            .join(".devcontainer/devcontainer.json")
            .exists()
    );
    assert_not_pwned(&sandbox);
}

#[test]
fn credentials_in_other_shapes_do_not_reach_commands() {
    let sandbox = repository();
    if !namespaces(&sandbox) {
        return;
    }
    let secrets = [
        (
            "AZURE_STORAGE_CONNECTION_STRING",
            "DefaultEndpointsProtocol=https;AccountName=a;AccountKey=hunter1azure",
        ),
        (
            "SERVICEBUS",
            "Endpoint=sb://ns/;SharedAccessKeyName=k;SharedAccessKey=hunter1bus",
        ),
        ("DATABASE_URL", "\"postgres://app:hunter2quoted@db/prod\""),
        ("JDBC_URL", "jdbc:mysql://app:hunter3jdbc@db/prod"),
        (
            "VCAP_SERVICES",
            r#"{"pg":[{"credentials":{"uri":"postgres://u:hunter4vcap@h/db","password":"hunter4vcap"}}]}"#,
        ),
        ("CORP_PROXY", "user:hunter5proxy@proxy:3128"),
        ("AWS_SESSION_ID", "ASIAHUNTER6SESSION00"),
        ("GOOGLE_ACCESS", "ya29.hunter7googleaccess"),
        ("RUNNER", "glrt-hunter8runnertoken"),
        ("DO_ACCESS", "dop_v1_hunter9digitalocean"),
        ("MAILER", "SG.hunter10sendgrid.abcdef"),
        (
            "JAVA_TOOL_OPTIONS",
            "-Dspring.datasource.password=hunter11java -Xmx2g",
        ),
        ("HELM_ARGS", "--set auth.password=hunter12helm"),
        ("SQUID", "admin:hunter13squid@squid_proxy:3128"),
    ];
    let results = attack_with(&sandbox, &["env"], &secrets);
    for (name, value) in secrets {
        let secret: String = value.chars().filter(char::is_ascii_alphanumeric).collect();
        assert!(
            !results[0].contains(name),
            "{name} reached the command: {}",
            results[0]
        );
        assert!(!results[0].contains(&secret[secret.len() - 8..]), "{name}");
    }
    // Ordinary values still pass.
    assert!(results[0].contains("HOME="), "{}", results[0]);
    let _ = API_KEY;
}

#[test]
fn no_vsock_without_the_network() {
    let sandbox = repository();
    if !namespaces(&sandbox) {
        return;
    }
    let probe = "import socket; socket.socket(socket.AF_VSOCK, socket.SOCK_STREAM); print('made')";
    let host = StdCommand::new("python3")
        .args(["-c", probe])
        .output()
        .unwrap();
    if !String::from_utf8_lossy(&host.stdout).contains("made") {
        skillet_test_support::skip("this machine makes no vsock socket, so none can be refused");
        return;
    }
    let config = sandbox.home.join(".config/skillet");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(config.join("skillet.toml"), "[sandbox]\nnetwork = false\n").unwrap();
    let results = attack(
        &sandbox,
        &[&format!("python3 -c \"{probe}\" 2>&1 | tail -1")],
    );
    assert!(!results[0].contains("made"), "{}", results[0]);
    assert!(
        results[0].contains("PermissionError") || results[0].contains("not permitted"),
        "{}",
        results[0]
    );
}

#[test]
fn the_users_git_config_in_the_working_directory_is_read_only() {
    // A dotfiles repository as the working directory, with the user's configuration in it.
    let sandbox = Sandbox::empty();
    if !namespaces(&sandbox) {
        return;
    }
    let config = sandbox.project.join("config");
    std::fs::create_dir_all(config.join("git")).unwrap();
    std::fs::write(config.join("git/config"), "[user]\n\tname = me\n").unwrap();
    let global = sandbox.project.join("gitconfig");
    std::fs::write(&global, "[user]\n\tname = me\n").unwrap();
    let results = attack_with(
        &sandbox,
        &[
            "printf '[core]\\n\\tfsmonitor = \"touch PWNED\"\\n' >> config/git/config 2>&1; printf '[alias]\\n\\tst = !touch PWNED\\n' >> gitconfig 2>&1; mkdir -p config/fish 2>&1; mkdir -p config/nvim 2>&1; echo end",
        ],
        &[
            ("XDG_CONFIG_HOME", config.to_str().unwrap()),
            ("GIT_CONFIG_GLOBAL", global.to_str().unwrap()),
        ],
    );
    assert!(
        results[0].contains("Read-only file system"),
        "{}",
        results[0]
    );
    assert_eq!(
        std::fs::read_to_string(config.join("git/config")).unwrap(),
        "[user]\n\tname = me\n"
    );
    assert_eq!(
        std::fs::read_to_string(&global).unwrap(),
        "[user]\n\tname = me\n"
    );
    assert!(!config.join("fish").exists());
    assert!(!config.join("nvim").exists());
}

#[test]
fn a_rewritten_object_is_removed_and_packs_stay_as_they_were() {
    let sandbox = repository();
    if !namespaces(&sandbox) {
        return;
    }
    let git = |args: &[&str]| git_out(&sandbox, args);
    // A hook on another branch, as a loose object; the rest packed.
    git(&["checkout", "-q", "-b", "feat"]);
    std::fs::create_dir_all(sandbox.project.join(".githooks")).unwrap();
    std::fs::write(
        sandbox.project.join(".githooks/pre-commit"),
        "#!/bin/sh\necho lint\n",
    )
    .unwrap();
    git(&["add", ".githooks"]);
    git(&["commit", "-q", "-m", "hooks"]);
    git(&["checkout", "-q", "main"]);
    let blob = git(&["rev-parse", "feat:.githooks/pre-commit"]);
    git(&["repack", "-q", "-a", "-d"]);
    // A loose copy of the packed blob (git keeps a packed object packed, so it is written
    // here), as a repository has after a fetch: a file a command can reach.
    let path = format!(".git/objects/{}/{}", &blob[..2], &blob[2..]);
    std::fs::create_dir_all(sandbox.project.join(&path).parent().unwrap()).unwrap();
    let script = format!(
        "import zlib,sys; d=sys.stdin.buffer.read(); open('{path}','wb').write(zlib.compress(b'blob %d\\0' % len(d) + d))"
    );
    let out = StdCommand::new("sh")
        .args([
            "-c",
            &format!("git cat-file blob {blob} | python3 -c \"{script}\""),
        ])
        .current_dir(&sandbox.project)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(sandbox.project.join(&path).exists());
    let poison = format!(
        "chmod u+w {path}; python3 -c \"import zlib; p=b'#!/bin/sh\\ntouch PWNED\\n'; open('{path}','wb').write(zlib.compress(b'blob %d\\0' % len(p) + p))\" && echo rewrote"
    );
    let results = attack(
        &sandbox,
        &[
            &poison,
            "mkdir -p /tmp/away; mv .git/objects/pack/*.pack /tmp/away/ 2>&1; echo x > .git/objects/info/alternates 2>&1; echo end",
        ],
    );
    assert!(results[0].contains("rewrote"), "{}", results[0]);
    assert!(
        results[1].contains("Read-only file system"),
        "{}",
        results[1]
    );
    // The rewritten object is gone; the packed one, untouched, is what git reads.
    assert_eq!(git(&["cat-file", "blob", &blob]), "#!/bin/sh\necho lint");
    assert!(
        !sandbox
            .project
            .join(".git/objects/info/alternates")
            .exists()
    );
    assert_not_pwned(&sandbox);
}

#[test]
fn a_fetch_keeps_its_objects_loose_and_works() {
    let sandbox = repository();
    if !namespaces(&sandbox) {
        return;
    }
    // Another repository with more objects than git unpacks by default (100), where the
    // command can read it (its `/tmp` is its own).
    let other = sandbox.project.join("upstream");
    std::fs::create_dir_all(&other).unwrap();
    common::escapes::git(&other, &["init", "-q", "-b", "main"]);
    for index in 0..150 {
        std::fs::write(other.join(format!("f{index}.txt")), format!("{index}\n")).unwrap();
    }
    common::escapes::git(&other, &["add", "."]);
    common::escapes::git(&other, &["commit", "-q", "-m", "many"]);
    let results = attack(
        &sandbox,
        &[
            "git fetch -q ./upstream main:theirs 2>&1 | grep -v gitmodules; git log --oneline theirs | wc -l",
        ],
    );
    assert!(results[0].trim().ends_with('1'), "{}", results[0]);
}

#[test]
fn what_a_link_in_a_protected_folder_leads_to_is_read_only_too() {
    let sandbox = repository();
    if !namespaces(&sandbox) {
        return;
    }
    // A common set-up: the hook kept in the tree, linked from `.git/hooks`.
    std::fs::create_dir_all(sandbox.project.join("scripts")).unwrap();
    std::fs::write(
        sandbox.project.join("scripts/pre-commit.sh"),
        "#!/bin/sh\nexit 0\n",
    )
    .unwrap();
    std::os::unix::fs::symlink(
        "../../scripts/pre-commit.sh",
        sandbox.project.join(".git/hooks/pre-commit"),
    )
    .unwrap();
    let results = attack(
        &sandbox,
        &[
            "printf '#!/bin/sh\\ntouch PWNED\\n' > scripts/pre-commit.sh 2>&1; echo x > scripts/other.sh; echo end",
        ],
    );
    assert!(
        results[0].contains("Read-only file system"),
        "{}",
        results[0]
    );
    assert_eq!(
        std::fs::read_to_string(sandbox.project.join("scripts/pre-commit.sh")).unwrap(),
        "#!/bin/sh\nexit 0\n"
    );
    // The folder beside it stays writable.
    assert!(sandbox.project.join("scripts/other.sh").exists());
    assert_not_pwned(&sandbox);
}

#[test]
fn a_local_clone_with_linked_packs_still_works() {
    let sandbox = Sandbox::empty();
    if !namespaces(&sandbox) {
        return;
    }
    // `git clone` of a local repository links its packs to the original's.
    let origin = sandbox.root.join("origin");
    std::fs::create_dir_all(&origin).unwrap();
    common::escapes::git(&origin, &["init", "-q", "-b", "main"]);
    std::fs::write(origin.join("a.txt"), "a\n").unwrap();
    common::escapes::git(&origin, &["add", "a.txt"]);
    common::escapes::git(&origin, &["commit", "-q", "-m", "a"]);
    common::escapes::git(&origin, &["repack", "-q", "-a", "-d"]);
    common::escapes::git(&sandbox.root, &["clone", "-q", "origin", "project"]);
    let results = attack(&sandbox, &["echo hello > new.txt && echo wrote"]);
    assert!(results[0].contains("wrote"), "{}", results[0]);
    assert!(
        sandbox.project.join("new.txt").exists(),
        "{}: {:?}",
        results[0],
        std::fs::read_dir(&sandbox.project)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect::<Vec<_>>()
    );
}

#[test]
fn an_object_folder_renamed_into_place_is_checked_whole() {
    let sandbox = repository();
    if !namespaces(&sandbox) {
        return;
    }
    let git = |args: &[&str]| git_out(&sandbox, args);
    std::fs::write(sandbox.project.join("hook.sh"), "#!/bin/sh\necho lint\n").unwrap();
    let blob = git(&["hash-object", "-w", "hook.sh"]);
    let (folder, rest) = blob.split_at(2);
    // A folder made by one command, renamed over the object's folder by the next: the files
    // keep the change times they had.
    let stage = format!(
        "mkdir -p .git/objects/stash && python3 -c \"import zlib; p=b'#!/bin/sh\\ntouch PWNED\\n'; open('.git/objects/stash/{rest}','wb').write(zlib.compress(b'blob %d\\0' % len(p) + p))\" && sleep 3 && echo staged"
    );
    let swap = format!(
        "mv .git/objects/{folder} .git/objects/{folder}.old && mv .git/objects/stash .git/objects/{folder} && echo swapped"
    );
    let results = attack(&sandbox, &[&stage, &swap]);
    assert!(results[1].contains("swapped"), "{}", results[1]);
    // The object in the renamed folder was not what its name says: gone.
    assert!(
        !sandbox
            .project
            .join(format!(".git/objects/{folder}/{rest}"))
            .exists()
    );
}

#[test]
fn a_link_on_the_way_to_what_a_protected_link_reads_is_told_when_replaced() {
    let sandbox = repository();
    if !namespaces(&sandbox) {
        return;
    }
    // `.claude/settings.json -> ../cfg/claude.json`, and `cfg -> real`.
    let project = &sandbox.project;
    std::fs::create_dir_all(project.join("real")).unwrap();
    std::fs::write(project.join("real/claude.json"), "{}\n").unwrap();
    std::os::unix::fs::symlink("real", project.join("cfg")).unwrap();
    std::fs::create_dir_all(project.join(".claude")).unwrap();
    std::os::unix::fs::symlink("../cfg/claude.json", project.join(".claude/settings.json"))
        .unwrap();
    let results = attack(
        &sandbox,
        &[
            "echo '{\"hooks\":{}}' > real/claude.json 2>&1; mkdir -p evil && echo '{\"hooks\":{}}' > evil/claude.json && ln -sfn evil cfg && echo swapped",
        ],
    );
    // What it leads to is read-only; the link on the way can be replaced (no mount pins a
    // link), and that is told.
    assert!(
        results[0].contains("Read-only file system"),
        "{}",
        results[0]
    );
    assert!(results[0].contains("swapped"), "{}", results[0]);
    assert!(results[0].contains("was a link to"), "{}", results[0]);
}
