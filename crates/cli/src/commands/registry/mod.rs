//! `skillet registry …`: the shared registry (see `skillet_registry`) from the command line.
//! The registry is `--registry`, `SKILLET_REGISTRY_URL` or `registry_url` in skillet.toml (a
//! project's only once trusted: it decides where skills come from and where credentials go).

use std::fmt::Write as _;
use std::io::{self, Write as _};
use std::path::Path;
use std::process::ExitCode;

use serde_json::json;
use skillet_library::model::Need;
use skillet_registry::{Registry, SearchSettings, parse_reference};
use skillet_retrieval::Mode;

use super::Context;
use crate::args::{MatchModeArg, RegistryArgs, RegistryCommand};
use crate::output::{terminal_safe, warn};
use crate::settings::Sources;
use crate::{EXIT_FAILURE, UsageError};

mod install;
mod publish;

use install::{install, install_locked, installed, update};
use publish::{embed, publish};

/// The most characters of a description `search` and `list` print (JSON has it whole).
const MAX_SHOWN_DESCRIPTION: usize = 160;

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
    let project_names_one = crate::settings::project_grants(&project_root, None)
        .ok()
        .flatten()
        .is_some_and(|(_, grants)| grants.iter().any(|g| g.starts_with("registry_url")));
    let trusted_project = project_names_one && {
        let library = skillet_skills::discover(&context.roots);
        super::trust::recorded_standing(context, &library).0
    };
    let (url, warnings) = crate::settings::registry_url(
        flag,
        &Sources::of_this_process(&project_root, trusted_project),
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
        warn(&format!(
            "note: ranked by words only (no embedding model here)\n  hint: {}",
            skillet_library::model::WORDS_ONLY_HINT
        ));
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
