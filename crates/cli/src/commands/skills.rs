//! `skillet skills …`: list, show, catalog, validate, new (`audit` is in its own module).

use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use serde_json::{Value, json};
use skillet_library::model::session_index;
use skillet_skills::{
    CatalogFormat, Diagnostic, Invoker, Library, Skill, Validation, discover, find_git_root,
    locate, render_catalog, scaffold_skill, validate_file, validate_path,
};

use super::Context;
use super::matching::{model_env, stderr_events};
use crate::args::{CatalogFormatArg, SkillsCommand};
use crate::output::{terminal_safe, warn};
use crate::settings::{Settings, SettingsError, Sources};
use crate::{EXIT_FAILURE, UsageError, env, plural};

/// The widest a description is shown in the `list` table.
const LIST_DESCRIPTION_CHARS: usize = 72;

pub fn run(context: &Context, command: SkillsCommand) -> anyhow::Result<ExitCode> {
    match command {
        SkillsCommand::List { json } => list(context, json),
        SkillsCommand::Show { name } => show(context, &name),
        SkillsCommand::Catalog {
            format,
            budget,
            model,
            first_message,
        } => catalog(context, format, budget, model, first_message.as_deref()),
        SkillsCommand::Validate { paths, json } => validate(context, &paths, json),
        SkillsCommand::Audit { paths, json } => super::audit::run(context, &paths, json),
        SkillsCommand::New { name, dir } => new(context, &name, dir),
        SkillsCommand::Match {
            query,
            top_k,
            mode,
            json,
            explain,
            skill,
            embed_model,
        } => super::matching::run_match(
            context,
            &super::matching::MatchRequest {
                query: &query,
                top_k,
                mode,
                json,
                explain: explain || skill.is_some(),
                skill: skill.as_deref(),
            },
            embed_model.as_deref(),
        ),
        SkillsCommand::Test {
            names,
            queries,
            json,
            model,
            embed_model,
        } => super::triggers::run(
            context,
            &super::triggers::TestRequest {
                names: &names,
                queries: queries.as_deref(),
                json,
                ask_model: model,
            },
            embed_model.as_deref(),
        ),
        SkillsCommand::Index { embed_model } => {
            super::matching::run_index(context, embed_model.as_deref())
        }
    }
}

fn list(context: &Context, json: bool) -> anyhow::Result<ExitCode> {
    let library = discover(&context.roots);
    let mut out = BufWriter::new(io::stdout().lock());
    if json {
        let skills: Vec<Value> = library.skills().iter().map(skill_json).collect();
        serde_json::to_writer_pretty(&mut out, &skills)?;
        writeln!(out)?;
    } else {
        write_table(&mut out, &library)?;
    }
    out.flush()?;
    drop(out);
    print_diagnostics(&library);
    if library.skills().is_empty() && !json {
        warn(&no_skills_found(context));
    }
    Ok(ExitCode::SUCCESS)
}

/// Where skillet looked, for a list that came back empty.
pub(super) fn no_skills_found(context: &Context) -> String {
    let roots: Vec<String> = context
        .roots
        .iter()
        .map(|root| {
            let state = if root.path.is_dir() { "" } else { " (absent)" };
            format!("  {} ({}){state}", root.path.display(), root.label())
        })
        .collect();
    format!(
        "no skills found; looked in:\n{}\n  hint: `skillet skills new NAME` creates one in {}",
        roots.join("\n"),
        default_new_dir(&context.env.cwd).display()
    )
}

fn write_table(out: &mut impl Write, library: &Library) -> io::Result<()> {
    let skills = library.skills();
    if skills.is_empty() {
        return Ok(());
    }
    let name_width = skills
        .iter()
        .map(|skill| skill.name.chars().count())
        .max()
        .unwrap_or(0)
        .max("NAME".len());
    let source_width = skills
        .iter()
        .map(|skill| skill.origin().chars().count())
        .max()
        .unwrap_or(0)
        .max("explicit".len());
    writeln!(
        out,
        "{:<name_width$}  {:<source_width$}  DESCRIPTION",
        "NAME", "SOURCE"
    )?;
    for skill in skills {
        let mut flags = String::new();
        if !skill.model_invocable() {
            flags.push_str("[user only] ");
        }
        if !skill.user_invocable() {
            flags.push_str("[model only] ");
        }
        writeln!(
            out,
            "{:<name_width$}  {:<source_width$}  {flags}{}",
            terminal_safe(&skill.name, false),
            terminal_safe(&skill.origin(), false),
            terminal_safe(&shorten(&skill.description, LIST_DESCRIPTION_CHARS), false)
        )?;
    }
    Ok(())
}

