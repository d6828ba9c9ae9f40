//! Publishing: one transaction per skill. The skill's row is locked, the same content is the
//! same version (idempotent), `--expect-seq` refuses when someone published in between, blobs
//! are shared across versions, the search table and its word statistics move with the latest
//! version, and an event row plus a `NOTIFY` tell listeners. A publisher that dies before
//! `COMMIT` leaves nothing behind: PostgreSQL rolls the whole transaction back.

use pgvector::Vector;
use tokio_postgres::Transaction;

use crate::bundle::hex;
use crate::connect::Pools;
use crate::error::RegistryError;
use crate::prepare::{Prepared, check_owner};

/// The channel `NOTIFY` sends on; the payload is the event's id.
pub const CHANNEL: &str = "skillet_registry";

/// The advisory lock every publish and yank holds from its event to its commit, so that
/// events are numbered in the order they commit and a listener reading "after id N" never
/// skips one that committed late.
pub const EVENTS_LOCK: i64 = 0x736b_696c_6c65_7402;

/// What a publish or a yank may wait for: a lock held longer (another writer stalled) fails
/// the call rather than hang it, and a writer that stops talking is cut off, its transaction
/// rolled back, so it cannot hold the events lock for everyone.
pub(crate) const WRITE_LIMITS: &str =
    "SET LOCAL lock_timeout = '30s'; SET LOCAL idle_in_transaction_session_timeout = '60s'";

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
    if let Some(vector) = embedding
        && vector.len() != DIMENSIONS
    {
        return Err(RegistryError::Database(format!(
            "a vector of {} dimensions; the registry stores {DIMENSIONS}",
            vector.len()
        )));
    }
    let mut client = pools.write().await?;
    crate::schema::check(pools, &client).await?;
    let db = |error: tokio_postgres::Error| RegistryError::from_db(&pools.at, &error);
    let transaction = client.transaction().await.map_err(db)?;
    transaction.batch_execute(WRITE_LIMITS).await.map_err(db)?;
    let published = publish_in(&transaction, prepared, owner, expect_seq, embedding)
        .await
        .map_err(|error| match error {
            Failure::Db(error) => db(error),
            Failure::Registry(error) => error,
        })?;
    transaction.commit().await.map_err(db)?;
    Ok(published)
}

enum Failure {
    Db(tokio_postgres::Error),
    Registry(RegistryError),
}

impl From<tokio_postgres::Error> for Failure {
    fn from(error: tokio_postgres::Error) -> Self {
        Self::Db(error)
    }
}

async fn publish_in(
    tx: &Transaction<'_>,
    prepared: &Prepared,
    owner: &str,
    expect_seq: Option<i32>,
    embedding: Option<&[f32]>,
) -> Result<Published, Failure> {
    let name = prepared.name.as_str();
    let hash = prepared.content_hash.to_vec();
    let vector = embedding.map(|v| Vector::from(v.to_vec()));
    tx.execute(
        "INSERT INTO skillet_skills (owner, name) VALUES ($1, $2) ON CONFLICT (owner, name) DO NOTHING",
        &[&owner, &name],
    )
    .await?;
    let row = tx
        .query_one(
            "SELECT id, head_seq FROM skillet_skills WHERE owner = $1 AND name = $2 FOR UPDATE",
            &[&owner, &name],
        )
        .await?;
    let (skill_id, head): (i64, i32) = (row.get(0), row.get(1));
    let shown_hash = format!("sha256:{}", hex(&prepared.content_hash));
    // The same content: the same version. A vector it lacked is filled in.
    if let Some(row) = tx
        .query_opt(
            "SELECT id, seq, yanked_at IS NOT NULL, embedding IS NULL FROM skillet_versions \
             WHERE skill_id = $1 AND content_hash = $2",
            &[&skill_id, &hash],
        )
        .await?
    {
        let (version_id, seq, yanked, no_vector): (i64, i32, bool, bool) =
            (row.get(0), row.get(1), row.get(2), row.get(3));
        if no_vector && vector.is_some() {
            tx.execute(
                "UPDATE skillet_versions SET embedding = $2 WHERE id = $1",
                &[&version_id, &vector],
            )
            .await?;
            tx.execute(
                "UPDATE skillet_search SET embedding = $2 WHERE version_id = $1",
                &[&version_id, &vector],
            )
            .await?;
        }
        return Ok(Published {
            owner: owner.to_string(),
            name: name.to_string(),
            seq,
            hash: shown_hash,
            created: false,
            yanked,
        });
    }
    if let Some(expected) = expect_seq
        && expected != head
    {
        return Err(Failure::Registry(RegistryError::Conflict {
            skill: format!("{owner}/{name}"),
            expected,
            head,
        }));
    }
    let seq = head + 1;
    insert_version(tx, prepared, skill_id, seq, vector.as_ref()).await?;
    refresh_search(tx, skill_id).await?;
    record_event(tx, "publish", owner, name, seq).await?;
    Ok(Published {
        owner: owner.to_string(),
        name: name.to_string(),
        seq,
        hash: shown_hash,
        created: true,
        yanked: false,
    })
}

