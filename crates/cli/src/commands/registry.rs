//! `skillet registry …`: the shared registry (see `skillet_registry`) from the command line.
//! The registry is `--registry`, `SKILLET_REGISTRY_URL` or `registry_url` in skillet.toml (a
//! project's only once trusted: it decides where skills come from and where credentials go).

use std::fmt::Write as _;
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use serde_json::json;
use skillet_library::model::{ModelEvent, Need, find_or_download};
use skillet_registry::{
    Fetched, Installed, LOCK_FILE, Lock, Prepared, Registry, RegistryError, SearchSettings, Target,
    parse_reference, prepare,
};
use skillet_retrieval::Mode;
use skillet_skills::{Root, RootKind, find_skill_file, locate};

use super::Context;
use super::matching::{model_env, stderr_events};
use crate::args::{InstallTargetArgs, MatchModeArg, RegistryArgs, RegistryCommand};
use crate::output::{terminal_safe, warn};
use crate::settings::{Sources, user_config_dir, user_data_dir};
use crate::{EXIT_FAILURE, UsageError, env};

/// The most characters of a description `search` and `list` print (JSON has it whole).
const MAX_SHOWN_DESCRIPTION: usize = 160;

/// Texts embedded at once when publishing.
const EMBED_BATCH: usize = 32;

pub fn run(context: &Context, args: RegistryArgs) -> anyhow::Result<ExitCode> {
    let registry = open(context, args.registry.as_deref())?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        match args.command {
            RegistryCommand::Init { json, recount } => init(&registry, json, recount).await,
            RegistryCommand::Publish {
                dirs,
                owner,
                expect_seq,
                embed_model,
                json,
            } => {
                publish(
                    context,
                    &registry,
                    &dirs,
                    &owner,
                    expect_seq,
                    embed_model.as_deref(),
                    json,
                )
                .await
            }
            RegistryCommand::Search {
                query,
                top_k,
                mode,
                embed_model,
                json,
            } => {
                search(
                    context,
                    &registry,
                    &query,
                    usize::from(top_k),
                    mode,
                    embed_model.as_deref(),
                    json,
                )
                .await
            }
            RegistryCommand::Install {
                skill,
                target,
                force,
                json,
            } => match skill {
                Some(skill) => install(context, &registry, &skill, &target, force, json).await,
                None => install_locked(context, &registry, &target, force, json).await,
            },
            RegistryCommand::Update {
                names,
                target,
                force,
                json,
            } => update(context, &registry, &names, &target, force, json).await,
            RegistryCommand::List { skill, json } => list(&registry, skill.as_deref(), json).await,
            RegistryCommand::Yank { skill, json } => yank(&registry, &skill, json).await,
            RegistryCommand::Owner {
                owner,
                claim,
                role,
                json,
            } => owner_command(&registry, &owner, claim, role.as_deref(), json).await,
        }
    })
}

/// The registry named by the flag, the environment or a config file.
fn open(context: &Context, flag: Option<&str>) -> anyhow::Result<Registry> {
    let Some(url) = configured_url(context, flag)? else {
        return Err(UsageError::new("no registry is configured")
            .with_hint(
                "give --registry postgresql://USER@HOST/DB, set SKILLET_REGISTRY_URL, or \
                 registry_url in ~/.config/skillet/skillet.toml",
            )
            .into());
    };
    Ok(Registry::new(&url)?)
}

/// The registry URL from the flag, the environment or a config file (a project's only once
/// trusted), its notes printed; `None` when none is configured.
pub fn configured_url(context: &Context, flag: Option<&str>) -> anyhow::Result<Option<String>> {
    let project_root = context.project_root();
    // Trust (which reads every skill to see what it unlocks) matters only when the project's
    // own skillet.toml names a registry.
    let project_names_one = crate::settings::project_grants(&project_root)
        .ok()
        .flatten()
        .is_some_and(|(_, grants)| grants.iter().any(|g| g.starts_with("registry_url")));
    let trusted_project = project_names_one && {
        let library = skillet_skills::discover(&context.roots);
        super::trust::recorded_standing(context, &library).0
    };
    let (url, warnings) = crate::settings::registry_url(
        flag,
        &Sources {
            var: &env::var,
            project_root: &project_root,
            user_config_dir: user_config_dir(),
            user_data_dir: user_data_dir(),
            trusted_project,
        },
    )?;
    for warning in warnings {
        warn(&warning);
    }
    Ok(url)
}

fn stdout_json(value: &serde_json::Value) -> anyhow::Result<()> {
    let mut out = io::stdout().lock();
    serde_json::to_writer_pretty(&mut out, value)?;
    writeln!(out)?;
    Ok(())
}

fn stdout_text(text: &str) -> anyhow::Result<()> {
    let mut out = io::stdout().lock();
    out.write_all(terminal_safe(text, true).as_bytes())?;
    Ok(())
}

