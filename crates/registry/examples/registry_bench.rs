//! The registry's figures on a real PostgreSQL with pgvector (`scripts/pg.sh start DIR` prints
//! a server's URL; give it as `SKILLET_BENCH_PG_URL`), with the embedding model
//! (`SKILLET_EMBED_MODEL`) and the corpus (`../shared/corpus` or `$SKILLET_CORPUS`):
//!
//! 1. publish rate for the whole corpus: reading and checking, embedding, and the publishing
//!    transactions, each timed;
//! 2. the evaluation's held-out sets ranked through the registry and locally over the same
//!    skills (recall@1, recall@5, no-fit requests cleared);
//! 3. at `SKILLET_BENCH_SKILLS` generated skills (default 100,000; vectors near the corpus's
//!    real ones, words from their texts): the HNSW index's build time and size, recall@10 of
//!    the index against an exact scan, and search latency p50/p99 through `Registry::search`,
//!    at pgvector's default `ef_search` (40) and higher.
//!
//! 4. publishers at once: the publishable corpus split between 1, 2 and 4 publishers, each on
//!    a connection and a thread of its own, skills per second in all (`SKILLET_BENCH_ONLY=
//!    publishers` runs parts 1, 4 and 5 only).
//! 5. beside the largest versions: the corpus published one skill at a time while another
//!    publisher sends versions of the most words a publish takes; the corpus's publish times.
//!
//! `SKILLET_BENCH_PG_URL=… cargo run --release -p skillet-registry --example registry_bench`
//! (each part makes a database of its own on that server and drops it after).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr,
    clippy::too_many_lines,
    clippy::cast_precision_loss,
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    reason = "a report"
)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use skillet_registry::{Prepared, Registry, SearchSettings, prepare};
use skillet_retrieval::embed::Embedder;
use skillet_retrieval::{Matcher, Mode, skill_text};
use skillet_skills::{Root, RootKind, discover};
use skillet_test_support::TestDatabase;

#[path = "../../retrieval/eval/pool.rs"]
mod pool;
#[path = "../../retrieval/eval/requests.rs"]
mod requests;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn embed_all(embedder: &Embedder, texts: &[&str]) -> Vec<Vec<f32>> {
    texts
        .chunks(32)
        .flat_map(|batch| embedder.embed(batch).unwrap())
        .collect()
}

/// Every skill folder under `roots` as the library finds them (first of a name wins), with
/// the name of the collection it came from.
fn skill_dirs(corpus: &Path, collections: &[String]) -> Vec<(String, PathBuf)> {
    let roots: Vec<Root> = collections
        .iter()
        .map(|c| Root::new(corpus.join(c), RootKind::Explicit))
        .collect();
    let library = discover(&roots);
    library
        .skills()
        .iter()
        .map(|skill| {
            let collection = collections
                .iter()
                .find(|c| skill.dir.starts_with(corpus.join(c)))
                .cloned()
                .unwrap_or_default();
            (collection, skill.dir.clone())
        })
        .collect()
}

