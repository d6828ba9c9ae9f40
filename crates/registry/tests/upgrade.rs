//! `init` brings registries made by older skillets to this schema: their rows, rankings and
//! rights as they must be now (a real PostgreSQL with pgvector, as in `registry.rs`).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::too_many_lines,
    reason = "tests"
)]

mod common;

use pretty_assertions::assert_eq;
use skillet_registry::{Registry, RegistryError, SCHEMA_VERSION, SearchSettings, prepare};
use skillet_retrieval::Mode;
use skillet_test_support::TestDatabase;

use common::{
    SKILLS, assert_ranks_as, publish_skills, runtime, server, statistics_off, write_skill,
};

/// A registry made before the body's words counted (schema 1) is refused until `init` brings it
/// to schema 2, which fills each version's body words from its stored SKILL.md and indexes them:
/// it then ranks as a local library does.
#[test]
fn init_brings_a_schema_1_registry_to_the_body_s_words() {
    let Some(url) = server("init_brings_a_schema_1_registry_to_the_body_s_words") else {
        return;
    };
    let db = TestDatabase::create(&url);
    let skills = tempfile::tempdir().unwrap();
    let local = runtime().block_on(async {
        let registry = Registry::new(&db.url).unwrap();
        registry.init().await.unwrap();
        let local = publish_skills(&registry, skills.path()).await;
        // A second version, yanked: the search table is back at the first, whose body counts.
        let dir = write_skill(
            skills.path(),
            "changelog",
            SKILLS[SKILLS.len() - 1].1,
            "Redline the contract and prune topic lines.",
        );
        registry
            .publish(&prepare(&dir).unwrap(), "acme", None, None)
            .await
            .unwrap();
        registry.yank("acme", "changelog", 2).await.unwrap();
        local
    });
    // Back to schema 1's tables and functions, with the rows it would have had.
    down_to_schema_2(&db);
    let schema_1 = include_str!("../migrations/0001_init.sql");
    db.execute(&definition(schema_1, "skillet_guard_version"));
    db.execute(
        "DROP TRIGGER skillet_require_writer ON skillet_search_stats; \
         DROP FUNCTION skillet_require_writer(); \
         DROP TABLE skillet_blend_terms; DROP TABLE skillet_blend_term_stats; \
         ALTER TABLE skillet_search DROP COLUMN blend_length; \
         ALTER TABLE skillet_search_stats DROP COLUMN blend_total_length; \
         ALTER TABLE skillet_versions DROP COLUMN body_terms; \
         DELETE FROM skillet_migrations WHERE version = 2",
    );
    runtime().block_on(async {
        let registry = Registry::new(&db.url).unwrap();
        let error = registry
            .search("pdf", None, Mode::Lexical, 3, SearchSettings::default())
            .await
            .unwrap_err();
        assert!(matches!(error, RegistryError::OldSchema { .. }), "{error}");
        let report = registry.init().await.unwrap();
        assert_eq!((report.from, report.to), (1, SCHEMA_VERSION));
        assert!(
            report
                .applied
                .iter()
                // Every version, the yanked one too.
                .any(|step| step.contains(&format!("{} version", SKILLS.len() + 1))),
            "{report:?}"
        );
        assert_ranks_as(&registry, &local).await;
        // Published versions stay immutable: their body's words are filled once.
        let again = Registry::new(&db.url).unwrap();
        assert_eq!(again.init().await.unwrap().applied, Vec::<String>::new());
    });
    let refused = db.try_execute("UPDATE skillet_versions SET body_terms = '{x}'");
    assert!(
        refused
            .as_ref()
            .is_err_and(|e| e.contains("cannot be changed")),
        "{refused:?}"
    );
    let refused = db.try_execute("UPDATE skillet_versions SET body_terms = NULL");
    assert!(refused.is_err(), "the column is required now");
    // The blend's statistics add up exactly.
    let stats = db.rows(
        "SELECT (SELECT count(*) FROM skillet_blend_term_stats s FULL JOIN \
           (SELECT term, count(*) AS n FROM skillet_blend_terms GROUP BY term) t ON t.term = s.term \
           WHERE coalesce(s.df, 0) <> coalesce(t.n, 0)), \
         (SELECT sum(blend_length) FROM skillet_search) = \
           (SELECT blend_total_length FROM skillet_search_stats)",
    );
    assert_eq!(stats, [["0", "t"]], "the blend's statistics out of step");
    // A writer that does not say it writes schema 2 (an older skillet) is refused.
    let refused = db.try_execute("UPDATE skillet_search_stats SET documents = documents");
    assert!(
        refused
            .as_ref()
            .is_err_and(|e| e.contains("upgrade skillet")),
        "{refused:?}"
    );
}

/// A function's definition in a migration, as `CREATE OR REPLACE`.
fn definition(migration: &str, function: &str) -> String {
    let start = migration.find(&format!("FUNCTION {function}(")).unwrap();
    let start = migration[..start].rfind("CREATE").unwrap();
    let end = start + migration[start..].find("END $$;").unwrap() + "END $$;".len();
    migration[start..end].replacen("CREATE FUNCTION", "CREATE OR REPLACE FUNCTION", 1)
}

