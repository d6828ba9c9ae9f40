//! What the third review of the sandbox broke, end to end through `skillet run --yes` with the
//! model's `bash` calls scripted: the host's own git fetching through a repository's command,
//! links planted in git's directory, refs moved to commits that change protected paths, files
//! an allowed `.envrc` reads, and other tools' settings.

#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::panic, reason = "tests")]

mod common;

use std::process::Command as StdCommand;

use common::escapes::{HOOK, assert_not_pwned, attack, git, namespaces, repository};

/// A submodule whose index names a `.gitmodules` blob it does not have, in a partial clone
/// whose `uploadpack` is the payload: a git that looks into it (`ls-files
/// --recurse-submodules`) fetches the blob through that command.
const LAZY_FETCH: &str = r#"set -e; W=$(pwd)
git init -q sub; cd sub
git -c user.email=a@b -c user.name=a commit -q --allow-empty -m s
git config core.repositoryformatversion 1
git config extensions.partialClone origin
git config remote.origin.url "$W/sub"; git config remote.origin.promisor true
git config remote.origin.uploadpack "env > PAYLOAD; git-upload-pack"
git update-index --add --cacheinfo 160000,$(git rev-parse HEAD),subsub
git update-index --add --info-only --cacheinfo 100644,1111111111111111111111111111111111111111,.gitmodules
H=$(git rev-parse HEAD); cd ..
B=$(printf '[submodule "sub"]\n\tpath = sub\n\turl = ./sub\n' | git hash-object -w --stdin)
git update-index --add --cacheinfo 100644,$B,.gitmodules
git update-index --add --cacheinfo 160000,$H,sub
echo planted"#;

#[test]
fn skillets_own_git_never_fetches_through_a_repositorys_command_nor_sees_the_key() {
    let sandbox = repository();
    if !namespaces(&sandbox) {
        return;
    }
    // What `git clone --recurse-submodules` writes, even with no submodules.
    git(&sandbox.project, &["config", "submodule.active", "."]);
    let payload = sandbox.root.join("PWNED_env");
    let setup = LAZY_FETCH.replace("PAYLOAD", &payload.display().to_string());
    let first = attack(&sandbox, &[&setup]);
    assert!(first[0].contains("planted"), "{}", first[0]);
    // The next session's first command lists the index again.
    let second = attack(&sandbox, &["echo hello"]);
    assert!(second[0].contains("hello"), "{}", second[0]);
    assert!(
        !payload.exists(),
        "the host's git ran the repository's uploadpack: {}",
        std::fs::read_to_string(&payload).unwrap_or_default()
    );
}

#[test]
fn a_link_planted_in_git_s_directory_is_removed_before_the_users_commit_writes_through_it() {
    let sandbox = repository();
    if !namespaces(&sandbox) {
        return;
    }
    let config_before = std::fs::read(sandbox.project.join(".git/config")).unwrap();
    let victim = sandbox.root.join("bashrc");
    std::fs::write(&victim, "# mine\n").unwrap();
    let results = attack(
        &sandbox,
        &[&format!(
            "ln -sf config .git/COMMIT_EDITMSG && ln -sf {} .git/MERGE_MSG && \
             printf '[core]\\n\\tfsmonitor = \"touch PWNED; false\"\\n' > .git/SQUASH_MSG && \
             echo changed > README.md && echo end",
            victim.display()
        )],
    );
    assert!(results[0].contains("end"), "{}", results[0]);
    assert!(
        results[0].contains("skillet removed it"),
        "the model and user are told: {}",
        results[0]
    );
    for name in ["COMMIT_EDITMSG", "MERGE_MSG"] {
        let link = sandbox.project.join(".git").join(name);
        assert!(
            !std::fs::symlink_metadata(&link).is_ok_and(|m| m.file_type().is_symlink()),
            "{name} is still a link"
        );
    }
    // The user commits with their editor (a no-op one here), then looks at the status.
    let _ = StdCommand::new("git")
        .args(["-c", "user.email=u@example.com", "-c", "user.name=u"])
        .args(["commit", "-qa"])
        .env("GIT_EDITOR", "true")
        .current_dir(&sandbox.project)
        .output();
    assert_eq!(
        std::fs::read(sandbox.project.join(".git/config")).unwrap(),
        config_before
    );
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "# mine\n");
    assert_not_pwned(&sandbox);
}

