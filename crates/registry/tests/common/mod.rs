//! What the registry's test files share: a server per test, a runtime, skills written to disk,
//! a stand-in for the model's vectors, and the search tests' skills and ranking check.

#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::panic,
    reason = "shared by test files, each using part of it"
)]

use std::path::Path;

use pretty_assertions::assert_eq;
use skillet_registry::{Registry, SearchSettings, prepare};
use skillet_retrieval::{Matcher, Mode};
use skillet_test_support::TestDatabase;

pub fn server(test: &str) -> Option<String> {
    skillet_test_support::registry_server_for(test)
}

pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

pub fn write_skill(root: &Path, name: &str, description: &str, body: &str) -> std::path::PathBuf {
    let dir = root.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        format!("---\nname: {name}\ndescription: {description}\n---\n\n{body}\n"),
    )
    .unwrap();
    dir
}

/// A deterministic unit vector from a text's words (hashed into 384 dimensions), standing in
/// for the model so that these tests need none.
pub fn fake_vector(text: &str) -> Vec<f32> {
    let mut vector = vec![0.0_f32; 384];
    for word in skillet_retrieval::tokens(text, skillet_retrieval::Stemming::Light) {
        let mut hash: u32 = 2_166_136_261;
        for byte in word.bytes() {
            hash = (hash ^ u32::from(byte)).wrapping_mul(16_777_619);
        }
        vector[(hash % 384) as usize] += 1.0;
        vector[((hash >> 9) % 384) as usize] += 0.5;
    }
    let norm = vector.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-6);
    for x in &mut vector {
        *x /= norm;
    }
    vector
}

pub const SKILLS: &[(&str, &str)] = &[
    (
        "pdf-forms",
        "Fill in PDF forms and extract their fields. Use when the user has a PDF form.",
    ),
    (
        "pdf-merge",
        "Merge, split and rotate PDF pages. Use when combining PDF files.",
    ),
    (
        "k8s-deploy",
        "Deploy services to Kubernetes with Helm charts and rollbacks.",
    ),
    (
        "git-cleanup",
        "Delete merged git branches and prune stale remotes.",
    ),
    (
        "sql-review",
        "Review SQL migrations for locking, missing indexes and data loss.",
    ),
    (
        "changelog",
        "Write a changelog entry from the commits since the last tag.",
    ),
];

/// A skill's body in the search tests: words its description does not have, which both sides
/// weigh in the blend.
pub fn body_for(name: &str) -> String {
    match name {
        "git-cleanup" => "Find the topic lines folded into trunk long ago and prune them.".into(),
        "sql-review" => "Watch for ALTER TABLE rewrites that stall production.".into(),
        _ => format!("How to use {name}."),
    }
}

/// Publishes [`SKILLS`] with their bodies (the last without a vector) and gives the local
/// library of the same skills: their texts, bodies and vectors, as `SkillIndex` builds it.
pub async fn publish_skills(registry: &Registry, skills: &Path) -> Matcher {
    let mut texts = Vec::new();
    let mut bodies = Vec::new();
    let mut vectors = Vec::new();
    for (name, description) in SKILLS {
        let body = body_for(name);
        let dir = write_skill(skills, name, description, &body);
        let prepared = prepare(&dir).unwrap();
        // The last is published without a vector (no model where it was published): it
        // ranks as a local skill the model could not embed, a zero vector.
        let vector = if *name == SKILLS[SKILLS.len() - 1].0 {
            registry
                .publish(&prepared, "acme", None, None)
                .await
                .unwrap();
            vec![0.0; 384]
        } else {
            let vector = fake_vector(&prepared.embedding_text);
            registry
                .publish(&prepared, "acme", None, Some(&vector))
                .await
                .unwrap();
            vector
        };
        texts.push(skillet_retrieval::skill_text(name, description, None, &[]));
        bodies.push(body);
        vectors.extend(vector);
    }
    Matcher::new(texts.iter().map(String::as_str))
        .with_vectors(384, vectors)
        .with_bodies(
            texts
                .iter()
                .map(String::as_str)
                .zip(bodies.iter().map(String::as_str)),
        )
}