/// Takes a registry back to schema 3: the deltas folded into the statistics, their tables and
/// functions dropped, schema 3's functions put back (and their settings), the migration rows of
/// the schemas after 3 removed.
fn down_to_schema_3(db: &TestDatabase) {
    db.execute(
        "SELECT skillet_fold_stats(); \
         DROP TABLE skillet_term_deltas, skillet_blend_term_deltas, skillet_search_stats_deltas; \
         DROP FUNCTION skillet_fold_stats(); DROP FUNCTION skillet_recount_stats(); \
         DROP FUNCTION skillet_fold_if_due(); DROP FUNCTION skillet_fold_due(integer, integer); \
         DROP FUNCTION skillet_fold_words(text, text, integer); \
         DROP TABLE skillet_fold_lock; \
         DELETE FROM skillet_migrations WHERE version >= 4",
    );
    let schema_3 = include_str!("../migrations/0003_definer_functions.sql");
    for function in [
        "skillet_require_writer",
        "skillet_record_event",
        "skillet_refresh_search",
        "skillet_publish",
        "skillet_yank",
    ] {
        db.execute(&definition(schema_3, function));
    }
    db.execute(
        &schema_3[schema_3.rfind("DO $$").unwrap()..schema_3.rfind("GRANT EXECUTE").unwrap()],
    );
}

/// A registry at schema 3 (statistics updated in place by every publish) is refused until `init`
/// adds the deltas; it then ranks as before, and many publishes later (the deltas folded in
/// along the way) its statistics still add up.
#[test]
fn init_brings_a_schema_3_registry_to_statistics_deltas() {
    let Some(url) = server("init_brings_a_schema_3_registry_to_statistics_deltas") else {
        return;
    };
    let db = TestDatabase::create(&url);
    let skills = tempfile::tempdir().unwrap();
    let local = runtime().block_on(async {
        let registry = Registry::new(&db.url).unwrap();
        registry.init().await.unwrap();
        publish_skills(&registry, skills.path()).await
    });
    down_to_schema_3(&db);
    assert_eq!(statistics_off(&db, false), [["0", "0", "t"]]);
    runtime().block_on(async {
        let registry = Registry::new(&db.url).unwrap();
        let error = registry
            .search("pdf", None, Mode::Lexical, 3, SearchSettings::default())
            .await
            .unwrap_err();
        assert!(matches!(error, RegistryError::OldSchema { .. }), "{error}");
        let report = registry.init().await.unwrap();
        assert_eq!((report.from, report.to), (3, SCHEMA_VERSION));
        assert_eq!(
            report.applied,
            [
                "0004_statistics_deltas",
                "0005_publish_hashes_its_own_blobs",
                "0006_fold_by_rows"
            ]
        );
        assert_ranks_as(&registry, &local).await;
        // 75 changes: 50 new versions with new words, 25 of them yanked (words and documents
        // go as well as come).
        let dir = skills.path().join("git-cleanup");
        for round in 1..=50 {
            std::fs::write(
                dir.join("SKILL.md"),
                format!(
                    "---\nname: git-cleanup\ndescription: {} word{round}\n---\n\nBody {round}.\n",
                    SKILLS[3].1
                ),
            )
            .unwrap();
            let published = registry
                .publish(&prepare(&dir).unwrap(), "acme", None, None)
                .await
                .unwrap();
            if round % 2 == 0 {
                registry
                    .yank("acme", "git-cleanup", published.seq)
                    .await
                    .unwrap();
            }
        }
    });
    assert_eq!(statistics_off(&db, true), [["0", "0", "t"]]);
    // The 64th change folded the deltas in; the 11 since are pending.
    assert_eq!(
        db.rows("SELECT count(*) FROM skillet_search_stats_deltas"),
        [["11"]]
    );
    // A writer that says it writes schema 3 (an older skillet) is refused.
    let refused = db.try_execute(
        "BEGIN; SELECT set_config('skillet.schema', '3', true); \
         UPDATE skillet_search_stats SET documents = documents; COMMIT",
    );
    assert!(
        refused
            .as_ref()
            .is_err_and(|e| e.contains("upgrade skillet")),
        "{refused:?}"
    );
}