#[test]
fn a_ref_moved_to_a_commit_that_changes_a_protected_path_is_told_with_the_way_back() {
    let sandbox = repository();
    if !namespaces(&sandbox) {
        return;
    }
    let old = String::from_utf8(git(&sandbox.project, &["rev-parse", "HEAD"]).stdout).unwrap();
    let plant = format!(
        "set -e; export GIT_INDEX_FILE=$TMPDIR/idx; git read-tree main; \
         B=$({HOOK} | git hash-object -w --stdin); \
         git update-index --add --cacheinfo 100755,$B,.husky/post-checkout; \
         C=$(git -c user.email=a@b -c user.name=a commit-tree $(git write-tree) -p main -m tidy); \
         git update-ref refs/heads/main $C; git update-ref refs/heads/feature $C; echo moved"
    );
    // An ordinary commit, for comparison: nothing protected changes, nothing is said.
    let ordinary = "echo more > more.txt && git add more.txt && \
                    git -c user.email=a@b -c user.name=a commit -q -m more && echo committed";
    let results = attack(&sandbox, &[&plant, ordinary]);
    assert!(results[0].contains("moved"), "{}", results[0]);
    assert!(
        results[0].contains("refs/heads/main") && results[0].contains(".husky/post-checkout"),
        "{}",
        results[0]
    );
    assert!(
        results[0].contains(&format!("git update-ref refs/heads/main {}", old.trim())),
        "the way back is given: {}",
        results[0]
    );
    assert!(
        results[0].contains("git update-ref -d refs/heads/feature"),
        "{}",
        results[0]
    );
    assert!(results[1].contains("committed"), "{}", results[1]);
    assert!(!results[1].contains("[skillet:"), "{}", results[1]);
}

#[test]
fn what_an_envrc_sources_and_other_agents_settings_are_read_only() {
    let sandbox = repository();
    if !namespaces(&sandbox) {
        return;
    }
    std::fs::write(
        sandbox.project.join(".envrc"),
        "source_env_if_exists .envrc.local\ndotenv\nsource ./scripts/env.sh arg # comment\nuse flake\nPATH_add bin\n",
    )
    .unwrap();
    std::fs::create_dir_all(sandbox.project.join("scripts")).unwrap();
    std::fs::write(sandbox.project.join("scripts/env.sh"), "export A=1\n").unwrap();
    let written = [
        ".envrc.local",
        ".env",
        "scripts/env.sh",
        "flake.nix",
        "CLAUDE.local.md",
        "GEMINI.md",
        ".codex/config.toml",
        ".cursor/mcp.json",
        ".gemini/settings.json",
        "mise.toml",
        ".yarnrc.yml",
    ];
    let command = written
        .iter()
        .map(|path| format!("mkdir -p $(dirname {path}) 2>/dev/null; echo 'touch PWNED' > {path} 2>/dev/null && echo wrote {path}"))
        .chain(std::iter::once("mkdir -p bin && echo ok > bin/tool && echo wrote bin".to_string()))
        .collect::<Vec<_>>()
        .join("; ");
    let results = attack(&sandbox, &[&command]);
    for path in written {
        assert!(
            !results[0].contains(&format!("wrote {path}\n"))
                && !results[0].ends_with(&format!("wrote {path}")),
            "{path} was written: {}",
            results[0]
        );
    }
    assert_eq!(
        std::fs::read_to_string(sandbox.project.join("scripts/env.sh")).unwrap(),
        "export A=1\n"
    );
    // A PATH_add folder is not protected: builds write there (a documented limit).
    assert!(results[0].contains("wrote bin"), "{}", results[0]);
}

/// What the review of the fixes above broke: the checks after a command failed open.
mod review4 {
    use super::*;

