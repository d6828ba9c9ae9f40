//! `skillet skills match` and `skillet skills index`; and, for every command that ranks skills,
//! the model's environment read for `skillet-library` and its events shown on stderr.

use std::io::{self, BufWriter, IsTerminal as _, Write};
use std::path::Path;
use std::process::ExitCode;

use serde_json::{Value, json};
use skillet_library::index::SkillIndex;
use skillet_library::model::{
    ModelEnv, ModelEvent, Need, find_or_download, refresh_index, semantic_index, session_index,
};
use skillet_retrieval::{
    HYBRID_ALPHA, LEXICAL_THRESHOLD, Mode, RELEVANCE_THRESHOLD, SEMANTIC_THRESHOLD,
};
use skillet_skills::discover;

use super::Context;
use crate::EXIT_FAILURE;
use crate::args::MatchModeArg;
use crate::output::{terminal_safe, warn};

pub(super) use skillet_session::builder::model_env;

/// The exit code when the model a command needs is missing: a usage error (2) when the user
/// named a folder (`--embed-model`, `SKILLET_EMBED_MODEL`) that does not hold it, a failure (1)
/// when none was found or downloaded.
fn no_model_exit(model_env: &ModelEnv) -> u8 {
    if model_env.named_dir().is_some() {
        crate::EXIT_USAGE
    } else {
        EXIT_FAILURE
    }
}

/// Shows what happens to the model on stderr: what is said, as it is said; progress (the
/// download's, `embedding skills: done/total`) only on a terminal, one line rewritten in place
/// (the embedding's erased once done).
pub(super) fn stderr_events() -> impl FnMut(ModelEvent<'_>) {
    let show = io::stderr().is_terminal();
    let mut last_shown = usize::MAX;
    move |event| match event {
        ModelEvent::Downloading { .. } => {
            last_shown = usize::MAX;
            say(&event);
        }
        ModelEvent::DownloadProgress { file, done, total } => {
            let percent = (done * 100).checked_div(total).unwrap_or(100);
            if show && percent != last_shown {
                last_shown = percent;
                let mut stderr = io::stderr().lock();
                let _ = write!(
                    stderr,
                    "\r  {file}: {:.1}/{:.1} MB ({percent}%)\x1b[K",
                    megabytes(done),
                    megabytes(total)
                );
                let _ = stderr.flush();
            }
        }
        ModelEvent::EmbeddingProgress { done, total } => {
            if show {
                let mut stderr = io::stderr().lock();
                let _ = write!(stderr, "\rembedding skills: {done}/{total}");
                let _ = stderr.flush();
            }
        }
        // A progress line drawn ends.
        ModelEvent::DownloadEnded => {
            if show {
                warn("");
            }
        }
        // The progress line is done with: erased, so nothing of it stays above a chat or an
        // answer (what was indexed is said where it matters).
        ModelEvent::Indexed(stats) => {
            if show && stats.embedded > 0 {
                let mut stderr = io::stderr().lock();
                let _ = write!(stderr, "\r\x1b[K");
                let _ = stderr.flush();
            }
        }
        _ => say(&event),
    }
}

/// An event's message, when it has one, on stderr.
fn say(event: &ModelEvent<'_>) {
    if let Some(message) = event.message() {
        warn(&message);
    }
}

#[expect(clippy::cast_precision_loss, reason = "a display value")]
fn megabytes(bytes: usize) -> f64 {
    bytes as f64 / 1_000_000.0
}

/// What `skills match` was asked.
pub struct MatchRequest<'a> {
    /// The request to rank skills for.
    pub query: &'a str,
    /// How many to show.
    pub top_k: usize,
    /// The mode asked for.
    pub mode: Option<MatchModeArg>,
    /// JSON out.
    pub json: bool,
    /// Say why each scored as it did.
    pub explain: bool,
    /// A skill to place too.
    pub skill: Option<&'a str>,
}

