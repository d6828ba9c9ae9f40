//! The registry's schema: versioned migrations kept in the repository, applied in order under
//! an advisory lock (so `init` from many machines at once applies each exactly once), and the
//! check every other command makes that the schema is the one this skillet speaks.

use crate::connect::Pools;
use crate::error::RegistryError;

/// The migrations, in order: (version, name, SQL).
const MIGRATIONS: &[(i32, &str, &str)] = &[
    (1, "init", include_str!("../migrations/0001_init.sql")),
    (
        2,
        "body_words",
        include_str!("../migrations/0002_body_words.sql"),
    ),
    (
        3,
        "definer_functions",
        include_str!("../migrations/0003_definer_functions.sql"),
    ),
    (
        4,
        "statistics_deltas",
        include_str!("../migrations/0004_statistics_deltas.sql"),
    ),
    (
        5,
        "publish_hashes_its_own_blobs",
        include_str!("../migrations/0005_publish_hashes_its_own_blobs.sql"),
    ),
    (
        6,
        "fold_by_rows",
        include_str!("../migrations/0006_fold_by_rows.sql"),
    ),
];

/// The schema version this skillet writes and reads.
pub const SCHEMA_VERSION: i32 = 6;

/// The oldest pgvector with what the registry needs (HNSW indexes came in 0.5.0; the tests run
/// on 0.6.2, the version the `pgserver` wheel ships).
pub const MIN_VECTOR: (u32, u32, u32) = (0, 6, 2);
/// The pgvector production should run (fixes to parallel HNSW builds and to vacuum).
pub const RECOMMENDED_VECTOR: (u32, u32, u32) = (0, 8, 4);

/// The advisory lock key `init` holds on a database without the registry yet (a constant:
/// "skillet" as bytes); once `skillet_migrations` exists, `init` locks that table instead,
/// which nobody without rights on it can hold against `init`.
const MIGRATION_LOCK: i64 = 0x736b_696c_6c65_7401;

/// What `init` did.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct InitReport {
    /// The schema version before (0: none).
    pub from: i32,
    /// The schema version now.
    pub to: i32,
    /// The migrations applied, by name.
    pub applied: Vec<String>,
    /// The pgvector version installed.
    pub vector: String,
    /// The server's version.
    pub server: String,
    /// Advice (an older pgvector than production should run).
    pub advice: Vec<String>,
    /// The schema the registry is in.
    pub schema: String,
    /// What was changed in who may do what (rights on tables taken back, roles made members of
    /// the registry's group roles).
    pub grants: Vec<String>,
}

/// Creates or migrates the schema.
pub async fn init(pools: &Pools) -> Result<InitReport, RegistryError> {
    let mut client = pools.write().await?;
    let db = |error: tokio_postgres::Error| {
        RegistryError::from_db(&pools.at, &error).doing("initializing the registry")
    };
    let row = client
        .query_one(
            "SELECT current_setting('server_version'), \
             (SELECT default_version FROM pg_available_extensions WHERE name = 'vector'), \
             (SELECT extversion FROM pg_extension WHERE extname = 'vector')",
            &[],
        )
        .await
        .map_err(db)?;
    let server: String = row.get(0);
    let available: Option<String> = row.get(1);
    let Some(available) = available else {
        return Err(RegistryError::NoVector(format!(
            "the extension `vector` is not available on PostgreSQL {server}"
        )));
    };
    // Too old a pgvector is said before anything is created.
    let present: Option<String> = row.get(2);
    let version = present.unwrap_or_else(|| available.clone());
    if parse_version(&version).is_none_or(|v| v < MIN_VECTOR) {
        return Err(RegistryError::NoVector(format!(
            "pgvector {version} is what this database would use; the registry needs {} or later \
             (HNSW indexes)",
            show(MIN_VECTOR)
        )));
    }
    let transaction = client.transaction().await.map_err(db)?;
    let schema = crate::grants::pin(&transaction).await?;
    crate::grants::preflight(&transaction, &schema).await?;
    crate::grants::unpin(&transaction, &schema, false)
        .await
        .map_err(db)?;
    lock_migrations(&transaction).await.map_err(db)?;
    transaction
        .batch_execute(
            "CREATE TABLE IF NOT EXISTS skillet_migrations (\
               version integer PRIMARY KEY, name text NOT NULL, \
               applied_at timestamptz NOT NULL DEFAULT now())",
        )
        .await
        .map_err(db)?;
    let from: i32 = transaction
        .query_one(
            "SELECT coalesce(max(version), 0) FROM skillet_migrations",
            &[],
        )
        .await
        .map_err(db)?
        .get(0);
    if from > SCHEMA_VERSION {
        return Err(RegistryError::NewSchema {
            found: from,
            known: SCHEMA_VERSION,
        });
    }
    let mut applied = apply_migrations(&transaction, from, &db).await?;
    if from < 2 {
        let filled = backfill_body_terms(&transaction).await.map_err(db)?;
        if filled > 0 {
            applied.push(format!(
                "the body's words of {filled} version(s) published before"
            ));
        }
    }
    crate::grants::unpin(&transaction, &schema, true)
        .await
        .map_err(db)?;
    let grants = crate::grants::settle(&transaction, from, &schema)
        .await
        .map_err(db)?;
    let installed: String = transaction
        .query_one(
            "SELECT extversion FROM pg_extension WHERE extname = 'vector'",
            &[],
        )
        .await
        .map_err(db)?
        .get(0);
    transaction.commit().await.map_err(db)?;
    drop(client);
    let mut advice = vector_advice(&installed, &available)?;
    if (1..RECOUNTED_FROM).contains(&from) {
        recount_on_the_way_up(pools, &mut applied, &mut advice).await;
    }
    Ok(InitReport {
        from,
        to: SCHEMA_VERSION,
        applied,
        vector: installed,
        server,
        advice,
        grants,
        schema: schema.name,
    })
}

