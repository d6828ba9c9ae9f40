//! Publishing: one call of the registry's own `skillet_publish` function per skill, in a
//! transaction of its own. The database does the rest (migrations/0003): it checks who may
//! publish under the owner (`session_user`), hashes every file and the version, shares blobs
//! across versions, treats the same content as the same version, refuses a stale
//! `--expect-seq`, moves the search table and its word statistics, and appends an event plus a
//! `NOTIFY`. A publisher that dies before `COMMIT` leaves nothing behind.

use pgvector::Vector;
use tokio_postgres::Transaction;

use crate::bundle::hex;
use crate::connect::Pools;
use crate::error::RegistryError;
use crate::prepare::{Prepared, check_owner};

/// The channel `NOTIFY` sends on; the payload is the event's id.
pub const CHANNEL: &str = "skillet_registry";

/// How long a publish or a yank waits for a lock another writer holds before it fails (saying
/// what it waited for) rather than hang.
pub const WRITE_LOCK_TIMEOUT: &str = "30s";
/// How long one statement of a publish or a yank may run (a publish sends up to 32 MiB).
pub const WRITE_STATEMENT_TIMEOUT: &str = "5min";

/// How long a publish or a yank may sit idle inside its transaction before the server cuts it
/// off (its transaction rolled back), so a writer that stops talking cannot hold the events
/// lock for everyone.
pub const WRITE_IDLE_TIMEOUT: &str = "60s";

/// The limits a publish or a yank sets for its transaction.
pub(crate) fn write_limits() -> String {
    format!(
        "SET LOCAL lock_timeout = '{WRITE_LOCK_TIMEOUT}'; \
         SET LOCAL statement_timeout = '{WRITE_STATEMENT_TIMEOUT}'; \
         SET LOCAL idle_in_transaction_session_timeout = '{WRITE_IDLE_TIMEOUT}'"
    )
}

/// The dimensions of the vectors the registry stores (all-MiniLM-L6-v2).
pub const DIMENSIONS: usize = 384;

/// What a publish did.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Published {
    /// The owner.
    pub owner: String,
    /// The skill's name.
    pub name: String,
    /// The version's sequence number.
    pub seq: i32,
    /// The content hash, `sha256:` and hex.
    pub hash: String,
    /// False when this content was already published (the same version is returned).
    pub created: bool,
    /// Whether that version is yanked (only when not created).
    pub yanked: bool,
}

/// Publishes a prepared skill under `owner` with its vector (when the model was at hand).
pub async fn publish(
    pools: &Pools,
    prepared: &Prepared,
    owner: &str,
    expect_seq: Option<i32>,
    embedding: Option<&[f32]>,
) -> Result<Published, RegistryError> {
    check_owner(owner)?;
    crate::prepare::check_name(&prepared.name)?;
    if let Some(vector) = embedding
        && vector.len() != DIMENSIONS
    {
        return Err(RegistryError::Database(format!(
            "a vector of {} dimensions; the registry stores {DIMENSIONS}",
            vector.len()
        )));
    }
    let skill = format!("{owner}/{}", prepared.name);
    let doing = format!("publishing {skill}");
    let mut client = pools.write().await?;
    crate::schema::check(pools, &client).await?;
    let db = |error: tokio_postgres::Error| RegistryError::from_db(&pools.at, &error).doing(&doing);
    let transaction = client.transaction().await.map_err(db)?;
    transaction
        .batch_execute(&write_limits())
        .await
        .map_err(db)?;
    let row = call_publish(&transaction, prepared, owner, expect_seq, embedding)
        .await
        .map_err(db)?;
    let (seq, hash, created, yanked, head): (Option<i32>, Vec<u8>, bool, bool, i32) =
        (row.get(0), row.get(1), row.get(2), row.get(3), row.get(4));
    let Some(seq) = seq else {
        return Err(RegistryError::Conflict {
            skill,
            expected: expect_seq.unwrap_or_default(),
            head,
        });
    };
    transaction.commit().await.map_err(db)?;
    Ok(Published {
        owner: owner.to_string(),
        name: prepared.name.clone(),
        seq,
        hash: format!("sha256:{}", hex(&hash)),
        created,
        yanked: !created && yanked,
    })
}

