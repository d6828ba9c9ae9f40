//! Searching: candidates by meaning (the HNSW index, cosine) and by words (skillet's own BM25,
//! computed in SQL over its own terms table) in one round trip, then ranked on the client by
//! the very formula a local library uses ([`hybrid_score`], the same thresholds), so a registry
//! result and a local one mean the same thing. As locally, the blend weighs each skill's body's
//! words too (`skillet_blend_terms`, `Matcher::with_bodies`); words alone keep each skill's own
//! text (`skillet_terms`).

use pgvector::Vector;
use skillet_retrieval::{
    B, K1, LEXICAL_THRESHOLD, Mode, RELEVANCE_THRESHOLD, SEMANTIC_THRESHOLD, Stemming,
    hybrid_score, query_terms, query_words, relevance_score,
};

use crate::connect::Pools;
use crate::error::RegistryError;

/// Candidates each branch brings (words, meaning) before the client ranks their union.
pub const CANDIDATES: i64 = 50;
/// `hnsw.ef_search` for a search: at least twice the candidates asked of the index (pgvector's
/// advice; its default, 40, would return fewer than [`CANDIDATES`]).
pub const EF_SEARCH: i64 = 100;
/// The most results a search returns.
pub const MAX_TOP_K: usize = 100;

/// One skill found.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Found {
    /// The owner.
    pub owner: String,
    /// The name.
    pub name: String,
    /// The newest version that is not yanked.
    pub seq: i32,
    /// Its description.
    pub description: String,
    /// Its score in the mode used.
    pub score: f32,
    /// Its BM25 score.
    pub words: f32,
    /// Its cosine with the query, when ranked by meaning.
    pub cosine: Option<f32>,
    /// Whether it clears the relevance threshold.
    pub relevant: bool,
}

/// A search's answer.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Results {
    /// The mode used (lexical when no query vector was given).
    pub mode: &'static str,
    /// The query's weight over the words ranked by (`skillet_retrieval::Bm25::query_weight`),
    /// which hybrid relevance divides by; `None` when no skill was a candidate.
    pub query_weight: Option<f32>,
    /// Best first.
    pub results: Vec<Found>,
}

/// How a search runs.
#[derive(Debug, Clone, Copy)]
pub struct SearchSettings {
    /// Candidates per branch.
    pub candidates: i64,
    /// `hnsw.ef_search`.
    pub ef_search: i64,
}

impl Default for SearchSettings {
    fn default() -> Self {
        Self {
            candidates: CANDIDATES,
            ef_search: EF_SEARCH,
        }
    }
}

/// The `top_k` best skills for `query` (`vector`: the query's, from the same model as the
/// registry's; without it, words only).
pub async fn search(
    pools: &Pools,
    query: &str,
    vector: Option<&[f32]>,
    mode: Mode,
    top_k: usize,
    settings: SearchSettings,
) -> Result<Results, RegistryError> {
    let top_k = top_k.min(MAX_TOP_K);
    let client = pools.read().await?;
    crate::schema::check(pools, &client).await?;
    let db =
        |error: tokio_postgres::Error| RegistryError::from_db(&pools.at, &error).doing("searching");
    let terms = query_terms(query, Stemming::Light);
    let words = query_words(query, Stemming::Light);
    let vector = match mode {
        Mode::Lexical => None,
        Mode::Semantic | Mode::Hybrid => vector.map(|v| Vector::from(v.to_vec())),
    };
    let mode = if vector.is_some() {
        mode
    } else {
        Mode::Lexical
    };
    let sql = if mode == Mode::Hybrid {
        &*SEARCH_BLEND_SQL
    } else {
        &*SEARCH_OWN_SQL
    };
    let statement = client.prepare_cached(sql).await.map_err(db)?;
    // BEGIN, the index setting, the query and COMMIT are sent together: one round trip.
    let set = format!(
        "BEGIN READ ONLY; SET LOCAL hnsw.ef_search = {}",
        settings.ef_search.clamp(1, 1000)
    );
    let k1 = f64::from(K1);
    let b = f64::from(B);
    let candidates = settings
        .candidates
        .max(i64::try_from(top_k).unwrap_or(i64::MAX));
    let params: [&(dyn tokio_postgres::types::ToSql + Sync); 7] =
        [&terms, &vector, &candidates, &candidates, &k1, &b, &words];
    let (begun, rows, committed) = tokio::join!(
        client.batch_execute(&set),
        client.query(&statement, &params),
        client.batch_execute("COMMIT"),
    );
    begun.map_err(db)?;
    let rows = rows.map_err(db)?;
    committed.map_err(db)?;
    // The query's weight is the same on every row (and absent when no skill was a candidate).
    #[expect(clippy::cast_possible_truncation, reason = "scores are small")]
    let weight = rows.first().map(|row| row.get::<_, f64>(6) as f32);
    #[expect(clippy::cast_possible_truncation, reason = "scores are small")]
    let candidates: Vec<Found> = rows
        .iter()
        .map(|row| {
            let words: f64 = row.get(4);
            let cosine: Option<f64> = row.get(5);
            Found {
                owner: row.get(0),
                name: row.get(1),
                seq: row.get(2),
                description: row.get(3),
                score: 0.0,
                words: words as f32,
                cosine: cosine.map(|c| c as f32),
                relevant: false,
            }
        })
        .collect();
    Ok(Results {
        mode: mode.as_str(),
        results: rank(candidates, mode, top_k, weight.unwrap_or(0.0)),
        query_weight: weight,
    })
}