/// The registry ranks as `local` does in every mode: the same skills in the same order, the
/// same relevance, the same scores.
pub async fn assert_ranks_as(registry: &Registry, local: &Matcher) {
    for query in [
        "fill in this pdf form",
        "combine two pdfs",
        "roll back the helm release",
        "which branches can I delete",
        "prune topic lines folded into trunk",
        "will this alter table rewrite stall production",
        "review my migration for locks",
        "something unrelated entirely",
        "write the changelog entry since the last tag",
        "continue",
        "pdf",
    ] {
        let vector = fake_vector(query);
        for mode in [Mode::Lexical, Mode::Semantic, Mode::Hybrid] {
            let (local_mode, ranked) = local.rank(query, Some(&vector), mode, 6);
            let remote = registry
                .search(query, Some(&vector), mode, 6, SearchSettings::default())
                .await
                .unwrap();
            assert_eq!(remote.mode, local_mode.as_str());
            // The query's weight, which hybrid relevance divides by, is the local one exactly
            // (the relevance flags alone would not show a wrong weight on these few skills).
            // (By words alone a query sharing no word has no candidate, and no weight.)
            let weight = local.explain(query, Some(&vector), mode, 0).query_weight;
            match remote.query_weight {
                Some(remote_weight) => assert!(
                    (remote_weight - weight).abs() < 1e-4,
                    "{query:?} {mode:?}: weight {remote_weight} vs {weight}"
                ),
                None => assert!(
                    mode == Mode::Lexical && remote.results.is_empty(),
                    "{query:?} {mode:?}: no weight"
                ),
            }
            // Equal scores are ordered by library position locally and by name here:
            // both sides are compared in (score, name) order.
            let mut local_names: Vec<(&str, bool, f32)> = ranked
                .iter()
                .map(|r| (SKILLS[r.index].0, r.relevant, r.score))
                .collect();
            local_names.sort_by(|a, b| b.2.total_cmp(&a.2).then(a.0.cmp(b.0)));
            // A skill without a vector that shares no word with the query scores 0 here
            // and is no candidate there: nothing to compare.
            local_names.retain(|(_, _, score)| *score != 0.0);
            let remote_names: Vec<(&str, bool, f32)> = remote
                .results
                .iter()
                .map(|f| (f.name.as_str(), f.relevant, f.score))
                .filter(|(_, _, score)| *score != 0.0)
                .collect();
            let names = |list: &[(&str, bool, f32)]| {
                list.iter()
                    .map(|(n, r, _)| (n.to_string(), *r))
                    .collect::<Vec<_>>()
            };
            assert_eq!(
                names(&remote_names),
                names(&local_names),
                "{query:?} {mode:?}"
            );
            for (found, local) in remote_names.iter().zip(&local_names) {
                assert!(
                    (found.2 - local.2).abs() < 1e-4,
                    "{query:?} {mode:?}: {} {} vs {}",
                    found.0,
                    found.2,
                    local.2
                );
            }
        }
    }
}

/// A database of its own on the server at `url`, the registry initialised in it and the test
/// skills published under `acme` from a folder kept beside it; the local library's matcher.
pub fn published(url: &str) -> (TestDatabase, tempfile::TempDir, Matcher) {
    let db = TestDatabase::create(url);
    let skills = tempfile::tempdir().unwrap();
    let local = runtime().block_on(async {
        let registry = Registry::new(&db.url).unwrap();
        registry.init().await.unwrap();
        publish_skills(&registry, skills.path()).await
    });
    (db, skills, local)
}

/// The collection's statistics (base rows and, from schema 4, deltas) as the search table's
/// rows say they must be: how many words' document frequencies are off, in both term tables,
/// and whether the counts and lengths agree.
pub fn statistics_off(db: &TestDatabase, deltas: bool) -> Vec<Vec<String>> {
    let (terms, blend, sums) = if deltas {
        (
            "UNION ALL SELECT term, delta FROM skillet_term_deltas",
            "UNION ALL SELECT term, delta FROM skillet_blend_term_deltas",
            "(SELECT sum(documents) AS documents, sum(total_length) AS total_length, \
               sum(blend_total_length) AS blend_total_length FROM skillet_search_stats_deltas)",
        )
    } else {
        (
            "",
            "",
            "(SELECT 0 AS documents, 0 AS total_length, 0 AS blend_total_length)",
        )
    };
    db.rows(&format!(
        "WITH t AS (SELECT term, sum(df) AS df FROM (SELECT term, df FROM skillet_term_stats \
                    {terms}) x GROUP BY term), \
              b AS (SELECT term, sum(df) AS df FROM (SELECT term, df FROM skillet_blend_term_stats \
                    {blend}) x GROUP BY term), \
              s AS (SELECT s.documents + coalesce(d.documents, 0) AS documents, \
                      s.total_length + coalesce(d.total_length, 0) AS total, \
                      s.blend_total_length + coalesce(d.blend_total_length, 0) AS blend \
                    FROM skillet_search_stats s, {sums} d WHERE s.id = 1) \
         SELECT (SELECT count(*) FROM t FULL JOIN (SELECT term, count(*) AS n FROM skillet_terms GROUP BY term) r \
                   ON r.term = t.term WHERE coalesce(t.df, 0) <> coalesce(r.n, 0)), \
                (SELECT count(*) FROM b FULL JOIN (SELECT term, count(*) AS n FROM skillet_blend_terms GROUP BY term) r \
                   ON r.term = b.term WHERE coalesce(b.df, 0) <> coalesce(r.n, 0)), \
                (SELECT documents = (SELECT count(*) FROM skillet_search) \
                    AND total = (SELECT coalesce(sum(length), 0) FROM skillet_search) \
                    AND blend = (SELECT coalesce(sum(blend_length), 0) FROM skillet_search) FROM s)"
    ))
}
