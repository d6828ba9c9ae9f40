//! The session picker: this project's sessions listed, newest first, and one chosen to continue
//! (`--resume` without an id, and `/sessions`).

use std::fmt::Write as _;

use rustyline::error::ReadlineError;

use super::ChatEditor;
use crate::commands::Context;
use crate::commands::sessions::{SessionSummary, project_sessions};
use crate::output::warn;
use crate::plural;
use crate::settings::Settings;

/// The most sessions the picker lists.
const PICKER_SESSIONS: usize = 20;

/// What the session picker got.
pub(super) enum Picked {
    /// A session, by id.
    Session(String),
    /// No choice (`q`, Ctrl-C, Ctrl-D, or a number not listed).
    Nothing,
    /// There was nothing to list.
    NoneToPick,
}

/// Lists this project's sessions (newest first, `except` left out) and reads a choice: a
/// number, or Enter for the newest.
pub(super) fn pick_session(
    editor: &mut ChatEditor,
    context: &Context,
    settings: &Settings,
    except: Option<&str>,
) -> anyhow::Result<Picked> {
    let sessions: Vec<SessionSummary> = project_sessions(
        &settings.sessions_dir,
        &context.env.cwd,
        PICKER_SESSIONS + 1,
    )?
    .into_iter()
    .filter(|session| Some(session.id.as_str()) != except)
    .take(PICKER_SESSIONS)
    .collect();
    if sessions.is_empty() {
        return Ok(Picked::NoneToPick);
    }
    let mut list = String::from("sessions of this project, newest first:");
    for (number, session) in sessions.iter().enumerate() {
        // The first message is one line already, cut and safe to print.
        let _ = write!(
            list,
            "\n{:>3}. {}  {}  {:<9}  {}{}",
            number + 1,
            session.started_utc(),
            session.id,
            plural(session.turns, "turn"),
            session.first_message,
            if session.open {
                "  (open in another skillet)"
            } else {
                ""
            }
        );
    }
    warn(&list);
    let question = format!("continue which? [1-{}, Enter: 1, q: none] ", sessions.len());
    let answer = match editor.readline(&question) {
        Ok(answer) => answer,
        Err(ReadlineError::Interrupted | ReadlineError::Eof) => return Ok(Picked::Nothing),
        Err(error) => return Err(error.into()),
    };
    let answer = answer.trim();
    let chosen = if answer.is_empty() {
        sessions.first()
    } else {
        answer
            .parse::<usize>()
            .ok()
            .and_then(|number| number.checked_sub(1))
            .and_then(|index| sessions.get(index))
    };
    if let Some(session) = chosen {
        // The file's name, which `--resume` looks up: a header may claim another id.
        let id = session.path.file_stem().map_or_else(
            || session.id.clone(),
            |stem| stem.to_string_lossy().into_owned(),
        );
        return Ok(Picked::Session(id));
    }
    warn("no session chosen");
    Ok(Picked::Nothing)
}
