//! `skillet registry …` end to end against a real PostgreSQL with pgvector (`scripts/test.sh`
//! starts one and sets `SKILLET_TEST_PG_URL`; without it these tests skip, saying so, unless
//! `SKILLET_REQUIRE_PG` is set). No embedding model here: words only, as the output says.

#![allow(
    clippy::unwrap_used,
    clippy::panic,
    clippy::too_many_lines,
    reason = "tests"
)]

mod common;

use common::{Sandbox, run, skillet, write_skill};
use pretty_assertions::assert_eq;
use skillet_test_support::TestDatabase;

fn server(test: &str) -> Option<String> {
    skillet_test_support::registry_server_for(test)
}

fn skill(description: &str, body: &str, name: &str) -> String {
    format!("---\nname: {name}\ndescription: {description}\n---\n\n{body}\n")
}

/// The sandbox's skills to publish, under `root/publish`.
fn publishable(sandbox: &Sandbox) -> std::path::PathBuf {
    let root = sandbox.root.join("publish");
    write_skill(
        &root,
        "pdf-forms",
        &skill(
            "Fill in PDF forms and extract their fields. Use when the user has a PDF form.",
            "# Steps",
            "pdf-forms",
        ),
    );
    write_skill(
        &root,
        "git-cleanup",
        &skill(
            "Delete merged git branches and prune stale remotes.",
            "# Steps",
            "git-cleanup",
        ),
    );
    root
}

