//! `skillet registry install` and `update`: where skills go, the lock file, and what each run did.

use std::fmt::Write as _;
use std::process::ExitCode;

use serde_json::json;
use skillet_registry::{
    Fetched, Installed, LOCK_FILE, Lock, Registry, RegistryError, Target, parse_reference,
};

use crate::args::InstallTargetArgs;
use crate::commands::Context;
use crate::output::warn;
use crate::settings::user_config_dir;
use crate::{EXIT_FAILURE, UsageError};

use super::{stdout_json, stdout_text};

/// Where install and update write, and the lock file they keep.
pub(super) fn target(context: &Context, args: &InstallTargetArgs) -> anyhow::Result<Target> {
    let project = context.project_root();
    if args.user {
        let home = context
            .env
            .home
            .clone()
            .ok_or_else(|| UsageError::new("--user: HOME is not set"))?;
        let config = user_config_dir().ok_or_else(|| UsageError::new("--user: HOME is not set"))?;
        let root = home.join(".agents/skills");
        return Ok(Target {
            within: root.clone(),
            root,
            lock: config.join(LOCK_FILE),
        });
    }
    // A folder the user names is theirs; the default root is the project's, opened beneath it
    // by the kernel at install time (a repository's `.agents` link out is refused there).
    let (root, within) = if let Some(dir) = &args.dir {
        let root = context.env.cwd.join(dir);
        (root.clone(), root)
    } else {
        (project.join(".agents/skills"), project.clone())
    };
    let target = Target {
        root,
        lock: project.join(LOCK_FILE),
        within,
    };
    // Said before anything is fetched: the root must not lead out of the project.
    if let Err(error) = target.check() {
        return Err(UsageError::new(error.to_string().replace(
            &format!("outside {}", project.display()),
            "outside the project",
        ))
        .into());
    }
    Ok(target)
}

pub(super) fn installed_line(installed: &Installed) -> String {
    match (installed.changed, installed.replaced) {
        (false, _) => format!(
            "{}: already installed in {}\n",
            installed.skill, installed.dir
        ),
        (true, Some(old)) => format!(
            "installed {} in {} (was @{old})\n",
            installed.skill, installed.dir
        ),
        (true, None) => format!("installed {} in {}\n", installed.skill, installed.dir),
    }
}