/// The first schema whose statistics need no recount on the way up.
const RECOUNTED_FROM: i32 = 6;

/// Recounts the search statistics against the search table and appends the difference as
/// deltas (`skillet_recount_stats`: it takes only its own lock, one recount at a time, none a
/// publish or a search takes, so it holds up nobody however long it takes; no statement time
/// limit for it); what it set right, if anything.
pub(crate) async fn recount(
    transaction: &tokio_postgres::Transaction<'_>,
) -> Result<Option<String>, tokio_postgres::Error> {
    transaction
        .batch_execute("SET LOCAL statement_timeout = 0")
        .await?;
    let off: i64 = transaction
        .query_one("SELECT skillet_recount_stats()", &[])
        .await?
        .get(0);
    Ok((off > 0)
        .then(|| format!("the search statistics recounted ({off} figure(s) were out of step)")))
}

/// An older schema's statistics may carry a fault's damage (a write under a snapshot older than
/// its lock, before schema 5): recounted once on the way up, in a transaction of its own after
/// the migration's (whose row locks would hold up publishes meanwhile). A recount that fails is
/// advice to run it again, not a failed `init`: the schema is migrated.
async fn recount_on_the_way_up(pools: &Pools, applied: &mut Vec<String>, advice: &mut Vec<String>) {
    match recount_statistics(pools).await {
        Ok(said) => applied.extend(said),
        Err(error) => advice.push(format!(
            "the search statistics were not recounted ({error}); `skillet registry init \
             --recount` does it"
        )),
    }
}

/// `init --recount`: the schema checked, the statistics recounted ([`recount`]) in a
/// transaction of its own; what it set right, if anything.
pub async fn recount_statistics(pools: &Pools) -> Result<Option<String>, RegistryError> {
    let mut client = pools.write().await?;
    check(pools, &client).await?;
    let db = |error: tokio_postgres::Error| {
        RegistryError::from_db(&pools.at, &error).doing("recounting the search statistics")
    };
    let transaction = client.transaction().await.map_err(db)?;
    let said = recount(&transaction).await.map_err(db)?;
    transaction.commit().await.map_err(db)?;
    Ok(said)
}

/// Serialises `init`s: the migrations table once it exists (nobody without rights on it can
/// hold that against `init`), an advisory lock before.
async fn lock_migrations(
    transaction: &tokio_postgres::Transaction<'_>,
) -> Result<(), tokio_postgres::Error> {
    let exists: bool = transaction
        .query_one("SELECT to_regclass('skillet_migrations') IS NOT NULL", &[])
        .await?
        .get(0);
    if exists {
        transaction
            .batch_execute("LOCK TABLE skillet_migrations IN SHARE ROW EXCLUSIVE MODE")
            .await
    } else {
        transaction
            .execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
            .await
            .map(|_| ())
    }
}

