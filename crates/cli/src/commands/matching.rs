//! `skillet skills match` and `skillet skills index`.

use std::io::{self, BufWriter, IsTerminal as _, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, SystemTime};

use serde_json::{Value, json};
use skillet_agent::skill_index::{IndexStats, SkillIndex, cache_dir, refresh_cache};
use skillet_retrieval::Mode;
use skillet_retrieval::download::{DEFAULT_ENDPOINT, MODEL_REPO, download_model};
use skillet_retrieval::embed::find_model;
use skillet_skills::{Library, discover};

use super::Context;
use crate::EXIT_FAILURE;
use crate::args::MatchModeArg;
use crate::env;
use crate::output::{terminal_safe, warn};

/// Where the model can come from besides a download.
const MODEL_BY_HAND: &str = "or put its config.json, tokenizer.json and model.safetensors in a \
    folder and pass --embed-model DIR or set SKILLET_EMBED_MODEL";

/// What is said when the model is missing, for who needed it: the hint never names the
/// command that was just run.
/// The exit code when the model a command needs is missing: a usage error (2) when the user
/// named a folder (`--embed-model`, `SKILLET_EMBED_MODEL`) that does not hold it, a failure (1)
/// when none was found or downloaded.
fn no_model_exit(explicit: Option<&Path>) -> u8 {
    if explicit.is_some() || env::path(env::SKILLET_EMBED_MODEL).is_some() {
        crate::EXIT_USAGE
    } else {
        EXIT_FAILURE
    }
}

fn no_model(need: Need) -> String {
    match need {
        Need::Optional => format!(
            "no embedding model, so skills are ranked by words only\n  hint: `skillet skills \
             index` downloads all-MiniLM-L6-v2 (about 90 MB) into the Hugging Face cache when \
             the hub is reachable (HF_ENDPOINT for a mirror); {MODEL_BY_HAND}"
        ),
        Need::Semantic => format!(
            "--mode semantic ranks by meaning and needs the embedding model, which is not \
             here\n  hint: `skillet skills index` downloads all-MiniLM-L6-v2 (about 90 MB) into \
             the Hugging Face cache when the hub is reachable (HF_ENDPOINT for a mirror); \
             {MODEL_BY_HAND}; or use --mode lexical to rank by words"
        ),
        Need::Index => format!(
            "no embedding model to index with\n  hint: skillet downloads all-MiniLM-L6-v2 \
             (about 90 MB) into the Hugging Face cache when the hub is reachable (HF_HUB_OFFLINE \
             unset, HF_ENDPOINT for a mirror); {MODEL_BY_HAND}"
        ),
    }
}

/// After a failed download, how long skillet waits before trying again on its own (`skillet
/// skills index` always tries).
const DOWNLOAD_RETRY_AFTER: Duration = Duration::from_hours(24);

/// The file whose age says when a download last failed.
const DOWNLOAD_FAILED_MARKER: &str = "model-download-failed";

/// The embedding model's folder, where one is found (nothing is downloaded).
pub(super) fn model_dir(explicit: Option<&Path>) -> Option<PathBuf> {
    find_model(
        explicit,
        env::path(env::SKILLET_EMBED_MODEL).as_deref(),
        env::path(env::HF_HOME).as_deref(),
        env::path(env::HOME).as_deref(),
    )
}

/// Who asked for the model: a command that needs it (`skills index`, `skills match --mode
/// semantic`), or matching that can do without it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Need {
    Index,
    Semantic,
    Optional,
}