fn shorten(text: &str, limit: usize) -> String {
    if text.chars().count() <= limit {
        return text.to_string();
    }
    let cut: String = text.chars().take(limit - 1).collect();
    format!("{}…", cut.trim_end())
}

fn print_diagnostics(library: &Library) {
    for skill in library.skills() {
        for diagnostic in &skill.diagnostics {
            warn(&diagnostic.to_string());
        }
    }
    for diagnostic in library.diagnostics() {
        warn(&diagnostic.to_string());
    }
}

fn skill_json(skill: &Skill) -> Value {
    let fields = &skill.frontmatter;
    json!({
        "name": skill.name,
        "description": skill.description,
        "path": super::path_json(Some(&skill.file)),
        "dir": super::path_json(Some(&skill.dir)),
        "root": super::path_json(Some(&skill.root)),
        "root_kind": skill.root_kind.as_str(),
        "command": skill.is_command(),
        "model_invocable": skill.model_invocable(),
        "user_invocable": skill.user_invocable(),
        "license": fields.license,
        "compatibility": fields.compatibility,
        "allowed_tools": fields.allowed_tools,
        "when_to_use": fields.when_to_use,
        "argument_hint": fields.argument_hint,
        "tags": fields.tags,
        "metadata": fields.metadata.iter().map(|(key, value)| (key.clone(), Value::from(value.as_str()))).collect::<serde_json::Map<String, Value>>(),
        "unknown_fields": fields.unknown_fields,
        "diagnostics": skill.diagnostics.iter().map(ToString::to_string).collect::<Vec<_>>(),
        "shadowed": skill.shadowed,
    })
}

fn show(context: &Context, name: &str) -> anyhow::Result<ExitCode> {
    let library = discover(&context.roots);
    match library.load(name, Invoker::User) {
        Ok(text) => {
            let mut out = io::stdout().lock();
            writeln!(out, "{}", terminal_safe(&text, true))?;
            out.flush()?;
            Ok(ExitCode::SUCCESS)
        }
        // The model's error lists the names it may load; a person gets the close ones only.
        Err(skillet_skills::LoadError::Unknown { suggestions, .. }) => {
            let hint = if suggestions.is_empty() {
                String::new()
            } else {
                let quoted: Vec<String> = suggestions.iter().map(|s| format!("'{s}'")).collect();
                format!("; did you mean {}?", quoted.join(" or "))
            };
            warn(&format!(
                "error: unknown skill '{}'{hint}\n  hint: `skillet skills list` shows every skill",
                terminal_safe(name, false)
            ));
            Ok(ExitCode::from(EXIT_FAILURE))
        }
        Err(error) => {
            warn(&format!("error: {error}"));
            Ok(ExitCode::from(EXIT_FAILURE))
        }
    }
}

