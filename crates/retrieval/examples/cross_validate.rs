//! The hybrid blend and the relevance threshold chosen by cross-validation rather than on one
//! set: every labelled request (the tuning set, the holdout, the paraphrase set) and every
//! no-fit request (the easy and the hard set) is put in one of five folds by a hash of its text
//! (never by its label); for each fold the weight of meaning (alpha) and the cosine threshold
//! are chosen on the other four, then measured on it. Each request is measured once, on the fold
//! it was held out of, so the pooled figures are out-of-sample; each comes with its Wilson 95%
//! interval. The shipped setting is measured on the same requests for comparison (in-sample for
//! the tuning set, which it was fitted on).
//!
//! `cargo run --release -p skillet-retrieval --features embeddings --example cross_validate`
//! (the corpus is `../shared/corpus` or `$SKILLET_CORPUS`; the model as for the tests).
//! `SKILLET_CV_BODY=1` measures a candidate: each skill's body (its headings and first
//! paragraph) embedded as a second vector, the skill's cosine the better of the two;
//! `SKILLET_CV_SENTENCES=1` another: each sentence of the description a vector of its own;
//! `SKILLET_CV_BODY_WORDS=1` another: the body's words as a second BM25 index, weighed in.
//! Words are ranked over the body as shipped; `SKILLET_CV_NO_BODY=1` ranks them as before the
//! body counted (name, description, `when_to_use`, tags), for the figures before the change;
//! `SKILLET_CV_KEEP_GATE=1` keeps the shipped blend and threshold instead of choosing them.
//! Relevance is judged as shipped, by the relevance score (`skillet_retrieval::relevance_score`)
//! against its threshold; `SKILLET_CV_COSINE_GATE=1` judges it by the cosine alone, as before.
//! `SKILLET_CV_RANK_BY_WEIGHT=1` measures a candidate: ranking by the relevance score's word
//! share too. `SKILLET_CV_DUMP=FILE` writes each request's three best skills with their cosine,
//! word scores and the query's weight, one line each, for a look at what a gate could use.

#![allow(
    clippy::unwrap_used,
    clippy::print_stdout,
    clippy::print_stderr,
    clippy::too_many_lines,
    clippy::cast_precision_loss,
    reason = "a report"
)]

use std::path::Path;

use skillet_retrieval::{
    Bm25, HYBRID_ALPHA, RELEVANCE_THRESHOLD, SEMANTIC_THRESHOLD, Stemming, embedding_text,
    ranked_body, skill_text,
};
use skillet_skills::{Root, RootKind, discover};

#[path = "../eval/pool.rs"]
mod pool;

/// Folds.
const FOLDS: u64 = 5;
/// The set of everyday short chat messages (`eval/short_chat.jsonl`).
const SHORT_CHAT: &str = "short chat messages";
/// Weights of meaning tried.
const ALPHAS: [f32; 8] = [0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0];
/// Weights of the body's words tried (`SKILLET_CV_BODY_WORDS=1`).
const BETAS: [f32; 9] = [0.0, 0.1, 0.2, 0.35, 0.5, 1.0, 1.5, 2.0, 3.0];
/// Cosine thresholds tried (`SKILLET_CV_COSINE_GATE=1`).
const THRESHOLDS: [f32; 7] = [0.30, 0.32, 0.34, 0.35, 0.36, 0.38, 0.40];
/// Relevance thresholds tried.
const RELEVANCE_THRESHOLDS: [f32; 11] = [
    0.20, 0.22, 0.24, 0.26, 0.28, 0.30, 0.32, 0.34, 0.36, 0.38, 0.40,
];
/// What a no-fit request that clears the threshold costs, in fitting requests suggested first.
const FALSE_FIRE_COST: f64 = 3.0;
/// The blended score `--skill-match auto` needs to load the best suggestion with the message:
/// `skillet_library::triggers::AUTO_LOAD_SCORE`, which this crate sits below.
const AUTO_LOAD_SCORE: f32 = 0.5;
/// How many of the best skills a session considers suggesting:
/// `skillet_library::triggers::MAX_SUGGESTIONS`.
const MAX_SUGGESTIONS: usize = 3;

#[path = "../eval/requests.rs"]
mod requests;