    /// Leaves `$C`, a commit on `main` that adds a hook the user's git would run (its own
    /// each time: the time in nanoseconds is in it).
    pub(super) const EVIL: &str = "export GIT_INDEX_FILE=$TMPDIR/idx-$$; git read-tree main; \
        B=$(printf '#!/bin/sh\\ntouch PWNED%s\\n' $(date +%N) | git hash-object -w --stdin); \
        git update-index --add --cacheinfo 100755,$B,.husky/pre-commit; \
        C=$(git -c user.email=a@b -c user.name=a commit-tree $(git write-tree) -p main -m tidy); \
        unset GIT_INDEX_FILE";

    pub(super) fn told(result: &str, what: &str) {
        assert!(
            result.contains("[skillet:") && result.contains(what),
            "{what} not told: {result}"
        );
    }

    #[test]
    fn refs_past_the_old_cap_a_detached_head_a_symbolic_ref_and_replacements_are_told() {
        let sandbox = repository();
        if !namespaces(&sandbox) {
            return;
        }
        git(
            &sandbox.project,
            &[
                "symbolic-ref",
                "refs/remotes/origin/HEAD",
                "refs/remotes/origin/main",
            ],
        );
        git(
            &sandbox.project,
            &["update-ref", "refs/remotes/origin/main", "HEAD"],
        );
        let results = attack(
            &sandbox,
            &[
                &format!(
                    "{EVIL}; for i in $(seq 10 30); do git update-ref refs/heads/a$i HEAD; done; git update-ref refs/heads/main $C; echo ok"
                ),
                &format!("{EVIL}; git update-ref --no-deref HEAD $C; echo ok"),
                &format!("{EVIL}; echo $C > .git/refs/remotes/origin/HEAD; echo ok"),
                &format!("{EVIL}; git replace $C $(git rev-parse HEAD) 2>&1; echo ok"),
            ],
        );
        told(&results[0], "refs/heads/main");
        told(&results[0], ".husky/pre-commit");
        told(&results[1], "HEAD to a commit");
        told(&results[2], "refs/remotes/origin/HEAD");
        told(&results[3], "refs/replace/");
    }

    #[test]
    fn protected_paths_staged_in_the_index_are_told() {
        let sandbox = repository();
        if !namespaces(&sandbox) {
            return;
        }
        let results = attack(
            &sandbox,
            &[
                "B=$(printf '#!/bin/sh\\ntouch PWNED\\n' | git hash-object -w --stdin); \
               git update-index --add --cacheinfo 100755,$B,.husky/pre-commit; \
               git update-index --add --cacheinfo 100644,$B,.envrc; echo ok",
            ],
        );
        told(&results[0], "staged");
        told(&results[0], ".husky/pre-commit");
        told(&results[0], "git restore --staged");
    }

