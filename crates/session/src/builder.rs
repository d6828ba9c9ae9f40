//! A session's agent assembled from its settings: the provider, the skills' index, the tools'
//! configuration (permissions, sandbox, trust, where `save_skill` writes, the registry), the
//! instructions and the transcript, new or resumed. Nothing is printed: what the user should
//! know goes to a [`Report`].

use std::path::PathBuf;
use std::sync::Arc;

use skillet_agent::permission::Permissions;
use skillet_agent::tool::SaveSkills;
use skillet_agent::transcript::{self, Transcript};
use skillet_agent::{Agent, AgentConfig, AgentError, SkillMatch};
use skillet_library::index::SkillIndex;
use skillet_library::model::{ModelEnv, ModelEvent, session_index};
use skillet_library::source::SkillSource;
use skillet_library::trust::SkillTrust;
use skillet_llm::{Anthropic, LlmError, OpenAi, Provider, ProviderKind, Transport};
use skillet_skills::Library;

use crate::Workspace;
use crate::env;
use crate::settings::{Origin, Settings, user_config_dir};

/// Where what happens while a session is built is told (the CLI prints it on stderr; a test
/// keeps it).
pub trait Report {
    /// Something the user should know: a note or a warning, its first word saying which.
    fn note(&mut self, text: &str);
    /// What happens to the embedding model (found, downloaded, skills embedded).
    fn model(&mut self, event: ModelEvent<'_>);
}

/// A stored session to continue, its transcript already locked for this skillet.
pub struct Resumed {
    /// Its transcript, open to append and locked: read after the lock was taken, so no other
    /// skillet can have added to it since.
    pub transcript: Transcript,
    /// Its header.
    pub header: transcript::SessionHeader,
    /// Its history, as stored.
    pub history: Vec<skillet_llm::Message>,
    /// The model it last used: the one `/model` last switched to, else the one it began with.
    pub model: String,
}

/// What a session is started with besides its settings.
pub struct Start<'a> {
    /// Where it works and which skill folders it reads.
    pub workspace: &'a Workspace,
    /// Its settings.
    pub settings: &'a Settings,
    /// The skills it sees.
    pub library: &'a Arc<Library>,
    /// Which of them may act.
    pub skill_trust: &'a SkillTrust,
    /// Who may write and run commands.
    pub permissions: Permissions,
    /// The first message, when known at the start (`run`).
    pub first_message: Option<&'a str>,
    /// The stored session it continues, if any.
    pub resume: Option<Resumed>,
}