/// A request, and which set it comes from.
struct Request {
    query: String,
    expected: Vec<String>,
    set: &'static str,
}

fn load(path: &Path, set: &'static str) -> Vec<Request> {
    requests::load(path)
        .into_iter()
        .map(|request| Request {
            query: request.query,
            expected: request.expected,
            set,
        })
        .collect()
}

/// `SKILLET_CV_RANK_BY_WEIGHT=1`: the candidate that ranks by the relevance score's word share
/// too (read once: the blend is computed for every request and setting tried).
static RANK_BY_WEIGHT: std::sync::LazyLock<bool> =
    std::sync::LazyLock::new(|| std::env::var_os("SKILLET_CV_RANK_BY_WEIGHT").is_some());

/// A request with its scores.
type Pair<'a> = (&'a Request, &'a Scored);

/// A request's fold: FNV-1a of its text, so the split knows nothing of labels.
fn fold(query: &str) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in query.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash % FOLDS
}

/// One request's scores over the pool: words (BM25 over the ranked text, and over the body),
/// and meaning (cosine).
struct Scored {
    words: Vec<f32>,
    body_words: Vec<f32>,
    cosines: Vec<f32>,
    /// The query's weight over the blend's words ([`Bm25::query_weight`]).
    weight: f32,
}

impl Scored {
    /// The blended scores with `alpha`, as the shipped blend scores, the body's words weighed
    /// in by `beta` (0 as shipped).
    fn blended(&self, alpha: f32, beta: f32) -> Vec<f32> {
        let words: Vec<f32> = self
            .words
            .iter()
            .zip(&self.body_words)
            .map(|(w, b)| w + beta * b)
            .collect();
        let best = words.iter().copied().fold(0.0_f32, f32::max).max(1e-6);
        words
            .iter()
            .zip(&self.cosines)
            .map(|(w, c)| {
                let share = if *RANK_BY_WEIGHT {
                    self.weight_share(*w)
                } else {
                    w / best
                };
                alpha * c + (1.0 - alpha) * share * c.max(0.0).sqrt()
            })
            .collect()
    }

    /// A word score as a share of the query's weight, capped at 1 (as
    /// [`skillet_retrieval::relevance_score`] takes it).
    fn weight_share(&self, words: f32) -> f32 {
        (words / self.weight.max(1e-6)).min(1.0)
    }

    /// Whether a document passes the relevance gate of `setting`: as shipped, its relevance
    /// score ([`skillet_retrieval::relevance_score`], with `alpha`) reaches the threshold;
    /// with `SKILLET_CV_COSINE_GATE=1`, as before, its cosine does.
    fn relevant(&self, index: usize, setting: Setting) -> bool {
        let cosine = self.cosines[index];
        if setting.cosine_gate {
            return cosine >= setting.threshold;
        }
        let share = self.weight_share(self.words[index] + setting.beta * self.body_words[index]);
        setting.alpha * cosine + (1.0 - setting.alpha) * share * cosine.max(0.0).sqrt()
            >= setting.threshold
    }

    /// The ranking (best first) with `alpha` and `beta`.
    fn ranking(&self, alpha: f32, beta: f32) -> Vec<usize> {
        let blended = self.blended(alpha, beta);
        let mut order: Vec<usize> = (0..blended.len()).collect();
        order.sort_by(|a, b| blended[*b].total_cmp(&blended[*a]));
        order
    }
}

/// The suggestions a session makes, as `skillet_library::triggers` makes them: among the
/// [`MAX_SUGGESTIONS`] best, those that pass the relevance gate, best first.
fn suggestions(scored: &Scored, setting: Setting) -> Vec<usize> {
    scored
        .ranking(setting.alpha, setting.beta)
        .into_iter()
        .take(MAX_SUGGESTIONS)
        .filter(|&index| scored.relevant(index, setting))
        .collect()
}