/// Stores the blobs (shared), the version and its file list, and moves the head.
async fn insert_version(
    tx: &Transaction<'_>,
    prepared: &Prepared,
    skill_id: i64,
    seq: i32,
    vector: Option<&Vector>,
) -> Result<(), tokio_postgres::Error> {
    let hash = prepared.content_hash.to_vec();
    let files = prepared.bundle.files();
    let digests: Vec<Vec<u8>> = files.iter().map(|f| f.sha256().to_vec()).collect();
    // Blobs in digest order, each once: two publishes sharing contents at other paths take
    // their keys in the same order, so neither waits on the other in a cycle.
    let mut blobs: Vec<(&[u8], &[u8])> = digests
        .iter()
        .zip(files)
        .map(|(digest, file)| (digest.as_slice(), file.bytes.as_slice()))
        .collect();
    blobs.sort_unstable_by_key(|(digest, _)| *digest);
    blobs.dedup_by_key(|(digest, _)| *digest);
    let (blob_digests, contents): (Vec<&[u8]>, Vec<&[u8]>) = blobs.into_iter().unzip();
    tx.execute(
        "INSERT INTO skillet_blobs (sha256, bytes) SELECT * FROM unnest($1::bytea[], $2::bytea[]) \
         ON CONFLICT (sha256) DO NOTHING",
        &[&blob_digests, &contents],
    )
    .await?;
    let terms: Vec<&str> = prepared.terms.iter().map(|(t, _)| t.as_str()).collect();
    let counts: Vec<i32> = prepared.terms.iter().map(|(_, n)| *n).collect();
    let version_id: i64 = tx
        .query_one(
            "INSERT INTO skillet_versions \
               (skill_id, seq, content_hash, description, terms, term_counts, length, embedding, \
                body_terms) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id",
            &[
                &skill_id,
                &seq,
                &hash,
                &prepared.description,
                &terms,
                &counts,
                &prepared.length,
                &vector,
                &prepared.body_terms,
            ],
        )
        .await?
        .get(0);
    let paths: Vec<&str> = files.iter().map(|f| f.path.as_str()).collect();
    let sizes: Vec<i64> = files
        .iter()
        .map(|f| i64::try_from(f.bytes.len()).unwrap_or(i64::MAX))
        .collect();
    let executable: Vec<bool> = files.iter().map(|f| f.executable).collect();
    tx.execute(
        "INSERT INTO skillet_version_files (version_id, path, sha256, size, executable) \
         SELECT $1, * FROM unnest($2::text[], $3::bytea[], $4::int8[], $5::bool[])",
        &[&version_id, &paths, &digests, &sizes, &executable],
    )
    .await?;
    tx.execute(
        "UPDATE skillet_skills SET head_seq = $2 WHERE id = $1",
        &[&skill_id, &seq],
    )
    .await?;
    Ok(())
}

/// Puts the skill's newest version that is not yanked into the search table (or takes the
/// skill out when there is none), with its words, its words with its body's (the blend's), and
/// the collection's statistics for both.
pub(crate) async fn refresh_search(
    tx: &Transaction<'_>,
    skill_id: i64,
) -> Result<(), tokio_postgres::Error> {
    writing_schema(tx).await?;
    // Serialises the statistics row and the events that follow (see EVENTS_LOCK).
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&EVENTS_LOCK])
        .await?;
    let old: Option<(i32, i32)> = tx
        .query_opt(
            "SELECT length, blend_length FROM skillet_search WHERE skill_id = $1",
            &[&skill_id],
        )
        .await?
        .map(|row| (row.get(0), row.get(1)));
    let new = tx
        .query_opt(
            "SELECT v.id, v.length, v.length + cardinality(v.body_terms) FROM skillet_versions v \
             WHERE v.skill_id = $1 AND v.yanked_at IS NULL ORDER BY v.seq DESC LIMIT 1",
            &[&skill_id],
        )
        .await?;
    for (terms, stats) in [
        ("skillet_terms", "skillet_term_stats"),
        ("skillet_blend_terms", "skillet_blend_term_stats"),
    ] {
        tx.execute(
            &format!(
                "UPDATE {stats} s SET df = s.df - 1 FROM {terms} t \
                 WHERE t.skill_id = $1 AND t.term = s.term"
            ),
            &[&skill_id],
        )
        .await?;
        tx.execute(
            &format!("DELETE FROM {terms} WHERE skill_id = $1"),
            &[&skill_id],
        )
        .await?;
    }
    let new_lengths = if let Some(row) = new {
        let (version_id, length, blend_length): (i64, i32, i32) =
            (row.get(0), row.get(1), row.get(2));
        tx.execute(
                "INSERT INTO skillet_search (skill_id, version_id, owner, name, seq, description, length, \
                   blend_length, embedding) \
                 SELECT s.id, v.id, s.owner, s.name, v.seq, v.description, v.length, $2, \
                   v.embedding \
                 FROM skillet_versions v JOIN skillet_skills s ON s.id = v.skill_id WHERE v.id = $1 \
                 ON CONFLICT (skill_id) DO UPDATE SET version_id = EXCLUDED.version_id, \
                   seq = EXCLUDED.seq, description = EXCLUDED.description, \
                   length = EXCLUDED.length, blend_length = EXCLUDED.blend_length, \
                   embedding = EXCLUDED.embedding",
                &[&version_id, &blend_length],
            )
            .await?;
        index_words(tx, version_id, skill_id).await?;
        Some((length, blend_length))
    } else {
        tx.execute(
            "DELETE FROM skillet_search WHERE skill_id = $1",
            &[&skill_id],
        )
        .await?;
        None
    };
    let documents = i64::from(new_lengths.is_some()) - i64::from(old.is_some());
    let (new_length, new_blend) = new_lengths.unwrap_or((0, 0));
    let (old_length, old_blend) = old.unwrap_or((0, 0));
    let length = i64::from(new_length) - i64::from(old_length);
    let blend = i64::from(new_blend) - i64::from(old_blend);
    tx.execute(
        "UPDATE skillet_search_stats SET documents = documents + $1, \
         total_length = total_length + $2, blend_total_length = blend_total_length + $3 \
         WHERE id = 1",
        &[&documents, &length, &blend],
    )
    .await?;
    Ok(())
}

