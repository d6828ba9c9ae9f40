//! The sessions stored for a project: listed newest first ([`project_sessions`]), and what
//! `--resume` was really given ([`split_resume`]).

use std::io;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use skillet_agent::transcript;
use skillet_llm::{ContentBlock, Message, Role};
use skillet_skills::{find_git_root, terminal_safe};

/// What `--resume` takes for "this project's most recent session".
pub const LATEST: &str = "latest";

/// The most characters of a session's first message shown in a listing.
pub const FIRST_MESSAGE_CHARS: usize = 60;
/// The most transcripts looked at (newest first) when listing, so a huge sessions folder
/// cannot make a listing slow.
pub const MAX_TRANSCRIPTS_SCANNED: usize = 2_000;

/// One stored session, as listed.
#[derive(Debug, Clone)]
pub struct SessionSummary {
    /// Its id (`20261130-042927-29b8`).
    pub id: String,
    /// Its transcript.
    pub path: PathBuf,
    /// The folder it works in.
    pub cwd: PathBuf,
    /// The model it last used (`/model` switches it).
    pub model: String,
    /// Whether another skillet has it open right now (it cannot be continued until that ends).
    pub open: bool,
    /// When it started, in seconds since 1970 (UTC).
    pub started: u64,
    /// When its transcript was last written to.
    pub modified: SystemTime,
    /// The first user message: one line, at most [`FIRST_MESSAGE_CHARS`] characters (cut with
    /// `…`), control characters and escape sequences shown, never acted on.
    pub first_message: String,
    /// How many messages the user sent (tool results are not counted).
    pub turns: usize,
}

impl SessionSummary {
    /// When it started, `YYYY-MM-DD HH:MM` in UTC.
    pub fn started_utc(&self) -> String {
        let (year, month, day, hour, minute, _) = transcript::civil(self.started);
        format!("{year:04}-{month:02}-{day:02} {hour:02}:{minute:02}")
    }
}

/// The sessions of the project `cwd` is in (its git root, else `cwd` itself) stored in
/// `sessions_dir`, the one written to last first, at most `limit`. Sessions in which the user
/// never sent a message (one opened and left, or left by `/clear`) are not listed: there is
/// nothing in them to continue. Damaged transcripts are skipped; a missing folder is no
/// sessions.
pub fn project_sessions(
    sessions_dir: &Path,
    cwd: &Path,
    limit: usize,
) -> io::Result<Vec<SessionSummary>> {
    let entries = match std::fs::read_dir(sessions_dir) {
        Ok(entries) => entries,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(error) => return Err(error),
    };
    let project = project_of(cwd);
    let mut files: Vec<(SystemTime, PathBuf)> = entries
        .filter_map(Result::ok)
        .filter(|entry| entry.path().extension().is_some_and(|ext| ext == "jsonl"))
        .filter_map(|entry| {
            let modified = entry.metadata().and_then(|m| m.modified()).ok()?;
            Some((modified, entry.path()))
        })
        .collect();
    files.sort_unstable_by(|a, b| b.cmp(a));
    Ok(files
        .into_iter()
        .take(MAX_TRANSCRIPTS_SCANNED)
        .filter(|(_, path)| {
            transcript::read_header(path).is_ok_and(|header| project_of(&header.cwd) == project)
        })
        .filter_map(|(modified, path)| summarize(&path, modified))
        .take(limit)
        .collect())
}

/// The project a folder belongs to: its git root, else the folder (links resolved).
pub fn project_of(dir: &Path) -> PathBuf {
    let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    find_git_root(&dir).unwrap_or(dir)
}

/// What the list shows for a session whose every turn was compacted into its summary.
const COMPACTED_ONLY: &str = "(compacted conversation)";

/// A transcript's summary; `None` when it cannot be read or holds no user message.
fn summarize(path: &Path, modified: SystemTime) -> Option<SessionSummary> {
    let transcript::Loaded {
        header,
        messages: history,
        model,
    } = transcript::load_session(path).ok()?;
    let texts: Vec<&str> = history.iter().filter_map(user_text).collect();
    if texts.is_empty() {
        return None;
    }
    // skillet's own messages (a compaction's summary, the request to go on after an output
    // limit) are not the user's turns.
    let typed: Vec<&str> = texts
        .into_iter()
        .filter(|text| {
            !text.starts_with(skillet_agent::compact::SUMMARY_HEADER)
                && *text != skillet_agent::CONTINUE
        })
        .collect();
    let first = typed.first().copied().unwrap_or(COMPACTED_ONLY);
    let turns = typed.len();
    Some(SessionSummary {
        id: header.id,
        path: path.to_path_buf(),
        cwd: header.cwd,
        model: model.unwrap_or(header.model),
        open: transcript::in_use(path),
        started: header.created,
        modified,
        first_message: one_line(first, FIRST_MESSAGE_CHARS),
        turns,
    })
}

/// What the user wrote, when `message` is a message of theirs (not tool results).
fn user_text(message: &Message) -> Option<&str> {
    if message.role != Role::User {
        return None;
    }
    match message.content.first() {
        Some(ContentBlock::Text { text }) => Some(text),
        _ => None,
    }
}

