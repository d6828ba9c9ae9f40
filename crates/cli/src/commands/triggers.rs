//! `skillet skills test [NAME…]`: trigger tests. Each request of a skill's
//! `evals/triggers.json` (or `--queries FILE`) is ranked against the whole library with the rule
//! a session applies to every message ([`skillet_library::triggers`]): a `should` request must
//! suggest the skill, a `should_not` one must not.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;
use std::process::ExitCode;

use serde_json::json;
use skillet_library::model::session_index;
use skillet_library::triggers::{MAX_SUGGESTIONS, Outcome, TRIGGERS_FILE, Triggers, test_skill};
use skillet_retrieval::{LEXICAL_THRESHOLD, RELEVANCE_THRESHOLD};
use skillet_skills::{Library, discover};

use super::Context;
use super::matching::{model_env, stderr_events};
use crate::output::{terminal_safe, warn};
use crate::{EXIT_FAILURE, UsageError};

/// The most characters of a request shown on its line.
const SHOWN_REQUEST_CHARS: usize = 70;

/// How many times the model is asked about each request (`--model`).
pub const MODEL_TRIES: usize = 3;

/// What `skills test` was asked.
pub struct TestRequest<'a> {
    /// The skills to test (none: every one with a trigger file).
    pub names: &'a [String],
    /// A trigger file, or a folder of them, instead of the skills' own.
    pub queries: Option<&'a Path>,
    /// JSON out.
    pub json: bool,
    /// Ask the configured model too.
    pub ask_model: bool,
}

/// How often the model loaded the skill for one request, and what it loaded instead.
#[derive(Debug, Clone, serde::Serialize)]
struct ModelRate {
    loaded: usize,
    tries: usize,
    instead: Vec<String>,
}

/// Runs the trigger tests of the named skills (all with a trigger file when none is named).
pub fn run(
    context: &Context,
    request: &TestRequest<'_>,
    embed_model: Option<&Path>,
) -> anyhow::Result<ExitCode> {
    let json_out = request.json;
    let library = discover(&context.roots);
    let tests = tests_to_run(&library, request.names, request.queries)?;
    if tests.is_empty() {
        return Err(UsageError::new(format!(
            "no skill has a trigger file ({TRIGGERS_FILE} in its folder)"
        ))
        .with_hint(
            "write one: {\"should\": [\"a request…\"], \"should_not\": [\"…\"]}; `skillet skills new` adds a template",
        )
        .into());
    }
    let library = std::sync::Arc::new(library);
    // Without the model, said once: by the lookup when it tried, else here.
    let mut said = false;
    let mut events = stderr_events();
    let index = session_index(&library, &model_env(embed_model), &mut |event| {
        said |= event.message().is_some();
        events(event);
    });
    if !index.has_model() && !said {
        warn(&format!(
            "note: ranked by words only (no embedding model): a session with the model ranks by \
             meaning too, so its suggestions may differ\n  hint: {}",
            skillet_library::model::WORDS_ONLY_HINT
        ));
    }
    let mut results = Vec::new();
    for (name, source, triggers) in &tests {
        let outcomes = test_skill(&index, &library, name, triggers)?;
        results.push((name.as_str(), source.as_str(), outcomes));
    }
    let rates = if request.ask_model {
        Some(model_rates(context, &library, &results)?)
    } else {
        None
    };
    let failed = results
        .iter()
        .any(|(_, _, outcomes)| outcomes.iter().any(|outcome| !outcome.passed));
    let mut out = std::io::stdout().lock();
    if json_out {
        let document: Vec<serde_json::Value> = results
            .iter()
            .enumerate()
            .map(|(at, (name, source, outcomes))| {
                let mut item = json!({"skill": name, "source": source, "passed": outcomes.iter().all(|o| o.passed), "requests": outcomes});
                if let Some(rates) = &rates {
                    for (request, rate) in item["requests"]
                        .as_array_mut()
                        .into_iter()
                        .flatten()
                        .zip(&rates[at])
                    {
                        request["model"] = json!(rate);
                    }
                }
                item
            })
            .collect();
        serde_json::to_writer_pretty(&mut out, &document)?;
        writeln!(out)?;
    } else {
        for (at, (name, source, outcomes)) in results.iter().enumerate() {
            let rates = rates.as_ref().map(|rates| rates[at].as_slice());
            write!(out, "{}", report(name, source, outcomes, rates))?;
        }
    }
    out.flush()?;
    Ok(if failed {
        ExitCode::from(EXIT_FAILURE)
    } else {
        ExitCode::SUCCESS
    })
}

