//! `skillet skills match` and `skillet skills index`.

use std::io::{self, BufWriter, IsTerminal as _, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use serde_json::{Value, json};
use skillet_agent::skill_index::{SkillIndex, cache_dir, refresh_cache};
use skillet_retrieval::Mode;
use skillet_retrieval::embed::find_model;
use skillet_skills::{Library, discover};

use super::Context;
use crate::EXIT_FAILURE;
use crate::args::MatchModeArg;
use crate::env;
use crate::output::warn;

/// How to get the model when it is missing.
const NO_MODEL: &str = "no embedding model found, so skills are ranked by words only\n  \
    hint: put all-MiniLM-L6-v2's config.json, tokenizer.json and model.safetensors in a folder and \
    pass --embed-model DIR or set SKILLET_EMBED_MODEL (scripts/fetch-model.sh fetches them)";

fn model_dir(explicit: Option<&Path>) -> Option<PathBuf> {
    find_model(
        explicit,
        env::path(env::SKILLET_EMBED_MODEL).as_deref(),
        env::path(env::HF_HOME).as_deref(),
        env::path(env::HOME).as_deref(),
    )
}

fn embeddings_dir() -> PathBuf {
    cache_dir(
        env::path(env::XDG_CACHE_HOME).as_deref(),
        env::path(env::HOME).as_deref(),
    )
    .unwrap_or_else(|| std::env::temp_dir().join("skillet-embeddings"))
}

/// A progress line on stderr (`embedding skills: done/total`), when `show`.
fn progress_line(show: bool) -> impl FnMut(usize, usize) {
    move |done, total| {
        if show {
            let mut stderr = io::stderr().lock();
            let _ = write!(stderr, "\rembedding skills: {done}/{total}");
            let _ = stderr.flush();
        }
    }
}

/// The index: with meaning when the model is there, else words only (saying so once).
fn index(
    library: &Library,
    explicit: Option<&Path>,
    quiet_progress: bool,
) -> anyhow::Result<SkillIndex> {
    let Some(model) = model_dir(explicit) else {
        warn(&format!("note: {NO_MODEL}"));
        return Ok(SkillIndex::lexical(library));
    };
    let show = !quiet_progress && io::stderr().is_terminal();
    let (index, stats) =
        SkillIndex::semantic(library, &model, &embeddings_dir(), &mut progress_line(show))?;
    if show && stats.embedded > 0 {
        warn("");
    }
    Ok(index)
}

/// The index the agent matches user messages with: by meaning when the model is found (the
/// cache is brought up to date first), else by words, saying once how to get the model.
pub fn session_index(library: &Library) -> SkillIndex {
    match index(library, None, false) {
        Ok(index) => index,
        Err(error) => {
            warn(&format!(
                "note: skill matching falls back to words: {error}"
            ));
            SkillIndex::lexical(library)
        }
    }
}

pub fn run_match(
    context: &Context,
    query: &str,
    top_k: usize,
    mode: Option<MatchModeArg>,
    json_out: bool,
    embed_model: Option<&Path>,
) -> anyhow::Result<ExitCode> {
    let library = discover(&context.roots);
    let index = index(&library, embed_model, false)?;
    let wanted = match mode {
        Some(MatchModeArg::Lexical) => Mode::Lexical,
        Some(MatchModeArg::Semantic) => Mode::Semantic,
        Some(MatchModeArg::Hybrid) | None => Mode::Hybrid,
    };
    let (used, ranked) = index.rank(query, wanted, top_k)?;
    warn(&format!("mode: {}", used.as_str()));
    let mut out = BufWriter::new(io::stdout().lock());
    if json_out {
        let items: Vec<Value> = ranked
            .iter()
            .map(|r| {
                let skill = &library.skills()[r.index];
                json!({"name": skill.name, "score": r.score, "relevant": r.relevant,
                    "path": skill.file, "description": skill.description})
            })
            .collect();
        serde_json::to_writer_pretty(&mut out, &items)?;
        writeln!(out)?;
    } else {
        for (rank, r) in ranked.iter().enumerate() {
            let skill = &library.skills()[r.index];
            let mark = if r.relevant { "*" } else { " " };
            let description: String = skill.description.chars().take(80).collect();
            writeln!(
                out,
                "{:>2}. {mark} {:.3}  {}  {}",
                rank + 1,
                r.score,
                skill.name,
                description
            )?;
        }
        if ranked.iter().all(|r| !r.relevant) {
            writeln!(out, "(no skill clears the relevance threshold)")?;
        }
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

pub fn run_index(context: &Context, embed_model: Option<&Path>) -> anyhow::Result<ExitCode> {
    let library = discover(&context.roots);
    let Some(model) = model_dir(embed_model) else {
        warn(&format!("error: {NO_MODEL}"));
        return Ok(ExitCode::from(EXIT_FAILURE));
    };
    let show = io::stderr().is_terminal();
    let stats = refresh_cache(
        &library,
        &model,
        &embeddings_dir(),
        &mut progress_line(show),
    )?;
    if show && stats.embedded > 0 {
        warn("");
    }
    let mut out = io::stdout().lock();
    writeln!(
        out,
        "{} skills: {} embedded, {} reused from the cache, in {:.2} s",
        stats.embedded + stats.reused,
        stats.embedded,
        stats.reused,
        stats.elapsed.as_secs_f64()
    )?;
    Ok(ExitCode::SUCCESS)
}
