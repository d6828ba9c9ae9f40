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
use skillet_retrieval::Mode;
use skillet_skills::discover;

use super::Context;
use crate::EXIT_FAILURE;
use crate::args::MatchModeArg;
use crate::env;
use crate::output::{terminal_safe, warn};

/// Where the embedding model is looked for and downloaded to, and where the embedding cache
/// lives: the folder `--embed-model` named, and the environment.
pub(super) fn model_env(explicit: Option<&Path>) -> ModelEnv {
    ModelEnv {
        explicit: explicit.map(Path::to_path_buf),
        skillet_embed_model: env::path(env::SKILLET_EMBED_MODEL),
        hf_home: env::path(env::HF_HOME),
        home: env::path(env::HOME),
        xdg_cache_home: env::path(env::XDG_CACHE_HOME),
        hf_endpoint: env::var(env::HF_ENDPOINT),
        hf_hub_offline: env::flag(env::HF_HUB_OFFLINE),
        temp_dir: std::env::temp_dir(),
    }
}

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
/// download's, `embedding skills: done/total`) only on a terminal, one line rewritten in place.
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
        ModelEvent::Indexed(stats) => {
            if show && stats.embedded > 0 {
                warn("");
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

pub fn run_match(
    context: &Context,
    query: &str,
    top_k: usize,
    mode: Option<MatchModeArg>,
    json_out: bool,
    embed_model: Option<&Path>,
) -> anyhow::Result<ExitCode> {
    let library = discover(&context.roots);
    let wanted = match mode {
        Some(MatchModeArg::Lexical) => Mode::Lexical,
        Some(MatchModeArg::Semantic) => Mode::Semantic,
        Some(MatchModeArg::Hybrid) | None => Mode::Hybrid,
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
                terminal_safe(&skill.name, false),
                terminal_safe(&description, false)
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