async fn init(registry: &Registry, json: bool, recount: bool) -> anyhow::Result<ExitCode> {
    let mut report = registry.init().await?;
    if recount {
        report.applied.extend(registry.recount().await?);
    }
    if json {
        stdout_json(&json!({"registry": registry.at(), "report": report}))?;
        return Ok(ExitCode::SUCCESS);
    }
    let done = if report.applied.is_empty() {
        "up to date".to_string()
    } else {
        format!("applied {}", report.applied.join(", "))
    };
    let mut text = format!(
        "registry {} (schema {:?}): schema version {} ({done})\nPostgreSQL {}, pgvector {}\n",
        registry.at(),
        report.schema,
        report.to,
        report.server,
        report.vector
    );
    for change in &report.grants {
        let _ = writeln!(text, "grants: {change}");
    }
    for advice in &report.advice {
        let _ = writeln!(text, "note: {advice}");
    }
    let _ = writeln!(
        text,
        "who may do what: GRANT {} TO <user> to search and install, GRANT {} TO <user> to \
         publish and yank too (nobody is granted rights on the tables)",
        skillet_registry::READER_ROLE,
        skillet_registry::PUBLISHER_ROLE
    );
    stdout_text(&text)?;
    Ok(ExitCode::SUCCESS)
}

/// The skill folders under the given folders: a folder with a SKILL.md is one skill, any other
/// is a root whose skills are all taken.
fn skill_dirs(context: &Context, dirs: &[PathBuf]) -> anyhow::Result<Vec<PathBuf>> {
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
fn embed(texts: &[&str], embed_model: Option<&Path>, need: Need) -> Option<Vec<Vec<f32>>> {
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

async fn publish(
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
                    json!({"dir": super::path_json(Some(&skill.dir)), "published": published}),
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
                    json!({"dir": super::path_json(Some(&skill.dir)), "error": error.to_string()}),
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
fn prepare_all(dirs: &[PathBuf], results: &mut Vec<serde_json::Value>) -> Vec<Prepared> {
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
                    .push(json!({"dir": super::path_json(Some(&dir)), "error": error.to_string()}));
            }
        }
    }
    prepared
}

