//! The collection's search statistics under abuse (a real PostgreSQL, as in `registry.rs`): a
//! publisher who calls the publish function with many words does not leave a fold no other
//! publish could wait out, a fold held up holds up no publish, and `init` recounts statistics a
//! fault left out of step.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::too_many_lines,
    reason = "tests"
)]

mod common;

use pretty_assertions::assert_eq;
use skillet_registry::{Registry, prepare};
use skillet_test_support::TestDatabase;

use common::{assert_ranks_as, published, runtime, server, statistics_off};

/// A version published straight through `skillet_publish` (as any publisher may call it) with
/// `terms` words of its own and `body` words of its body, each `prefix` and a number.
fn publish_words(db: &TestDatabase, name: &str, prefix: &str, terms: u32, body: u32) {
    db.execute(&format!(
        "SELECT skillet_publish('acme', '{name}', NULL, 'Many words', \
           ARRAY(SELECT '{prefix}t' || i FROM generate_series(1, {terms}) i), \
           array_fill(1, ARRAY[{terms}]), {terms}, \
           ARRAY(SELECT '{prefix}b' || i FROM generate_series(1, {body}) i), NULL, \
           ARRAY['SKILL.md'], ARRAY[false], \
           ARRAY[convert_to('---\nname: {name}\ndescription: Many words {prefix}\n---\n', 'UTF8')])"
    ));
}

/// How many rows a table holds.
fn count(db: &TestDatabase, table: &str) -> u64 {
    db.rows(&format!("SELECT count(*) FROM {table}"))[0][0]
        .parse()
        .unwrap()
}

fn pending(db: &TestDatabase) -> Vec<Vec<String>> {
    db.rows(
        "SELECT (SELECT count(*) FROM skillet_search_stats_deltas), \
                (SELECT count(*) FROM skillet_term_deltas) + (SELECT count(*) FROM skillet_blend_term_deltas)",
    )
}

/// Schema 4 folded the deltas in every 64 changes, whatever they held: 64 versions of the most
/// words a publish takes (65,536 of its own, 100,000 of its body) left millions of rows to fold
/// under the events lock, longer than any other publish waits for it. Now a fold runs once
/// 65,536 delta rows are pending, so a publish of more words than that folds at once, and the
/// statistics still add up.
#[test]
fn a_publish_of_many_words_folds_at_once() {
    let Some(url) = server("a_publish_of_many_words_folds_at_once") else {
        return;
    };
    let (db, _skills, _) = published(&url);
    let before = pending(&db);
    assert_ne!(
        before[0][0], "0",
        "small publishes wait for the 64th change"
    );
    // 30,000 words of its own and 40,000 of its body: 100,000 delta rows.
    publish_words(&db, "many-words", "x", 30_000, 40_000);
    assert_eq!(pending(&db), [["0", "0"]]);
    assert_eq!(statistics_off(&db, true), [["0", "0", "t"]]);
    // Below the bound, deltas wait; a version that swaps every word (140,000 words of the
    // blend come or go) folds again, all of it: a fold takes at least what one publish adds.
    publish_words(&db, "some-words", "y", 1_000, 1_000);
    assert_eq!(pending(&db), [["1", "3000"]]);
    publish_words(&db, "many-words", "z", 30_000, 40_000);
    assert_eq!(pending(&db), [["0", "0"]]);
    assert_eq!(statistics_off(&db, true), [["0", "0", "t"]]);
}

/// Statistics a fault left out of step (words' counts off, a word lost, a stray delta, the
/// document count off) are recounted on request (`init --recount`), which says how many figures
/// it set right; the registry then ranks as a local library does, and a second recount finds
/// nothing. It takes no lock: a transaction holding the events and fold locks does not hold it
/// up.
#[test]
fn a_recount_repairs_statistics_left_out_of_step() {
    let Some(url) = server("a_recount_repairs_statistics_left_out_of_step") else {
        return;
    };
    let (db, _skills, local) = published(&url);
    assert_eq!(statistics_off(&db, true), [["0", "0", "t"]]);
    db.execute(
        "SELECT skillet_fold_stats(); \
         UPDATE skillet_term_stats SET df = df + 3 \
           WHERE term IN (SELECT term FROM skillet_term_stats WHERE df > 0 ORDER BY term LIMIT 2); \
         DELETE FROM skillet_blend_term_stats \
           WHERE term = (SELECT term FROM skillet_blend_term_stats WHERE df > 0 ORDER BY term LIMIT 1); \
         INSERT INTO skillet_term_deltas VALUES ('ghost', 5); \
         INSERT INTO skillet_term_deltas \
           SELECT term, -(df + 1) FROM skillet_term_stats ORDER BY term DESC LIMIT 1; \
         BEGIN; SELECT set_config('skillet.schema', '4', true); \
         UPDATE skillet_search_stats SET documents = documents + 1; COMMIT",
    );
    assert_eq!(statistics_off(&db, true), [["4", "1", "f"]]);
    // A fold over a word the fault took below zero keeps the remainder pending (no CHECK
    // fails, and what base and deltas add up to does not move).
    db.execute("SELECT skillet_fold_stats()");
    assert_eq!(statistics_off(&db, true), [["4", "1", "f"]]);
    assert_eq!(
        db.rows("SELECT count(*) FROM skillet_term_deltas WHERE delta = -1"),
        [["1"]]
    );
    let rt = runtime();
    let (holder, connection) = rt
        .block_on(tokio_postgres::connect(&db.url, tokio_postgres::NoTls))
        .unwrap();
    let held = rt.spawn(connection);
    rt.block_on(holder.batch_execute(
        "BEGIN; SELECT 1 FROM skillet_fold_lock WHERE id = 1 FOR UPDATE; \
         SELECT 1 FROM skillet_search_stats FOR UPDATE",
    ))
    .unwrap();
    rt.block_on(async {
        let registry = Registry::new(&db.url).unwrap();
        assert_eq!(
            registry.recount().await.unwrap().as_deref(),
            Some("the search statistics recounted (6 figure(s) were out of step)")
        );
        assert_eq!(statistics_off(&db, true), [["0", "0", "t"]]);
        assert_ranks_as(&registry, &local).await;
        assert_eq!(registry.recount().await.unwrap(), None);
    });
    // Under an older snapshot it would miss a recount it waited for and add its correction
    // again: refused.
    let refused = db.try_execute(
        "BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT skillet_recount_stats(); COMMIT",
    );
    assert!(
        refused
            .as_ref()
            .is_err_and(|e| e.contains("runs at READ COMMITTED")),
        "{refused:?}"
    );
    drop(holder);
    held.abort();
}