/// The statement that writes the blend's postings of the search table's skills (of the one
/// whose id is the parameter `skill`, or of all): each version's own terms and counts, one more
/// for each of its body's terms (as `Bm25::build_with_bodies` counts them), at the skill's
/// blend length, which must be in the search table already.
pub(crate) fn blend_terms_sql(skill: Option<&str>) -> String {
    let only = skill.map_or_else(String::new, |skill| format!("WHERE s.skill_id = {skill} "));
    format!(
        "INSERT INTO skillet_blend_terms (term, skill_id, tf, length) \
         SELECT w.term, s.skill_id, sum(w.tf)::int, s.blend_length \
         FROM skillet_search s JOIN skillet_versions v ON v.id = s.version_id, LATERAL ( \
           SELECT t.term, t.tf FROM unnest(v.terms, v.term_counts) AS t(term, tf) \
           UNION ALL SELECT b.term, 1 FROM unnest(v.body_terms) AS b(term)) w \
         {only}GROUP BY w.term, s.skill_id, s.blend_length"
    )
}

/// Says, for this transaction, which schema this skillet writes: the search statistics refuse
/// an update from a writer that does not (an older skillet that checked the schema just before
/// `init` moved it on would keep the blend's statistics out of step).
pub(crate) async fn writing_schema(tx: &Transaction<'_>) -> Result<(), tokio_postgres::Error> {
    tx.execute(
        "SELECT set_config('skillet.schema', $1, true)",
        &[&crate::schema::SCHEMA_VERSION.to_string()],
    )
    .await?;
    Ok(())
}

/// Indexes a version's words for its skill: its own (terms and counts) and the blend's (the
/// same, and one more for each of its body's words, as `Bm25::build_with_bodies` counts them),
/// each with its document frequency.
async fn index_words(
    tx: &Transaction<'_>,
    version_id: i64,
    skill_id: i64,
) -> Result<(), tokio_postgres::Error> {
    tx.execute(
        "INSERT INTO skillet_terms (term, skill_id, tf, length) \
         SELECT t.term, $2, t.tf, v.length FROM skillet_versions v, \
           unnest(v.terms, v.term_counts) AS t(term, tf) WHERE v.id = $1",
        &[&version_id, &skill_id],
    )
    .await?;
    tx.execute(
        "INSERT INTO skillet_term_stats (term, df) \
         SELECT t.term, 1 FROM skillet_versions v, unnest(v.terms) AS t(term) \
         WHERE v.id = $1 \
         ON CONFLICT (term) DO UPDATE SET df = skillet_term_stats.df + 1",
        &[&version_id],
    )
    .await?;
    tx.execute(&blend_terms_sql(Some("$1")), &[&skill_id])
        .await?;
    tx.execute(
        "INSERT INTO skillet_blend_term_stats (term, df) \
         SELECT t.term, 1 FROM skillet_blend_terms t WHERE t.skill_id = $1 \
         ON CONFLICT (term) DO UPDATE SET df = skillet_blend_term_stats.df + 1",
        &[&skill_id],
    )
    .await?;
    Ok(())
}

/// Writes an event and notifies listeners (delivered at commit, never on rollback).
pub(crate) async fn record_event(
    tx: &Transaction<'_>,
    kind: &str,
    owner: &str,
    name: &str,
    seq: i32,
) -> Result<i64, tokio_postgres::Error> {
    let id: i64 = tx
        .query_one(
            "INSERT INTO skillet_events (kind, owner, name, seq) VALUES ($1, $2, $3, $4) RETURNING id",
            &[&kind, &owner, &name, &seq],
        )
        .await?
        .get(0);
    tx.execute("SELECT pg_notify($1, $2)", &[&CHANNEL, &id.to_string()])
        .await?;
    Ok(id)
}
