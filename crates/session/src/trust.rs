//! Trust in the project as a session settles it: asked (through a question the interface
//! gives), taken for one run (`--trust-project`), or as recorded (see
//! [`skillet_library::trust`] for what trust is and how it is pinned).

use skillet_library::trust::{SkillTrust, TrustState, TrustStore, Unlocks};
use skillet_skills::Library;

use crate::Workspace;
use crate::builder::Report;
use crate::settings::{project_grants, user_config_dir};

/// The longest listing of what trust unlocks that `chat` asks about; past it, `skillet trust`
/// (which shows everything and asks) is the way.
pub const MAX_ASKED_LINES: usize = 200;

/// Where a session stands on the project's trust.
pub struct Decided {
    /// The project's `skillet.toml` may grant.
    pub project_trusted: bool,
    /// Which skills may act.
    pub skills: SkillTrust,
}

impl Decided {
    /// Trusted: what `unlocks` names may act.
    pub fn trusted(unlocks: &Unlocks) -> Self {
        Self {
            project_trusted: true,
            skills: SkillTrust::trusted(unlocks),
        }
    }

    /// Untrusted: nothing acts.
    pub fn untrusted() -> Self {
        Self {
            project_trusted: false,
            skills: SkillTrust::untrusted(),
        }
    }
}

/// The trust question an interface asks: given what trust unlocks, where the project stands
/// and the listing to show, whether the user trusts it; `None` when they gave no answer (the
/// input ended, Ctrl-C): nothing is recorded and the session is untrusted.
pub type Question<'a> = &'a mut dyn FnMut(&Unlocks, &TrustState, &str) -> Option<bool>;

/// How a command settles trust that is not decided yet.
pub enum Asking<'a> {
    /// `chat`: ask with this question (given what trust unlocks, where the project stands,
    /// and the listing to show; true: trusted), or, without a terminal to ask on (`None`):
    /// untrusted, said.
    Ask(Option<Question<'a>>),
    /// `run --trust-project`: trusted for this run, not recorded.
    TrustThisRun,
    /// `run`, `config`: untrusted, said.
    Never,
}

/// What trusting the project at the workspace's root unlocks, from `library`.
pub fn unlocks(workspace: &Workspace, library: &Library) -> Unlocks {
    let root = workspace.project_root();
    // A broken skillet.toml is the settings' error to report, with its line: here it only
    // unlocks nothing.
    let grants = project_grants(&root, user_config_dir().as_deref())
        .ok()
        .flatten();
    // Where the index keeps them too: one derivation of the folder, so trust and the index
    // share one facts file (each reads its head; the bodies are read once).
    let facts = skillet_library::facts::Facts::gather(
        library,
        crate::builder::model_env(None).facts_dir().as_deref(),
    );
    let hooks = crate::hooks::project_hooks(&root).map(|read| (read.path, read.lines, read.digest));
    Unlocks::find_with(&root, library, &facts, grants)
        .with_servers(project_servers(&root))
        .with_hooks(hooks)
}

/// The project's `.mcp.json`, and each server in it as it would start (none there, or none in
/// it: `None`).
fn project_servers(root: &std::path::Path) -> Option<(std::path::PathBuf, Vec<String>, String)> {
    let path = root.join(skillet_mcp_client::MCP_JSON);
    // One read: the lines shown and the digest pinned come from the same bytes.
    let (lines, digest) = match skillet_mcp_client::config::read_capped(&path) {
        Ok(Some(text)) => (
            skillet_mcp_client::config::mcp_json_lines(&text),
            skillet_library::trust::digest_of(text.as_bytes()),
        ),
        Ok(None) => return None,
        Err(why) => (
            vec![format!("(unreadable: {why}; nothing in it starts)")],
            "unreadable".to_string(),
        ),
    };
    Some((path, lines, digest))
}