fn main() {
    let url = std::env::var("SKILLET_BENCH_PG_URL").expect(
        "SKILLET_BENCH_PG_URL: a PostgreSQL with pgvector (scripts/pg.sh start DIR prints one)",
    );
    let corpus = std::fs::canonicalize(
        skillet_test_support::corpus_dir().expect("the corpus (SKILLET_CORPUS)"),
    )
    .unwrap();
    let model =
        skillet_test_support::embedding_model_dir().expect("the model (SKILLET_EMBED_MODEL)");
    let mut embedder = Embedder::load(&model).unwrap();
    // Many texts: the layers read once.
    embedder.keep_layers(true).unwrap();
    let runtime = runtime();

    // 1. The whole corpus.
    let mut collections: Vec<String> = std::fs::read_dir(&corpus)
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    collections.sort();
    let dirs = skill_dirs(&corpus, &collections);
    let started = Instant::now();
    let mut refused = 0;
    let mut prepared: Vec<(String, Prepared)> = Vec::new();
    for (collection, dir) in &dirs {
        match prepare(dir) {
            Ok(skill) => prepared.push((collection.clone(), skill)),
            Err(_) => refused += 1,
        }
    }
    let read = started.elapsed();
    let started = Instant::now();
    let texts: Vec<&str> = prepared
        .iter()
        .map(|(_, p)| p.embedding_text.as_str())
        .collect();
    let vectors = embed_all(&embedder, &texts);
    let embedding_time = started.elapsed();
    let db = TestDatabase::create(&url);
    let registry = Registry::new(&db.url).unwrap();
    runtime.block_on(registry.init()).unwrap();
    let started = Instant::now();
    for ((owner, skill), vector) in prepared.iter().zip(&vectors) {
        runtime
            .block_on(registry.publish(skill, owner, None, Some(vector)))
            .unwrap();
    }
    let published = started.elapsed();
    let only_scale = std::env::var_os("SKILLET_BENCH_ONLY_SCALE").is_some();
    let n = prepared.len() as f64;
    println!(
        "corpus: {} skills found, {} refused by strict validation, {} published",
        dirs.len(),
        refused,
        prepared.len()
    );
    println!(
        "  read+check {:.1} s ({:.0}/s), embed {:.1} s ({:.0}/s), publish {:.1} s ({:.0}/s); all {:.0} skills/s",
        read.as_secs_f64(),
        n / read.as_secs_f64(),
        embedding_time.as_secs_f64(),
        n / embedding_time.as_secs_f64(),
        published.as_secs_f64(),
        n / published.as_secs_f64(),
        n / (read + embedding_time + published).as_secs_f64()
    );
    drop(registry);
    drop(db);

    // 4. Publishers at once.
    let with_vectors: Vec<(String, Prepared, Vec<f32>)> = prepared
        .iter()
        .zip(&vectors)
        .map(|((owner, skill), vector)| (owner.clone(), skill.clone(), vector.clone()))
        .collect();
    for publishers in [1, 2, 4] {
        at_once(&url, &with_vectors, publishers);
    }
    beside_the_largest(&url, &with_vectors);
    if std::env::var("SKILLET_BENCH_ONLY").as_deref() == Ok("publishers") {
        return;
    }

    // 2. The held-out sets, through the registry and locally, over the same skills.
    if !only_scale {
        held_out(&runtime, &url, &corpus, &embedder);
    }

    // 3. Many skills.
    let count: usize = std::env::var("SKILLET_BENCH_SKILLS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(100_000);
    let base: Vec<(&Prepared, &Vec<f32>)> = prepared.iter().map(|(_, p)| p).zip(&vectors).collect();
    at_scale(&runtime, &url, &base, count);
}

fn held_out(runtime: &tokio::runtime::Runtime, url: &str, corpus: &Path, embedder: &Embedder) {
    let pool: Vec<String> = pool::POOL.iter().map(ToString::to_string).collect();
    let dirs = skill_dirs(corpus, &pool);
    let prepared: Vec<Prepared> = dirs
        .iter()
        .filter_map(|(_, dir)| prepare(dir).ok())
        .collect();
    let texts: Vec<&str> = prepared.iter().map(|p| p.embedding_text.as_str()).collect();
    let vectors = embed_all(embedder, &texts);
    let db = TestDatabase::create(url);
    let registry = Registry::new(&db.url).unwrap();
    runtime.block_on(registry.init()).unwrap();
    for (skill, vector) in prepared.iter().zip(&vectors) {
        runtime
            .block_on(registry.publish(skill, "pool", None, Some(vector)))
            .unwrap();
    }
    // Locally: the same skills, the same texts and bodies, the library's matcher.
    let lexical: Vec<String> = prepared
        .iter()
        .map(|p| {
            let skill = skillet_skills::skill_from_text(
                skillet_skills::SkillLocation {
                    file: p.dir.join("SKILL.md"),
                    dir: p.dir.clone(),
                    root: p.dir.clone(),
                    root_kind: RootKind::Explicit,
                    form: skillet_skills::Form::Folder,
                },
                &String::from_utf8_lossy(&p.bundle.skill_file().unwrap().bytes),
            );
            skill_text(
                &skill.name,
                &skill.description,
                skill.frontmatter.when_to_use.as_deref(),
                &skill.frontmatter.tags,
            )
        })
        .collect();
    let bodies: Vec<String> = prepared
        .iter()
        .map(|p| {
            skillet_skills::body_of(&String::from_utf8_lossy(
                &p.bundle.skill_file().unwrap().bytes,
            ))
            .to_string()
        })
        .collect();
    let local = Matcher::new(lexical.iter().map(String::as_str))
        .with_vectors(384, vectors.iter().flatten().copied().collect())
        .with_bodies(
            lexical
                .iter()
                .map(String::as_str)
                .zip(bodies.iter().map(String::as_str)),
        );
    println!(
        "\nheld-out sets over the evaluation pool ({} of {} skills publishable), hybrid:",
        prepared.len(),
        dirs.len()
    );
    let eval = Path::new(env!("CARGO_MANIFEST_DIR")).join("../retrieval/eval");
    for set in [
        "holdout.jsonl",
        "paraphrase.jsonl",
        "no_fit_hard.jsonl",
        "no_fit.jsonl",
    ] {
        let requests = requests::load(&eval.join(set));
        let (mut local_hits, mut remote_hits) = ([0usize; 2], [0usize; 2]);
        let (mut local_cleared, mut remote_cleared) = (0, 0);
        for request in &requests {
            let vector = embedder
                .embed(&[request.query.as_str()])
                .unwrap()
                .pop()
                .unwrap();
            let (_, ranked) = local.rank(&request.query, Some(&vector), Mode::Hybrid, 5);
            let local_names: Vec<&str> = ranked
                .iter()
                .map(|r| prepared[r.index].name.as_str())
                .collect();
            let remote = runtime
                .block_on(registry.search(
                    &request.query,
                    Some(&vector),
                    Mode::Hybrid,
                    5,
                    SearchSettings::default(),
                ))
                .unwrap();
            let remote_names: Vec<&str> = remote.results.iter().map(|f| f.name.as_str()).collect();
            if request.expected.is_empty() {
                local_cleared += usize::from(ranked.first().is_some_and(|r| r.relevant));
                remote_cleared += usize::from(remote.results.first().is_some_and(|f| f.relevant));
                continue;
            }
            for (hits, names) in [
                (&mut local_hits, &local_names),
                (&mut remote_hits, &remote_names),
            ] {
                let rank = names
                    .iter()
                    .position(|n| request.expected.iter().any(|e| e == n));
                hits[0] += usize::from(rank == Some(0));
                hits[1] += usize::from(rank.is_some());
            }
        }
        let total = requests.len() as f64;
        if requests.iter().all(|r| r.expected.is_empty()) {
            println!(
                "  {set} ({} no-fit): cleared the threshold locally {local_cleared}, through the registry {remote_cleared}",
                requests.len()
            );
        } else {
            println!(
                "  {set} ({}): recall@1 local {:.3} registry {:.3}; recall@5 local {:.3} registry {:.3}",
                requests.len(),
                local_hits[0] as f64 / total,
                remote_hits[0] as f64 / total,
                local_hits[1] as f64 / total,
                remote_hits[1] as f64 / total
            );
        }
    }
}

/// A small deterministic generator (xorshift), so runs compare.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    /// Roughly normal (sum of uniforms).
    fn normal(&mut self) -> f32 {
        let sum: f32 = (0..6)
            .map(|_| (self.next() % 10_000) as f32 / 10_000.0)
            .sum();
        (sum - 3.0) / 0.707
    }
}