fn catalog(
    context: &Context,
    format: CatalogFormatArg,
    budget: Option<usize>,
    model: Option<String>,
    first_message: Option<&str>,
) -> anyhow::Result<ExitCode> {
    let (budget, why) = match budget {
        Some(budget) => (budget, "--budget".to_string()),
        None => agent_catalog_budget(context, model),
    };
    let library = discover(&context.roots);
    let (catalog, search) = match format {
        // What a session sends: when the skills do not all fit, those closest to the first
        // message first (with `--for`), and search_skills for the rest.
        CatalogFormatArg::List => {
            let fits = render_catalog(library.skills(), CatalogFormat::List, budget)
                .report
                .dropped
                .is_empty();
            // Ranking needs the index (and perhaps the model): only for `--for`.
            let index = (!fits && first_message.is_some())
                .then(|| session_index(&library, &model_env(None), &mut stderr_events()));
            let (catalog, _) =
                skillet_agent::session_catalog(&library, budget, index.as_ref(), first_message);
            (catalog, !fits)
        }
        CatalogFormatArg::Xml => (
            render_catalog(library.skills(), CatalogFormat::Xml, budget),
            false,
        ),
    };
    if !catalog.text.is_empty() {
        let mut out = io::stdout().lock();
        writeln!(out, "{}", terminal_safe(&catalog.text, true))?;
        out.flush()?;
    }
    if let Some(summary) = catalog.report.summary() {
        warn(&format!("warning: {summary}\n  budget: {why}"));
        if search {
            warn(
                "note: with skill matching on (the default), a session also gets the search_skills tool to find the skills left out, and lists first those closest to its first message (see them with --for MESSAGE)",
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The catalog budget `run` and `chat` give the model (resolved as they resolve it: the
/// `catalog_budget` of a skillet.toml, else 1% of the configured model's context window), and
/// why. With no provider configured, the budget of `--model` or `MODEL_ID`, else of a model
/// skillet does not know.
fn agent_catalog_budget(context: &Context, model: Option<String>) -> (usize, String) {
    let project_root = find_git_root(&context.env.cwd).unwrap_or_else(|| context.env.cwd.clone());
    let args = skillet_session::Flags {
        model: model.clone(),
        ..skillet_session::Flags::default()
    };
    let resolved = Settings::resolve(
        &args,
        false,
        // The catalog budget is no grant: trust changes nothing here.
        &Sources::of_this_process(&project_root, false),
    );
    match resolved {
        Ok(settings) => {
            let (budget, why) = settings.effective_catalog_budget();
            (
                budget,
                format!("{budget} characters, as `run` and `chat` use it: {why}"),
            )
        }
        Err(error) => {
            if !matches!(
                error,
                SettingsError::NoProvider { .. }
                    | SettingsError::MissingKey { .. }
                    | SettingsError::NoModel { .. }
            ) {
                warn(&format!("warning: {error}"));
            }
            let model = model.or_else(|| env::var(env::MODEL_ID));
            let budget = skillet_agent::catalog_budget(model.as_deref().unwrap_or_default());
            let why = match model {
                Some(model) => format!(
                    "{budget} characters: {}",
                    crate::settings::default_budget_why(&model, budget)
                ),
                None => format!(
                    "{budget} characters: no model is configured, so that of a model skillet does not know"
                ),
            };
            (budget, format!("{why} (--budget or --model to change)"))
        }
    }
}

fn validate(context: &Context, paths: &[PathBuf], json: bool) -> anyhow::Result<ExitCode> {
    if let Some(missing) = paths
        .iter()
        .find(|path| !context.env.cwd.join(path).exists())
    {
        return Err(UsageError::new(format!(
            "skills validate: {}: no such file or folder",
            missing.display()
        ))
        .with_hint("name skill folders, SKILL.md files or roots; with none, every discovered skill is checked")
        .into());
    }
    let mut validations: Vec<Validation> = if paths.is_empty() {
        let (locations, walk_diagnostics) = locate(&context.roots);
        // Claude Code's custom commands are not Agent Skills: no field is required of them,
        // so the specification's checks do not apply (`skills list` shows what they read as).
        let mut validations: Vec<Validation> = locations
            .iter()
            .filter(|location| location.form == skillet_skills::Form::Folder)
            .map(|location| validate_file(&location.file, &location.dir))
            .collect();
        if !walk_diagnostics.is_empty() {
            validations.push(Validation {
                path: context.env.cwd.clone(),
                name: None,
                diagnostics: walk_diagnostics,
            });
        }
        validations
    } else {
        paths
            .iter()
            .flat_map(|path| validate_path(&context.env.cwd.join(path)))
            .collect()
    };
    // A skill's trigger tests must have the shape `skills test` reads.
    for validation in &mut validations {
        let dir = if validation.path.is_file() {
            validation.path.parent().map(Path::to_path_buf)
        } else {
            Some(validation.path.clone())
        };
        let Some(triggers) = dir.map(|dir| dir.join(skillet_library::triggers::TRIGGERS_FILE))
        else {
            continue;
        };
        if triggers.exists()
            && let Err(error) = skillet_library::triggers::Triggers::read(&triggers)
        {
            let message = match &error {
                skillet_library::triggers::TriggersError::Read { message, .. }
                | skillet_library::triggers::TriggersError::Shape { message, .. } => {
                    message.clone()
                }
            };
            validation.diagnostics.push(
                skillet_skills::Diagnostic::error(&triggers, format!("trigger file: {message}"))
                    .with_hint(
                        "a trigger file is {\"should\": [\"a request…\"], \"should_not\": [\"…\"]}",
                    ),
            );
        }
    }
    super::advice::near_duplicates(context, paths, &mut validations);
    let errors: usize = validations.iter().map(|v| v.errors().count()).sum();
    let warnings: usize = validations.iter().map(|v| v.warnings().count()).sum();
    let mut out = BufWriter::new(io::stdout().lock());
    if json {
        let items: Vec<Value> = validations.iter().map(validation_json).collect();
        serde_json::to_writer_pretty(&mut out, &items)?;
        writeln!(out)?;
    } else {
        for diagnostic in validations.iter().flat_map(|v| &v.diagnostics) {
            writeln!(out, "{}", terminal_safe(&diagnostic.to_string(), true))?;
        }
        let skills = validations
            .iter()
            .filter(|v| v.name.is_some() || v.path.is_file())
            .count();
        let failing = validations.iter().filter(|v| !v.is_valid()).count();
        writeln!(
            out,
            "{} checked: {failing} with errors; {}, {}",
            plural(skills, "skill"),
            plural(errors, "error"),
            plural(warnings, "warning")
        )?;
    }
    out.flush()?;
    Ok(if errors > 0 {
        ExitCode::from(EXIT_FAILURE)
    } else {
        ExitCode::SUCCESS
    })
}

fn validation_json(validation: &Validation) -> Value {
    let items = |diagnostics: Vec<&Diagnostic>| -> Vec<Value> {
        diagnostics
            .into_iter()
            .map(|d| {
                json!({
                    "message": d.message,
                    "path": super::path_json(Some(&d.path)),
                    "line": d.line,
                    "field": d.field,
                    "hint": d.hint,
                })
            })
            .collect()
    };
    json!({
        "path": super::path_json(Some(&validation.path)),
        "name": validation.name,
        "valid": validation.is_valid(),
        "errors": items(validation.errors().collect()),
        "warnings": items(validation.warnings().collect()),
    })
}

fn new(context: &Context, name: &str, dir: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    let parent = match dir {
        Some(dir) => context.env.cwd.join(dir),
        None => default_new_dir(&context.env.cwd),
    };
    let file = scaffold_skill(&parent, name).map_err(|error| match error {
        skillet_skills::Error::InvalidName { .. } => {
            anyhow::Error::new(UsageError::new(format!("skills new: {error}")).with_hint(
                "a name is lowercase letters, digits and single hyphens, e.g. pdf-forms",
            ))
        }
        other => anyhow::Error::new(other).context("cannot create the skill"),
    })?;
    // Trigger tests to fill in, beside it (`skills test` runs them).
    let dir = file.parent().map_or(file.as_path(), Path::new);
    let triggers = dir.join(skillet_library::triggers::TRIGGERS_FILE);
    if let Some(evals) = triggers.parent() {
        std::fs::create_dir_all(evals)?;
    }
    std::fs::write(
        &triggers,
        skillet_library::triggers::Triggers::template(name),
    )?;
    let mut out = io::stdout().lock();
    writeln!(out, "created {}", file.display())?;
    writeln!(
        out,
        "created {} (trigger tests: `skillet skills test {name}`)",
        triggers.display()
    )?;
    writeln!(
        out,
        "next: write its description and instructions, then run `skillet skills validate {}`",
        file.parent().map_or(file.as_path(), Path::new).display()
    )?;
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// The project's skill root at its root (the git root, else the working directory):
/// `.agents/skills`, or `.claude/skills` when that one exists and `.agents/skills` does not (a
/// project set up for Claude Code keeps its skills together).
fn default_new_dir(cwd: &Path) -> PathBuf {
    let project = find_git_root(cwd).unwrap_or_else(|| cwd.to_path_buf());
    let agents = project.join(".agents").join("skills");
    let claude = project.join(".claude").join("skills");
    if !agents.is_dir() && claude.is_dir() {
        claude
    } else {
        agents
    }
}
