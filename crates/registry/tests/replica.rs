//! The registry beyond one server (issue 25): a streaming hot standby of the test server
//! (`scripts/pg.sh replica`), one URL naming both hosts, the standby first. Searches and installs
//! are served by the standby, publishes and yanks by the primary (`target_session_attrs =
//! read-write` for writes), and a follower stays correct while the standby lags (replay paused):
//! what it was told of is read from the primary until the standby has it.

#![allow(
    clippy::unwrap_used,
    clippy::panic,
    clippy::too_many_lines,
    reason = "tests"
)]

use std::path::Path;
use std::time::{Duration, Instant};

use skillet_registry::{Change, Registry, RegistryError, SearchSettings, prepare};
use skillet_retrieval::Mode;
use skillet_test_support::{TestDatabase, try_sql, with_database};

mod common;

use common::runtime;

fn write_skill(root: &Path, name: &str, description: &str) -> std::path::PathBuf {
    common::write_skill(root, name, description, "Steps.")
}

/// The socket folder of a test server URL (`…?host=/dir`).
fn socket_dir(url: &str) -> String {
    url.split("host=")
        .nth(1)
        .unwrap()
        .split('&')
        .next()
        .unwrap()
        .to_string()
}

/// Waits until the standby has replayed everything the primary has written so far.
fn wait_replayed(primary: &TestDatabase, standby_url: &str) {
    let lsn = primary.rows("SELECT pg_current_wal_lsn()::text")[0][0].clone();
    let started = Instant::now();
    while try_sql(
        standby_url,
        &format!(
            "DO $$ BEGIN IF pg_last_wal_replay_lsn() < '{lsn}'::pg_lsn THEN \
             RAISE EXCEPTION 'behind'; END IF; END $$"
        ),
    )
    .is_err()
    {
        assert!(
            started.elapsed() < Duration::from_mins(1),
            "the standby never caught up"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_standby_serves_reads_the_primary_writes_and_a_follower_stays_correct_while_it_lags() {
    let (Some(primary), Some(standby)) = (
        skillet_test_support::registry_server_for("a_standby_serves_reads"),
        skillet_test_support::registry_replica(),
    ) else {
        skillet_test_support::skip(
            "SKIPPED a_standby_serves_reads: no standby (SKILLET_TEST_PG_REPLICA_URL unset)",
        );
        return;
    };
    let db = TestDatabase::create(&primary);
    let standby_url = with_database(&standby, db.name());
    // The new database reaches the standby by replication too.
    wait_replayed(&db, &with_database(&standby, "postgres"));
    // libpq's key=value form: a URL's `?host=` takes one socket folder, `host=` here a list.
    let both = format!(
        "user=postgres dbname={} host={},{}",
        db.name(),
        socket_dir(&standby),
        socket_dir(&primary)
    );
    let skills = tempfile::tempdir().unwrap();
    let forms = write_skill(
        skills.path(),
        "pdf-forms",
        "Fill in PDF forms and their fields.",
    );
    let merge = write_skill(skills.path(), "pdf-merge", "Merge and split PDF files.");
    let rt = runtime();
    let registry = Registry::new(&both).unwrap();
    rt.block_on(async {
        // Writes find the primary though the standby is listed first.
        registry.init().await.unwrap();
        registry
            .publish(&prepare(&forms).unwrap(), "acme", None, None)
            .await
            .unwrap();
    });
    wait_replayed(&db, &standby_url);
    try_sql(&standby_url, "SELECT pg_wal_replay_pause()").unwrap();
    let follower = Registry::new(&both).unwrap();
    rt.block_on(async {
        let published = registry
            .publish(&prepare(&merge).unwrap(), "acme", None, None)
            .await
            .unwrap();
        assert_eq!(published.seq, 1);
        // Reads come from the standby, which has not replayed it.
        let found = registry
            .search("pdf", None, Mode::Lexical, 5, SearchSettings::default())
            .await
            .unwrap();
        let names: Vec<&str> = found.results.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["pdf-forms"], "served by the lagging standby");
        let error = registry
            .fetch("acme", "pdf-merge", None, false)
            .await
            .unwrap_err();
        assert!(matches!(error, RegistryError::NotFound(_)), "{error}");

        // A follower starts from the primary's newest event: what it knows of is read from the
        // primary while the standby lags.
        let after = follower.latest_event().await.unwrap();
        let (sender, mut changes) = tokio::sync::mpsc::channel(16);
        let listening = {
            let follower = follower.clone();
            tokio::spawn(async move { follower.listen(after, sender).await })
        };
        let fetched = follower
            .fetch("acme", "pdf-merge", None, false)
            .await
            .unwrap();
        assert_eq!(fetched.seq, 1);
        registry.yank("acme", "pdf-forms", 1).await.unwrap();
        let change = tokio::time::timeout(Duration::from_secs(10), changes.recv())
            .await
            .unwrap()
            .unwrap();
        let Change::Event(event) = change else {
            panic!("{change:?}");
        };
        assert_eq!(
            (event.kind.as_str(), event.name.as_str()),
            ("yank", "pdf-forms")
        );
        // The follower never goes back to before the yank it was told of...
        let error = follower
            .fetch("acme", "pdf-forms", None, false)
            .await
            .unwrap_err();
        assert!(matches!(error, RegistryError::Yanked(_)), "{error}");
        let found = follower
            .search("pdf", None, Mode::Lexical, 5, SearchSettings::default())
            .await
            .unwrap();
        let names: Vec<&str> = found.results.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["pdf-merge"]);
        // ...while a reader that follows nothing still sees the standby's older state.
        let stale = registry
            .fetch("acme", "pdf-forms", None, false)
            .await
            .unwrap();
        assert_eq!(stale.seq, 1);
        listening.abort();
    });
    try_sql(&standby_url, "SELECT pg_wal_replay_resume()").unwrap();
    wait_replayed(&db, &standby_url);
    rt.block_on(async {
        let error = registry
            .fetch("acme", "pdf-forms", None, false)
            .await
            .unwrap_err();
        assert!(matches!(error, RegistryError::Yanked(_)), "{error}");
        assert_eq!(registry.count().await.unwrap(), 1);
    });
    // The standby refuses writes of its own (the reads pool may hold it; writes never go there).
    let refused = try_sql(&standby_url, "SELECT skillet_yank('acme', 'pdf-merge', 1)");
    assert!(
        refused.as_ref().is_err_and(|e| e.contains("read-only")),
        "{refused:?}"
    );
}