pub(super) async fn install(
    context: &Context,
    registry: &Registry,
    skill: &str,
    target_args: &InstallTargetArgs,
    force: bool,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let (owner, name, seq) = parse_reference(skill)?;
    let target = target(context, target_args)?;
    let fetched: Fetched = registry.fetch(&owner, &name, seq, false).await?;
    let installed = skillet_registry::install(&fetched, &target, force)?;
    if json {
        stdout_json(&json!({"installed": installed, "lock": target.lock}))?;
    } else {
        let mut text = installed_line(&installed);
        if installed.changed {
            let _ = writeln!(text, "recorded in {}", target.lock.display());
        }
        stdout_text(&text)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Installs what the lock file lists, each at its recorded version (a yanked one too: the lock
/// names it) and only with its recorded content.
pub(super) async fn install_locked(
    context: &Context,
    registry: &Registry,
    target_args: &InstallTargetArgs,
    force: bool,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let target = target(context, target_args)?;
    let lock = Lock::read(&target.lock)?;
    let mut text = String::new();
    let mut results = Vec::new();
    let mut failed = 0;
    for entry in &lock.skills {
        let reference = format!("{}/{}@{}", entry.owner, entry.name, entry.seq);
        let outcome = async {
            let entry_target = entry.target(&target.lock, target_args.user)?;
            let fetched = registry
                .fetch(&entry.owner, &entry.name, Some(entry.seq), true)
                .await?;
            entry.check(&fetched, &target.lock)?;
            skillet_registry::install(&fetched, &entry_target, force)
        }
        .await;
        match outcome {
            Ok(installed) => {
                text.push_str(&installed_line(&installed));
                results.push(json!({"skill": reference, "installed": installed}));
            }
            Err(error) => {
                failed += 1;
                warn(&format!("error: {error}"));
                results.push(json!({"skill": reference, "error": error.to_string()}));
            }
        }
    }
    report_lock_run(&lock, &target, "install", text, &results, failed, json)
}

pub(super) async fn update(
    context: &Context,
    registry: &Registry,
    names: &[String],
    target_args: &InstallTargetArgs,
    force: bool,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let target = target(context, target_args)?;
    let lock = Lock::read(&target.lock)?;
    let wanted = |entry: &skillet_registry::Locked| {
        names.is_empty()
            || names.iter().any(|name| {
                *name == entry.name || *name == format!("{}/{}", entry.owner, entry.name)
            })
    };
    for name in names {
        if !lock
            .skills
            .iter()
            .any(|e| *name == e.name || *name == format!("{}/{}", e.owner, e.name))
        {
            return Err(
                UsageError::new(format!("{name} is not in {}", target.lock.display()))
                    .with_hint("`skillet registry install OWNER/NAME` installs it")
                    .into(),
            );
        }
    }
    let mut text = String::new();
    let mut results = Vec::new();
    let mut failed = 0;
    for entry in lock.skills.iter().filter(|e| wanted(e)) {
        let reference = format!("{}/{}", entry.owner, entry.name);
        let outcome =
            update_one(registry, entry, &target, target_args.user, force, &mut text).await;
        match outcome {
            Ok(value) => results.push(value),
            Err(error) => {
                failed += 1;
                warn(&format!("error: {error}"));
                results.push(json!({"skill": reference, "error": error.to_string()}));
            }
        }
    }
    report_lock_run(&lock, &target, "update", text, &results, failed, json)
}

/// Prints what a run over the lock file did (`what`: install or update) and its exit code.
pub(super) fn report_lock_run(
    lock: &Lock,
    target: &Target,
    what: &str,
    mut text: String,
    results: &[serde_json::Value],
    failed: usize,
    json: bool,
) -> anyhow::Result<ExitCode> {
    if lock.skills.is_empty() {
        let _ = writeln!(
            text,
            "nothing to {what}: {} lists no skills",
            target.lock.display()
        );
    }
    if json {
        stdout_json(&json!({"lock": target.lock, "results": results}))?;
    } else {
        stdout_text(&text)?;
    }
    Ok(if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_FAILURE)
    })
}

/// Brings one locked skill to its latest version (or says why not), adding its line to `text`.
pub(super) async fn update_one(
    registry: &Registry,
    entry: &skillet_registry::Locked,
    target: &Target,
    user: bool,
    force: bool,
    text: &mut String,
) -> Result<serde_json::Value, RegistryError> {
    let reference = format!("{}/{}", entry.owner, entry.name);
    let entry_target = entry.target(&target.lock, user)?;
    let latest = registry
        .fetch(&entry.owner, &entry.name, None, false)
        .await?;
    entry.check(&latest, &target.lock)?;
    if latest.seq <= entry.seq {
        let note = if latest.seq < entry.seq {
            format!(
                "{reference}@{} is yanked; the latest is @{} (`skillet registry install \
                 {reference}@{}` moves to it)",
                entry.seq, latest.seq, latest.seq
            )
        } else {
            format!("{reference}@{}: up to date", entry.seq)
        };
        text.push_str(&note);
        text.push('\n');
        return Ok(json!({"skill": reference, "seq": entry.seq, "note": note}));
    }
    let installed = skillet_registry::install(&latest, &entry_target, force)?;
    text.push_str(&installed_line(&installed));
    Ok(json!({"skill": reference, "installed": installed}))
}

/// The skills installed from a registry, by `owner/name`, from the project's and the user's
/// lock files (for marking search results).
pub(super) fn installed(context: &Context) -> Vec<(String, i32)> {
    let mut locks = vec![context.project_root().join(LOCK_FILE)];
    locks.extend(user_config_dir().map(|dir| dir.join(LOCK_FILE)));
    locks
        .iter()
        .filter_map(|path| Lock::read(path).ok())
        .flat_map(|lock| lock.skills)
        .map(|entry| (format!("{}/{}", entry.owner, entry.name), entry.seq))
        .collect()
}