fn near(base: &[f32], rng: &mut Rng, noise: f32) -> Vec<f32> {
    let mut v: Vec<f32> = base
        .iter()
        .map(|x| x + noise * rng.normal() / 20.0)
        .collect();
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    for x in &mut v {
        *x /= norm;
    }
    v
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    let at = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[at].as_secs_f64() * 1000.0
}

/// Publishes every skill of `skills` into a fresh registry, split between `publishers`
/// threads (each its own connection and runtime), three times; prints the rate of each run,
/// the median first.
fn at_once(url: &str, skills: &[(String, Prepared, Vec<f32>)], publishers: usize) {
    let mut rates: Vec<f64> = (0..3)
        .map(|_| publish_split(url, skills, publishers))
        .collect();
    rates.sort_by(f64::total_cmp);
    println!(
        "publishers at once: {publishers}: {} skills, median {:.0} skills/s (runs {:.0}, {:.0}, {:.0})",
        skills.len(),
        rates[1],
        rates[0],
        rates[1],
        rates[2]
    );
}

/// One run of [`at_once`]: skills per second.
fn publish_split(url: &str, skills: &[(String, Prepared, Vec<f32>)], publishers: usize) -> f64 {
    let db = TestDatabase::create(url);
    runtime()
        .block_on(Registry::new(&db.url).unwrap().init())
        .unwrap();
    let share = skills.len().div_ceil(publishers);
    let started = Instant::now();
    std::thread::scope(|scope| {
        for chunk in skills.chunks(share) {
            let db_url = db.url.clone();
            scope.spawn(move || {
                let runtime = runtime();
                let registry = Registry::new(&db_url).unwrap();
                let vectors = std::env::var_os("SKILLET_BENCH_NO_VECTORS").is_none();
                for (owner, skill, vector) in chunk {
                    let vector = vectors.then_some(vector.as_slice());
                    runtime
                        .block_on(registry.publish(skill, owner, None, vector))
                        .unwrap();
                }
            });
        }
    });
    skills.len() as f64 / started.elapsed().as_secs_f64()
}