/// A publish cut off midway (the registry gone): what did commit is said first, then how many
/// were not, so nothing published is left unsaid.
fn cut_off(
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

/// Where install and update write, and the lock file they keep.
fn target(context: &Context, args: &InstallTargetArgs) -> anyhow::Result<Target> {
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

fn installed_line(installed: &Installed) -> String {
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

async fn install(
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
async fn install_locked(
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

async fn update(
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
fn report_lock_run(
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
async fn update_one(
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

async fn list(registry: &Registry, skill: Option<&str>, json: bool) -> anyhow::Result<ExitCode> {
    if let Some(skill) = skill {
        let (owner, name, seq) = parse_reference(skill)?;
        if seq.is_some() {
            return Err(UsageError::new("list takes OWNER/NAME, without @SEQ").into());
        }
        let versions = registry.versions(&owner, &name).await?;
        if json {
            stdout_json(&json!({"skill": format!("{owner}/{name}"), "versions": versions}))?;
            return Ok(ExitCode::SUCCESS);
        }
        let mut text = format!("{owner}/{name}\n");
        for version in &versions {
            let yanked = if version.yanked { "  yanked" } else { "" };
            let _ = writeln!(
                text,
                "  @{:<4} {}  {}  {}{yanked}",
                version.seq, version.hash, version.published_at, version.published_by
            );
        }
        stdout_text(&text)?;
        return Ok(ExitCode::SUCCESS);
    }
    let skills = registry.list().await?;
    if json {
        stdout_json(&json!({"registry": registry.at(), "skills": skills}))?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut text = String::new();
    for skill in &skills {
        let seq = skill
            .seq
            .map_or_else(|| "(all yanked)".to_string(), |seq| format!("@{seq}"));
        let description = shorten(
            skill.description.as_deref().unwrap_or(""),
            MAX_SHOWN_DESCRIPTION,
        );
        let _ = writeln!(
            text,
            "{}/{}{seq}  {}",
            skill.owner,
            skill.name,
            terminal_safe(&description, false)
        );
    }
    if skills.is_empty() {
        text.push_str("the registry holds no skills yet (`skillet registry publish` adds some)\n");
    }
    stdout_text(&text)?;
    Ok(ExitCode::SUCCESS)
}

async fn yank(registry: &Registry, skill: &str, json: bool) -> anyhow::Result<ExitCode> {
    let (owner, name, seq) = parse_reference(skill)?;
    let Some(seq) = seq else {
        return Err(UsageError::new("yank takes one version: OWNER/NAME@SEQ")
            .with_hint(format!(
                "`skillet registry list {owner}/{name}` shows its versions"
            ))
            .into());
    };
    let yanked = registry.yank(&owner, &name, seq).await?;
    if json {
        stdout_json(&json!(yanked))?;
        return Ok(ExitCode::SUCCESS);
    }
    let latest = yanked.now_latest.map_or_else(
        || "no version of it is offered now".to_string(),
        |seq| format!("search and install now offer @{seq}"),
    );
    let done = if yanked.changed {
        "yanked"
    } else {
        "was yanked already"
    };
    stdout_text(&format!("{} {done}; {latest}\n", yanked.skill))?;
    Ok(ExitCode::SUCCESS)
}

/// `skillet registry owner`: who holds an owner; claim it or hand it to a role.
async fn owner_command(
    registry: &Registry,
    owner: &str,
    claim: bool,
    role: Option<&str>,
    json: bool,
) -> anyhow::Result<ExitCode> {
    skillet_registry::check_owner(owner)?;
    let (held_by, did) = if claim {
        (Some(registry.claim_owner(owner).await?), "claimed")
    } else if let Some(role) = role {
        registry.set_owner_role(owner, role).await?;
        (Some(role.to_string()), "handed over")
    } else {
        (registry.owner_role(owner).await?, "")
    };
    if json {
        stdout_json(&json!({"owner": owner, "role": held_by}))?;
        return Ok(ExitCode::SUCCESS);
    }
    let text = match (held_by, did) {
        (None, _) => format!(
            "{owner} is not held by anyone yet: the first to publish under it (or \
             `skillet registry owner {owner} --claim`) holds it\n"
        ),
        (Some(role), "") => format!(
            "{owner} is held by the database role {role}: its members publish and yank under it\n"
        ),
        (Some(role), did) => format!(
            "{owner}: {did}; the database role {role} holds it: its members publish and yank \
             under it\n"
        ),
    };
    stdout_text(&text)?;
    Ok(ExitCode::SUCCESS)
}

/// The skills installed from a registry, by `owner/name`, from the project's and the user's
/// lock files (for marking search results).
fn installed(context: &Context) -> Vec<(String, i32)> {
    let mut locks = vec![context.project_root().join(LOCK_FILE)];
    locks.extend(user_config_dir().map(|dir| dir.join(LOCK_FILE)));
    locks
        .iter()
        .filter_map(|path| Lock::read(path).ok())
        .flat_map(|lock| lock.skills)
        .map(|entry| (format!("{}/{}", entry.owner, entry.name), entry.seq))
        .collect()
}

async fn search(
    context: &Context,
    registry: &Registry,
    query: &str,
    top_k: usize,
    mode: MatchModeArg,
    embed_model: Option<&Path>,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let mode = match mode {
        MatchModeArg::Lexical => Mode::Lexical,
        MatchModeArg::Semantic => Mode::Semantic,
        MatchModeArg::Hybrid => Mode::Hybrid,
    };
    let vector = if mode == Mode::Lexical {
        None
    } else {
        let need = if mode == Mode::Semantic {
            Need::Semantic
        } else {
            Need::Optional
        };
        embed(&[query], embed_model, need).and_then(|mut vectors| vectors.pop())
    };
    if vector.is_none() && mode == Mode::Semantic {
        return Ok(ExitCode::from(EXIT_FAILURE));
    }
    let results = registry
        .search(
            query,
            vector.as_deref(),
            mode,
            top_k,
            SearchSettings::default(),
        )
        .await?;
    let installed = installed(context);
    let installed_seq = |owner: &str, name: &str| {
        let key = format!("{owner}/{name}");
        installed
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, seq)| *seq)
    };
    if json {
        let items: Vec<serde_json::Value> = results
            .results
            .iter()
            .map(|found| {
                json!({
                    "skill": format!("{}/{}", found.owner, found.name),
                    "seq": found.seq,
                    "description": found.description,
                    "score": found.score,
                    "words": found.words,
                    "cosine": found.cosine,
                    "relevant": found.relevant,
                    "installed": installed_seq(&found.owner, &found.name),
                })
            })
            .collect();
        stdout_json(&json!({"mode": results.mode, "results": items}))?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut text = String::new();
    if results.mode == "lexical" && mode != Mode::Lexical {
        warn("note: ranked by words only (no embedding model here)");
    }
    for (rank, found) in results.results.iter().enumerate() {
        let mark = if found.relevant { '*' } else { ' ' };
        let installed = match installed_seq(&found.owner, &found.name) {
            Some(seq) if seq == found.seq => "  (installed)".to_string(),
            Some(seq) => format!("  (installed @{seq})"),
            None => String::new(),
        };
        let _ = write!(
            text,
            "{:>2}. {mark} {:.3}  {}/{}@{}{installed}\n      {}\n",
            rank + 1,
            found.score,
            found.owner,
            found.name,
            found.seq,
            terminal_safe(&shorten(&found.description, MAX_SHOWN_DESCRIPTION), false)
        );
    }
    if results.results.is_empty() {
        text.push_str("no skill in the registry matches\n");
    }
    stdout_text(&text)?;
    Ok(ExitCode::SUCCESS)
}

/// At most `max` characters of `text`, cut with `…`.
fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut cut: String = text.chars().take(max.saturating_sub(1)).collect();
    cut.push('…');
    cut
}