/// Ranks candidates as a local library would ([`skillet_retrieval::Matcher::rank`]); `weight`
/// is the query's ([`skillet_retrieval::Bm25::query_weight`], over the words hybrid ranks by).
fn rank(mut candidates: Vec<Found>, mode: Mode, top_k: usize, weight: f32) -> Vec<Found> {
    let best_words = candidates.iter().map(|c| c.words).fold(0.0_f32, f32::max);
    for found in &mut candidates {
        // A skill published without a vector ranks by meaning as a local skill the model
        // could not embed does: as a zero vector (cosine 0), never on the words' scale.
        let cosine = match mode {
            Mode::Lexical => None,
            Mode::Semantic | Mode::Hybrid => Some(found.cosine.unwrap_or(0.0)),
        };
        match (mode, cosine) {
            (Mode::Semantic, Some(cosine)) => {
                found.score = cosine;
                found.relevant = cosine >= SEMANTIC_THRESHOLD;
            }
            (Mode::Hybrid, Some(cosine)) => {
                found.score = hybrid_score(found.words, best_words, cosine);
                found.relevant =
                    relevance_score(found.words, weight, cosine) >= RELEVANCE_THRESHOLD;
            }
            _ => {
                found.score = found.words;
                found.relevant = found.words >= LEXICAL_THRESHOLD;
            }
        }
    }
    if mode == Mode::Lexical {
        candidates.retain(|c| c.words > 0.0);
    }
    candidates.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then_with(|| a.owner.cmp(&b.owner))
            .then_with(|| a.name.cmp(&b.name))
    });
    candidates.truncate(top_k);
    candidates
}

/// The search over each skill's own words (lexical and semantic modes).
static SEARCH_OWN_SQL: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    search_sql(
        "skillet_terms",
        "skillet_term_stats",
        "skillet_term_deltas",
        "total_length",
    )
});
/// The search over the blend's words, each skill's body's included (hybrid).
static SEARCH_BLEND_SQL: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    search_sql(
        "skillet_blend_terms",
        "skillet_blend_term_stats",
        "skillet_blend_term_deltas",
        "blend_total_length",
    )
});