#[test]
fn publish_search_install_update_list_and_yank() {
    let Some(url) = server("publish_search_install_update_list_and_yank") else {
        return;
    };
    let db = TestDatabase::create(&url);
    let sandbox = Sandbox::empty();
    let root = publishable(&sandbox);
    let registry = |args: &[&str]| {
        let mut command = skillet(&sandbox, None);
        command
            .arg("registry")
            .args(args)
            .env("SKILLET_REGISTRY_URL", &db.url);
        run(&mut command)
    };

    // Before init: a one-line reason and the fix; exit 1.
    let out = registry(&["list"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr.contains("skillet registry init"),
        "{}",
        out.stderr
    );

    let out = registry(&["init"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.contains(
            "schema version 6 (applied 0001_init, 0002_body_words, 0003_definer_functions, 0004_statistics_deltas, 0005_publish_hashes_its_own_blobs, 0006_fold_by_rows)"
        ),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("pgvector 0.6.2"), "{}", out.stdout);
    let out = registry(&["init"]);
    assert!(out.stdout.contains("(up to date)"), "{}", out.stdout);

    let root_arg = root.to_str().unwrap();
    let out = registry(&["publish", root_arg, "--owner", "acme"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.contains("published acme/git-cleanup@1 (sha256:"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("published acme/pdf-forms@1 (sha256:"),
        "{}",
        out.stdout
    );
    assert!(
        out.stderr.contains("published without vectors"),
        "{}",
        out.stderr
    );
    // Again: the same versions.
    let out = registry(&["publish", root_arg, "--owner", "acme"]);
    assert!(
        out.stdout
            .contains("acme/pdf-forms@1: unchanged (this content is that version)"),
        "{}",
        out.stdout
    );
    // --expect-seq with a stale number: refused, exit 1, nothing published.
    std::fs::write(root.join("pdf-forms/notes.md"), "more").unwrap();
    let pdf = root.join("pdf-forms");
    let out = registry(&[
        "publish",
        pdf.to_str().unwrap(),
        "--owner",
        "acme",
        "--expect-seq",
        "0",
    ]);
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert!(
        out.stderr
            .contains("expected the latest version to be 0, but it is 1"),
        "{}",
        out.stderr
    );
    let out = registry(&[
        "publish",
        pdf.to_str().unwrap(),
        "--owner",
        "acme",
        "--expect-seq",
        "1",
        "--json",
    ]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let json: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(json["results"][0]["published"]["seq"], 2);
    assert_eq!(json["results"][0]["published"]["created"], true);
    // --expect-seq names one skill.
    let out = registry(&["publish", root_arg, "--owner", "acme", "--expect-seq", "1"]);
    assert_eq!(out.code, 2, "{}", out.stderr);

    // Search by words (no model here), said so.
    let out = registry(&["search", "fill a pdf form"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr.contains("ranked by words only"),
        "{}",
        out.stderr
    );
    let first = out.stdout.lines().next().unwrap();
    assert!(first.contains("acme/pdf-forms@2"), "{}", out.stdout);
    let out = registry(&["search", "fill a pdf form", "--json", "--top-k", "1"]);
    let json: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(json["mode"], "lexical");
    assert_eq!(json["results"].as_array().unwrap().len(), 1);
    assert_eq!(json["results"][0]["skill"], "acme/pdf-forms");
    assert_eq!(json["results"][0]["installed"], serde_json::Value::Null);

    // Install the first version, then update to the second.
    let out = registry(&["install", "acme/pdf-forms@1"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let installed = sandbox.project.join(".agents/skills/pdf-forms");
    assert!(installed.join("SKILL.md").is_file());
    assert!(
        !installed.join("notes.md").exists(),
        "version 1 has no notes"
    );
    let lock = std::fs::read_to_string(sandbox.project.join("skillet.lock")).unwrap();
    assert!(
        lock.contains("owner = \"acme\"") && lock.contains("seq = 1"),
        "{lock}"
    );
    let out = registry(&["search", "fill a pdf form"]);
    assert!(
        out.stdout.contains("acme/pdf-forms@2  (installed @1)"),
        "{}",
        out.stdout
    );
    let out = registry(&["update"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.contains("installed acme/pdf-forms@2"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("(was @1)"), "{}", out.stdout);
    assert!(installed.join("notes.md").is_file());
    let out = registry(&["update", "--json"]);
    let json: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert!(
        json["results"][0]["note"]
            .as_str()
            .unwrap()
            .contains("up to date")
    );
    // The installed skill is one skillet finds.
    let mut list = skillet(&sandbox, None);
    let out = run(list.args(["skills", "list"]));
    assert!(out.stdout.contains("pdf-forms"), "{}", out.stdout);

    // Another owner's skill of the same name: refused without --force, exit 1.
    let out = registry(&["publish", pdf.to_str().unwrap(), "--owner", "globex"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let out = registry(&["install", "globex/pdf-forms"]);
    assert_eq!(out.code, 1);
    assert!(
        out.stderr
            .contains("another owner's skill of the same name"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("--force"), "{}", out.stderr);

    // List and yank.
    let out = registry(&["list"]);
    assert_eq!(
        out.stdout
            .lines()
            .map(|l| l.split("  ").next().unwrap())
            .collect::<Vec<_>>(),
        [
            "acme/git-cleanup@1",
            "acme/pdf-forms@2",
            "globex/pdf-forms@1"
        ]
    );
    let out = registry(&["yank", "acme/pdf-forms@2"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        out.stdout,
        "acme/pdf-forms@2 yanked; search and install now offer @1\n"
    );
    let out = registry(&["list", "acme/pdf-forms", "--json"]);
    let json: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(json["versions"][0]["seq"], 2);
    assert_eq!(json["versions"][0]["yanked"], true);
    assert_eq!(json["versions"][1]["yanked"], false);
    let out = registry(&["install", "acme/pdf-forms@2", "--dir", "elsewhere"]);
    assert_eq!(out.code, 1);
    assert!(
        out.stderr.contains("acme/pdf-forms@2 is yanked"),
        "{}",
        out.stderr
    );
    let out = registry(&["update"]);
    assert!(
        out.stdout
            .contains("acme/pdf-forms@2 is yanked; the latest is @1"),
        "{}",
        out.stdout
    );
    // A fresh checkout installs what the lock names, the yanked version too.
    std::fs::remove_dir_all(&installed).unwrap();
    let out = registry(&["install"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.contains("installed acme/pdf-forms@2"),
        "{}",
        out.stdout
    );
    assert!(installed.join("notes.md").is_file());
    let out = registry(&["install"]);
    assert!(
        out.stdout.contains("acme/pdf-forms@2: already installed"),
        "{}",
        out.stdout
    );
    let out = registry(&["yank", "acme/pdf-forms"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    let out = registry(&["install", "acme/Bad"]);
    assert_eq!(out.code, 1);
    assert!(out.stderr.contains("OWNER/NAME"), "{}", out.stderr);
}

#[test]
fn no_registry_and_an_unreachable_one_are_one_line_each() {
    let sandbox = Sandbox::empty();
    let out = run(skillet(&sandbox, None).args(["registry", "list"]));
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.starts_with("error: no registry is configured"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("SKILLET_REGISTRY_URL"),
        "{}",
        out.stderr
    );
    let out = run(skillet(&sandbox, None).args([
        "registry",
        "--registry",
        "postgresql://nobody:secret@127.0.0.1:1/skills",
        "search",
        "anything",
    ]));
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr.starts_with(
            "error: cannot reach the registry at postgresql://nobody@127.0.0.1:1/skills"
        ),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("secret"), "{}", out.stderr);
    let out = run(skillet(&sandbox, None).args(["registry", "--registry", "mysql://x", "list"]));
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr.contains("not a PostgreSQL URL"),
        "{}",
        out.stderr
    );
}

#[test]
fn an_untrusted_project_cannot_choose_the_registry() {
    let sandbox = Sandbox::empty();
    std::fs::write(
        sandbox.project.join("skillet.toml"),
        "registry_url = \"postgresql://attacker@evil.example/skills\"\n",
    )
    .unwrap();
    let out = run(skillet(&sandbox, None).args(["registry", "list"]));
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("`registry_url` is ignored: the project is not trusted"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("no registry is configured"),
        "{}",
        out.stderr
    );
    // The user's own file is honoured.
    let config = sandbox.home.join(".config/skillet");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(
        config.join("skillet.toml"),
        "registry_url = \"postgresql://me@127.0.0.1:1/skills\"\n",
    )
    .unwrap();
    let out = run(skillet(&sandbox, None).args(["registry", "list"]));
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("cannot reach the registry at postgresql://me@127.0.0.1:1/skills"),
        "{}",
        out.stderr
    );
    std::fs::write(config.join("skillet.toml"), "registry_url = \"http://x\"\n").unwrap();
    let out = run(skillet(&sandbox, None).args(["registry", "list"]));
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("registry_url"), "{}", out.stderr);
}

#[test]
fn a_lock_file_cannot_send_an_update_outside_the_project() {
    let sandbox = Sandbox::empty();
    for dir in [
        "../../home/.claude/skills/pdf-forms",
        "/tmp/pdf-forms",
        ".agents/skills/other",
    ] {
        std::fs::write(
            sandbox.project.join("skillet.lock"),
            format!(
                "version = 1\n\n[[skill]]\nname = \"pdf-forms\"\nowner = \"acme\"\nseq = 1\nhash = \"sha256:00\"\ndir = \"{dir}\"\n"
            ),
        )
        .unwrap();
        let out = run(skillet(&sandbox, None).args([
            "registry",
            "--registry",
            "postgresql://nobody@127.0.0.1:1/skills",
            "update",
        ]));
        assert_eq!(out.code, 1, "{dir}: {}", out.stderr);
        assert!(
            out.stderr.contains("names the folder"),
            "{dir}: {}",
            out.stderr
        );
        assert!(
            !out.stderr.contains("cannot reach"),
            "{dir}: refused before any fetch: {}",
            out.stderr
        );
    }
}

#[cfg(unix)]
#[test]
fn an_install_does_not_follow_the_projects_link_out_of_it() {
    let sandbox = Sandbox::empty();
    let outside = sandbox.root.join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::os::unix::fs::symlink(&outside, sandbox.project.join(".agents")).unwrap();
    let out = run(skillet(&sandbox, None).args([
        "registry",
        "--registry",
        "postgresql://nobody@127.0.0.1:1/skills",
        "install",
        "acme/pdf-forms",
    ]));
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("leads outside the project"),
        "{}",
        out.stderr
    );
    assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);
}

/// A Unix-socket proxy to the test server's socket that cuts every connection once the client
/// has asked for `skillet_publish` `cut_at` times: a registry lost in the middle of a publish.
#[cfg(unix)]
fn cutting_proxy(server_url: &str, dir: &std::path::Path, cut_at: usize) -> String {
    use std::io::{Read as _, Write as _};
    use std::sync::atomic::{AtomicUsize, Ordering};
    let socket_dir = server_url
        .split("host=")
        .nth(1)
        .unwrap()
        .split('&')
        .next()
        .unwrap()
        .to_string();
    let upstream = std::path::Path::new(&socket_dir).join(".s.PGSQL.5432");
    std::fs::create_dir_all(dir).unwrap();
    let listener = std::os::unix::net::UnixListener::bind(dir.join(".s.PGSQL.5432")).unwrap();
    let seen = std::sync::Arc::new(AtomicUsize::new(0));
    std::thread::spawn(move || {
        for client in listener.incoming() {
            let Ok(mut client) = client else { return };
            let Ok(mut server) = std::os::unix::net::UnixStream::connect(&upstream) else {
                return;
            };
            let (mut client_back, mut server_in) =
                (client.try_clone().unwrap(), server.try_clone().unwrap());
            std::thread::spawn(move || {
                let _ = std::io::copy(&mut server, &mut client_back);
                let _ = client_back.shutdown(std::net::Shutdown::Both);
            });
            let seen = std::sync::Arc::clone(&seen);
            std::thread::spawn(move || {
                let mut buffer = vec![0_u8; 64 * 1024];
                while let Ok(read) = client.read(&mut buffer) {
                    if read == 0 {
                        break;
                    }
                    let chunk = &buffer[..read];
                    let calls = chunk
                        .windows(b"skillet_publish(".len())
                        .filter(|w| *w == b"skillet_publish(")
                        .count();
                    if calls > 0 && seen.fetch_add(calls, Ordering::SeqCst) + calls >= cut_at {
                        break;
                    }
                    if server_in.write_all(chunk).is_err() {
                        break;
                    }
                }
                let _ = server_in.shutdown(std::net::Shutdown::Both);
                let _ = client.shutdown(std::net::Shutdown::Both);
            });
        }
    });
    server_url.replace(&socket_dir, &dir.display().to_string())
}

#[cfg(unix)]
#[test]
fn a_publish_cut_off_midway_says_what_it_did_publish() {
    let Some(url) = server("a_publish_cut_off_midway_says_what_it_did_publish") else {
        return;
    };
    let db = TestDatabase::create(&url);
    let sandbox = Sandbox::empty();
    let root = publishable(&sandbox);
    write_skill(
        &root,
        "zz-last",
        &skill("The third skill, never reached.", "# Steps", "zz-last"),
    );
    let init = run(skillet(&sandbox, None)
        .args(["registry", "init"])
        .env("SKILLET_REGISTRY_URL", &db.url));
    assert_eq!(init.code, 0, "{}", init.stderr);
    // The second skill's publish is cut off: the first committed, the third never tried.
    let proxied = cutting_proxy(&db.url, &sandbox.root.join("proxy"), 2);
    let out = run(skillet(&sandbox, None)
        .args(["registry", "publish", "--owner", "acme", "--json"])
        .arg(&root)
        .env("SKILLET_REGISTRY_URL", &proxied));
    assert_eq!(out.code, 1, "{}", out.stderr);
    let report: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let results = report["results"].as_array().unwrap();
    assert_eq!(results.len(), 2, "{report}");
    assert_eq!(results[0]["published"]["name"], "git-cleanup", "{report}");
    assert_eq!(results[0]["published"]["seq"], 1, "{report}");
    assert_eq!(results[1]["not_published"], 2, "{report}");
    assert!(
        out.stderr
            .contains("1 skill(s) were published before this error"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("cannot reach the registry"),
        "{}",
        out.stderr
    );
    assert_eq!(
        db.rows("SELECT owner || '/' || name FROM skillet_skills WHERE head_seq > 0"),
        [["acme/git-cleanup"]]
    );
    // Without --json, the published line is printed too.
    let proxied = cutting_proxy(&db.url, &sandbox.root.join("proxy2"), 2);
    let out = run(skillet(&sandbox, None)
        .args(["registry", "publish", "--owner", "acme"])
        .arg(&root)
        .env("SKILLET_REGISTRY_URL", &proxied));
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stdout.contains("acme/git-cleanup@1: unchanged"),
        "{}",
        out.stdout
    );
}

#[test]
fn a_name_the_specification_allows_but_the_registry_does_not_is_refused_in_words() {
    let Some(url) = server("a_name_the_specification_allows_but_the_registry_does_not") else {
        return;
    };
    let db = TestDatabase::create(&url);
    let sandbox = Sandbox::empty();
    let root = sandbox.root.join("publish");
    write_skill(
        &root,
        "données",
        &skill("Lire des données.", "# Étapes", "données"),
    );
    let run_registry = |args: &[&str]| {
        run(skillet(&sandbox, None)
            .arg("registry")
            .args(args)
            .env("SKILLET_REGISTRY_URL", &db.url))
    };
    assert_eq!(run_registry(&["init"]).code, 0);
    let out = run_registry(&[
        "publish",
        "--owner",
        "acme",
        root.join("données").to_str().unwrap(),
    ]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr.contains("the registry does not take it") && out.stderr.contains("hint:"),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("SQLSTATE"), "{}", out.stderr);
}