/// Applies the migrations after `from`, in order, each recorded; their names.
async fn apply_migrations(
    transaction: &tokio_postgres::Transaction<'_>,
    from: i32,
    db: &(dyn Fn(tokio_postgres::Error) -> RegistryError + Sync),
) -> Result<Vec<String>, RegistryError> {
    let mut applied = Vec::new();
    for (version, name, sql) in MIGRATIONS.iter().filter(|(v, _, _)| *v > from) {
        transaction.batch_execute(sql).await.map_err(|error| {
            match db(error) {
                // Roles made by a user who may not.
                RegistryError::Database(words)
                    if words.contains("42501") && words.contains("create role") =>
                {
                    RegistryError::Refused(format!(
                        "this user may not create the registry's roles ({words})\n  hint: run \
                         `skillet registry init` once as a superuser or a role with CREATEROLE, \
                         or have one run: CREATE ROLE skillet_reader NOLOGIN; CREATE ROLE \
                         skillet_publisher NOLOGIN IN ROLE skillet_reader;"
                    ))
                }
                // CREATE EXTENSION by a user who may not.
                RegistryError::Database(words) if words.contains("42501") => {
                    RegistryError::NoVector(format!(
                        "this user may not create the extension ({words}); a superuser or the \
                         database owner runs `CREATE EXTENSION vector` once"
                    ))
                }
                other => other,
            }
        })?;
        transaction
            .execute(
                "INSERT INTO skillet_migrations (version, name) VALUES ($1, $2)",
                &[version, name],
            )
            .await
            .map_err(db)?;
        applied.push(format!("{version:04}_{name}"));
    }
    Ok(applied)
}

/// Builds the blend's words, document frequencies and lengths of the whole search table from
/// its versions (their terms and body terms), for tables that hold none yet: schema 2's
/// upgrade, and a bulk load. The writer must have said it writes this schema.
pub fn build_blend_sql() -> String {
    format!(
        "UPDATE skillet_search s SET blend_length = v.length + cardinality(v.body_terms) \
           FROM skillet_versions v WHERE v.id = s.version_id; \
         {}; \
         INSERT INTO skillet_blend_term_stats (term, df) \
           SELECT term, count(*) FROM skillet_blend_terms GROUP BY term; \
         UPDATE skillet_search_stats \
           SET blend_total_length = (SELECT coalesce(sum(blend_length), 0) FROM skillet_search) \
           WHERE id = 1",
        crate::publish::BLEND_TERMS_SQL
    )
}

/// Schema 2 for a registry that had versions before it: each version's body terms from its
/// stored SKILL.md (one version at a time), then the blend's words, statistics and lengths of
/// the search table built in a few set-based statements, then both new columns required.
/// Inside `init`'s transaction, under its lock: a failure leaves the registry at schema 1.
async fn backfill_body_terms(
    tx: &tokio_postgres::Transaction<'_>,
) -> Result<usize, tokio_postgres::Error> {
    crate::publish::writing_schema(tx).await?;
    let versions: Vec<i64> = tx
        .query(
            "SELECT id FROM skillet_versions WHERE body_terms IS NULL ORDER BY id",
            &[],
        )
        .await?
        .iter()
        .map(|row| row.get(0))
        .collect();
    for id in &versions {
        // The file the bundle took for the skill: SKILL.md, else skill.md.
        let bytes: Option<Vec<u8>> = tx
            .query_opt(
                "SELECT b.bytes FROM skillet_version_files f \
                 JOIN skillet_blobs b ON b.sha256 = f.sha256 \
                 WHERE f.version_id = $1 AND f.path IN ('SKILL.md', 'skill.md') \
                 ORDER BY f.path = 'SKILL.md' DESC LIMIT 1",
                &[id],
            )
            .await?
            .map(|row| row.get(0));
        let terms = crate::prepare::body_terms_of(bytes.as_deref().unwrap_or_default());
        tx.execute(
            "UPDATE skillet_versions SET body_terms = $2 WHERE id = $1",
            &[id, &terms],
        )
        .await?;
    }
    tx.batch_execute("ALTER TABLE skillet_versions ALTER COLUMN body_terms SET NOT NULL")
        .await?;
    tx.batch_execute(&build_blend_sql()).await?;
    tx.batch_execute("ALTER TABLE skillet_search ALTER COLUMN blend_length SET NOT NULL")
        .await?;
    Ok(versions.len())
}

