//! Trust in the project: `skillet trust [--revoke | --list]`, the question `chat` asks when a
//! project has something trust would unlock, and what `run` does without it (see
//! [`skillet_library::trust`] for what trust is and how it is pinned).

use std::fmt::Write as _;
use std::io::{BufRead as _, IsTerminal as _, Write as _};
use std::process::ExitCode;

use skillet_library::trust::{SkillTrust, TrustState, TrustStore, Unlocks};
use skillet_skills::Library;

use super::Context;
use crate::args::TrustArgs;
use crate::output::{terminal_safe, warn};
use crate::settings::{project_grants, user_config_dir};

/// Where a session stands on the project's trust.
pub struct Decided {
    /// The project's `skillet.toml` may grant.
    pub project_trusted: bool,
    /// Which skills may act.
    pub skills: SkillTrust,
}

impl Decided {
    fn trusted(unlocks: &Unlocks) -> Self {
        Self {
            project_trusted: true,
            skills: SkillTrust::trusted(unlocks),
        }
    }

    fn untrusted() -> Self {
        Self {
            project_trusted: false,
            skills: SkillTrust::untrusted(),
        }
    }
}

/// How a command settles trust that is not decided yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Asking {
    /// `chat`: ask on the terminal (without one: untrusted, said).
    Ask,
    /// `run --trust-project`: trusted for this run, not recorded.
    TrustThisRun,
    /// `run`, `config`: untrusted, said.
    Never,
}

/// What trusting the project at the context's root unlocks, from `library`.
fn unlocks(context: &Context, library: &Library) -> Unlocks {
    let root = context.project_root();
    // A broken skillet.toml is the settings' error to report, with its line: here it only
    // unlocks nothing.
    let grants = project_grants(&root).ok().flatten();
    Unlocks::find(&root, library, grants)
}

/// Settles whether the project at the context may act in this session, asking or saying so as
/// `asking` says. The trust file unreadable or no config folder: untrusted, with a warning.
pub fn decide(context: &Context, library: &Library, asking: Asking) -> Decided {
    let unlocks = unlocks(context, library);
    let store = user_config_dir().map(|dir| TrustStore::open(&dir));
    let mut store = match store {
        Some(Ok(store)) => store,
        Some(Err(error)) => {
            if !unlocks.is_empty() {
                warn(&format!(
                    "warning: {error}\n  the project is treated as untrusted until it can be read"
                ));
            }
            return Decided::untrusted();
        }
        None => {
            if !unlocks.is_empty() {
                warn(
                    "warning: no config folder (HOME is not set): trust cannot be recorded, so the project is untrusted",
                );
            }
            return Decided::untrusted();
        }
    };
    let state = store.state(&unlocks);
    match state {
        TrustState::Nothing => Decided::untrusted(),
        TrustState::Trusted => Decided::trusted(&unlocks),
        TrustState::Declined => {
            warn(&format!(
                "note: you declined to trust this project: {}; `skillet trust` trusts it",
                withheld(&unlocks)
            ));
            Decided::untrusted()
        }
        TrustState::Unknown | TrustState::Changed { .. } => match asking {
            Asking::TrustThisRun => {
                warn("note: the project is trusted for this run (--trust-project)");
                Decided::trusted(&unlocks)
            }
            Asking::Ask if std::io::stdin().is_terminal() && std::io::stderr().is_terminal() => {
                let trusted = ask(&unlocks, &state);
                if let Err(error) = store.decide(&unlocks, trusted) {
                    warn(&format!("warning: the decision is not recorded: {error}"));
                }
                if trusted {
                    Decided::trusted(&unlocks)
                } else {
                    Decided::untrusted()
                }
            }
            Asking::Ask | Asking::Never => {
                let hint = if asking == Asking::Never {
                    "`skillet trust` trusts it (after showing what that unlocks), `--trust-project` for this run only"
                } else {
                    "`skillet trust` trusts it, after showing what that unlocks"
                };
                warn(&format!(
                    "note: {}: {}\n  hint: {hint}",
                    untrusted_why(&state),
                    withheld(&unlocks)
                ));
                Decided::untrusted()
            }
        },
    }
}

/// Which skills may act for a session in this context, from the trust recorded, asking
/// nothing and saying nothing (a resumed session working elsewhere than it was started).
pub fn recorded(context: &Context, library: &Library) -> SkillTrust {
    let unlocks = unlocks(context, library);
    match user_config_dir().map(|dir| TrustStore::open(&dir)) {
        Some(Ok(store)) if store.state(&unlocks).is_trusted() => SkillTrust::trusted(&unlocks),
        _ => SkillTrust::untrusted(),
    }
}