/// Settles whether the project of the workspace may act in this session, asking or saying so
/// (through `report`) as `asking` says. The trust file unreadable or no config folder:
/// untrusted, with a warning (`--trust-project` still trusts for the run: it needs no record).
pub fn decide(
    workspace: &Workspace,
    library: &Library,
    asking: Asking<'_>,
    report: &mut dyn Report,
) -> Decided {
    let unlocks = unlocks(workspace, library);
    let store = match user_config_dir().map(|dir| TrustStore::open(&dir)) {
        Some(Ok(store)) => Some(store),
        Some(Err(error)) => {
            if !unlocks.is_empty() {
                report.note(&format!(
                    "warning: {error}\n  the project is treated as untrusted until it can be read"
                ));
            }
            None
        }
        None => {
            if !unlocks.is_empty() {
                report.note(
                    "warning: no config folder (HOME is not set): trust cannot be recorded, so the project is untrusted",
                );
            }
            None
        }
    };
    let state = store
        .as_ref()
        .map_or(TrustState::Unknown, |store| store.state(&unlocks));
    if matches!(asking, Asking::TrustThisRun) && !unlocks.is_empty() {
        if !state.is_trusted() {
            report.note("note: the project is trusted for this run (--trust-project)");
        }
        return Decided::trusted(&unlocks);
    }
    let Some(mut store) = store else {
        return Decided::untrusted();
    };
    match state {
        TrustState::Nothing => Decided::untrusted(),
        TrustState::Trusted => Decided::trusted(&unlocks),
        TrustState::Declined => {
            report.note(&format!(
                "note: you declined to trust this project: {}; `skillet trust` trusts it",
                withheld(&unlocks)
            ));
            Decided::untrusted()
        }
        TrustState::Unknown | TrustState::Changed { .. } => {
            let listing = unlocks.describe();
            let fits = listing.lines().count() <= MAX_ASKED_LINES;
            let never = matches!(asking, Asking::Never);
            let terminal = matches!(asking, Asking::Ask(Some(_)));
            if let Asking::Ask(Some(question)) = asking
                && fits
            {
                let Some(trusted) = question(&unlocks, &state, &listing) else {
                    report.note(
                        "note: no answer, so nothing is recorded: the project is untrusted in this session and asked about again next time",
                    );
                    return Decided::untrusted();
                };
                if let Err(error) = store.decide(&unlocks, trusted) {
                    report.note(&format!("warning: the decision is not recorded: {error}"));
                }
                return if trusted {
                    Decided::trusted(&unlocks)
                } else {
                    Decided::untrusted()
                };
            }
            let hint = if terminal {
                format!(
                    "what trust would unlock is over {MAX_ASKED_LINES} lines, too much to weigh here: `skillet trust` shows it all and asks"
                )
            } else if never {
                "`skillet trust` trusts it (after showing what that unlocks), `--trust-project` for this run only".to_string()
            } else {
                "`skillet trust` trusts it, after showing what that unlocks".to_string()
            };
            report.note(&format!(
                "note: {}: {}\n  hint: {hint}",
                untrusted_why(&state),
                withheld(&unlocks)
            ));
            Decided::untrusted()
        }
    }
}

/// Which skills may act for a session in this workspace, and whether its `skillet.toml` may
/// grant, from the trust recorded, asking nothing and saying nothing (a resumed session working
/// elsewhere than it was started).
pub fn recorded_decided(workspace: &Workspace, library: &Library) -> Decided {
    let unlocks = unlocks(workspace, library);
    match user_config_dir().map(|dir| TrustStore::open(&dir)) {
        Some(Ok(store)) if store.state(&unlocks).is_trusted() => Decided::trusted(&unlocks),
        _ => Decided::untrusted(),
    }
}

/// Whether the project is trusted as recorded, and where it stands in words (for `skillet
/// config`).
pub fn recorded_standing(workspace: &Workspace, library: &Library) -> (bool, &'static str) {
    let unlocks = unlocks(workspace, library);
    let state = match user_config_dir().map(|dir| TrustStore::open(&dir)) {
        Some(Ok(store)) => store.state(&unlocks),
        _ => TrustState::Unknown,
    };
    let words = match state {
        TrustState::Nothing => "nothing in it needs trust",
        TrustState::Trusted => "trusted",
        TrustState::Declined => "declined: its skills run nothing and grant nothing",
        TrustState::Unknown => "not trusted: its skills run nothing and grant nothing",
        TrustState::Changed { .. } => {
            "changed since decided: its skills run nothing and grant nothing until trusted again"
        }
    };
    (state.is_trusted(), words)
}

/// Why the project is untrusted now, in words.
fn untrusted_why(state: &TrustState) -> &'static str {
    match state {
        TrustState::Changed {
            was_trusted: true, ..
        } => {
            "what you trusted in this project changed, so it is untrusted until you trust it again"
        }
        _ => "this project is not trusted",
    }
}

/// What is held back, in one phrase.
fn withheld(unlocks: &Unlocks) -> String {
    let mut parts = Vec::new();
    let acting_commands = unlocks.skills.iter().filter(|skill| skill.command).count();
    let acting_skills = unlocks.skills.len() - acting_commands;
    if acting_skills > 0 {
        parts.push(format!(
            "the commands and tool grants of {} are off",
            plural(acting_skills, "skill")
        ));
    }
    let commands = unlocks.commands.len() + acting_commands;
    if commands > 0 {
        parts.push(format!(
            "its {} (.claude/commands) cannot be used",
            plural(commands, "custom command")
        ));
    }
    if !unlocks.own.is_empty() {
        parts.push(format!(
            "the commands and tool grants of your own {} are off here",
            plural(unlocks.own.len(), "skill")
        ));
    }
    if unlocks.config.is_some() {
        parts.push("its skillet.toml grants nothing".to_string());
    }
    if let Some(servers) = &unlocks.servers {
        parts.push(format!(
            "the {} its .mcp.json names do not start",
            plural(servers.grants.len(), "MCP server")
        ));
    }
    if let Some(hooks) = &unlocks.hooks {
        parts.push(format!(
            "the {} of its .claude/settings do not run",
            plural(hooks.grants.len(), "hook")
        ));
    }
    parts.join("; ")
}

fn plural(count: usize, word: &str) -> String {
    if count == 1 {
        format!("1 {word}")
    } else {
        format!("{count} {word}s")
    }
}
