//! `skills validate`'s advice that needs the library: a description that means nearly what
//! another skill's says ([`skillet_library::findability`]), by meaning, where the embedding
//! model is already here (never downloaded for this; said once when it is not).

use std::path::{Path, PathBuf};

use skillet_library::findability::{NEAR_DUPLICATE_COSINE, near_duplicate};
use skillet_library::model::{Need, index_with};
use skillet_skills::{Diagnostic, Root, RootKind, Validation, discover, find_skill_file};

use super::Context;
use super::matching::{model_env, stderr_events};
use crate::output::warn;

/// Adds to each validated skill the advice that another skill of the library (the roots, and
/// the folders being validated) means nearly what it says.
pub fn near_duplicates(context: &Context, paths: &[PathBuf], validations: &mut [Validation]) {
    if validations.iter().all(|v| v.name.is_none()) {
        return;
    }
    // The folders validated come first, so that a skill being validated is the one found; a
    // skill folder is a root of its own (its siblings are no part of the library).
    let mut roots: Vec<Root> = paths
        .iter()
        .map(|path| context.env.cwd.join(path))
        .filter_map(|path| {
            let dir = if path.is_file() {
                path.parent()?.to_path_buf()
            } else {
                path
            };
            Some(Root::new(dir, RootKind::Explicit))
        })
        .collect();
    roots.extend(context.roots.iter().cloned());
    let library = discover(&roots);
    if library.skills().len() < 2 {
        return;
    }
    // Only a model already here: validating never downloads one.
    let env = model_env(None);
    let Some(index) = env
        .model_dir()
        .and_then(|dir| index_with(&library, &dir, &env, Need::Optional, &mut stderr_events()))
    else {
        warn(
            "note: without the embedding model, descriptions were not compared with the other skills'",
        );
        return;
    };
    let positions: std::collections::HashMap<PathBuf, usize> = library
        .skills()
        .iter()
        .enumerate()
        // A command's folder is not its own: only skill folders are validated here.
        .filter(|(_, skill)| !skill.is_command())
        .filter_map(|(at, skill)| Some((std::fs::canonicalize(&skill.dir).ok()?, at)))
        .collect();
    for validation in validations.iter_mut().filter(|v| v.name.is_some()) {
        let dir = if validation.path.is_file() {
            validation.path.parent().map(Path::to_path_buf)
        } else {
            Some(validation.path.clone())
        };
        let Some((dir, real)) =
            dir.and_then(|dir| std::fs::canonicalize(&dir).ok().map(|real| (dir, real)))
        else {
            continue;
        };
        let Some(near) = positions
            .get(&real)
            .and_then(|at| near_duplicate(&index, &library, *at))
        else {
            continue;
        };
        let file = find_skill_file(&dir).unwrap_or_else(|| dir.join("SKILL.md"));
        validation.diagnostics.push(
            Diagnostic::warning(
                &file,
                format!(
                    "Field 'description' means nearly what skill '{}' in {} says (cosine {:.2}; from {NEAR_DUPLICATE_COSINE:.2} on, two skills are nearly the same)",
                    near.other.name,
                    near.other.dir.display(),
                    near.cosine,
                ),
            )
            .with_field("description")
            .with_hint("say what sets this skill apart, or merge the two: a model may load either one for the same request"),
        );
    }
}