/// Why a session could not be started.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The provider's client could not be made.
    #[error(transparent)]
    Provider(#[from] LlmError),
    /// The transcript could not be written.
    #[error(transparent)]
    Agent(#[from] AgentError),
    /// A folder `--add-dir` names cannot be added.
    #[error("--add-dir {0}")]
    AddDir(String),
}

/// A new or resumed agent with its transcript attached. A resumed session goes on with the
/// model it last used, unless a flag names another.
pub fn start(start: Start<'_>, report: &mut dyn Report) -> Result<Agent, StartError> {
    let Start {
        workspace,
        settings,
        library,
        skill_trust,
        permissions,
        first_message,
        resume,
    } = start;
    let add_dirs = folders_to_add(workspace, settings, report)?;
    // Whether commands can run in namespaces is found by starting one (bwrap's `true`): that
    // waits on another process, so it runs while the index is built.
    let sandbox_status = {
        let policy = settings.sandbox.policy();
        let cwd = workspace.env.cwd.clone();
        std::thread::spawn(move || skillet_agent::sandbox::probe(&policy, &cwd))
    };
    // MCP servers start on their own thread while the rest is built; the tools are taken
    // (and the session waits for the servers' start) only when the agent is made.
    let mcp_hub = crate::mcp::start_for(workspace, settings, skill_trust, report);
    let provider = session_provider(settings, resume.as_ref(), report)?;
    let rules = permission_rules(workspace, settings);
    warn_dead_rules(&rules, report);
    let config = AgentConfig {
        cwd: workspace.env.cwd.clone(),
        max_tokens: settings.max_tokens,
        max_steps: settings.max_steps,
        stream: settings.stream,
        thinking: settings.thinking,
        placement: settings.placement,
        catalog_budget: settings.catalog_budget,
        permissions,
        rules,
        mode: settings.permission_mode,
        skill_match: settings.skill_match,
        skill_index: skill_index(settings, library, report),
        tool_source: mcp_hub.map(|hub| {
            crate::mcp::tools(hub, settings, report) as Arc<dyn skillet_agent::tool::ToolSource>
        }),
        first_message: first_message.map(str::to_string),
        protected: workspace.skill_roots(),
        sandbox: settings.sandbox.policy(),
        instructions: settings.instructions,
        user_instructions: skillet_agent::instructions::user_instructions_path(&workspace.env),
        skill_trust: skill_trust.clone(),
        skill_shell: settings.skill_shell,
        save_skills: save_skills_dir(workspace, settings).map(|dir| SaveSkills {
            dir,
            roots: workspace.roots.clone(),
        }),
        skill_source: settings
            .registry_url
            .as_deref()
            .and_then(|url| registry_source(workspace, url, report)),
        hooks: crate::hooks::session_hooks(workspace, skill_trust, report),
    };
    let (agent, locked) = match resume {
        None => {
            let mut agent = Agent::new(provider, library, &config);
            // Written from its first event: a run that fails before anything happens (a
            // `/NAME` whose commands fail) leaves no session behind.
            let transcript = Transcript::deferred(&settings.sessions_dir, agent.header())?;
            let locked = transcript.is_locked();
            agent.attach_transcript(transcript)?;
            (agent, locked)
        }
        Some(resumed) => {
            let locked = resumed.transcript.is_locked();
            let last_model = resumed.model;
            let mut agent =
                Agent::resume(provider, library, &config, resumed.header, &resumed.history);
            agent.attach_transcript(resumed.transcript)?;
            // Another model than it last used (a flag, another provider): recorded, so the
            // next resume goes on with this one.
            if agent.model() != last_model {
                let model = agent.model().to_string();
                agent.set_model(&model)?;
            }
            report.note(&format!(
                "resumed session {} ({} messages)",
                agent.header().id,
                agent.history().len()
            ));
            for repair in agent.repairs() {
                report.note(&format!("note: repaired the stored history: {repair}"));
            }
            (agent, locked)
        }
    };
    for dir in add_dirs {
        if let Err(why) = agent.add_dir(dir) {
            report.note(&format!("note: the added folder {why}"));
        }
    }
    let sandbox_status = sandbox_status
        .join()
        .unwrap_or_else(|_| agent.sandbox_status());
    warn_after_start(&agent, locked, &sandbox_status, report);
    Ok(agent)
}

/// What a started session warns about: a sessions folder that cannot be locked, a catalog over
/// its budget, a sandbox that could not be made.
fn warn_after_start(
    agent: &Agent,
    locked: bool,
    sandbox_status: &skillet_agent::sandbox::SandboxStatus,
    report: &mut dyn Report,
) {
    if !locked {
        report.note(
            "warning: the sessions folder cannot be locked (its file system does not support it); \
             do not continue this session from two skillets at once",
        );
    }
    if let Some(summary) = agent.catalog_report().summary() {
        report.note(&format!("warning: {summary}"));
    }
    if let Some(notice) = sandbox_status.notice() {
        report.note(&format!("warning: {notice}"));
    }
}

/// Says which standing rules never act (a deny that can never match, an ask on reading).
fn warn_dead_rules(rules: &skillet_agent::rules::Rules, report: &mut dyn Report) {
    for (rule, why) in rules.dead() {
        report.note(&format!(
            "warning: the permission rule `{}` ({}, in {}) never acts: {why}",
            rule.text,
            rule.decision.as_str(),
            rule.source
        ));
    }
}

/// The folders added to the session: one `--add-dir` names that cannot be added stops the
/// session before anything is loaded; one a config file names is left out, said.
fn folders_to_add<'a>(
    workspace: &Workspace,
    settings: &'a Settings,
    report: &mut dyn Report,
) -> Result<Vec<&'a PathBuf>, StartError> {
    let mut add_dirs = Vec::new();
    for (index, dir) in settings.add_dirs.iter().enumerate() {
        match skillet_agent::paths::folder_to_add(
            &workspace.env.cwd,
            (workspace.env.home.as_deref(), user_config_dir().as_deref()),
            dir,
        ) {
            Ok(_) => add_dirs.push(dir),
            Err(why) if index < settings.flagged_dirs => return Err(StartError::AddDir(why)),
            Err(why) => report.note(&format!(
                "note: the added folder {why} (additional_directories in a config file); left out"
            )),
        }
    }
    Ok(add_dirs)
}

/// The provider the settings name.
pub fn provider(settings: &Settings) -> Result<Provider, LlmError> {
    let transport = Transport::new()?;
    Ok(match settings.provider {
        ProviderKind::Anthropic => Provider::Anthropic(Anthropic::new(
            transport,
            &settings.base_url,
            settings.api_key.as_deref().unwrap_or_default(),
            &settings.model,
        )),
        ProviderKind::OpenAi => Provider::OpenAi(OpenAi::new(
            transport,
            &settings.base_url,
            settings.api_key.as_deref(),
            &settings.model,
        )),
    })
}

/// The index a session ranks `library` with (none when matching is off).
pub fn skill_index(
    settings: &Settings,
    library: &Arc<Library>,
    report: &mut dyn Report,
) -> Option<Arc<SkillIndex>> {
    match settings.skill_match {
        SkillMatch::Off => None,
        _ => Some(Arc::new(session_index(
            library,
            &model_env(None),
            &mut |event| report.model(event),
        ))),
    }
}