/// The skills to test, each with where its requests come from and the requests.
fn tests_to_run(
    library: &Library,
    names: &[String],
    queries: Option<&Path>,
) -> Result<Vec<(String, String, Triggers)>, UsageError> {
    if let Some(folder) = queries.filter(|path| path.is_dir()) {
        return from_folder(library, names, folder);
    }
    if let Some(file) = queries {
        let [name] = names else {
            return Err(UsageError::new(
                "--queries FILE tests one skill: name exactly one (a folder of NAME.json files tests several)",
            )
            .with_hint("skillet skills test NAME --queries FILE"));
        };
        let skill = library
            .get(name)
            .ok_or_else(|| UsageError::new(format!("no skill named '{name}'")))?;
        let triggers = Triggers::read(file).map_err(|error| UsageError::new(error.to_string()))?;
        return Ok(vec![(
            skill.name.clone(),
            file.display().to_string(),
            triggers,
        )]);
    }
    let mut tests = Vec::new();
    if names.is_empty() {
        // A command's folder holds other commands: no trigger file is its own.
        for skill in library.skills().iter().filter(|skill| !skill.is_command()) {
            let path = skill.dir.join(TRIGGERS_FILE);
            if path.exists() {
                let triggers =
                    Triggers::read(&path).map_err(|error| UsageError::new(error.to_string()))?;
                tests.push((skill.name.clone(), path.display().to_string(), triggers));
            }
        }
        return Ok(tests);
    }
    for name in names {
        let skill = library
            .get(name)
            .ok_or_else(|| UsageError::new(format!("no skill named '{name}'")))?;
        if skill.is_command() {
            return Err(UsageError::new(format!(
                "'{name}' is a custom command ({}), which has no trigger file",
                skill.file.display()
            ))
            .with_hint("give the requests with --queries FILE"));
        }
        let path = skill.dir.join(TRIGGERS_FILE);
        if !path.exists() {
            return Err(UsageError::new(format!(
                "skill '{name}' has no trigger file: {} is missing",
                path.display()
            ))
            .with_hint("write it, or give one with --queries FILE"));
        }
        let triggers = Triggers::read(&path).map_err(|error| UsageError::new(error.to_string()))?;
        tests.push((skill.name.clone(), path.display().to_string(), triggers));
    }
    Ok(tests)
}

/// The tests of a folder of trigger files named after their skills (`pdf.json`): those of the
/// named skills, or every file's when none is named.
fn from_folder(
    library: &Library,
    names: &[String],
    folder: &Path,
) -> Result<Vec<(String, String, Triggers)>, UsageError> {
    let names: Vec<String> = if names.is_empty() {
        let mut found: Vec<String> = std::fs::read_dir(folder)
            .map_err(|error| UsageError::new(format!("{}: {error}", folder.display())))?
            .filter_map(Result::ok)
            .filter_map(|entry| {
                let name = entry.file_name().to_string_lossy().into_owned();
                name.strip_suffix(".json").map(str::to_string)
            })
            .collect();
        found.sort();
        found
    } else {
        names.to_vec()
    };
    let mut tests = Vec::new();
    for name in names {
        let skill = library
            .get(&name)
            .ok_or_else(|| UsageError::new(format!("no skill named '{name}'")))?;
        let path = folder.join(format!("{name}.json"));
        let triggers = Triggers::read(&path).map_err(|error| UsageError::new(error.to_string()))?;
        tests.push((skill.name.clone(), path.display().to_string(), triggers));
    }
    Ok(tests)
}

