//! `skillet config`: the setup `run` and `chat` would use, and why each value won; and
//! `skillet completions SHELL`.

use std::fmt::Write as _;
use std::io::{self, Write as _};
use std::process::ExitCode;

use clap::CommandFactory as _;
use skillet_skills::find_git_root;

use super::Context;
use crate::args::{AgentArgs, Cli, ConfigArgs};
use crate::env;
use crate::output::{redacted_url, terminal_safe};
use crate::settings::{Origin, Settings, SettingsError, Sources, provider_name, user_config_dir};
use crate::{EXIT_USAGE, LONG_VERSION_LINE};

/// `skillet config`: everything on stdout, the API key shown only as set or not. When the
/// settings cannot be resolved, what can be shown is, then why: a provider not set up yet (no
/// provider, no key, no model for a server) is a note and the exit code 0, since showing that is
/// this command's job; a file or value that is wrong is an error, exit code 2.
pub fn run(context: &Context, args: &ConfigArgs) -> anyhow::Result<ExitCode> {
    let agent_args = AgentArgs {
        provider: args.provider,
        model: args.model.clone(),
        base_url: args.base_url.clone(),
        ..AgentArgs::default()
    }
    .flags();
    let project_root = find_git_root(&context.env.cwd).unwrap_or_else(|| context.env.cwd.clone());
    let library = skillet_skills::discover(&context.roots);
    let (trusted_project, standing) = super::trust::recorded_standing(context, &library);
    let resolved = Settings::resolve(
        &agent_args,
        false,
        &Sources::of_this_process(&project_root, trusted_project),
    );
    let mut text = format!("skillet {LONG_VERSION_LINE}\n");
    let _ = writeln!(
        text,
        "project: {} ({standing})",
        terminal_safe(&project_root.display().to_string(), false),
    );
    let code = if let Ok(settings) = &resolved {
        describe(&mut text, settings);
        let policy = settings.sandbox.policy();
        let _ = writeln!(
            text,
            "{:<16} {}",
            "sandbox mode:",
            skillet_agent::sandbox::describe(&policy, &context.env.cwd)
        );
        let _ = writeln!(
            text,
            "{:<16} {}",
            "permission mode:",
            settings.permission_mode.as_str()
        );
        for dir in &settings.add_dirs {
            let _ = writeln!(text, "{:<16} {}", "added folder:", dir.display());
        }
        describe_rules(
            &mut text,
            &skillet_session::builder::permission_rules(context, settings),
        );
        ExitCode::SUCCESS
    } else {
        let _ = writeln!(text, "config files (the first that sets a key wins):");
        let project_file = project_root.join(crate::settings::CONFIG_FILE);
        let user_file = user_config_dir().map(|dir| dir.join(crate::settings::CONFIG_FILE));
        for file in std::iter::once(project_file).chain(user_file) {
            let state = if file.is_file() { "read" } else { "not found" };
            let _ = writeln!(text, "  {} ({state})", file.display());
        }
        if not_set_up(&resolved) {
            let _ = writeln!(text, "provider:        (not set up: see the note below)");
            ExitCode::SUCCESS
        } else {
            let _ = writeln!(text, "provider:        (none: see the error below)");
            ExitCode::from(EXIT_USAGE)
        }
    };
    describe_skills(&mut text, context);
    describe_instructions(&mut text, context);
    let mut out = io::stdout().lock();
    out.write_all(terminal_safe(&text, true).as_bytes())?;
    out.flush()?;
    drop(out);
    if let Err(error) = &resolved {
        let kind = if not_set_up(&resolved) {
            "note"
        } else {
            "error"
        };
        crate::output::warn(&format!("{kind}: {error}"));
    }
    Ok(code)
}

/// The standing permission rules in force, where each came from, and those that can never
/// match.
fn describe_rules(text: &mut String, rules: &skillet_agent::rules::Rules) {
    if rules.all().is_empty() {
        let _ = writeln!(
            text,
            "permission rules: none (`[permissions]` in skillet.toml, or Claude Code's settings.json)"
        );
        return;
    }
    let _ = writeln!(text, "permission rules (deny, then ask, then allow):");
    let mut sorted: Vec<&skillet_agent::rules::StandingRule> = rules.all().iter().collect();
    sorted.sort_by_key(|rule| rule.decision);
    for rule in sorted {
        let dead = rule
            .dead()
            .map(|why| format!("  never acts: {why}"))
            .unwrap_or_default();
        let _ = writeln!(
            text,
            "  {:<5} {}  ({}){dead}",
            rule.decision.as_str(),
            rule.text,
            rule.source
        );
    }
}

/// Whether the settings fail only for want of a provider set up (nothing wrong in a file).
fn not_set_up(resolved: &Result<Settings, SettingsError>) -> bool {
    matches!(
        resolved,
        Err(SettingsError::NoProvider { .. }
            | SettingsError::MissingKey { .. }
            | SettingsError::NoModel { .. })
    )
}

/// The instruction files a new session here would read into its prompt.
fn describe_instructions(text: &mut String, context: &Context) {
    let user = skillet_agent::instructions::user_instructions_path(&context.env);
    let found = skillet_agent::Instructions::load(&context.env.cwd, user.as_deref());
    match super::session::instructions_text(&found) {
        Some(listing) => {
            let _ = writeln!(
                text,
                "project instructions (--no-instructions leaves them out):"
            );
            for entry in listing.lines() {
                let _ = writeln!(text, "  {entry}");
            }
        }
        None => {
            let _ = writeln!(text, "project instructions: none (AGENTS.md, CLAUDE.md)");
        }
    }
}