pub fn run_match(
    context: &Context,
    request: &MatchRequest<'_>,
    embed_model: Option<&Path>,
) -> anyhow::Result<ExitCode> {
    let library = discover(&context.roots);
    let wanted = match request.mode {
        Some(MatchModeArg::Lexical) => Mode::Lexical,
        Some(MatchModeArg::Semantic) => Mode::Semantic,
        Some(MatchModeArg::Hybrid) | None => Mode::Hybrid,
    };
    let also = match request.skill {
        None => None,
        Some(name) => Some(
            library
                .skills()
                .iter()
                .position(|skill| skill.name == name)
                .ok_or_else(|| {
                    crate::UsageError::new(format!("--skill {name}: no skill of that name"))
                        .with_hint("`skillet skills list` lists them")
                })?,
        ),
    };
    // Words alone need no model; meaning alone cannot do without it.
    let model_env = model_env(embed_model);
    let report = &mut stderr_events();
    let index = match wanted {
        Mode::Lexical => SkillIndex::lexical(&library),
        Mode::Semantic => match semantic_index(&library, &model_env, Need::Semantic, report) {
            Some(index) => index,
            None => return Ok(ExitCode::from(no_model_exit(&model_env))),
        },
        Mode::Hybrid => session_index(&library, &model_env, report),
    };
    let ranked = index.rank_explained(request.query, wanted, request.top_k, also)?;
    warn(&format!("mode: {}", ranked.mode.as_str()));
    let mut out = BufWriter::new(io::stdout().lock());
    if request.json {
        let items: Vec<Value> = ranked
            .top
            .iter()
            .map(|(r, why)| {
                let skill = &library.skills()[r.index];
                let mut item = json!({"name": skill.name, "score": r.score, "relevant": r.relevant,
                    "path": super::path_json(Some(&skill.file)), "description": skill.description});
                if request.explain {
                    item["explain"] = explanation_json(why);
                }
                item
            })
            .collect();
        let document = match (&ranked.also, request.skill) {
            (Some(placed), Some(name)) => json!({
                "results": items,
                "skill": {"name": name, "rank": placed.rank, "explain": explanation_json(&placed.why),
                    "above": placed.above.iter().map(|r| json!({"name": library.skills()[r.index].name, "score": r.score})).collect::<Vec<_>>()},
            }),
            _ => Value::Array(items),
        };
        serde_json::to_writer_pretty(&mut out, &document)?;
        writeln!(out)?;
    } else {
        for (rank, (r, why)) in ranked.top.iter().enumerate() {
            let skill = &library.skills()[r.index];
            let mark = if r.relevant { "*" } else { " " };
            let description: String = skill.description.chars().take(80).collect();
            writeln!(
                out,
                "{:>2}. {mark} {:.3}  {}  {}",
                rank + 1,
                r.score,
                terminal_safe(&skill.name, false),
                terminal_safe(&description, false)
            )?;
            if request.explain {
                write!(out, "{}", explanation_text(why))?;
            }
        }
        if ranked.top.iter().all(|(r, _)| !r.relevant) {
            writeln!(out, "(no skill clears the relevance threshold)")?;
        }
        if let (Some(placed), Some(name)) = (&ranked.also, request.skill) {
            write!(out, "{}", placement_text(name, placed, &library))?;
        }
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// Where the skill `--skill` names ranked, what beat it (of those shown), and why.
fn placement_text(
    name: &str,
    placed: &skillet_library::index::Placed,
    library: &skillet_skills::Library,
) -> String {
    use std::fmt::Write as _;
    let (rank, why) = (placed.rank, &placed.why);
    let mut text = String::new();
    let place = rank.map_or_else(
        || "not ranked at all (no word in common, and no meaning in this mode)".to_string(),
        |rank| format!("ranked #{rank} of {}", library.skills().len()),
    );
    let _ = writeln!(text, "\n{}: {place}", terminal_safe(name, false));
    let above: Vec<String> = placed
        .above
        .iter()
        .map(|r| {
            format!(
                "{} ({:.3})",
                terminal_safe(&library.skills()[r.index].name, false),
                r.score
            )
        })
        .collect();
    if !above.is_empty() {
        let _ = writeln!(text, "  ranked above it: {}", above.join(", "));
    }
    text.push_str(&explanation_text(why));
    text
}

/// Why a skill scored as it did, in lines under its result.
fn explanation_text(why: &skillet_retrieval::Explanation) -> String {
    use std::fmt::Write as _;
    let mut text = String::new();
    if why.terms.is_empty() {
        let _ = writeln!(text, "      words: none in common");
    } else {
        let terms: Vec<String> = why
            .terms
            .iter()
            .map(|(term, score)| {
                let share = if why.words > 0.0 {
                    score / why.words * 100.0
                } else {
                    0.0
                };
                let body = if why.body_only.contains(term) {
                    ", body"
                } else {
                    ""
                };
                format!(
                    "{} {score:.2} ({share:.0}%{body})",
                    terminal_safe(term, false)
                )
            })
            .collect();
        let _ = writeln!(
            text,
            "      words: {}; BM25 {:.2} (the best skill's: {:.2})",
            terms.join(", "),
            why.words,
            why.best_words
        );
        if !why.body_only.is_empty() {
            let _ = writeln!(
                text,
                "      (a word marked body is only in the skill's body: the blend weighs the body's words, words alone do not)"
            );
        }
    }
    match (why.mode, why.cosine) {
        (Mode::Lexical, _) => {
            let _ = writeln!(
                text,
                "      score: BM25 {:.2} against the words-only threshold {LEXICAL_THRESHOLD}: {}",
                why.score,
                if why.relevant {
                    "relevant"
                } else {
                    "not relevant"
                }
            );
        }
        (_, Some(cosine)) => {
            let verdict = if why.relevant {
                "relevant"
            } else {
                "not relevant"
            };
            if let Some(relevance) = why.relevance {
                let _ = writeln!(
                    text,
                    "      meaning: cosine {cosine:.3} with its name, description, when_to_use and tags"
                );
                let _ = writeln!(
                    text,
                    "      relevance: {HYBRID_ALPHA} × cosine + {} × min(1, BM25 / the request's weight {:.2}) × √cosine = {relevance:.3}; threshold {RELEVANCE_THRESHOLD}: {verdict}",
                    1.0 - HYBRID_ALPHA,
                    why.query_weight
                );
            } else {
                let _ = writeln!(
                    text,
                    "      meaning: cosine {cosine:.3} with its name, description, when_to_use and tags; threshold {SEMANTIC_THRESHOLD}: {verdict}"
                );
            }
            if why.mode == Mode::Hybrid {
                let _ = writeln!(
                    text,
                    "      score: {HYBRID_ALPHA} × cosine + {} × (BM25 / best BM25) × √cosine = {:.3}",
                    1.0 - HYBRID_ALPHA,
                    why.score
                );
            }
        }
        (_, None) => {}
    }
    text
}

/// Why a skill scored as it did, for `--json`.
fn explanation_json(why: &skillet_retrieval::Explanation) -> Value {
    json!({
        "mode": why.mode.as_str(),
        "terms": why.terms.iter().map(|(term, score)| json!({
            "term": term,
            "bm25": score,
            "in": if why.body_only.contains(term) { "body" } else { "metadata" },
        })).collect::<Vec<_>>(),
        "bm25": why.words,
        "best_bm25": why.best_words,
        "cosine": why.cosine,
        "query_weight": why.relevance.map(|_| why.query_weight),
        "relevance": why.relevance,
        "score": why.score,
        "relevant": why.relevant,
        "thresholds": {"cosine": SEMANTIC_THRESHOLD, "relevance": RELEVANCE_THRESHOLD, "bm25": LEXICAL_THRESHOLD},
        "hybrid_alpha": HYBRID_ALPHA,
    })
}

pub fn run_index(context: &Context, embed_model: Option<&Path>) -> anyhow::Result<ExitCode> {
    let library = discover(&context.roots);
    let model_env = model_env(embed_model);
    let report = &mut stderr_events();
    let Some(model) = find_or_download(&model_env, Need::Index, report) else {
        return Ok(ExitCode::from(no_model_exit(&model_env)));
    };
    let stats = refresh_index(&library, &model, &model_env, report)?;
    let mut out = io::stdout().lock();
    writeln!(
        out,
        "{}: {} embedded, {} reused from the cache, in {:.2} s",
        crate::plural(stats.embedded + stats.reused, "skill"),
        stats.embedded,
        stats.reused,
        stats.elapsed.as_secs_f64()
    )?;
    Ok(ExitCode::SUCCESS)
}