/// Asks the configured model about each request of each skill, [`MODEL_TRIES`] times: would it
/// load the skill, given the catalog a session gives it? The provider comes from the settings
/// (`run`'s; a project's file grants nothing here).
fn model_rates(
    context: &Context,
    library: &std::sync::Arc<Library>,
    results: &[(&str, &str, Vec<Outcome>)],
) -> anyhow::Result<Vec<Vec<ModelRate>>> {
    let settings =
        super::session::settings(context, &crate::args::AgentArgs::default(), false, false)
            .map_err(|error| UsageError::new(error.to_string()))?;
    let provider = skillet_session::builder::provider(&settings)?;
    let mut config = skillet_agent::AgentConfig::new(context.env.cwd.clone());
    config.placement = settings.placement;
    config.catalog_budget = settings.catalog_budget;
    config.max_tokens = settings.max_tokens;
    config.skill_match = skillet_agent::SkillMatch::Off;
    config.instructions = false;
    let agent = skillet_agent::Agent::new(provider, library, &config);
    let runtime = super::session::runtime()?;
    let mut rates = Vec::new();
    for (name, _, outcomes) in results {
        let mut skill_rates = Vec::new();
        for outcome in outcomes {
            let mut rate = ModelRate {
                loaded: 0,
                tries: MODEL_TRIES,
                instead: Vec::new(),
            };
            for _ in 0..MODEL_TRIES {
                match runtime.block_on(agent.probe_load(&outcome.request))? {
                    Some(loaded) if loaded == *name => rate.loaded += 1,
                    Some(other) => rate.instead.push(other),
                    None => {}
                }
            }
            skill_rates.push(rate);
        }
        rates.push(skill_rates);
    }
    warn(&format!(
        "asked {} {MODEL_TRIES} times per request: {}",
        terminal_safe(agent.model(), false),
        agent.usage().summary()
    ));
    Ok(rates)
}

/// One skill's results as text: a line per request (with the model's rate when it was asked),
/// then the tally.
fn report(name: &str, source: &str, outcomes: &[Outcome], rates: Option<&[ModelRate]>) -> String {
    let mut text = String::new();
    let _ = writeln!(
        text,
        "{} ({})",
        terminal_safe(name, false),
        terminal_safe(source, false)
    );
    for (index, outcome) in outcomes.iter().enumerate() {
        let verdict = match (outcome.passed, outcome.should) {
            (true, _) => "ok  ",
            (false, true) => "MISS",
            (false, false) => "FIRE",
        };
        let kind = if outcome.should {
            "should    "
        } else {
            "should_not"
        };
        let rank = outcome
            .rank
            .map_or_else(|| "  -".to_string(), |rank| format!("#{rank:<2}"));
        let score = outcome
            .score
            .map_or_else(|| "    -".to_string(), |score| format!("{score:.3}"));
        let what = if outcome.auto_loaded {
            "suggested, auto-loaded".to_string()
        } else if outcome.suggested {
            "suggested".to_string()
        } else if outcome.rank.is_none() {
            "not ranked (no word or meaning in common)".to_string()
        } else if !outcome.relevant {
            match outcome.relevance {
                // The threshold weighs how much of the request's own words the skill holds,
                // with meaning: not the score shown, which is its share of the best.
                Some(relevance) => {
                    format!("not suggested (relevance {relevance:.3}, under {RELEVANCE_THRESHOLD})")
                }
                None => format!("not suggested (score under {LEXICAL_THRESHOLD})"),
            }
        } else {
            format!("not suggested (not in the best {MAX_SUGGESTIONS})")
        };
        let request: String = outcome.request.chars().take(SHOWN_REQUEST_CHARS).collect();
        let cut = if outcome.request.chars().count() > SHOWN_REQUEST_CHARS {
            "…"
        } else {
            ""
        };
        let _ = write!(
            text,
            "  {verdict} {kind} {rank} {score}  {what}  \"{}{cut}\"",
            terminal_safe(&request, false)
        );
        if let Some(rate) = rates.and_then(|rates| rates.get(index)) {
            let _ = write!(text, "; model: loaded it {}/{}", rate.loaded, rate.tries);
            if !rate.instead.is_empty() {
                let _ = write!(
                    text,
                    " (instead: {})",
                    terminal_safe(&rate.instead.join(", "), false)
                );
            }
        }
        if !outcome.passed && !outcome.above.is_empty() {
            let _ = write!(
                text,
                "; ranked above it: {}",
                terminal_safe(&outcome.above.join(", "), false)
            );
        }
        text.push('\n');
    }
    let count = |should: bool| {
        let all = outcomes.iter().filter(|o| o.should == should).count();
        let passed = outcomes
            .iter()
            .filter(|o| o.should == should && o.passed)
            .count();
        (passed, all)
    };
    let (should_passed, should_all) = count(true);
    let (not_passed, not_all) = count(false);
    let _ = writeln!(
        text,
        "  {should_passed} of {should_all} should, {not_passed} of {not_all} should_not passed"
    );
    if outcomes.iter().any(|o| !o.passed) {
        warn(&format!(
            "{}: trigger tests failed",
            terminal_safe(name, false)
        ));
    }
    text
}