    #[test]
    fn links_and_fifos_anywhere_in_git_s_directory_are_removed_however_many_entries() {
        let sandbox = repository();
        if !namespaces(&sandbox) {
            return;
        }
        let victim = sandbox.root.join("victim_rc");
        std::fs::write(&victim, "# mine\n").unwrap();
        let results = attack(
            &sandbox,
            &[&format!(
                "cd .git && for i in $(seq 1 20010); do : > pad$i; done; cd ..; \
                 git branch objects/x; mkdir -p .git/logs/refs/heads/objects; \
                 rm -f .git/logs/refs/heads/objects/x; ln -s {victim} .git/logs/refs/heads/objects/x; \
                 rm -f .git/logs/HEAD; ln -s {victim} .git/logs/HEAD; \
                 mkfifo .git/COMMIT_EDITMSG; echo ok",
                victim = victim.display()
            )],
        );
        assert!(results[0].contains("ok"), "{}", results[0]);
        for path in ["logs/HEAD", "logs/refs/heads/objects/x", "COMMIT_EDITMSG"] {
            let path = sandbox.project.join(".git").join(path);
            assert!(
                !std::fs::symlink_metadata(&path).is_ok_and(|m| !m.is_file() && !m.is_dir()),
                "{} is still there",
                path.display()
            );
        }
        let _ = StdCommand::new("git")
            .args(["-c", "user.email=u@example.com", "-c", "user.name=u"])
            .args(["commit", "-q", "--allow-empty", "-m", "mine"])
            .current_dir(&sandbox.project)
            .output();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "# mine\n");
    }

    #[test]
    fn what_envrc_lines_of_every_shape_and_yarns_path_name_is_read_only() {
        let sandbox = repository();
        if !namespaces(&sandbox) {
            return;
        }
        std::fs::write(
            sandbox.project.join(".envrc"),
            "[ -f .env.local ] && source .env.local\n\
             source_env_if_exists \"$PWD/.envrc.local\"\n\
             if [ -f .envrc.private ]; then source_env .envrc.private; fi\n\
             export FOO=1; dotenv_if_exists .env.dev\n",
        )
        .unwrap();
        std::fs::write(
            sandbox.project.join(".yarnrc.yml"),
            "yarnPath: .yarn/releases/yarn-4.5.0.cjs\nplugins:\n  - path: .yarn/plugins/tool.cjs\n",
        )
        .unwrap();
        let written = [
            ".env.local",
            ".envrc.local",
            ".envrc.private",
            ".env.dev",
            ".yarn/releases/yarn-4.5.0.cjs",
            ".yarn/plugins/tool.cjs",
        ];
        let command = written
            .iter()
            .map(|path| format!("mkdir -p $(dirname {path}) 2>/dev/null; echo x > {path} 2>/dev/null && echo wrote {path}"))
            .collect::<Vec<_>>()
            .join("; ");
        let results = attack(&sandbox, &[&format!("{command}; echo end")]);
        assert!(results[0].contains("end"), "{}", results[0]);
        for path in written {
            assert!(
                !results[0].contains(&format!("wrote {path}\n")),
                "{path}: {}",
                results[0]
            );
        }
    }

    #[test]
    fn a_hooks_path_in_the_users_git_config_global_is_protected() {
        let sandbox = repository();
        if !namespaces(&sandbox) {
            return;
        }
        let global = sandbox.root.join("gitconfig");
        std::fs::write(&global, "[core]\n\thooksPath = .githooks\n").unwrap();
        let server = common::escapes::scripted(&[
            "mkdir -p .githooks 2>&1; printf '#!/bin/sh\\ntouch PWNED\\n' > .githooks/pre-commit 2>&1 && echo planted",
        ]);
        let mut skillet = common::escapes::skillet(&sandbox, &server);
        skillet.env("GIT_CONFIG_GLOBAL", &global);
        let results = common::escapes::attack_through(&server, 1, &mut skillet);
        assert!(!results[0].contains("planted"), "{}", results[0]);
        assert!(!sandbox.project.join(".githooks/pre-commit").exists());
    }
}

/// What the review of the second round broke: checks that skipped what they could not read,
/// paths their pathspecs never asked about, and `.envrc` and `.yarnrc.yml` forms.
mod review5 {
    use super::*;
    use common::Sandbox;

    const EVIL: &str = super::review4::EVIL;

    use super::review4::told;

    #[test]
    fn a_padded_head_orig_head_and_a_hidden_staged_hook_are_told() {
        let sandbox = repository();
        if !namespaces(&sandbox) {
            return;
        }
        let results = attack(
            &sandbox,
            &[
                &format!(
                    "{EVIL}; (echo $C; head -c 1100000 /dev/zero | tr '\\0' ' ') > .git/HEAD; echo ok"
                ),
                &format!("{EVIL}; git update-ref ORIG_HEAD $C; echo ok"),
                "B=$(printf '#!/bin/sh\\ntouch PWNED\\n' | git hash-object -w --stdin); \
                 git update-index --add --cacheinfo 100755,$B,.husky/pre-commit; \
                 git update-index --skip-worktree .husky/pre-commit; echo ok",
            ],
        );
        told(&results[0], "HEAD");
        told(&results[1], "ORIG_HEAD");
        told(&results[2], "skip-worktree");
    }