/// How `auto` would do, as shipped: the first suggestion loaded with the message when its
/// blended score reaches [`AUTO_LOAD_SCORE`]. Per set: how many requests load a skill, and how
/// many of those load a right one (a no-fit request has none), with the precision's Wilson
/// interval. The load score was never tuned, so every set is out of sample for it (the blend
/// and threshold it sits on were fitted on the tuning set).
fn auto_report(names: &[String], requests: &[(&Request, &Scored)], shipped: Setting) {
    println!(
        "\n`auto` as shipped (loads the first suggestion when its score reaches {AUTO_LOAD_SCORE})"
    );
    let sets = [
        "tuning",
        "holdout",
        "paraphrase",
        "no-fit (easy)",
        "no-fit (hard)",
        "all",
    ];
    for set in sets {
        let (mut n, mut loaded, mut right) = (0, 0, 0);
        for (request, scored) in requests {
            if set != "all" && request.set != set {
                continue;
            }
            n += 1;
            let blended = scored.blended(shipped.alpha, shipped.beta);
            if let Some(&first) = suggestions(scored, shipped).first()
                && blended[first] >= AUTO_LOAD_SCORE
            {
                loaded += 1;
                if request.expected.contains(&names[first]) {
                    right += 1;
                }
            }
        }
        println!("  {set}: {loaded} of {n} requests load a skill");
        line(&format!("{set}: precision of loads"), right, loaded);
    }
}

/// Counts over a set of requests for one setting.
#[derive(Default, Clone, Copy)]
struct Counts {
    fitting: usize,
    at1: usize,
    at5: usize,
    /// The first suggestion is right.
    first_suggested: usize,
    no_fit: usize,
    fired: usize,
}

impl Counts {
    fn add(&mut self, other: Self) {
        self.fitting += other.fitting;
        self.at1 += other.at1;
        self.at5 += other.at5;
        self.first_suggested += other.first_suggested;
        self.no_fit += other.no_fit;
        self.fired += other.fired;
    }

    fn objective(&self) -> f64 {
        self.first_suggested as f64 - FALSE_FIRE_COST * self.fired as f64
    }
}

/// A setting: the weight of meaning, the relevance threshold (of the relevance score, or of
/// the cosine when `cosine_gate`), the weight of the body's words.
#[derive(Clone, Copy)]
struct Setting {
    alpha: f32,
    threshold: f32,
    beta: f32,
    cosine_gate: bool,
}

fn count(names: &[String], requests: &[(&Request, &Scored)], setting: Setting) -> Counts {
    let mut counts = Counts::default();
    for (request, scored) in requests {
        let suggested = suggestions(scored, setting);
        if request.expected.is_empty() {
            counts.no_fit += 1;
            if !suggested.is_empty() {
                counts.fired += 1;
            }
            continue;
        }
        counts.fitting += 1;
        let right = |index: &usize| request.expected.contains(&names[*index]);
        let ranking = scored.ranking(setting.alpha, setting.beta);
        if right(&ranking[0]) {
            counts.at1 += 1;
        }
        if suggested.first().is_some_and(right) {
            counts.first_suggested += 1;
        }
        if ranking.iter().take(5).any(right) {
            counts.at5 += 1;
        }
    }
    counts
}

/// The Wilson 95% interval of `hits` out of `n`.
fn wilson(hits: usize, n: usize) -> (f64, f64) {
    if n == 0 {
        return (0.0, 0.0);
    }
    let (p, n) = (hits as f64 / n as f64, n as f64);
    let z = 1.96_f64;
    let centre = (p + z * z / (2.0 * n)) / (1.0 + z * z / n);
    let half = z * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt() / (1.0 + z * z / n);
    ((centre - half).max(0.0), (centre + half).min(1.0))
}

fn line(label: &str, hits: usize, n: usize) {
    let (low, high) = wilson(hits, n);
    println!(
        "  {label:<38} {hits:>3}/{n:<3} = {:.3}  [{low:.3}, {high:.3}]",
        hits as f64 / n.max(1) as f64
    );
}