/// The search over one words table. $1 the query's terms, $2 its vector (or NULL), $3 word
/// candidates, $4 meaning candidates, $5 k1, $6 b, $7 the query's words (for its weight, the
/// seventh column: at least one unknown word's, as `Bm25::query_weight`). BM25 is skillet's:
/// idf = ln((N - df + 0.5) / (df + 0.5) + 1), a word no skill has at df 0. N, the lengths and
/// each df are the base rows plus the deltas publishes appended since the last fold. Each term's postings
/// are read by its own index lookup (LATERAL), never by a scan of the whole table.
fn search_sql(terms: &str, term_stats: &str, deltas: &str, total_length: &str) -> String {
    format!(
        "
WITH q AS (SELECT DISTINCT unnest($1::text[]) AS term),
totals AS (
  SELECT s.documents + coalesce(d.documents, 0) AS documents,
         s.{total_length} + coalesce(d.{total_length}, 0) AS total_length
  FROM skillet_search_stats s,
       (SELECT sum(documents) AS documents, sum({total_length}) AS {total_length}
        FROM skillet_search_stats_deltas) d
  WHERE s.id = 1),
stats AS (
  SELECT documents::float8 AS n,
         CASE WHEN documents > 0 THEN total_length::float8 / documents ELSE 0 END AS avgdl
  FROM totals),
df AS (
  SELECT w.term,
         coalesce((SELECT st.df FROM {term_stats} st WHERE st.term = w.term), 0)
         + coalesce((SELECT sum(x.delta) FROM {deltas} x WHERE x.term = w.term), 0) AS df
  FROM (SELECT term FROM q UNION SELECT unnest($7::text[])) w),
idf AS (
  SELECT df.term, ln((stats.n - df.df + 0.5) / (df.df + 0.5) + 1.0) AS idf
  FROM df JOIN q ON q.term = df.term CROSS JOIN stats
  WHERE df.df > 0),
scored AS (
  SELECT p.skill_id,
         sum(idf.idf * p.tf * ($5::float8 + 1.0)
             / (p.tf + $5::float8 * (1.0 - $6::float8
                                     + $6::float8 * p.length / greatest(stats.avgdl, 1.0)))) AS words
  FROM idf CROSS JOIN stats
  CROSS JOIN LATERAL (
    SELECT t.skill_id, t.tf, t.length FROM {terms} t WHERE t.term = idf.term) p
  GROUP BY p.skill_id),
lexical AS (SELECT skill_id FROM scored ORDER BY words DESC, skill_id LIMIT $3::int8),
semantic AS (
  SELECT skill_id FROM skillet_search
  WHERE $2::vector IS NOT NULL
  ORDER BY embedding <=> $2::vector LIMIT $4::int8),
picked AS (SELECT skill_id FROM lexical UNION SELECT skill_id FROM semantic),
weight AS (
  SELECT greatest(
           (SELECT coalesce(sum(ln((stats.n - df.df + 0.5) / (df.df + 0.5) + 1.0)), 0)
            FROM (SELECT DISTINCT unnest($7::text[]) AS term) w
            JOIN df ON df.term = w.term),
           ln((stats.n + 0.5) / 0.5 + 1.0))::float8 AS weight
  FROM stats)
SELECT s.owner, s.name, s.seq, s.description,
       coalesce(scored.words, 0)::float8,
       CASE WHEN $2::vector IS NULL OR s.embedding IS NULL THEN NULL
            ELSE (1 - (s.embedding <=> $2::vector))::float8 END,
       (SELECT weight FROM weight)
FROM picked
JOIN skillet_search s ON s.skill_id = picked.skill_id
LEFT JOIN scored ON scored.skill_id = picked.skill_id
"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(name: &str, words: f32, cosine: Option<f32>) -> Found {
        Found {
            owner: "acme".into(),
            name: name.into(),
            seq: 1,
            description: String::new(),
            score: 0.0,
            words,
            cosine,
            relevant: false,
        }
    }

    #[test]
    fn ranking_is_the_local_formula() {
        let ranked = rank(
            vec![
                found("a", 4.0, Some(0.5)),
                found("b", 0.0, Some(0.6)),
                found("c", 8.0, Some(0.1)),
            ],
            Mode::Hybrid,
            3,
            8.0,
        );
        let names: Vec<&str> = ranked.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["a", "b", "c"], "{ranked:?}");
        assert!((ranked[0].score - hybrid_score(4.0, 8.0, 0.5)).abs() < 1e-6);
        // Relevance takes the words as a share of the query's weight, not of the best skill's.
        let relevant: Vec<bool> = ranked.iter().map(|f| f.relevant).collect();
        assert_eq!(relevant, [true, true, false], "{ranked:?}");
        let heavier = rank(vec![found("a", 4.0, Some(0.3))], Mode::Hybrid, 1, 40.0);
        let lighter = rank(vec![found("a", 4.0, Some(0.3))], Mode::Hybrid, 1, 4.0);
        assert!(!heavier[0].relevant && lighter[0].relevant);
        let lexical = rank(
            vec![
                found("a", 4.0, None),
                found("b", 0.0, None),
                found("c", 9.0, None),
            ],
            Mode::Lexical,
            3,
            0.0,
        );
        let names: Vec<&str> = lexical.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["c", "a"], "no shared word: not listed");
        assert!(lexical[0].relevant && !lexical[1].relevant);
    }
}