/// A fold held up (here, a transaction keeping the fold's lock) holds up no publish: one due to
/// fold goes on without, its deltas left pending. Far past due (1,048,576 rows pending), a
/// publish waits for the lock instead, and folds once it is free (one bounded fold), so what a
/// search adds up stays bounded.
#[test]
fn a_fold_held_up_holds_up_no_publish_until_far_past_due() {
    let Some(url) = server("a_fold_held_up_holds_up_no_publish_until_far_past_due") else {
        return;
    };
    let (db, skills, _) = published(&url);
    let rt = runtime();
    // Due: 70 more changes pending (changes of nothing, as the owner may write them).
    db.execute(
        "INSERT INTO skillet_search_stats_deltas SELECT 0, 0, 0 FROM generate_series(1, 70)",
    );
    let due = pending(&db)[0][0].parse::<u32>().unwrap();
    assert!(due >= 64, "{due}");
    let (holder, connection) = rt
        .block_on(tokio_postgres::connect(&db.url, tokio_postgres::NoTls))
        .unwrap();
    let held = rt.spawn(connection);
    rt.block_on(
        holder.batch_execute("BEGIN; SELECT 1 FROM skillet_fold_lock WHERE id = 1 FOR UPDATE"),
    )
    .unwrap();
    let dir = skills.path().join("git-cleanup");
    rt.block_on(async {
        let registry = Registry::new(&db.url).unwrap();
        std::fs::write(dir.join("notes.md"), "v2").unwrap();
        let published = registry
            .publish(&prepare(&dir).unwrap(), "acme", None, None)
            .await
            .unwrap();
        assert_eq!(published.seq, 2);
    });
    assert_eq!(pending(&db)[0][0], (due + 1).to_string(), "not folded");
    let blend_before = count(&db, "skillet_blend_term_deltas");
    // Far past due: the next publish waits for the lock, freed a moment later, and folds (every
    // change's totals, and 331,072 rows of the blend's).
    db.execute(
        "INSERT INTO skillet_blend_term_deltas SELECT 'w' || i, 0 FROM generate_series(1, 1048576) i",
    );
    rt.block_on(async {
        let release = tokio::spawn(async move {
            tokio::time::sleep(std::time::Duration::from_millis(500)).await;
            holder.batch_execute("COMMIT").await.unwrap();
            holder
        });
        let registry = Registry::new(&db.url).unwrap();
        std::fs::write(dir.join("notes.md"), "v3").unwrap();
        let published = registry
            .publish(&prepare(&dir).unwrap(), "acme", None, None)
            .await
            .unwrap();
        assert_eq!(published.seq, 3);
        drop(release.await.unwrap());
    });
    held.abort();
    let left = pending(&db);
    assert_eq!(left[0][0], "0", "every change's totals folded");
    // One fold's rows gone: 331,072 of the blend's, and all the few of the words' own.
    assert_eq!(
        count(&db, "skillet_blend_term_deltas"),
        blend_before + 1_048_576 - 331_072
    );
    assert_eq!(count(&db, "skillet_term_deltas"), 0);
    assert_eq!(statistics_off(&db, true), [["0", "0", "t"]]);
}

/// Two yanks of the same version at once: the second waits for the first's lock, then finds
/// the version yanked and says so (schema 5's read the version in the statement that waited,
/// from its older snapshot, yanked it again and failed on the version's guard).
#[test]
fn a_yank_raced_by_another_of_the_same_version_is_no_error() {
    let Some(url) = server("a_yank_raced_by_another_of_the_same_version_is_no_error") else {
        return;
    };
    let (db, _skills, _) = published(&url);
    let rt = runtime();
    let (holder, connection) = rt
        .block_on(tokio_postgres::connect(&db.url, tokio_postgres::NoTls))
        .unwrap();
    let held = rt.spawn(connection);
    rt.block_on(holder.batch_execute("BEGIN; SELECT skillet_yank('acme', 'git-cleanup', 1)"))
        .unwrap();
    rt.block_on(async {
        let release = tokio::spawn(async move {
            tokio::time::sleep(std::time::Duration::from_millis(500)).await;
            holder.batch_execute("COMMIT").await.unwrap();
            holder
        });
        let yanked = Registry::new(&db.url)
            .unwrap()
            .yank("acme", "git-cleanup", 1)
            .await
            .unwrap();
        assert!(!yanked.changed, "{yanked:?}");
        drop(release.await.unwrap());
    });
    held.abort();
}
