//! Many processes at once against one registry (a real PostgreSQL: see `registry.rs`): eight
//! publish new versions of the same twenty skills while eight search, for a bounded time; and a
//! publisher killed inside its transaction. The workers are this test binary run again with
//! `SKILLET_REGISTRY_WORKER` set (the `worker` test does their work).

#![allow(
    clippy::unwrap_used,
    clippy::panic,
    clippy::too_many_lines,
    reason = "tests"
)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use skillet_registry::{Registry, SearchSettings, prepare};
use skillet_retrieval::Mode;
use skillet_test_support::{TestDatabase, registry_server, skip};

mod common;

use common::{fake_vector, runtime};

const WORKER: &str = "SKILLET_REGISTRY_WORKER";
const WORKER_URL: &str = "SKILLET_REGISTRY_WORKER_URL";
/// How long the publishers and searchers run.
const RUN_FOR: Duration = Duration::from_secs(6);
const SKILLS: usize = 20;
const PUBLISHERS: usize = 8;
const SEARCHERS: usize = 8;

fn skill_name(k: usize) -> String {
    format!("skill-{k:02}")
}

fn write_version(dir: &Path, k: usize, note: &str) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        format!(
            "---\nname: {}\ndescription: Skill number {k} for tests; handles topic{k} and area{} work.\n---\n\n{note}\n",
            skill_name(k),
            k % 5
        ),
    )
    .unwrap();
}

/// What a worker does, when this binary runs as one (`publish:P`, `search:S`, `once:K`).
#[test]
fn worker() {
    let Ok(role) = std::env::var(WORKER) else {
        return;
    };
    let url = std::env::var(WORKER_URL).unwrap();
    let registry = Registry::new(&url).unwrap();
    let deadline = Instant::now() + RUN_FOR;
    let (kind, id) = role.split_once(':').unwrap();
    let id: usize = id.parse().unwrap();
    let scratch = tempfile::tempdir().unwrap();
    // The harness's "test worker ... " has no newline: the worker's lines start on their own.
    println!();
    runtime().block_on(async {
        match kind {
            "publish" => {
                let mut round = 0;
                while Instant::now() < deadline {
                    let k = (round * 7 + id * 3) % SKILLS;
                    let dir = scratch.path().join(skill_name(k));
                    write_version(&dir, k, &format!("publisher {id} round {round}"));
                    let prepared = prepare(&dir).unwrap();
                    let vector = fake_vector(&prepared.embedding_text);
                    let published = registry
                        .publish(&prepared, "team", None, Some(&vector))
                        .await
                        .unwrap();
                    assert!(published.created, "{published:?}");
                    println!(
                        "PUBLISHED {} {} {}",
                        published.name, published.seq, published.hash
                    );
                    round += 1;
                }
            }
            "search" => {
                let (mut searches, mut errors) = (0, 0);
                while Instant::now() < deadline {
                    let query = format!("handles topic{} area{} work", searches % SKILLS, id % 5);
                    let vector = fake_vector(&query);
                    let mode = if searches % 2 == 0 {
                        Mode::Hybrid
                    } else {
                        Mode::Lexical
                    };
                    match registry
                        .search(&query, Some(&vector), mode, 5, SearchSettings::default())
                        .await
                    {
                        Ok(_) => {}
                        Err(error) => {
                            errors += 1;
                            println!("SEARCH ERROR {error}");
                        }
                    }
                    searches += 1;
                }
                println!("SEARCHED {searches} {errors}");
            }
            "once" => {
                // Publishes one version and says when it is about to.
                let dir = scratch.path().join(skill_name(id));
                write_version(&dir, id, "the killed publisher's version");
                let prepared = prepare(&dir).unwrap();
                println!("STARTING");
                registry
                    .publish(&prepared, "team", None, None)
                    .await
                    .unwrap();
                println!("PUBLISHED");
            }
            other => panic!("unknown worker {other}"),
        }
    });
}