fn report(
    title: &str,
    names: &[String],
    requests: &[(&Request, &Scored)],
    setting: &dyn Fn(u64) -> Setting,
) {
    println!("\n{title}");
    for set in ["tuning", "holdout", "paraphrase", "all fitting"] {
        let mut total = Counts::default();
        for (request, scored) in requests {
            let fits = !request.expected.is_empty();
            if !fits || (set != "all fitting" && request.set != set) {
                continue;
            }
            total.add(count(
                names,
                &[(request, scored)],
                setting(fold(&request.query)),
            ));
        }
        line(&format!("{set}: recall@1"), total.at1, total.fitting);
        if set == "all fitting" {
            line("all fitting: recall@5", total.at5, total.fitting);
        }
        line(
            &format!("{set}: first suggestion right"),
            total.first_suggested,
            total.fitting,
        );
    }
    for set in ["no-fit (easy)", "no-fit (hard)"] {
        let mut total = Counts::default();
        for (request, scored) in requests {
            if request.set != set {
                continue;
            }
            total.add(count(
                names,
                &[(request, scored)],
                setting(fold(&request.query)),
            ));
        }
        line(
            &format!("{set}: a skill suggested"),
            total.fired,
            total.no_fit,
        );
    }
}

/// A skill's body in brief: its name, its headings, and its first paragraph (600 characters at
/// most).
/// A description's sentences of at least four words (cut at ". ", "; " and " — ").
fn sentences(description: &str) -> Vec<String> {
    description
        .replace("; ", ". ")
        .replace(" — ", ". ")
        .split(". ")
        .map(str::trim)
        .filter(|sentence| sentence.split_whitespace().count() >= 4)
        .map(str::to_string)
        .collect()
}

fn body_summary(name: &str, body: &str) -> String {
    let headings: Vec<&str> = body
        .lines()
        .filter(|line| line.starts_with('#'))
        .map(|line| line.trim_start_matches('#').trim())
        .take(12)
        .collect();
    let paragraph: String = body
        .split("\n\n")
        .map(str::trim)
        .find(|block| !block.is_empty() && !block.starts_with('#') && !block.starts_with("---"))
        .unwrap_or_default()
        .chars()
        .take(600)
        .collect();
    format!(
        "{}: {}. {paragraph}",
        name.replace(['-', '_'], " "),
        headings.join("; ")
    )
}

