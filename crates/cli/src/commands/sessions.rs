//! `skillet sessions`: this project's sessions, newest first, as
//! [`skillet_session::sessions::project_sessions`] lists them (the listing `--resume`/`--continue`
//! pick the latest from, and `chat` shows for `/sessions` and its picker).

use std::io::{self, BufWriter, Write as _};
use std::process::ExitCode;

use serde_json::json;
use skillet_agent::transcript;
pub use skillet_session::sessions::{SessionSummary, project_of, project_sessions, split_resume};

use super::Context;
use crate::args::SessionsArgs;
use crate::output::{terminal_safe, warn};
use crate::settings::sessions_dir;
use anyhow::Context as _;

use crate::plural;

/// `skillet sessions`.
pub fn run(context: &Context, args: &SessionsArgs) -> anyhow::Result<ExitCode> {
    let dir = sessions_dir();
    let mut sessions = project_sessions(&dir, &context.env.cwd, args.limit.saturating_add(1))
        .with_context(|| format!("cannot read {}", dir.display()))?;
    let more = sessions.len() > args.limit;
    sessions.truncate(args.limit);
    let mut out = BufWriter::new(io::stdout().lock());
    if args.json {
        let items: Vec<serde_json::Value> = sessions
            .iter()
            .map(|s| {
                let (year, month, day, hour, minute, second) = transcript::civil(s.started);
                json!({
                    "id": s.id,
                    "started": format!("{year:04}-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}Z"),
                    "turns": s.turns,
                    "last_active": s.modified.duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or_default(),
                    "first_message": s.first_message,
                    "model": s.model,
                    "open": s.open,
                    "cwd": super::path_json(Some(&s.cwd)),
                    "path": super::path_json(Some(&s.path)),
                })
            })
            .collect();
        serde_json::to_writer_pretty(&mut out, &items)?;
        writeln!(out)?;
    } else if !sessions.is_empty() {
        writeln!(
            out,
            "{:<20}  {:<16}  {:>5}  FIRST MESSAGE",
            "ID", "STARTED (UTC)", "TURNS"
        )?;
        for session in &sessions {
            writeln!(
                out,
                "{:<20}  {:<16}  {:>5}  {}{}",
                terminal_safe(&session.id, false),
                session.started_utc(),
                session.turns,
                session.first_message,
                if session.open {
                    "  (open in another skillet)"
                } else {
                    ""
                }
            )?;
        }
    }
    out.flush()?;
    drop(out);
    if sessions.is_empty() && !args.json {
        warn(&format!(
            "no sessions of this project ({}) in {}\n  hint: `skillet run \"PROMPT\"` or `skillet` starts one",
            project_of(&context.env.cwd).display(),
            dir.display()
        ));
    } else if more && !args.json {
        warn(&format!(
            "(the newest {}; there are more: --limit N)",
            plural(sessions.len(), "session")
        ));
    }
    Ok(ExitCode::SUCCESS)
}