/// One publisher sends versions of the most words a publish takes (65,536 of its own, 100,000
/// of its body, every word swapped each time: 462,144 rows of statistics' deltas) straight
/// through `skillet_publish`, as any publisher may, while another publishes the corpus one skill
/// at a time; prints how long the corpus's publishes took (median, p99, longest) and the large
/// ones. Before schema 6, a fold of such deltas ran under the events lock every publish waits for.
fn beside_the_largest(url: &str, skills: &[(String, Prepared, Vec<f32>)]) {
    let db = TestDatabase::create(url);
    runtime()
        .block_on(Registry::new(&db.url).unwrap().init())
        .unwrap();
    let done = std::sync::atomic::AtomicBool::new(false);
    let (mut small, mut large) = std::thread::scope(|scope| {
        let large = scope.spawn(|| {
            let runtime = runtime();
            let (client, connection) = runtime
                .block_on(tokio_postgres::connect(&db.url, tokio_postgres::NoTls))
                .unwrap();
            runtime.spawn(connection);
            let mut times = Vec::new();
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                let round = times.len();
                let started = Instant::now();
                runtime
                    .block_on(client.batch_execute(&format!(
                        "SELECT skillet_publish('bulk', 'many-words', NULL, 'Many words', \
                           ARRAY(SELECT 'r{round}t' || i FROM generate_series(1, 65536) i), \
                           array_fill(1, ARRAY[65536]), 65536, \
                           ARRAY(SELECT 'r{round}b' || i FROM generate_series(1, 100000) i), NULL, \
                           ARRAY['SKILL.md'], ARRAY[false], ARRAY[convert_to('round {round}', 'UTF8')])"
                    )))
                    .unwrap();
                times.push(started.elapsed());
            }
            times
        });
        let runtime = runtime();
        let registry = Registry::new(&db.url).unwrap();
        let mut times = Vec::new();
        for (owner, skill, vector) in skills {
            let started = Instant::now();
            runtime
                .block_on(registry.publish(skill, owner, None, Some(vector)))
                .unwrap();
            times.push(started.elapsed());
        }
        done.store(true, std::sync::atomic::Ordering::Relaxed);
        (times, large.join().unwrap())
    });
    small.sort();
    large.sort();
    println!(
        "beside the largest versions: {} publishes, median {:.0} ms, p99 {:.0} ms, longest {:.0} ms; \
         {} of the largest versions at once, median {:.1} s, longest {:.1} s",
        small.len(),
        percentile(&small, 0.5),
        percentile(&small, 0.99),
        percentile(&small, 1.0),
        large.len(),
        percentile(&large, 0.5) / 1000.0,
        percentile(&large, 1.0) / 1000.0
    );
}