    #[test]
    fn a_branch_that_adds_what_the_envrc_sources_is_told_and_a_first_commit_is_not() {
        let sandbox = Sandbox::empty();
        if !namespaces(&sandbox) {
            return;
        }
        git(&sandbox.project, &["init", "-q", "-b", "main"]);
        std::fs::write(
            sandbox.project.join(".envrc"),
            "source_env_if_exists .envrc.local\n",
        )
        .unwrap();
        std::fs::write(sandbox.project.join("README.md"), "hello\n").unwrap();
        let results = attack(
            &sandbox,
            &[
                "git add README.md .envrc && git -c user.email=a@b -c user.name=a commit -q -m first && echo committed",
                "export GIT_INDEX_FILE=$TMPDIR/idx; git read-tree main; \
                 B=$(echo 'touch PWNED' | git hash-object -w --stdin); \
                 git update-index --add --cacheinfo 100644,$B,.envrc.local; \
                 C=$(git -c user.email=a@b -c user.name=a commit-tree $(git write-tree) -p main -m deps); \
                 git branch deps-bump $C; echo ok",
            ],
        );
        assert!(results[0].contains("committed"), "{}", results[0]);
        assert!(
            !results[0].contains("[skillet:"),
            "a first commit is ordinary: {}",
            results[0]
        );
        told(&results[1], ".envrc.local");
    }

    #[test]
    fn links_in_the_object_store_are_removed_and_a_linked_head_kept() {
        let sandbox = repository();
        if !namespaces(&sandbox) {
            return;
        }
        let outside = sandbox.root.join("outside");
        std::fs::create_dir_all(&outside).unwrap();
        let results = attack(
            &sandbox,
            &[
                &format!("ln -s {} .git/objects/ab && echo ok", outside.display()),
                // The legacy form git still reads.
                "ln -sf refs/heads/main .git/HEAD && echo ok",
            ],
        );
        assert!(results[0].contains("skillet removed it"), "{}", results[0]);
        assert!(
            !std::fs::symlink_metadata(sandbox.project.join(".git/objects/ab"))
                .is_ok_and(|m| m.file_type().is_symlink())
        );
        told(&results[1], "HEAD");
        let status = StdCommand::new("git")
            .arg("status")
            .current_dir(&sandbox.project)
            .output()
            .unwrap();
        assert!(status.status.success(), "the repository still works");
    }

    #[test]
    fn what_an_envrc_runs_and_yarn_plugins_of_every_form_are_read_only() {
        let sandbox = repository();
        if !namespaces(&sandbox) {
            return;
        }
        for (path, text) in [
            ("scripts/env.sh", "echo 1\n"),
            ("dev env.sh", "export A=1\n"),
            ("extra.sh", "export B=1\n"),
            ("nix/flake.nix", "{}\n"),
            (".yarn/releases/yarn-4.cjs", "//\n"),
            (".yarn/plugins/p.cjs", "//\n"),
        ] {
            let file = sandbox.project.join(path);
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(&file, text).unwrap();
        }
        std::fs::write(
            sandbox.project.join(".envrc"),
            "export VERSION=$(sh scripts/env.sh)\nsource \"dev env.sh\"\nsource \"$(pwd)/extra.sh\"\nuse flake ./nix\n",
        )
        .unwrap();
        std::fs::write(
            sandbox.project.join(".yarnrc.yml"),
            "yarnPath: \".yarn/releases/yarn-4.cjs\"  # pinned\nplugins:\n  - .yarn/plugins/p.cjs\n",
        )
        .unwrap();
        let written = [
            "scripts/env.sh",
            "dev env.sh",
            "extra.sh",
            "nix/flake.nix",
            ".yarn/releases/yarn-4.cjs",
            ".yarn/plugins/p.cjs",
        ];
        let command = written
            .iter()
            .map(|path| format!("echo x >> '{path}' 2>/dev/null && echo 'wrote {path}'"))
            .collect::<Vec<_>>()
            .join("; ");
        let results = attack(&sandbox, &[&format!("{command}; echo end")]);
        assert!(results[0].contains("end"), "{}", results[0]);
        for path in written {
            assert!(
                !results[0].contains(&format!("wrote {path}\n")),
                "{path}: {}",
                results[0]
            );
        }
    }
}