/// Takes a registry back to schema 2 (its tables are schema 3's): the functions and guards of
/// schema 3 dropped, schema 2's put back, its migration row removed.
fn down_to_schema_2(db: &TestDatabase) {
    down_to_schema_3(db);
    db.execute(
        "DROP FUNCTION skillet_publish(text, text, integer, text, text[], integer[], integer, \
           text[], vector, text[], boolean[], bytea[]), skillet_yank(text, text, integer), \
           skillet_claim_owner(text), skillet_set_owner_role(text, name), \
           skillet_refresh_search(bigint), skillet_record_event(text, text, text, integer), \
           skillet_may_write(text, boolean), skillet_check_names(text, text), \
           skillet_content_hash(text[], boolean[], bytea[]), skillet_le64(bigint); \
         DROP TRIGGER skillet_guard_blob ON skillet_blobs; DROP FUNCTION skillet_guard_blob(); \
         CREATE TRIGGER skillet_immutable BEFORE UPDATE OR DELETE ON skillet_blobs \
           FOR EACH ROW EXECUTE FUNCTION skillet_immutable(); \
         DROP TRIGGER skillet_guard_version ON skillet_versions; \
         DELETE FROM skillet_migrations WHERE version = 3",
    );
    let schema_1 = include_str!("../migrations/0001_init.sql");
    db.execute(&definition(schema_1, "skillet_check_owner"));
    let schema_2 = include_str!("../migrations/0002_body_words.sql");
    for function in ["skillet_require_writer", "skillet_guard_version"] {
        db.execute(&definition(schema_2, function));
    }
    db.execute(
        "CREATE TRIGGER skillet_guard_version BEFORE INSERT OR UPDATE OR DELETE ON skillet_versions \
           FOR EACH ROW EXECUTE FUNCTION skillet_guard_version()",
    );
}

#[test]
fn init_moves_a_schema_2_registry_s_table_grants_to_the_group_roles() {
    let Some(url) = server("init_moves_a_schema_2_registry_s_table_grants_to_the_group_roles")
    else {
        return;
    };
    let db = TestDatabase::create(&url);
    let skills = tempfile::tempdir().unwrap();
    let dir = write_skill(skills.path(), "pdf-forms", SKILLS[0].1, "v1");
    let (other, old_reader) = (
        format!("skillet_other_{}", std::process::id()),
        format!("skillet_old_reader_{}", std::process::id()),
    );
    db.execute(&format!(
        "DROP ROLE IF EXISTS {other}; CREATE ROLE {other} LOGIN; \
         DROP ROLE IF EXISTS {old_reader}; CREATE ROLE {old_reader} LOGIN"
    ));
    runtime().block_on(async {
        let registry = Registry::new(&db.url).unwrap();
        registry.init().await.unwrap();
        registry
            .publish(&prepare(&dir).unwrap(), "acme", None, None)
            .await
            .unwrap();
    });
    // Schema 2, with the grants its README gave publishers and readers.
    down_to_schema_2(&db);
    db.execute(&format!(
        "GRANT SELECT, INSERT, UPDATE ON ALL TABLES IN SCHEMA public TO {other}; \
         GRANT DELETE ON skillet_search, skillet_terms, skillet_blend_terms TO {other}; \
         GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO {other}; \
         GRANT SELECT ON ALL TABLES IN SCHEMA public TO {old_reader}"
    ));
    let as_other = skillet_test_support::as_role(&db.url, &other);
    let report =
        runtime().block_on(async { Registry::new(&db.url).unwrap().init().await.unwrap() });
    assert_eq!((report.from, report.to), (2, SCHEMA_VERSION));
    let said = report.grants.join("\n");
    assert!(
        said.contains(&format!(
            "from {other} (made a member of skillet_publisher instead)"
        )),
        "{said}"
    );
    assert!(
        said.contains(&format!(
            "from {old_reader} (made a member of skillet_reader instead)"
        )),
        "{said}"
    );
    let refused =
        skillet_test_support::try_sql(&as_other, "UPDATE skillet_owners SET role = current_user");
    assert!(refused.is_err_and(|e| e.contains("permission denied")));
    runtime().block_on(async {
        let other_registry = Registry::new(&as_other).unwrap();
        std::fs::write(dir.join("more.md"), "v2").unwrap();
        let error = other_registry
            .publish(&prepare(&dir).unwrap(), "acme", None, None)
            .await
            .unwrap_err();
        assert!(
            error
                .to_string()
                .contains("the owner acme belongs to the database role postgres"),
            "{error}"
        );
        let mine = other_registry
            .publish(&prepare(&dir).unwrap(), "other-team", None, None)
            .await
            .unwrap();
        assert_eq!((mine.seq, mine.created), (1, true));
        let reader = Registry::new(&skillet_test_support::as_role(&db.url, &old_reader)).unwrap();
        assert_eq!(reader.versions("acme", "pdf-forms").await.unwrap().len(), 1);
        assert_eq!(reader.count().await.unwrap(), 2);
        // A second init finds nothing to move.
        let again = Registry::new(&db.url).unwrap().init().await.unwrap();
        assert_eq!(again.applied, Vec::<String>::new());
        assert_eq!(again.grants, Vec::<String>::new());
    });
    db.execute(&format!(
        "REASSIGN OWNED BY {other}, {old_reader} TO postgres; DROP OWNED BY {other}, {old_reader}"
    ));
    drop(db);
    skillet_test_support::try_sql(&url, &format!("DROP ROLE {other}; DROP ROLE {old_reader}"))
        .unwrap();
}
