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
/// `asking` says. The trust file unreadable or no config folder: untrusted, with a warning
/// (`--trust-project` still trusts for the run: it needs no record).
pub fn decide(context: &Context, library: &Library, asking: Asking) -> Decided {
    let unlocks = unlocks(context, library);
    let store = match user_config_dir().map(|dir| TrustStore::open(&dir)) {
        Some(Ok(store)) => Some(store),
        Some(Err(error)) => {
            if !unlocks.is_empty() {
                warn(&format!(
                    "warning: {error}\n  the project is treated as untrusted until it can be read"
                ));
            }
            None
        }
        None => {
            if !unlocks.is_empty() {
                warn(
                    "warning: no config folder (HOME is not set): trust cannot be recorded, so the project is untrusted",
                );
            }
            None
        }
    };
    let state = store
        .as_ref()
        .map_or(TrustState::Unknown, |store| store.state(&unlocks));
    if asking == Asking::TrustThisRun && !unlocks.is_empty() {
        if !state.is_trusted() {
            warn("note: the project is trusted for this run (--trust-project)");
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
            warn(&format!(
                "note: you declined to trust this project: {}; `skillet trust` trusts it",
                withheld(&unlocks)
            ));
            Decided::untrusted()
        }
        TrustState::Unknown | TrustState::Changed { .. } => {
            let terminal = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
            let listing = unlocks.describe();
            let fits = listing.lines().count() <= MAX_ASKED_LINES;
            if asking == Asking::Ask && terminal && fits {
                let trusted = ask(&unlocks, &state, &listing);
                if let Err(error) = store.decide(&unlocks, trusted) {
                    warn(&format!("warning: the decision is not recorded: {error}"));
                }
                return if trusted {
                    Decided::trusted(&unlocks)
                } else {
                    Decided::untrusted()
                };
            }
            let hint = if asking == Asking::Ask && terminal {
                format!(
                    "what trust would unlock is over {MAX_ASKED_LINES} lines, too much to weigh here: `skillet trust` shows it all and asks"
                )
            } else if asking == Asking::Never {
                "`skillet trust` trusts it (after showing what that unlocks), `--trust-project` for this run only".to_string()
            } else {
                "`skillet trust` trusts it, after showing what that unlocks".to_string()
            };
            warn(&format!(
                "note: {}: {}\n  hint: {hint}",
                untrusted_why(&state),
                withheld(&unlocks)
            ));
            Decided::untrusted()
        }
    }
}

/// Which skills may act for a session in this context, and whether its `skillet.toml` may
/// grant, from the trust recorded, asking nothing and saying nothing (a resumed session working
/// elsewhere than it was started).
pub fn recorded_decided(context: &Context, library: &Library) -> Decided {
    let unlocks = unlocks(context, library);
    match user_config_dir().map(|dir| TrustStore::open(&dir)) {
        Some(Ok(store)) if store.state(&unlocks).is_trusted() => Decided::trusted(&unlocks),
        _ => Decided::untrusted(),
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
    if !unlocks.own.is_empty() {
        parts.push(format!(
            "the commands and tool grants of your own {} are off here",
            plural(unlocks.own.len(), "skill")
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

/// Asks on the terminal, after showing `listing` (what trust unlocks); true: trusted. Keys typed
/// before the question (and in its first moment) are dropped, as at an approval; Ctrl-C is no.
fn ask(unlocks: &Unlocks, state: &TrustState, listing: &str) -> bool {
    let root = terminal_safe(&unlocks.root.display().to_string(), false).into_owned();
    let mut text = String::new();
    if let TrustState::Changed { changes, .. } = state {
        let _ = writeln!(
            text,
            "What trust unlocks in {root} changed since you decided:"
        );
        for change in changes {
            let _ = writeln!(text, "  {}", terminal_safe(change, false));
        }
    } else {
        let _ = writeln!(text, "{root} is not trusted yet.");
    }
    text.push_str("Trusting it lets these act, not only be read:\n");
    text.push_str(&terminal_safe(listing, true));
    text.push_str(
        "Untrusted, its skills are still read, but run nothing and grant nothing.\ntrust this project? [y]es / [n]o: ",
    );
    let mut err = std::io::stderr().lock();
    let _ = write!(err, "{text}");
    let _ = err.flush();
    drop(err);
    if crate::ui::drop_early_keys() {
        let _ = writeln!(std::io::stderr(), "no");
        return false;
    }
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
    if unlocks.is_empty() {
        store.decide(&unlocks, true)?;
        let _ = writeln!(
            out,
            "trusted {root}\nnothing in it acts now; when a skill or its skillet.toml would, you will be asked again"
        );
    } else {
        drop(out);
        let listing = unlocks.describe();
        let trusted = if args.yes {
            let _ = write!(
                std::io::stderr(),
                "{root}: trusting it lets these act:\n{}",
                terminal_safe(&listing, true)
            );
            true
        } else if std::io::stdin().is_terminal() && std::io::stderr().is_terminal() {
            ask(&unlocks, &store.state(&unlocks), &listing)
        } else {
            return Err(crate::UsageError::new(
                "not a terminal: nobody can be shown what trust unlocks and asked",
            )
            .with_hint("`skillet trust --yes` shows what it unlocks and trusts it without the question (read the project's skills first)")
            .into());
        };
        store.decide(&unlocks, trusted)?;
        out = std::io::stdout().lock();
        if trusted {
            let _ = writeln!(out, "trusted {root}; an edit to what it unlocks asks again");
        } else {
            let _ = writeln!(
                out,
                "declined {root}; its skills run nothing and grant nothing"
            );
        }
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
