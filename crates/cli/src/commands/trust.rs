//! Trust in the project: `skillet trust [--revoke | --list]`, the question `chat` asks when a
//! project has something trust would unlock, and what `run` does without it (see
//! [`skillet_library::trust`] for what trust is and how it is pinned).

use std::fmt::Write as _;
use std::io::{BufRead as _, IsTerminal as _, Write as _};
use std::process::ExitCode;

use skillet_library::trust::{TrustState, TrustStore, Unlocks};
pub use skillet_session::trust::{
    Asking, Decided, decide, recorded_decided, recorded_standing, unlocks,
};

use super::Context;
use crate::args::TrustArgs;
use crate::output::terminal_safe;
use crate::settings::user_config_dir;

/// The most lines typed at the trust question that are kept as messages; later ones are
/// dropped, said.
pub const MAX_KEPT_LINES: usize = 16;

/// Settles trust as `chat` does: asked on the terminal when there is one. Also returns the
/// lines typed at the question that were not an answer, in order: the chat sends them once the
/// question is answered.
pub fn decide_on_terminal(
    context: &Context,
    library: &skillet_skills::Library,
) -> (Decided, Vec<String>) {
    let terminal = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    let mut kept = Vec::new();
    let mut question = |unlocks: &Unlocks, state: &TrustState, listing: &str| {
        ask(unlocks, state, listing, Some(&mut kept))
    };
    let decided = decide(
        context,
        library,
        Asking::Ask(terminal.then_some(&mut question)),
        &mut super::session::stderr_report(),
    );
    (decided, kept)
}

/// Asks on the terminal, after showing `listing` (what trust unlocks): `Some(true)` trusted,
/// `Some(false)` declined, `None` no answer (Ctrl-C, the input ended: nothing is recorded). A
/// line that is neither `y` nor `n` is kept in `kept` (a message typed at the question; without
/// `kept`, `skillet trust`, it is not an answer) and the question asked again. Keys typed before the question (and in its first moment) are dropped,
/// as at an approval.
fn ask(
    unlocks: &Unlocks,
    state: &TrustState,
    listing: &str,
    mut kept: Option<&mut Vec<String>>,
) -> Option<bool> {
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
        let _ = writeln!(std::io::stderr(), "(no answer)");
        return None;
    }
    loop {
        let mut answer = String::new();
        match std::io::stdin().lock().read_line(&mut answer) {
            Ok(0) | Err(_) => return None,
            Ok(_) => {}
        }
        let said = match answer.trim().to_ascii_lowercase().as_str() {
            "y" | "yes" => return Some(true),
            "n" | "no" => return Some(false),
            "" => "answer y or n",
            _ => match kept.as_deref_mut() {
                Some(kept) if kept.len() < MAX_KEPT_LINES => {
                    kept.push(answer.trim_end_matches(['\n', '\r']).to_string());
                    "kept as your first message, sent once you answer"
                }
                Some(_) => "not kept: that is enough lines waiting",
                None => "answer y or n",
            },
        };
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "({said}) trust this project? [y]es / [n]o: ");
        let _ = err.flush();
    }
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
            let Some(trusted) = ask(&unlocks, &store.state(&unlocks), &listing, None) else {
                let _ = writeln!(std::io::stderr(), "no answer: nothing recorded");
                return Ok(ExitCode::from(crate::EXIT_CANCELLED));
            };
            trusted
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