/// What to say of the pgvector installed (and available); an error when it is too old.
fn vector_advice(installed: &str, available: &str) -> Result<Vec<String>, RegistryError> {
    let mut advice = Vec::new();
    match parse_version(installed) {
        Some(version) if version < MIN_VECTOR => {
            return Err(RegistryError::NoVector(format!(
                "pgvector {installed} is installed; the registry needs {} or later (HNSW indexes)",
                show(MIN_VECTOR)
            )));
        }
        Some(version) if version < RECOMMENDED_VECTOR => advice.push(format!(
            "pgvector {installed} works; production should run {} or later (it fixes parallel \
             HNSW builds and index corruption on vacuum); `ALTER EXTENSION vector UPDATE` after \
             upgrading the package",
            show(RECOMMENDED_VECTOR)
        )),
        _ => {}
    }
    if available != installed {
        advice.push(format!(
            "pgvector {available} is available on the server; {installed} is the one in this \
             database (`ALTER EXTENSION vector UPDATE` moves to it)"
        ));
    }
    Ok(advice)
}

/// Fails unless the schema is the one this skillet speaks.
pub async fn check(pools: &Pools, client: &tokio_postgres::Client) -> Result<(), RegistryError> {
    use std::sync::atomic::Ordering;
    if pools.schema_checked.load(Ordering::Relaxed) {
        return Ok(());
    }
    let row = client
        .query_one(
            "SELECT to_regclass('skillet_migrations') IS NOT NULL, \
             EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'vector')",
            &[],
        )
        .await
        .map_err(|error| RegistryError::from_db(&pools.at, &error))?;
    let (initialized, vector): (bool, bool) = (row.get(0), row.get(1));
    if !initialized {
        // `init` creates the extension, or says why it cannot.
        return Err(RegistryError::NotInitialized);
    }
    if !vector {
        return Err(RegistryError::NoVector(
            "the extension `vector` was removed from this database".into(),
        ));
    }
    let found: i32 = client
        .query_one(
            "SELECT coalesce(max(version), 0) FROM skillet_migrations",
            &[],
        )
        .await
        .map_err(|error| RegistryError::from_db(&pools.at, &error))?
        .get(0);
    match found.cmp(&SCHEMA_VERSION) {
        std::cmp::Ordering::Less => Err(RegistryError::OldSchema {
            found,
            wanted: SCHEMA_VERSION,
        }),
        std::cmp::Ordering::Greater => Err(RegistryError::NewSchema {
            found,
            known: SCHEMA_VERSION,
        }),
        std::cmp::Ordering::Equal => {
            pools.schema_checked.store(true, Ordering::Relaxed);
            Ok(())
        }
    }
}

/// `0.6.2` → (0, 6, 2).
fn parse_version(text: &str) -> Option<(u32, u32, u32)> {
    let mut parts = text.split('.').map(|part| {
        part.chars()
            .take_while(char::is_ascii_digit)
            .collect::<String>()
            .parse::<u32>()
            .ok()
    });
    Some((
        parts.next()??,
        parts.next().flatten().unwrap_or(0),
        parts.next().flatten().unwrap_or(0),
    ))
}

fn show((a, b, c): (u32, u32, u32)) -> String {
    format!("{a}.{b}.{c}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_compare_as_numbers() {
        assert_eq!(parse_version("0.6.2"), Some((0, 6, 2)));
        assert_eq!(parse_version("0.10.0"), Some((0, 10, 0)));
        assert!(parse_version("0.10.0") > Some(RECOMMENDED_VECTOR));
        assert!(parse_version("0.8.3") < Some(RECOMMENDED_VECTOR));
        assert_eq!(parse_version("1"), Some((1, 0, 0)));
        assert_eq!(parse_version("x"), None);
    }

    #[test]
    fn migrations_are_numbered_in_order_up_to_the_schema_version() {
        for (at, (version, _, _)) in MIGRATIONS.iter().enumerate() {
            assert_eq!(*version, i32::try_from(at).unwrap() + 1);
        }
        assert_eq!(MIGRATIONS.last().map(|m| m.0), Some(SCHEMA_VERSION));
    }
}