/// The model folder: found where [`find_model`] looks, else downloaded from the hub into the
/// Hugging Face cache. Nothing is downloaded when the user named a folder, when
/// `HF_HUB_OFFLINE` is set, or (for optional use) within [`DOWNLOAD_RETRY_AFTER`] of a failed
/// attempt, so an offline user is told once and not made to wait on every run. Explains what
/// happened on stderr when it returns `None`, except where it already did.
fn find_or_download(explicit: Option<&Path>, need: Need) -> Option<PathBuf> {
    if let Some(dir) = model_dir(explicit) {
        return Some(dir);
    }
    let lead = if need == Need::Optional {
        "note"
    } else {
        "error"
    };
    // "error" when the command needs the model, else "note".
    let say = |text: &str| warn(&format!("{lead}: {text}"));
    if let Some(dir) = explicit
        .map(Path::to_path_buf)
        .or_else(|| env::path(env::SKILLET_EMBED_MODEL))
    {
        say(&format!(
            "{} does not hold config.json, tokenizer.json and model.safetensors; {}",
            dir.display(),
            no_model(need)
        ));
        return None;
    }
    if env::flag(env::HF_HUB_OFFLINE) {
        // Offline on purpose: only a command that needs the model says so.
        if need != Need::Optional {
            say(&format!(
                "{}\n  note: HF_HUB_OFFLINE is set, so skillet did not try to download it",
                no_model(need)
            ));
        }
        return None;
    }
    let marker = embeddings_dir().join(DOWNLOAD_FAILED_MARKER);
    let failed_recently = std::fs::metadata(&marker)
        .and_then(|meta| meta.modified())
        .ok()
        .and_then(|when| SystemTime::now().duration_since(when).ok())
        .is_some_and(|age| age < DOWNLOAD_RETRY_AFTER);
    if failed_recently && need == Need::Optional {
        return None;
    }
    let Some(hub) = hub_dir() else {
        say(&no_model(need));
        return None;
    };
    let endpoint = env::var(env::HF_ENDPOINT).unwrap_or_else(|| DEFAULT_ENDPOINT.to_string());
    warn(&format!(
        "downloading the embedding model {MODEL_REPO} (about 90 MB, once) from {endpoint} into {}",
        hub.display()
    ));
    let show = io::stderr().is_terminal();
    let mut last_shown = usize::MAX;
    let mut progress = |file: &str, done: usize, total: usize| {
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
    };
    let result = download_model(&endpoint, &hub, &mut progress);
    if show {
        warn("");
    }
    match result {
        Ok(dir) => {
            let _ = std::fs::remove_file(&marker);
            Some(dir)
        }
        Err(error) => {
            let _ = std::fs::create_dir_all(embeddings_dir())
                .and_then(|()| std::fs::write(&marker, error.to_string()));
            say(&format!("{error}; {}", no_model(need)));
            None
        }
    }
}

#[expect(clippy::cast_precision_loss, reason = "a display value")]
fn megabytes(bytes: usize) -> f64 {
    bytes as f64 / 1_000_000.0
}

/// The Hugging Face hub cache: `$HF_HOME/hub`, else `~/.cache/huggingface/hub`.
fn hub_dir() -> Option<PathBuf> {
    env::path(env::HF_HOME)
        .map(|home| home.join("hub"))
        .or_else(|| env::path(env::HOME).map(|home| home.join(".cache/huggingface/hub")))
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

/// Says on stderr what building the index recovered from (a damaged cache rebuilt, a cache
/// that could not be saved, a vector that could not be used).
fn warn_index(stats: &IndexStats) {
    for warning in &stats.warnings {
        warn(&format!("warning: {warning}"));
    }
}

/// The index: with meaning when the model is there (downloading it if need be), else by words,
/// saying why.
fn index(library: &Library, explicit: Option<&Path>) -> SkillIndex {
    semantic_index(library, explicit, Need::Optional)
        .unwrap_or_else(|| SkillIndex::lexical(library))
}

/// The index by meaning, or `None` (said why on stderr) when the model is missing or fails.
fn semantic_index(library: &Library, explicit: Option<&Path>, need: Need) -> Option<SkillIndex> {
    let model = find_or_download(explicit, need)?;
    let show = io::stderr().is_terminal();
    match SkillIndex::semantic(library, &model, &embeddings_dir(), &mut progress_line(show)) {
        Ok((index, stats)) => {
            if show && stats.embedded > 0 {
                warn("");
            }
            warn_index(&stats);
            Some(index)
        }
        Err(error) if need == Need::Optional => {
            warn(&format!("note: skills are ranked by words only: {error}"));
            None
        }
        Err(error) => {
            warn(&format!("error: the embedding model failed: {error}"));
            None
        }
    }
}

/// The index the agent matches user messages with: by meaning when the model is found (the
/// cache is brought up to date first), else by words, saying once how to get the model.
pub fn session_index(library: &Library) -> SkillIndex {
    index(library, None)
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
    let index = match wanted {
        Mode::Lexical => SkillIndex::lexical(&library),
        Mode::Semantic => match semantic_index(&library, embed_model, Need::Semantic) {
            Some(index) => index,
            None => return Ok(ExitCode::from(no_model_exit(embed_model))),
        },
        Mode::Hybrid => index(&library, embed_model),
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
    let Some(model) = find_or_download(embed_model, Need::Index) else {
        return Ok(ExitCode::from(no_model_exit(embed_model)));
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
    warn_index(&stats);
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