/// Where the embedding model is looked for: `explicit` (`--embed-model`), else the variables
/// that name it or a cache it may be in.
pub fn model_env(explicit: Option<&std::path::Path>) -> ModelEnv {
    ModelEnv {
        explicit: explicit.map(std::path::Path::to_path_buf),
        skillet_embed_model: env::path(env::SKILLET_EMBED_MODEL),
        hf_home: env::path(env::HF_HOME),
        home: env::path(env::HOME),
        xdg_cache_home: env::path(env::XDG_CACHE_HOME),
        hf_endpoint: env::var(env::HF_ENDPOINT),
        hf_hub_offline: env::flag(env::HF_HUB_OFFLINE),
        temp_dir: std::env::temp_dir(),
    }
}

/// The shared registry as a skill source (`search_skills` searches it; its skills load by
/// reference), its verified copies kept in the user's cache; `None`, said, when it cannot be.
pub fn registry_source(
    workspace: &Workspace,
    url: &str,
    report: &mut dyn Report,
) -> Option<Arc<dyn SkillSource>> {
    let registry = skillet_registry::Registry::new(url)
        .map_err(|error| {
            report.note(&format!(
                "warning: {error}\n  (search_skills searches the local skills only)"
            ));
        })
        .ok()?;
    // Never a folder other users share (the temp dir): they could swap a verified copy.
    let Some(cache) = crate::settings::user_cache_dir().map(|dir| dir.join("registry")) else {
        report.note(
            "warning: neither XDG_CACHE_HOME nor HOME is set, so registry skills have nowhere to be kept\n  (search_skills searches the local skills only)",
        );
        return None;
    };
    let mut locks = vec![workspace.project_root().join(skillet_registry::LOCK_FILE)];
    locks.extend(user_config_dir().map(|dir| dir.join(skillet_registry::LOCK_FILE)));
    Some(Arc::new(skillet_registry::RegistrySource::new(
        registry, cache, locks,
    )))
}

/// The session's standing permission rules, their paths read against its folders.
pub fn permission_rules(workspace: &Workspace, settings: &Settings) -> skillet_agent::rules::Rules {
    skillet_agent::rules::Rules::new(
        settings.permission_rules.iter().cloned(),
        skillet_agent::rules::Places {
            cwd: workspace.env.cwd.clone(),
            project_root: workspace.project_root(),
            home: workspace.env.home.clone(),
            config_dir: user_config_dir(),
        },
    )
}

/// Where `save_skill` writes: `.agents/skills` at the project's root, or in the user's home
/// with `save_skills = "user"` (none without a home).
fn save_skills_dir(workspace: &Workspace, settings: &Settings) -> Option<PathBuf> {
    let folder = skillet_skills::PROJECT_ROOT_DIRS[0];
    if settings.save_to_user {
        workspace.env.home.as_ref().map(|home| home.join(folder))
    } else {
        Some(workspace.project_root().join(folder))
    }
}

/// The provider for a new or resumed session. A resumed one goes on with the model it last
/// used, unless a flag names the model, the provider or the server, or the session ran on
/// another provider (its model would mean nothing there); each case is said.
fn session_provider(
    settings: &Settings,
    resume: Option<&Resumed>,
    report: &mut dyn Report,
) -> Result<Provider, LlmError> {
    let flagged = |key| matches!(settings.explanation.origin(key), Origin::Flag(_));
    let resumed_model = resume
        .filter(|resumed| resumed.header.provider == settings.provider.as_str())
        .map(|resumed| resumed.model.as_str())
        .filter(|model| {
            *model != settings.model
                && !flagged("model")
                && !flagged("provider")
                && !flagged("base_url")
        });
    if let Some(resumed) = resume
        && resumed.header.provider != settings.provider.as_str()
    {
        report.note(&format!(
            "note: session {} ran on {}; it goes on with {} on {}",
            one_line(&resumed.header.id),
            one_line(&resumed.header.provider),
            one_line(&settings.model),
            settings.provider.as_str()
        ));
    }
    match resumed_model {
        Some(model) => {
            report.note(&format!(
                "note: continuing with {}, the model this session last used (--model picks another)",
                one_line(model)
            ));
            provider(&Settings {
                model: model.to_string(),
                ..settings.clone()
            })
        }
        None => provider(settings),
    }
}

/// A name as one line of a note: line breaks and tabs shown as `\n`, `\r`, `\t`, so a name
/// cannot start a line of its own (the note's reader escapes what else could act on a terminal).
fn one_line(name: &str) -> String {
    name.replace('\n', "\\n")
        .replace('\r', "\\r")
        .replace('\t', "\\t")
}