/// One statement calling one of the registry's functions, in a transaction of its own under the
/// write limits, committed; its one row. `doing` names it in a time-out.
pub(crate) async fn call_one(
    pools: &Pools,
    doing: &str,
    sql: &str,
    params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
) -> Result<tokio_postgres::Row, RegistryError> {
    let mut client = pools.write().await?;
    crate::schema::check(pools, &client).await?;
    let db = |error: tokio_postgres::Error| RegistryError::from_db(&pools.at, &error).doing(doing);
    let tx = client.transaction().await.map_err(db)?;
    tx.batch_execute(&write_limits()).await.map_err(db)?;
    let row = tx.query_one(sql, params).await.map_err(db)?;
    tx.commit().await.map_err(db)?;
    Ok(row)
}

/// One call of `skillet_publish` with the prepared skill's fields and files.
async fn call_publish(
    tx: &Transaction<'_>,
    prepared: &Prepared,
    owner: &str,
    expect_seq: Option<i32>,
    embedding: Option<&[f32]>,
) -> Result<tokio_postgres::Row, tokio_postgres::Error> {
    let vector = embedding.map(|v| Vector::from(v.to_vec()));
    let terms: Vec<&str> = prepared.terms.iter().map(|(t, _)| t.as_str()).collect();
    let counts: Vec<i32> = prepared.terms.iter().map(|(_, n)| *n).collect();
    let files = prepared.bundle.files();
    let paths: Vec<&str> = files.iter().map(|f| f.path.as_str()).collect();
    let executable: Vec<bool> = files.iter().map(|f| f.executable).collect();
    let contents: Vec<&[u8]> = files.iter().map(|f| f.bytes.as_slice()).collect();
    tx.query_one(
        "SELECT r_seq, r_hash, r_created, r_yanked, r_head FROM skillet_publish(\
           $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)",
        &[
            &owner,
            &prepared.name,
            &expect_seq,
            &prepared.description,
            &terms,
            &counts,
            &prepared.length,
            &prepared.body_terms,
            &vector,
            &paths,
            &executable,
            &contents,
        ],
    )
    .await
}

/// The statement that writes the blend's postings of every skill in the search table: each version's own terms and counts, one more
/// for each of its body's terms (as `Bm25::build_with_bodies` counts them), at the skill's
/// blend length, which must be in the search table already.
pub(crate) const BLEND_TERMS_SQL: &str = "INSERT INTO skillet_blend_terms (term, skill_id, tf, length) \
         SELECT w.term, s.skill_id, sum(w.tf)::int, s.blend_length \
         FROM skillet_search s JOIN skillet_versions v ON v.id = s.version_id, LATERAL ( \
           SELECT t.term, t.tf FROM unnest(v.terms, v.term_counts) AS t(term, tf) \
           UNION ALL SELECT b.term, 1 FROM unnest(v.body_terms) AS b(term)) w \
         GROUP BY w.term, s.skill_id, s.blend_length";

/// The schema whose search statistics this skillet writes: the registry's triggers refuse an
/// update of them from a writer that says another (schema 4 moved them to deltas; later schemas
/// keep them as they are).
pub const STATISTICS_SCHEMA: &str = "4";

/// Says, for this transaction, which schema this skillet writes: the search statistics refuse
/// an update from a writer that does not (an older skillet that checked the schema just before
/// `init` moved it on would keep the blend's statistics out of step).
pub(crate) async fn writing_schema(tx: &Transaction<'_>) -> Result<(), tokio_postgres::Error> {
    tx.execute(
        "SELECT set_config('skillet.schema', $1, true)",
        &[&STATISTICS_SCHEMA],
    )
    .await?;
    Ok(())
}