/// One `name: value (why)` line.
fn line(text: &mut String, name: &str, value: &str, why: &str) {
    let _ = writeln!(text, "{:<16} {value}  ({why})", format!("{name}:"));
}

/// Where a value came from, in words.
fn why(origin: &Origin) -> String {
    match origin {
        Origin::Flag(flag) => format!("flag {flag}"),
        Origin::Env(name) => format!("environment {name}"),
        Origin::File(path) => format!("{}", path.display()),
        Origin::Default => "default".to_string(),
    }
}

#[expect(
    clippy::too_many_lines,
    reason = "one line per setting, in the order shown"
)]
fn describe(text: &mut String, settings: &Settings) {
    let explanation = &settings.explanation;
    let _ = writeln!(text, "config files (the first that sets a key wins):");
    for (file, found) in &explanation.files {
        let state = if *found { "read" } else { "not found" };
        let _ = writeln!(text, "  {} ({state})", file.display());
    }
    let origin = |key: &str| why(explanation.origin(key));
    line(
        text,
        "provider",
        provider_name(settings.provider),
        &origin("provider"),
    );
    let model_why = match explanation.origin("model") {
        Origin::Default => format!("default for {}", provider_name(settings.provider)),
        other => why(other),
    };
    line(text, "model", &settings.model, &model_why);
    line(
        text,
        "base URL",
        &redacted_url(&settings.base_url),
        &origin("base_url"),
    );
    if let Some(url) = &settings.registry_url {
        line(
            text,
            "registry",
            &redacted_url(url),
            "SKILLET_REGISTRY_URL or registry_url; search_skills searches it too",
        );
    }
    let key = if settings.api_key.is_some() {
        "set"
    } else {
        "not set"
    };
    line(
        text,
        "API key",
        key,
        &format!("environment {}; never shown", explanation.key_env),
    );
    line(
        text,
        "max steps",
        &settings.max_steps.to_string(),
        &origin("max_steps"),
    );
    let thinking = settings.thinking.map_or_else(
        || "off".to_string(),
        |budget| {
            if settings.provider == skillet_llm::ProviderKind::Anthropic {
                format!("up to {budget} tokens")
            } else {
                format!("up to {budget} tokens (not asked of this provider)")
            }
        },
    );
    line(text, "thinking", &thinking, &origin("thinking_budget"));
    let (budget, budget_why) = settings.effective_catalog_budget();
    line(
        text,
        "catalog budget",
        &format!("{budget} characters"),
        &budget_why,
    );
    let placement = match settings.placement {
        skillet_agent::tool::CatalogPlacement::System => "system",
        skillet_agent::tool::CatalogPlacement::Tool => "tool",
        skillet_agent::tool::CatalogPlacement::Both => "both",
    };
    line(text, "catalog", placement, &origin("catalog"));
    let skill_match = match settings.skill_match {
        skillet_agent::SkillMatch::Off => "off",
        skillet_agent::SkillMatch::Suggest => "suggest",
        skillet_agent::SkillMatch::Auto => "auto",
    };
    line(text, "skill match", skill_match, &origin("skill_match"));
    line(
        text,
        "stream",
        if settings.stream { "yes" } else { "no" },
        &origin("stream"),
    );
    line(
        text,
        "run --yes",
        if settings.yes { "yes" } else { "no" },
        &origin("yes"),
    );
    line(
        text,
        "skill commands",
        if settings.skill_shell {
            "run (in trusted skills)"
        } else {
            "off"
        },
        &origin("skill_shell"),
    );
    let sandbox = &settings.sandbox;
    let writable = if sandbox.writable.is_empty() {
        String::new()
    } else {
        format!(
            ", also writable: {}",
            sandbox
                .writable
                .iter()
                .map(|path| path.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    let _ = writeln!(
        text,
        "{:<16} {}, network {}{writable}",
        "sandbox:",
        if sandbox.enabled { "on" } else { "off" },
        if sandbox.network { "on" } else { "off" },
    );
    let _ = writeln!(
        text,
        "{:<16} {}",
        "sessions:",
        settings.sessions_dir.display()
    );
    for warning in &settings.warnings {
        let _ = writeln!(text, "{warning}");
    }
}

/// The embedding model and the skill roots: what needs no provider.
fn describe_skills(text: &mut String, context: &Context) {
    match super::matching::model_env(None).model_dir() {
        Some(dir) => {
            let from = if env::path(env::SKILLET_EMBED_MODEL).is_some() {
                "environment SKILLET_EMBED_MODEL"
            } else {
                "the Hugging Face cache"
            };
            line(text, "embedding model", &dir.display().to_string(), from);
        }
        None => line(
            text,
            "embedding model",
            "not found",
            &format!(
                "skills are matched by words only; {}",
                skillet_library::model::WORDS_ONLY_HINT
            ),
        ),
    }
    let _ = writeln!(text, "skill roots (the first with a name wins):");
    for root in &context.roots {
        let state = if root.path.is_dir() { "" } else { ", absent" };
        let _ = writeln!(text, "  {} ({}{state})", root.path.display(), root.label());
    }
}

/// `skillet completions SHELL`: the script on stdout.
pub fn completions(shell: clap_complete::Shell) -> anyhow::Result<ExitCode> {
    let mut command = Cli::command();
    let mut out = io::stdout().lock();
    clap_complete::generate(shell, &mut command, "skillet", &mut out);
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