fn at_scale(
    runtime: &tokio::runtime::Runtime,
    url: &str,
    base: &[(&Prepared, &Vec<f32>)],
    count: usize,
) {
    let db = TestDatabase::create(url);
    if std::env::var_os("SKILLET_BENCH_KEEP").is_some() {
        println!("(keeping the database {})", db.url);
    }
    let registry = Registry::new(&db.url).unwrap();
    runtime.block_on(registry.init()).unwrap();
    let mut rng = Rng(0x5eed_1234_abcd_ef01);
    let vectors: Vec<Vec<f32>> = (0..count)
        .map(|i| near(base[i % base.len()].1, &mut rng, 1.0))
        .collect();
    let started = Instant::now();
    runtime.block_on(async {
        let (client, connection) = tokio_postgres::connect(&db.url, tokio_postgres::NoTls)
            .await
            .unwrap();
        tokio::spawn(connection);
        client
            .batch_execute(&format!(
                "DROP INDEX skillet_search_embedding; BEGIN; \
                 SELECT set_config('skillet.schema', '{}', true)",
                skillet_registry::STATISTICS_SCHEMA
            ))
            .await
            .unwrap();
        let skill = client
            .prepare("INSERT INTO skillet_skills (owner, name, head_seq) VALUES ('gen', $1, 1) RETURNING id")
            .await
            .unwrap();
        let version = client
            .prepare(
                "INSERT INTO skillet_versions (skill_id, seq, content_hash, description, terms, term_counts, length, embedding, body_terms) \
                 VALUES ($1, 1, sha256($2::text::bytea), $3, $4, $5, $6, $7, $8) RETURNING id",
            )
            .await
            .unwrap();
        let search = client
            .prepare(
                "INSERT INTO skillet_search (skill_id, version_id, owner, name, seq, description, length, embedding, blend_length) \
                 VALUES ($1, $2, 'gen', $3, 1, $4, $5, $6, $5::int4 + $7::int4)",
            )
            .await
            .unwrap();
        let terms = client
            .prepare("INSERT INTO skillet_terms (term, skill_id, tf, length) SELECT t, $2, c, $4 FROM unnest($1::text[], $3::int4[]) AS u(t, c)")
            .await
            .unwrap();
        let mut total_length: i64 = 0;
        for (i, vector) in vectors.iter().enumerate() {
            let (prepared, _) = base[i % base.len()];
            let name = format!("{}-{i}", &prepared.name[..prepared.name.len().min(50)]);
            let mut words: Vec<&str> = prepared.terms.iter().map(|(t, _)| t.as_str()).collect();
            let mut counts: Vec<i32> = prepared.terms.iter().map(|(_, c)| *c).collect();
            let unique = format!("gen{i}");
            words.push(&unique);
            counts.push(1);
            let length = prepared.length + 1;
            total_length += i64::from(length);
            let embedding = pgvector::Vector::from(vector.clone());
            let id: i64 = client.query_one(&skill, &[&name]).await.unwrap().get(0);
            let version_id: i64 = client
                .query_one(
                    &version,
                    &[
                        &id,
                        &name,
                        &prepared.description,
                        &words,
                        &counts,
                        &length,
                        &embedding,
                        &prepared.body_terms,
                    ],
                )
                .await
                .unwrap()
                .get(0);
            client
                .execute(
                    &search,
                    &[
                        &id,
                        &version_id,
                        &name,
                        &prepared.description,
                        &length,
                        &embedding,
                        &i32::try_from(prepared.body_terms.len()).unwrap(),
                    ],
                )
                .await
                .unwrap();
            client
                .execute(&terms, &[&words, &id, &counts, &length])
                .await
                .unwrap();
        }
        client
            .execute(
                "UPDATE skillet_search_stats SET documents = $1, total_length = $2",
                &[&i64::try_from(count).unwrap(), &total_length],
            )
            .await
            .unwrap();
        client
            .batch_execute(
                &format!(
                    "INSERT INTO skillet_term_stats SELECT term, count(*) FROM skillet_terms GROUP BY term; \
                     {}; COMMIT",
                    skillet_registry::schema::build_blend_sql()
                ),
            )
            .await
            .unwrap();
        client.batch_execute("VACUUM ANALYZE").await.unwrap();
        println!(
            "\n{count} generated skills loaded in {:.1} s",
            started.elapsed().as_secs_f64()
        );
        let started = Instant::now();
        client
            .batch_execute(
                "SET maintenance_work_mem = '1GB'; \
                 CREATE INDEX skillet_search_embedding ON skillet_search USING hnsw (embedding vector_cosine_ops)",
            )
            .await
            .unwrap();
        let built = started.elapsed();
        let size: i64 = client
            .query_one("SELECT pg_relation_size('skillet_search_embedding')", &[])
            .await
            .unwrap()
            .get(0);
        println!(
            "  HNSW index (m 16, ef_construction 64, maintenance_work_mem 1GB): built in {:.1} s, {:.1} MiB",
            built.as_secs_f64(),
            size as f64 / (1024.0 * 1024.0)
        );

        // Queries: near corpus vectors the generator did not use exactly.
        let mut qrng = Rng(0xfeed_beef_0000_0001);
        let queries: Vec<(String, Vec<f32>)> = (0..200)
            .map(|q| {
                let (prepared, vector) = base[(q * 37) % base.len()];
                let words: Vec<&str> = prepared.terms.iter().take(4).map(|(t, _)| t.as_str()).collect();
                (words.join(" "), near(vector, &mut qrng, 1.5))
            })
            .collect();
        // Exact neighbours, computed here over every vector.
        let exact: Vec<Vec<usize>> = queries
            .iter()
            .map(|(_, q)| {
                let scores: Vec<f32> = vectors
                    .iter()
                    .map(|v| v.iter().zip(q).map(|(a, b)| a * b).sum())
                    .collect();
                skillet_retrieval::top_k(&scores, 10).into_iter().map(|(i, _)| i).collect()
            })
            .collect();
        let ids: Vec<i64> = client
            .query("SELECT id FROM skillet_skills ORDER BY id", &[])
            .await
            .unwrap()
            .iter()
            .map(|row| row.get(0))
            .collect();
        for ef in [40_i64, 100, 200, 400] {
            let mut found = 0;
            for ((_, q), truth) in queries.iter().zip(&exact) {
                client
                    .batch_execute(&format!("BEGIN; SET LOCAL hnsw.ef_search = {ef}"))
                    .await
                    .unwrap();
                let rows = client
                    .query(
                        "SELECT skill_id FROM skillet_search ORDER BY embedding <=> $1 LIMIT 10",
                        &[&pgvector::Vector::from(q.clone())],
                    )
                    .await
                    .unwrap();
                client.batch_execute("COMMIT").await.unwrap();
                let got: Vec<i64> = rows.iter().map(|r| r.get(0)).collect();
                found += truth.iter().filter(|i| got.contains(&ids[**i])).count();
            }
            let recall = found as f64 / (10.0 * queries.len() as f64);
            let mut latencies = Vec::new();
            for (text, q) in &queries {
                let settings = SearchSettings {
                    ef_search: ef,
                    ..SearchSettings::default()
                };
                let started = Instant::now();
                registry
                    .search(text, Some(q), Mode::Hybrid, 10, settings)
                    .await
                    .unwrap();
                latencies.push(started.elapsed());
            }
            latencies.sort();
            println!(
                "  ef_search {ef:>3}: recall@10 vs exact {recall:.3}; hybrid search p50 {:.1} ms, p99 {:.1} ms ({} queries)",
                percentile(&latencies, 0.5),
                percentile(&latencies, 0.99),
                queries.len()
            );
        }
    });
    if std::env::var_os("SKILLET_BENCH_KEEP").is_some() {
        std::mem::forget(db);
    }
}