/// Whether the project is trusted as recorded, and where it stands in words (for `skillet
/// config`).
pub fn recorded_standing(context: &Context, library: &Library) -> (bool, &'static str) {
    let unlocks = unlocks(context, library);
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
    if !unlocks.skills.is_empty() {
        parts.push(format!(
            "the commands and tool grants of {} are off",
            plural(unlocks.skills.len(), "skill")
        ));
    }
    if unlocks.config.is_some() {
        parts.push("its skillet.toml grants nothing".to_string());
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

/// Asks on the terminal; true: trusted.
fn ask(unlocks: &Unlocks, state: &TrustState) -> bool {
    let mut text = String::new();
    if let TrustState::Changed { changes, .. } = state {
        let _ = writeln!(
            text,
            "What trust unlocks in {} changed since you decided:",
            unlocks.root.display()
        );
        for change in changes {
            let _ = writeln!(text, "  {change}");
        }
    } else {
        let _ = writeln!(text, "{} is not trusted yet.", unlocks.root.display());
    }
    text.push_str("Trusting it lets the repository's own files act, not only be read:\n");
    text.push_str(&unlocks.describe());
    text.push_str(
        "Untrusted, its skills are still read, but run nothing and grant nothing.\ntrust this project? [y]es / [n]o: ",
    );
    let mut err = std::io::stderr().lock();
    let _ = write!(err, "{}", terminal_safe(&text, true));
    let _ = err.flush();
    drop(err);
    let mut answer = String::new();
    if std::io::stdin().lock().read_line(&mut answer).is_err() {
        return false;
    }
    matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes")
}

/// `skillet trust [--revoke | --list]`.
pub fn run(context: &Context, args: &TrustArgs) -> anyhow::Result<ExitCode> {
    let Some(config_dir) = user_config_dir() else {
        return Err(crate::UsageError::new("no config folder: HOME is not set")
            .with_hint("set HOME or XDG_CONFIG_HOME; trust is recorded there")
            .into());
    };
    let mut store = TrustStore::open(&config_dir)?;
    let library = skillet_skills::discover(&context.roots);
    let unlocks = unlocks(context, &library);
    let root = terminal_safe(&unlocks.root.display().to_string(), false).into_owned();
    let mut out = std::io::stdout().lock();
    if args.list {
        for record in store.records() {
            let decision = if record.trusted {
                "trusted "
            } else {
                "declined"
            };
            let _ = writeln!(
                out,
                "{decision}  {}  (since {})",
                terminal_safe(&record.root.display().to_string(), false),
                date(record.at)
            );
        }
        let now = match store.state(&unlocks) {
            TrustState::Nothing => "nothing in it needs trust".to_string(),
            TrustState::Trusted => "trusted".to_string(),
            TrustState::Declined => "declined".to_string(),
            TrustState::Unknown => "not decided".to_string(),
            TrustState::Changed { changes, .. } => {
                format!("changed since decided ({})", changes.join(", "))
            }
        };
        let _ = writeln!(out, "this project ({root}): {}", terminal_safe(&now, false));
        return Ok(ExitCode::SUCCESS);
    }
    if args.revoke {
        if store.forget(&unlocks.root)? {
            let _ = writeln!(out, "forgot {root}: it is untrusted, and asked about again");
        } else {
            let _ = writeln!(out, "{root} was not trusted or declined; nothing to forget");
        }
        return Ok(ExitCode::SUCCESS);
    }
    store.decide(&unlocks, true)?;
    if unlocks.is_empty() {
        let _ = writeln!(
            out,
            "trusted {root}\nnothing in it acts now; when a skill or its skillet.toml would, you will be asked again"
        );
    } else {
        let _ = writeln!(
            out,
            "trusted {root}; this may now act:\n{}an edit to any of these asks again",
            terminal_safe(&unlocks.describe(), true)
        );
    }
    let _ = writeln!(
        out,
        "(recorded in {})",
        terminal_safe(&store.path().display().to_string(), false)
    );
    Ok(ExitCode::SUCCESS)
}

/// `2026-12-01` for seconds since 1970.
fn date(seconds: u64) -> String {
    let (year, month, day, ..) = skillet_agent::transcript::civil(seconds);
    format!("{year:04}-{month:02}-{day:02}")
}