/// `text` on one line (runs of whitespace made one space), cut at `limit` characters with `…`,
/// safe to print.
fn one_line(text: &str, limit: usize) -> String {
    let words = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let line = if words.chars().count() > limit {
        let cut: String = words.chars().take(limit.saturating_sub(1)).collect();
        format!("{}…", cut.trim_end())
    } else {
        words
    };
    terminal_safe(&line, false).into_owned()
}

/// Whether `value` has the form of a session id: `YYYYMMDD-HHMMSS-xxxx`.
pub fn is_session_id(value: &str) -> bool {
    let parts: Vec<&str> = value.split('-').collect();
    matches!(parts.as_slice(), [date, time, tag]
        if date.len() == 8 && date.bytes().all(|b| b.is_ascii_digit())
            && time.len() == 6 && time.bytes().all(|b| b.is_ascii_digit())
            && tag.len() == 4 && tag.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// What `--resume` and a prompt were really given. clap lets `--resume` take the next word,
/// so `skillet run --resume "follow up"` gives it the prompt; a value of several words that is
/// neither in the form of a session id nor the name of a stored one is taken as the prompt, and
/// the session is the latest. A single word stays an id, so a mistyped id is an error ("no
/// session"), never a prompt sent to the model. `--continue` stands for `--resume` without an id.
pub fn split_resume(
    resume: Option<&str>,
    continue_latest: bool,
    prompt: Option<String>,
    sessions_dir: &Path,
) -> (Option<String>, Option<String>) {
    let resume = if continue_latest {
        Some(LATEST)
    } else {
        resume
    };
    match (resume, prompt) {
        (Some(value), None)
            if value != LATEST
                && value.trim().contains(char::is_whitespace)
                && !is_stored_session(value, sessions_dir) =>
        {
            (Some(LATEST.to_string()), Some(value.to_string()))
        }
        (resume, prompt) => (resume.map(str::to_string), prompt),
    }
}

/// Whether `value` is in the form of a session id or names a transcript in `dir`.
fn is_stored_session(value: &str, dir: &Path) -> bool {
    is_session_id(value)
        || (!value.is_empty()
            && value
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
            && dir.join(format!("{value}.jsonl")).is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_ids_are_told_from_prompts() {
        assert!(is_session_id("20261130-042927-29b8"));
        assert!(!is_session_id("follow up"));
        assert!(!is_session_id("fix-the-bug"));
        assert!(!is_session_id("20261130-042927-29b"));
        let dir = Path::new("/nonexistent");
        assert_eq!(
            split_resume(Some("follow up"), false, None, dir),
            (Some(LATEST.into()), Some("follow up".into()))
        );
        assert_eq!(
            split_resume(Some("20261130-042927-29b8"), false, None, dir),
            (Some("20261130-042927-29b8".into()), None)
        );
        // One word stays an id: a typo is "no session", never a prompt sent to the model.
        for typo in ["20261130-04292-29b8", "29b8", "fix"] {
            assert_eq!(
                split_resume(Some(typo), false, None, dir),
                (Some(typo.into()), None)
            );
        }
        assert_eq!(
            split_resume(Some("x"), false, Some("p".into()), dir),
            (Some("x".into()), Some("p".into()))
        );
        assert_eq!(
            split_resume(None, true, Some("p".into()), dir),
            (Some(LATEST.into()), Some("p".into()))
        );
        assert_eq!(
            split_resume(Some(LATEST), false, None, dir),
            (Some(LATEST.into()), None)
        );
    }

    #[test]
    fn a_compacted_session_is_listed_by_what_the_user_typed() {
        use skillet_agent::transcript::{SessionHeader, Transcript, TranscriptEvent};
        let temp = tempfile::tempdir().unwrap();
        let header = SessionHeader {
            id: "s".into(),
            created: 0,
            cwd: temp.path().to_path_buf(),
            provider: "anthropic".into(),
            model: "m".into(),
            system: String::new(),
            tools: vec![],
        };
        let mut file = Transcript::create(temp.path(), &header).unwrap();
        let summary = Message::user(format!(
            "{}\n\nthey asked about notes",
            skillet_agent::compact::SUMMARY_HEADER
        ));
        file.record(&TranscriptEvent::Compacted {
            messages: vec![summary],
        })
        .unwrap();
        let path = file.path().to_path_buf();
        let listed = summarize(&path, SystemTime::now()).unwrap();
        assert_eq!(
            (listed.first_message.as_str(), listed.turns),
            (COMPACTED_ONLY, 0)
        );
        file.record(&TranscriptEvent::Message {
            message: Message::user("and now the tests"),
        })
        .unwrap();
        let listed = summarize(&path, SystemTime::now()).unwrap();
        assert_eq!(
            (listed.first_message.as_str(), listed.turns),
            ("and now the tests", 1)
        );
    }

    #[test]
    fn first_messages_are_one_safe_line() {
        assert_eq!(one_line("fix\n  the\tbug", 60), "fix the bug");
        assert_eq!(one_line("abcdefghij", 5), "abcd…");
        assert_eq!(one_line("a\u{1b}[2Kb", 60), "a\\e[2Kb");
    }
}