fn spawn_worker(url: &str, role: &str) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "worker", "--nocapture"])
        .env(WORKER, role)
        .env(WORKER_URL, url)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn finish(child: Child) -> String {
    let output = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "a worker failed: {stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

#[test]
fn publishers_and_searchers_at_once_leave_every_version_once_and_gapless() {
    if std::env::var_os(WORKER).is_some() {
        return;
    }
    let Some(url) = registry_server() else {
        skip(
            "SKIPPED publishers_and_searchers_at_once_leave_every_version_once_and_gapless: no PostgreSQL with pgvector (SKILLET_TEST_PG_URL unset)",
        );
        return;
    };
    let db = TestDatabase::create(&url);
    runtime().block_on(async { Registry::new(&db.url).unwrap().init().await.unwrap() });
    let publishers: Vec<Child> = (0..PUBLISHERS)
        .map(|p| spawn_worker(&db.url, &format!("publish:{p}")))
        .collect();
    let searchers: Vec<Child> = (0..SEARCHERS)
        .map(|s| spawn_worker(&db.url, &format!("search:{s}")))
        .collect();
    let mut published: BTreeMap<(String, i32), String> = BTreeMap::new();
    for child in publishers {
        for line in finish(child).lines() {
            let Some(rest) = line.strip_prefix("PUBLISHED ") else {
                continue;
            };
            let mut parts = rest.split(' ');
            let name = parts.next().unwrap().to_string();
            let seq: i32 = parts.next().unwrap().parse().unwrap();
            let hash = parts.next().unwrap().to_string();
            assert!(
                published.insert((name.clone(), seq), hash).is_none(),
                "two publishers were told {name}@{seq}"
            );
        }
    }
    let mut search_count = 0;
    for child in searchers {
        let out = finish(child);
        assert!(!out.contains("SEARCH ERROR"), "{out}");
        let line = out.lines().find(|l| l.starts_with("SEARCHED ")).unwrap();
        let counts: Vec<u64> = line[9..].split(' ').map(|n| n.parse().unwrap()).collect();
        assert_eq!(counts[1], 0, "search errors: {out}");
        search_count += counts[0];
    }
    assert!(
        published.len() >= SKILLS,
        "too few publishes ran: {}",
        published.len()
    );
    assert!(search_count > 0);

    // Every version the publishers were told of is there exactly once, with its hash, and
    // nothing else is; each skill's sequence is 1..n without a gap; the head says n.
    let stored = db.rows(
        "SELECT k.name, v.seq, encode(v.content_hash, 'hex'), k.head_seq \
         FROM skillet_versions v JOIN skillet_skills k ON k.id = v.skill_id ORDER BY 1, 2",
    );
    let mut by_skill: BTreeMap<String, Vec<i32>> = BTreeMap::new();
    let mut seen = BTreeSet::new();
    for row in &stored {
        let seq: i32 = row[1].parse().unwrap();
        assert!(seen.insert((row[0].clone(), seq)), "{row:?} twice");
        assert_eq!(
            published.get(&(row[0].clone(), seq)),
            Some(&format!("sha256:{}", row[2])),
            "{row:?} was stored but no publisher was told so"
        );
        by_skill.entry(row[0].clone()).or_default().push(seq);
        let head: i32 = row[3].parse().unwrap();
        assert!(seq <= head);
    }
    assert_eq!(stored.len(), published.len());
    for (name, seqs) in &by_skill {
        let expected: Vec<i32> = (1..=i32::try_from(seqs.len()).unwrap()).collect();
        assert_eq!(seqs, &expected, "{name}: a gap");
    }
    assert_eq!(by_skill.len(), SKILLS);
    // The search table holds each skill's newest version, and BM25's figures add up (the
    // deltas folded in; folds ran during the run every 64 changes too).
    db.execute("SELECT skillet_fold_stats()");
    let search = db.rows("SELECT count(*), sum(length), bool_and(s.seq = k.head_seq), \
           (SELECT documents FROM skillet_search_stats), (SELECT total_length FROM skillet_search_stats) \
         FROM skillet_search s JOIN skillet_skills k ON k.id = s.skill_id",
    );
    assert_eq!(search[0][0], SKILLS.to_string());
    assert_eq!(search[0][2], "t", "the search table is behind a head");
    assert_eq!(
        (&search[0][3], &search[0][1]),
        (&search[0][0], &search[0][4])
    );
    // Each term's document frequency is its count of postings.
    let terms = db.rows(
        "SELECT count(*) FROM skillet_term_stats s FULL JOIN \
           (SELECT term, count(*) AS n FROM skillet_terms GROUP BY term) t ON t.term = s.term \
         WHERE coalesce(s.df, 0) <> coalesce(t.n, 0)",
    );
    assert_eq!(terms[0][0], "0", "document frequencies out of step");
    // So do the blend's (the body's words with the skill's own).
    let blend = db.rows("SELECT (SELECT count(*) FROM skillet_blend_term_stats s FULL JOIN \
           (SELECT term, count(*) AS n FROM skillet_blend_terms GROUP BY term) t ON t.term = s.term \
           WHERE coalesce(s.df, 0) <> coalesce(t.n, 0)), \
         (SELECT sum(blend_length) FROM skillet_search) = \
           (SELECT blend_total_length FROM skillet_search_stats)",
    );
    assert_eq!(
        (blend[0][0].as_str(), blend[0][1].as_str()),
        ("0", "t"),
        "the blend's statistics out of step"
    );
    // One event per version, numbered in commit order (each skill's in sequence order).
    let events = db.rows("SELECT name, seq FROM skillet_events ORDER BY id");
    assert_eq!(events.len(), stored.len());
    let mut last: BTreeMap<String, i32> = BTreeMap::new();
    for event in &events {
        let seq: i32 = event[1].parse().unwrap();
        let before = last.insert(event[0].clone(), seq).unwrap_or(0);
        assert_eq!(seq, before + 1, "events out of order: {event:?}");
    }
    eprintln!(
        "{} versions published by {PUBLISHERS} processes and {search_count} searches by {SEARCHERS} in {RUN_FOR:?}",
        stored.len()
    );
}

#[test]
fn a_publisher_killed_inside_its_transaction_leaves_nothing() {
    if std::env::var_os(WORKER).is_some() {
        return;
    }
    let Some(url) = registry_server() else {
        skip(
            "SKIPPED a_publisher_killed_inside_its_transaction_leaves_nothing: no PostgreSQL with pgvector (SKILLET_TEST_PG_URL unset)",
        );
        return;
    };
    let db = TestDatabase::create(&url);
    let runtime = runtime();
    runtime.block_on(async { Registry::new(&db.url).unwrap().init().await.unwrap() });
    // Hold the lock every publish takes after writing its version and files, so the worker
    // stops there, inside its transaction.
    let (holder, connection) = runtime
        .block_on(tokio_postgres::connect(&db.url, tokio_postgres::NoTls))
        .unwrap();
    runtime.spawn(connection);
    runtime
        .block_on(
            holder
                .batch_execute("BEGIN; SELECT 1 FROM skillet_search_stats WHERE id = 1 FOR UPDATE"),
        )
        .unwrap();
    let mut child = spawn_worker(&db.url, "once:3");
    let waited = Instant::now();
    loop {
        let waiting = db.rows(
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'skillet' \
             AND wait_event_type = 'Lock' AND datname = current_database()",
        );
        if waiting[0][0] == "1" {
            break;
        }
        assert!(
            waited.elapsed() < Duration::from_secs(30),
            "the publisher never reached the lock"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    // It has written its version, blobs and files, uncommitted: kill it there.
    let inside = db.rows("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'skillet' AND state = 'active' AND datname = current_database()",
    );
    assert_eq!(inside[0][0], "1", "the publisher's transaction is open");
    child.kill().unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(!String::from_utf8_lossy(&output.stdout).contains("PUBLISHED"));
    runtime.block_on(holder.batch_execute("ROLLBACK")).unwrap();
    // The server notices the client gone and rolls back: nothing of it remains.
    let waited = Instant::now();
    loop {
        let open = db.rows("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'skillet' AND datname = current_database()",
        );
        if open[0][0] == "0" {
            break;
        }
        assert!(
            waited.elapsed() < Duration::from_secs(30),
            "the dead publisher's session stays"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let left = db.rows("SELECT (SELECT count(*) FROM skillet_versions), (SELECT count(*) FROM skillet_version_files), \
           (SELECT count(*) FROM skillet_blobs), (SELECT count(*) FROM skillet_events), \
           (SELECT coalesce(max(head_seq), 0) FROM skillet_skills), (SELECT count(*) FROM skillet_search)",
    );
    assert_eq!(
        left[0],
        ["0", "0", "0", "0", "0", "0"],
        "a partial version remains"
    );
    // And the next publish of the skill gets version 1.
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path().join(skill_name(3));
    write_version(&dir, 3, "after the kill");
    let published = runtime
        .block_on(Registry::new(&db.url).unwrap().publish(
            &prepare(&dir).unwrap(),
            "team",
            None,
            None,
        ))
        .unwrap();
    assert_eq!((published.seq, published.created), (1, true));
}
