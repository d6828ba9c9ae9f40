//! `skillet registry publish`: the skill folders given, checked, embedded and published.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use serde_json::json;
use skillet_library::model::{ModelEvent, Need, find_or_download};
use skillet_registry::{Prepared, Registry, RegistryError, prepare};
use skillet_skills::{Root, RootKind, find_skill_file, locate};

use crate::commands::Context;
use crate::commands::matching::{model_env, stderr_events};
use crate::output::warn;
use crate::{EXIT_FAILURE, UsageError};

use super::{stdout_json, stdout_text};

/// Texts embedded at once when publishing.
const EMBED_BATCH: usize = 32;

/// The skill folders under the given folders: a folder with a SKILL.md is one skill, any other
/// is a root whose skills are all taken.
pub(super) fn skill_dirs(context: &Context, dirs: &[PathBuf]) -> anyhow::Result<Vec<PathBuf>> {
    let given: Vec<PathBuf> = if dirs.is_empty() {
        vec![context.env.cwd.clone()]
    } else {
        dirs.iter().map(|dir| context.env.cwd.join(dir)).collect()
    };
    let mut found = Vec::new();
    for dir in given {
        if !dir.is_dir() {
            return Err(UsageError::new(format!("{}: not a folder", dir.display())).into());
        }
        if find_skill_file(&dir).is_some() {
            found.push(dir);
            continue;
        }
        let (locations, _) = locate(&[Root::new(&dir, RootKind::Explicit)]);
        if locations.is_empty() {
            return Err(UsageError::new(format!(
                "{}: no SKILL.md in it or below it",
                dir.display()
            ))
            .into());
        }
        found.extend(locations.into_iter().map(|location| location.dir));
    }
    Ok(found)
}

/// The vectors of `texts`, or `None` (said why, as `need` asks) without the model.
pub(super) fn embed(
    texts: &[&str],
    embed_model: Option<&Path>,
    need: Need,
) -> Option<Vec<Vec<f32>>> {
    let env = model_env(embed_model);
    let mut report = stderr_events();
    let dir = find_or_download(&env, need, &mut |event: ModelEvent<'_>| {
        report(event);
    })?;
    let embedder = skillet_retrieval::embed::Embedder::load(&dir)
        .map_err(|error| {
            warn(&format!(
                "warning: the embedding model failed to load: {error}"
            ));
        })
        .ok()?;
    let mut vectors = Vec::with_capacity(texts.len());
    for batch in texts.chunks(EMBED_BATCH) {
        vectors.extend(
            embedder
                .embed(batch)
                .map_err(|error| warn(&format!("warning: embedding failed: {error}")))
                .ok()?,
        );
    }
    Some(vectors)
}

pub(super) async fn publish(
    context: &Context,
    registry: &Registry,
    dirs: &[PathBuf],
    owner: &str,
    expect_seq: Option<i32>,
    embed_model: Option<&Path>,
    json: bool,
) -> anyhow::Result<ExitCode> {
    skillet_registry::check_owner(owner)?;
    let dirs = skill_dirs(context, dirs)?;
    if expect_seq.is_some() && dirs.len() != 1 {
        return Err(UsageError::new(format!(
            "--expect-seq names one skill's version, and {} skills are being published",
            dirs.len()
        ))
        .with_hint("publish that skill alone: skillet registry publish DIR --expect-seq N")
        .into());
    }
    let mut results = Vec::new();
    let prepared = prepare_all(&dirs, &mut results);
    let mut failed = results.len();
    let vectors = if prepared.is_empty() {
        None
    } else {
        let texts: Vec<&str> = prepared.iter().map(|p| p.embedding_text.as_str()).collect();
        embed(&texts, embed_model, Need::Optional)
    };
    if vectors.is_none() && !prepared.is_empty() {
        warn(
            "note: published without vectors (no embedding model here): search finds them by \
             words only until they are published again where the model is",
        );
    }
    let mut text = String::new();
    for (at, skill) in prepared.iter().enumerate() {
        let vector = vectors.as_ref().and_then(|v| v.get(at)).map(Vec::as_slice);
        match registry.publish(skill, owner, expect_seq, vector).await {
            Ok(published) => {
                let line = if published.created {
                    format!(
                        "published {}/{}@{} ({})\n",
                        published.owner, published.name, published.seq, published.hash
                    )
                } else {
                    let yanked = if published.yanked { ", yanked" } else { "" };
                    format!(
                        "{}/{}@{}: unchanged (this content is that version{yanked})\n",
                        published.owner, published.name, published.seq
                    )
                };
                text.push_str(&line);
                results.push(
                    json!({"dir": crate::commands::path_json(Some(&skill.dir)), "published": published}),
                );
            }
            // A registry that cannot be reached fails every skill the same way: said once.
            Err(
                error @ (RegistryError::Unreachable { .. }
                | RegistryError::Credentials { .. }
                | RegistryError::Tls { .. }
                | RegistryError::NotInitialized
                | RegistryError::NoVector(_)
                | RegistryError::OldSchema { .. }
                | RegistryError::NewSchema { .. }),
            ) => {
                cut_off(
                    registry,
                    &text,
                    &mut results,
                    (prepared.len() - at, &error),
                    json,
                )?;
                return Err(error.into());
            }
            Err(error) => {
                failed += 1;
                warn(&format!("error: {}: {error}", skill.dir.display()));
                results.push(
                    json!({"dir": crate::commands::path_json(Some(&skill.dir)), "error": error.to_string()}),
                );
            }
        }
    }
    if json {
        stdout_json(&json!({"registry": registry.at(), "results": results}))?;
    } else {
        stdout_text(&text)?;
    }
    Ok(if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_FAILURE)
    })
}

/// Each folder read and checked as a skill; a failure is said and added to `results`.
pub(super) fn prepare_all(dirs: &[PathBuf], results: &mut Vec<serde_json::Value>) -> Vec<Prepared> {
    let mut prepared = Vec::new();
    for dir in dirs {
        match prepare(dir) {
            Ok(skill) => {
                for skipped in &skill.bundle.skipped {
                    warn(&format!(
                        "note: {}: {skipped} is hidden, so it is not published",
                        dir.display()
                    ));
                }
                prepared.push(skill);
            }
            Err(error) => {
                warn(&format!("error: {error}"));
                results
                    .push(json!({"dir": crate::commands::path_json(Some(&dir)), "error": error.to_string()}));
            }
        }
    }
    prepared
}

/// A publish cut off midway (the registry gone): what did commit is said first, then how many
/// were not, so nothing published is left unsaid.
pub(super) fn cut_off(
    registry: &Registry,
    text: &str,
    results: &mut Vec<serde_json::Value>,
    (rest, error): (usize, &RegistryError),
    json: bool,
) -> anyhow::Result<()> {
    let done = results
        .iter()
        .filter(|r| r.get("published").is_some())
        .count();
    if json {
        results.push(json!({"error": error.to_string(), "not_published": rest}));
        stdout_json(&json!({"registry": registry.at(), "results": results}))?;
    } else {
        stdout_text(text)?;
    }
    if done > 0 {
        warn(&format!(
            "note: {done} skill(s) were published before this error; {rest} were not \
             (publishing them again is safe: the same content is the same version)"
        ));
    }
    Ok(())
}