fn main() {
    let Some(corpus) =
        skillet_test_support::corpus_dir().filter(|dir| dir.join("INDEX.jsonl").is_file())
    else {
        eprintln!("SKIPPED: no corpus (set SKILLET_CORPUS to its folder)");
        return;
    };
    let Some(model) = skillet_test_support::embedding_model_dir() else {
        eprintln!("SKIPPED: no embedding model (scripts/fetch-model.sh)");
        return;
    };
    let eval = Path::new(env!("CARGO_MANIFEST_DIR")).join("eval");
    let mut requests = load(&eval.join("requests.jsonl"), "tuning");
    requests.extend(load(&eval.join("holdout.jsonl"), "holdout"));
    requests.extend(load(&eval.join("paraphrase.jsonl"), "paraphrase"));
    requests.extend(load(&eval.join("no_fit.jsonl"), "no-fit (easy)"));
    requests.extend(load(&eval.join("no_fit_hard.jsonl"), "no-fit (hard)"));
    // Everyday short chat messages, unlabelled (a few may call for a skill): kept out of the
    // folds and the fitting, counted apart.
    requests.extend(load(&eval.join("short_chat.jsonl"), SHORT_CHAT));
    let roots: Vec<Root> = pool::POOL
        .iter()
        .map(|c| Root::new(corpus.join(c), RootKind::Explicit))
        .collect();
    let library = discover(&roots);
    let names: Vec<String> = library.skills().iter().map(|s| s.name.clone()).collect();
    // The words the blend weighs, as shipped: the skill's text and its body
    // (`Matcher::with_bodies`). SKILLET_CV_NO_BODY=1: as before the body counted (name,
    // description, when_to_use, tags), for the before-and-after figures.
    let no_body = std::env::var_os("SKILLET_CV_NO_BODY").is_some();
    let bodies: Vec<String> = library
        .skills()
        .iter()
        .map(|s| s.read_body().unwrap_or_default())
        .collect();
    let texts: Vec<String> = library
        .skills()
        .iter()
        .zip(&bodies)
        .map(|(s, _)| {
            skill_text(
                &s.name,
                &s.description,
                s.frontmatter.when_to_use.as_deref(),
                &s.frontmatter.tags,
            )
        })
        .collect();
    let doc_texts: Vec<String> = library
        .skills()
        .iter()
        .map(|s| {
            embedding_text(
                &s.name,
                &s.description,
                s.frontmatter.when_to_use.as_deref(),
                &s.frontmatter.tags,
            )
        })
        .collect();
    let mut embedder = skillet_retrieval::embed::Embedder::load(&model).unwrap();
    // Many texts: the layers read once.
    embedder.keep_layers(true).unwrap();
    let doc_refs: Vec<&str> = doc_texts.iter().map(String::as_str).collect();
    let docs = embedder.embed(&doc_refs).unwrap();
    // Candidates: more vectors per skill, the skill scored by the best of its cosines. The
    // body's headings and first paragraph (SKILLET_CV_BODY=1); each sentence of the
    // description, with the skill's name, as a vector of its own (SKILLET_CV_SENTENCES=1).
    let mut extra: Vec<Vec<Vec<f32>>> = vec![Vec::new(); library.skills().len()];
    if std::env::var_os("SKILLET_CV_BODY").is_some() {
        let texts: Vec<String> = library
            .skills()
            .iter()
            .map(|s| body_summary(&s.name, &s.read_body().unwrap_or_default()))
            .collect();
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        for (at, vector) in embedder.embed(&refs).unwrap().into_iter().enumerate() {
            extra[at].push(vector);
        }
    }
    if std::env::var_os("SKILLET_CV_SENTENCES").is_some() {
        let mut owners = Vec::new();
        let mut texts = Vec::new();
        for (at, skill) in library.skills().iter().enumerate() {
            for sentence in sentences(&skill.description) {
                owners.push(at);
                texts.push(format!(
                    "{}: {sentence}",
                    skill.name.replace(['-', '_'], " ")
                ));
            }
        }
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        for (owner, vector) in owners.into_iter().zip(embedder.embed(&refs).unwrap()) {
            extra[owner].push(vector);
        }
    }
    let queries: Vec<&str> = requests.iter().map(|r| r.query.as_str()).collect();
    let query_vectors = embedder.embed(&queries).unwrap();
    let body_words = std::env::var_os("SKILLET_CV_BODY_WORDS").is_some();
    // The body's words in the blend as shipped, unless measuring before them (or measuring them
    // as an index of their own, below).
    let bm25 = if no_body || body_words {
        Bm25::build(texts.iter().map(String::as_str), Stemming::Light)
    } else {
        Bm25::build_with_bodies(
            texts
                .iter()
                .map(String::as_str)
                .zip(bodies.iter().map(String::as_str)),
            Stemming::Light,
        )
    };
    // Candidate: the body's words as a second BM25 index, weighed in by beta
    // (SKILLET_CV_BODY_WORDS=1, with SKILLET_CV_NO_BODY=1; the folds choose beta as they choose
    // alpha and the threshold).
    let body_words = std::env::var_os("SKILLET_CV_BODY_WORDS").is_some();
    let body_bm25 = Bm25::build(bodies.iter().map(|body| ranked_body(body)), Stemming::Light);
    // SKILLET_CV_KEEP_GATE=1: the weight of meaning and the threshold stay as shipped; only the
    // body's weight is chosen.
    let keep_gate = std::env::var_os("SKILLET_CV_KEEP_GATE").is_some();
    // SKILLET_CV_COSINE_GATE=1: relevance judged by the cosine alone, as before the relevance
    // score.
    let cosine_gate = std::env::var_os("SKILLET_CV_COSINE_GATE").is_some();
    let shipped_threshold = if cosine_gate {
        SEMANTIC_THRESHOLD
    } else {
        RELEVANCE_THRESHOLD
    };
    let (alphas, thresholds): (&[f32], &[f32]) = match (keep_gate, cosine_gate) {
        (true, _) => (&[HYBRID_ALPHA], std::slice::from_ref(&shipped_threshold)),
        (false, true) => (&ALPHAS, &THRESHOLDS),
        (false, false) => (&ALPHAS, &RELEVANCE_THRESHOLDS),
    };
    let betas: &[f32] = if body_words { &BETAS } else { &[0.0] };
    let scored: Vec<Scored> = requests
        .iter()
        .zip(&query_vectors)
        .map(|(request, vector)| Scored {
            words: bm25.scores(&request.query),
            body_words: if body_words {
                body_bm25.scores(&request.query)
            } else {
                vec![0.0; names.len()]
            },
            cosines: docs
                .iter()
                .enumerate()
                .map(|(at, doc)| {
                    extra[at]
                        .iter()
                        .map(|more| skillet_retrieval::embed::dot(vector, more))
                        .fold(skillet_retrieval::embed::dot(vector, doc), f32::max)
                })
                .collect(),
            weight: bm25.query_weight(&request.query),
        })
        .collect();
    let (short, all): (Vec<Pair>, Vec<Pair>) = requests
        .iter()
        .zip(&scored)
        .partition(|(request, _)| request.set == SHORT_CHAT);
    if let Some(path) = std::env::var_os("SKILLET_CV_DUMP") {
        use std::fmt::Write as _;
        // The words of each skill's own text too, apart from its body's.
        let own_bm25 = Bm25::build(texts.iter().map(String::as_str), Stemming::Light);
        let mut out = String::new();
        for (request, s) in &all {
            let ranking = s.ranking(HYBRID_ALPHA, 0.0);
            let blended = s.blended(HYBRID_ALPHA, 0.0);
            let best = s.words.iter().copied().fold(0.0_f32, f32::max);
            let own_words = own_bm25.scores(&request.query);
            let weight = s.weight;
            for (rank, &i) in ranking.iter().take(3).enumerate() {
                writeln!(
                    out,
                    "{}\t{}\t{}\t{rank}\t{}\t{}\t{:.4}\t{:.3}\t{:.3}\t{:.3}\t{:.4}\t{weight:.3}",
                    request.set,
                    fold(&request.query),
                    request.query.replace('\t', " "),
                    names[i],
                    u8::from(request.expected.contains(&names[i])),
                    s.cosines[i],
                    own_words[i],
                    s.words[i],
                    best,
                    blended[i]
                )
                .unwrap();
            }
        }
        std::fs::write(path, out).unwrap();
    }
    println!(
        "pool: {} skills; {} fitting requests, {} no-fit, {FOLDS} folds by a hash of the text",
        names.len(),
        all.iter().filter(|(r, _)| !r.expected.is_empty()).count(),
        all.iter().filter(|(r, _)| r.expected.is_empty()).count()
    );
    let shipped = Setting {
        alpha: HYBRID_ALPHA,
        threshold: shipped_threshold,
        beta: 0.0,
        cosine_gate,
    };
    // Per fold: the setting that does best on the other folds.
    let mut chosen = Vec::new();
    for held_out in 0..FOLDS {
        let training: Vec<(&Request, &Scored)> = all
            .iter()
            .filter(|(r, _)| fold(&r.query) != held_out)
            .copied()
            .collect();
        let mut best = (f64::MIN, shipped);
        for &alpha in alphas {
            for &threshold in thresholds {
                for &beta in betas {
                    let setting = Setting {
                        alpha,
                        threshold,
                        beta,
                        cosine_gate,
                    };
                    let objective = count(&names, &training, setting).objective();
                    if objective > best.0 {
                        best = (objective, setting);
                    }
                }
            }
        }
        let Setting {
            alpha,
            threshold,
            beta,
            ..
        } = best.1;
        println!(
            "fold {held_out}: chosen on the other folds: alpha {alpha}, threshold {threshold}, body words {beta}"
        );
        chosen.push(best.1);
    }
    report(
        "cross-validated (each request measured on the fold it was held out of)",
        &names,
        &all,
        &|fold| chosen[usize::try_from(fold).unwrap()],
    );
    report(
        &format!(
            "as shipped (alpha {HYBRID_ALPHA}, threshold {shipped_threshold}{})",
            if cosine_gate {
                " on the cosine; fitted on the tuning set"
            } else {
                " on the relevance score; alpha fitted on the tuning set, the threshold by these folds"
            }
        ),
        &names,
        &all,
        &|_| shipped,
    );
    auto_report(&names, &all, shipped);
    println!("\n{SHORT_CHAT} (unlabelled, not fitted on), as shipped:");
    let mut suggested = 0;
    for (request, scored) in &short {
        let picked: Vec<&str> = suggestions(scored, shipped)
            .into_iter()
            .map(|index| names[index].as_str())
            .collect();
        if !picked.is_empty() {
            suggested += 1;
            println!("  {:?}: {}", request.query, picked.join(", "));
        }
    }
    println!("  {suggested} of {} given a suggestion", short.len());
}
