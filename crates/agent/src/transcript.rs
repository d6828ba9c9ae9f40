//! The session transcript: one JSON line per event, flushed as it happens, so a crash loses
//! nothing; and reading one back to resume.

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use skillet_llm::{Message, ToolSpec, Usage};

use crate::error::AgentError;

/// What a session was started with; the system prompt and tools are kept so a resumed session
/// sends them byte for byte as before.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionHeader {
    /// The session's id (also the file's name).
    pub id: String,
    /// When it started, in seconds since 1970.
    pub created: u64,
    /// The working directory.
    pub cwd: PathBuf,
    /// `anthropic` or `openai`.
    pub provider: String,
    /// The model.
    pub model: String,
    /// The system prompt.
    pub system: String,
    /// The tool definitions.
    pub tools: Vec<ToolSpec>,
}

/// One line of a transcript.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum TranscriptEvent {
    /// The first line.
    Session(SessionHeader),
    /// A message appended to the history.
    Message {
        /// The message.
        message: Message,
    },
    /// The usage of one request.
    Usage {
        /// The counts.
        usage: Usage,
    },
    /// Something the user was told.
    Notice {
        /// The text.
        text: String,
    },
    /// An error that ended a turn.
    Error {
        /// The message.
        message: String,
    },
    /// The history repaired on resuming: it replaces every message before it.
    Repaired {
        /// The whole repaired history.
        messages: Vec<Message>,
    },
    /// The history compacted (`/compact`): a summary replaces every message before it.
    Compacted {
        /// The whole new history (the summary message).
        messages: Vec<Message>,
    },
    /// The model switched (`/model`): the requests after it use this one.
    Model {
        /// The model's name.
        model: String,
    },
    /// Something a subagent did (not part of the session's own history).
    Subagent {
        /// The `task` call that started it.
        call_id: String,
        /// The event, as the subagent's own transcript would hold it.
        event: Box<TranscriptEvent>,
    },
}

/// An open transcript file, appended to event by event.
#[derive(Debug)]
pub struct Transcript {
    /// The file; `None` until the first event of a [`Transcript::deferred`] one.
    file: Option<File>,
    /// The header a deferred transcript writes first.
    header: Option<SessionHeader>,
    path: PathBuf,
    locked: bool,
    /// This transcript made its file (a new session), so it may take it back.
    created: bool,
}

impl Transcript {
    /// Creates `dir/ID.jsonl` and writes the header.
    pub fn create(dir: &Path, header: &SessionHeader) -> Result<Self, AgentError> {
        let mut transcript = Self::deferred(dir, header)?;
        transcript.open()?;
        Ok(transcript)
    }

    /// A transcript for `dir/ID.jsonl` that creates the file (and writes the header) with its
    /// first event: a session that ends before anything happened in it (a `/NAME` whose
    /// commands failed, nothing sent) leaves no file to list. The folder is made now, so a
    /// sessions folder that cannot be written is said before any work.
    pub fn deferred(dir: &Path, header: &SessionHeader) -> Result<Self, AgentError> {
        std::fs::create_dir_all(dir).map_err(|source| AgentError::Transcript {
            path: dir.to_path_buf(),
            message: source.to_string(),
        })?;
        Ok(Self {
            file: None,
            header: Some(header.clone()),
            path: dir.join(format!("{}.jsonl", header.id)),
            // A new id: nobody else writes to it.
            locked: true,
            created: false,
        })
    }

    /// Creates a deferred transcript's file, locked, its header written; a file that could not
    /// be locked or given its header is removed again, so the next event tries afresh and no
    /// transcript is ever left without its header.
    fn open(&mut self) -> Result<&mut File, AgentError> {
        let error = |path: &Path, message: String| AgentError::Transcript {
            path: path.to_path_buf(),
            message,
        };
        if self.file.is_none() {
            let mut file = OpenOptions::new()
                .create_new(true)
                .append(true)
                .open(&self.path)
                .map_err(|source| error(&self.path, source.to_string()))?;
            let started = lock(&file, &self.path).and_then(|locked| {
                if let Some(header) = &self.header {
                    let line = event_line(&TranscriptEvent::Session(header.clone()), &self.path)?;
                    file.write_all(line.as_bytes())
                        .and_then(|()| file.flush())
                        .map_err(|source| error(&self.path, source.to_string()))?;
                }
                Ok(locked)
            });
            match started {
                Ok(locked) => {
                    self.locked = locked;
                    self.header = None;
                    self.file = Some(file);
                    self.created = true;
                }
                Err(failed) => {
                    drop(file);
                    let _ = std::fs::remove_file(&self.path);
                    return Err(failed);
                }
            }
        }
        self.file
            .as_mut()
            .ok_or_else(|| error(&self.path, "not open".to_string()))
    }

    /// Opens an existing transcript to append to it: [`AgentError::SessionInUse`] while
    /// another skillet holds it, since two writers would interleave their histories.
    /// A last line a crash cut short is moved to `ID.jsonl.torn` first, so the next event does
    /// not join it on one line (and get lost with it).
    pub fn append_to(path: &Path) -> Result<Self, AgentError> {
        let error = |source: std::io::Error| AgentError::Transcript {
            path: path.to_path_buf(),
            message: source.to_string(),
        };
        let file = OpenOptions::new().append(true).open(path).map_err(error)?;
        let locked = lock(&file, path)?;
        cut_torn_tail(path).map_err(error)?;
        Ok(Self {
            file: Some(file),
            header: None,
            path: path.to_path_buf(),
            locked,
            created: false,
        })
    }

    /// Whether this is a new session's transcript (its file made here, or not yet).
    pub fn is_new(&self) -> bool {
        self.created || self.file.is_none()
    }

    /// Removes the file this transcript made (a new session), as if the session never was;
    /// an existing session's file is never removed.
    pub fn discard(mut self) {
        if self.created {
            drop(self.file.take());
            let _ = std::fs::remove_file(&self.path);
        }
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether this skillet holds the transcript's lock (false where the file system cannot
    /// lock: another skillet could then write to it too).
    pub fn is_locked(&self) -> bool {
        self.locked
    }

    /// Appends one event and flushes it.
    pub fn record(&mut self, event: &TranscriptEvent) -> Result<(), AgentError> {
        let line = event_line(event, &self.path)?;
        let file = self.open()?;
        let before = file.metadata().map(|metadata| metadata.len());
        let written = file.write_all(line.as_bytes()).and_then(|()| file.flush());
        if let Err(source) = written {
            // A line written in part would join the next one: cut it back.
            if let Ok(before) = before {
                let _ = file.set_len(before);
            }
            return Err(AgentError::Transcript {
                path: self.path.clone(),
                message: source.to_string(),
            });
        }
        Ok(())
    }

    /// Makes what was written durable (`fdatasync`): called at turn boundaries, so a power cut
    /// loses at most the turn in progress, while events within a turn cost no disk flush each.
    pub fn sync(&mut self) -> Result<(), AgentError> {
        let Some(file) = self.file.as_ref() else {
            return Ok(());
        };
        file.sync_data().map_err(|source| AgentError::Transcript {
            path: self.path.clone(),
            message: source.to_string(),
        })
    }
}

/// One event as a transcript line, its newline included.
fn event_line(event: &TranscriptEvent, path: &Path) -> Result<String, AgentError> {
    let mut line = serde_json::to_string(event).map_err(|error| AgentError::Transcript {
        path: path.to_path_buf(),
        message: error.to_string(),
    })?;
    line.push('\n');
    Ok(line)
}

impl Drop for Transcript {
    /// A session that ends, however it ends, leaves its transcript on disk (once anything was
    /// written to it).
    fn drop(&mut self) {
        if let Some(file) = self.file.as_ref() {
            let _ = file.sync_data();
        }
    }
}

/// A transcript read back: its header and messages, as they were (a `repaired` or `compacted`
/// event replaces the messages before it). [`crate::Agent::resume`] repairs what the APIs would reject.
pub fn load(path: &Path) -> Result<(SessionHeader, Vec<Message>), AgentError> {
    load_session(path).map(|loaded| (loaded.header, loaded.messages))
}

/// How a model switch was noted before the `model` event: `model switched from X to Y`.
const LEGACY_MODEL_SWITCH: &str = "model switched from ";

/// A stored session as [`load_session`] reads it back.
#[derive(Debug, Clone, PartialEq)]
pub struct Loaded {
    /// Its header.
    pub header: SessionHeader,
    /// Its messages, as they were.
    pub messages: Vec<Message>,
    /// The model it last switched to (`/model`), if it did.
    pub model: Option<String>,
}

/// A transcript read back whole: see [`load`], plus the model the session last switched to.
pub fn load_session(path: &Path) -> Result<Loaded, AgentError> {
    let error = |message: String| AgentError::Transcript {
        path: path.to_path_buf(),
        message,
    };
    let file = File::open(path).map_err(|source| error(source.to_string()))?;
    let mut header = None;
    let mut messages = Vec::new();
    // Split on bytes: a line a crash cut inside a character is not UTF-8, and is still only a
    // torn last line.
    // A line that is not an event is an error unless nothing but blank lines follows it (then a
    // crash cut it: a torn last line).
    let mut damaged: Option<String> = None;
    let mut model = None;
    for (index, line) in BufReader::new(file).split(b'\n').enumerate() {
        let line = line.map_err(|source| error(source.to_string()))?;
        if line.trim_ascii().is_empty() {
            continue;
        }
        if let Some(damaged) = damaged {
            return Err(error(damaged));
        }
        match serde_json::from_slice::<TranscriptEvent>(&line) {
            Ok(TranscriptEvent::Session(found)) => header = Some(found),
            Ok(TranscriptEvent::Message { message }) => messages.push(message),
            Ok(
                TranscriptEvent::Repaired { messages: repaired }
                | TranscriptEvent::Compacted { messages: repaired },
            ) => messages = repaired,
            Ok(TranscriptEvent::Model { model: switched }) => model = Some(switched),
            // How skillet before the `model` event recorded a switch.
            Ok(TranscriptEvent::Notice { text }) => {
                if let Some((_, to)) = text
                    .strip_prefix(LEGACY_MODEL_SWITCH)
                    .and_then(|rest| rest.rsplit_once(" to "))
                {
                    model = Some(to.to_string());
                }
            }
            Ok(_) => {}
            Err(parse) => {
                let message = format!(
                    "line {} is not a transcript event ({parse}); the file is damaged there",
                    index + 1
                );
                if header.is_none() {
                    return Err(error(message));
                }
                damaged = Some(message);
            }
        }
    }
    let header = header.ok_or_else(|| error("no session header".to_string()))?;
    Ok(Loaded {
        header,
        messages,
        model,
    })
}

/// How many times taking a transcript's lock is tried before it counts as held elsewhere (a
/// listing checking [`in_use`] holds it for an instant).
const LOCK_ATTEMPTS: u32 = 5;
/// The pause between those tries.
const LOCK_RETRY: std::time::Duration = std::time::Duration::from_millis(20);

/// Takes the transcript's advisory lock for as long as `file` is open (the kernel lets it go
/// when the process ends, however it ends). `Ok(false)`: the file system cannot lock (some
/// network and FUSE mounts): the session goes on unlocked, and the caller says so.
fn lock(file: &File, path: &Path) -> Result<bool, AgentError> {
    for attempt in 1..=LOCK_ATTEMPTS {
        match file.try_lock() {
            Ok(()) => return Ok(true),
            Err(std::fs::TryLockError::WouldBlock) if attempt < LOCK_ATTEMPTS => {
                std::thread::sleep(LOCK_RETRY);
            }
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(AgentError::SessionInUse {
                    path: path.to_path_buf(),
                });
            }
            Err(std::fs::TryLockError::Error(_)) => return Ok(false),
        }
    }
    Ok(false)
}

/// Whether another skillet has the transcript open (holds its lock) right now.
pub fn in_use(path: &Path) -> bool {
    File::open(path).is_ok_and(|file| {
        matches!(
            file.try_lock_shared(),
            Err(std::fs::TryLockError::WouldBlock)
        )
    })
}

/// Makes the file end in a whole event and a newline before appending: a last line that is a
/// whole event but lost its newline gets it back; one that is not an event (a crash cut it, or
/// left zeros in it, with or without its newline) is moved to `PATH.torn`, so the next event
/// never lands after damage that the reader would then find in the middle.
fn cut_torn_tail(path: &Path) -> std::io::Result<()> {
    use std::io::{Read as _, Seek as _, SeekFrom};
    let mut file = OpenOptions::new().read(true).write(true).open(path)?;
    let length = file.metadata()?.len();
    // Where the last line with text ends (blank lines after it are skipped), and where it
    // starts: read back from the end a chunk at a time.
    let mut content_end = None;
    let mut start_of_tail = 0;
    let mut end = length;
    while end > 0 {
        let start = end.saturating_sub(TAIL_CHUNK);
        let mut chunk = vec![0; usize::try_from(end - start).unwrap_or(0)];
        file.seek(SeekFrom::Start(start))?;
        file.read_exact(&mut chunk)?;
        let mut upto = chunk.len();
        if content_end.is_none() {
            let Some(last) = chunk.iter().rposition(|byte| !byte.is_ascii_whitespace()) else {
                end = start;
                continue;
            };
            content_end = Some(start + u64::try_from(last).unwrap_or(0) + 1);
            upto = last;
        }
        if let Some(newline) = chunk[..upto].iter().rposition(|&byte| byte == b'\n') {
            start_of_tail = start + u64::try_from(newline).unwrap_or(0) + 1;
            break;
        }
        end = start;
    }
    let Some(content_end) = content_end else {
        // Empty, or only blank lines: nothing to cut.
        return Ok(());
    };
    // Whether the blank run after it holds a line end (read through, not kept).
    file.seek(SeekFrom::Start(content_end))?;
    let ends_in_newline = BufReader::new((&mut file).take(length - content_end))
        .bytes()
        .any(|byte| matches!(byte, Ok(b'\n')));
    // Parsed as it is read: damage (zeros, a cut) fails where it starts without reading on, and
    // a whole event of any size is recognised.
    file.seek(SeekFrom::Start(start_of_tail))?;
    let whole = serde_json::from_reader::<_, TranscriptEvent>(BufReader::new(
        (&mut file).take(content_end - start_of_tail),
    ))
    .is_ok();
    if whole {
        if !ends_in_newline {
            file.seek(SeekFrom::End(0))?;
            file.write_all(b"\n")?;
            file.sync_data()?;
        }
        return Ok(());
    }
    if start_of_tail == 0 {
        // Nothing whole before it (a damaged header): leave it for the reader to refuse.
        return Ok(());
    }
    let mut torn = OpenOptions::new()
        .create(true)
        .append(true)
        .open(path.with_extension("jsonl.torn"))?;
    file.seek(SeekFrom::Start(start_of_tail))?;
    // Everything from the torn line on (blank lines after it too), ending in one newline.
    std::io::copy(&mut (&mut file).take(length - start_of_tail), &mut torn)?;
    if !ends_in_newline {
        torn.write_all(b"\n")?;
    }
    torn.sync_data()?;
    file.set_len(start_of_tail)?;
    file.sync_data()
}

/// How much of a transcript's end is read at a time looking for its last newline.
const TAIL_CHUNK: u64 = 64 * 1024;

/// The most bytes read of a transcript's first line to learn its session header.
pub const MAX_HEADER_BYTES: u64 = 16 * 1024 * 1024;

/// A transcript's header alone (its first line), without reading the rest.
pub fn read_header(path: &Path) -> Result<SessionHeader, AgentError> {
    use std::io::Read as _;
    let error = |message: String| AgentError::Transcript {
        path: path.to_path_buf(),
        message,
    };
    let file = File::open(path).map_err(|source| error(source.to_string()))?;
    let mut line = Vec::new();
    BufReader::new(file.take(MAX_HEADER_BYTES))
        .read_until(b'\n', &mut line)
        .map_err(|source| error(source.to_string()))?;
    match serde_json::from_slice::<TranscriptEvent>(&line) {
        Ok(TranscriptEvent::Session(header)) => Ok(header),
        Ok(_) => Err(error("the first line is not a session header".to_string())),
        Err(parse) => Err(error(format!(
            "the first line is not a session header ({parse})"
        ))),
    }
}

/// A new session id: `YYYYMMDD-HHMMSS-xxxx` (UTC), sortable by time.
pub fn new_session_id() -> String {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let (year, month, day, hour, minute, second) = civil(now.as_secs());
    format!(
        "{year:04}{month:02}{day:02}-{hour:02}{minute:02}{second:02}-{:04x}",
        (now.subsec_nanos() ^ std::process::id()) & 0xffff
    )
}

/// The UTC date and time of a Unix time (Howard Hinnant's days-from-civil, inverted).
pub fn civil(seconds: u64) -> (u64, u64, u64, u64, u64, u64) {
    let days = seconds / 86_400;
    let rest = seconds % 86_400;
    let z = days + 719_468;
    let era = z / 146_097;
    let day_of_era = z - era * 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1_460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let mp = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = year_of_era + era * 400 + u64::from(month <= 2);
    (year, month, day, rest / 3_600, rest % 3_600 / 60, rest % 60)
}

#[cfg(test)]
mod tests {
    use super::*;
    use skillet_llm::{ContentBlock, Role};

    fn header(id: &str) -> SessionHeader {
        SessionHeader {
            id: id.into(),
            created: 0,
            cwd: PathBuf::from("/w"),
            provider: "anthropic".into(),
            model: "m".into(),
            system: "sys".into(),
            tools: vec![],
        }
    }

    #[test]
    fn a_deferred_transcript_is_written_from_its_first_event_header_first() {
        let temp = tempfile::tempdir().unwrap();
        let dir = temp.path().join("sessions");
        let mut transcript = Transcript::deferred(&dir, &header("s2")).unwrap();
        let path = transcript.path().to_path_buf();
        // The folder is made at once; the file only with the first event.
        assert!(dir.is_dir());
        assert!(!path.exists());
        transcript.sync().unwrap();
        assert!(!path.exists());
        transcript
            .record(&TranscriptEvent::Model { model: "n".into() })
            .unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2, "{text}");
        assert!(lines[0].contains("\"s2\""), "{text}");
        assert!(lines[1].contains("\"n\""), "{text}");
        assert!(in_use(&path));
        drop(transcript);
        // A deferred transcript that saw no event leaves nothing.
        drop(Transcript::deferred(&dir, &header("s3")).unwrap());
        assert!(!dir.join("s3.jsonl").exists());
    }

    #[test]
    fn one_writer_at_a_time() {
        let temp = tempfile::tempdir().unwrap();
        let transcript = Transcript::create(temp.path(), &header("s1")).unwrap();
        let path = transcript.path().to_path_buf();
        assert!(in_use(&path));
        // A second skillet cannot append while the first has it open.
        let error = Transcript::append_to(&path).unwrap_err();
        assert!(matches!(error, AgentError::SessionInUse { .. }), "{error}");
        assert!(
            error
                .to_string()
                .starts_with("session s1 is open in another skillet"),
            "{error}"
        );
        // Reading it is still fine.
        assert_eq!(load(&path).unwrap().0.id, "s1");
        drop(transcript);
        assert!(!in_use(&path));
        let appended = Transcript::append_to(&path).unwrap();
        assert!(matches!(
            Transcript::append_to(&path).unwrap_err(),
            AgentError::SessionInUse { .. }
        ));
        drop(appended);
        Transcript::append_to(&path).unwrap();
    }

    #[test]
    fn the_last_model_switch_is_read_back() {
        let temp = tempfile::tempdir().unwrap();
        let mut transcript = Transcript::create(temp.path(), &header("s1")).unwrap();
        let path = transcript.path().to_path_buf();
        assert_eq!(load_session(&path).unwrap().model, None);
        for model in ["a", "b"] {
            transcript
                .record(&TranscriptEvent::Model {
                    model: model.into(),
                })
                .unwrap();
        }
        let loaded = load_session(&path).unwrap();
        assert_eq!(loaded.model.as_deref(), Some("b"));
        assert_eq!(loaded.header.model, "m");
        // How skillet noted a switch before the `model` event.
        transcript
            .record(&TranscriptEvent::Notice {
                text: "model switched from b to c-2".into(),
            })
            .unwrap();
        assert_eq!(load_session(&path).unwrap().model.as_deref(), Some("c-2"));
    }

    #[test]
    fn civil_dates() {
        assert_eq!(civil(0), (1970, 1, 1, 0, 0, 0));
        assert_eq!(civil(1_796_008_331), (2026, 11, 30, 3, 12, 11));
        assert_eq!(civil(951_782_400), (2000, 2, 29, 0, 0, 0));
    }

    #[test]
    fn a_cut_last_line_is_tolerated() {
        let temp = tempfile::tempdir().unwrap();
        let header = header("s1");
        let mut transcript = Transcript::create(temp.path(), &header).unwrap();
        transcript
            .record(&TranscriptEvent::Message {
                message: Message::user("hi"),
            })
            .unwrap();
        transcript
            .record(&TranscriptEvent::Message {
                message: Message {
                    role: Role::Assistant,
                    content: vec![ContentBlock::ToolUse {
                        id: "t1".into(),
                        name: "bash".into(),
                        input: serde_json::json!({"command": "ls"}),
                    }],
                },
            })
            .unwrap();
        let path = transcript.path().to_path_buf();
        drop(transcript);
        let mut text = std::fs::read_to_string(&path).unwrap();
        text.push_str("{\"type\":\"message\",\"mess");
        std::fs::write(&path, text).unwrap();
        let (loaded, messages) = load(&path).unwrap();
        assert_eq!(loaded, header);
        assert_eq!(messages.len(), 2, "read as written; resuming repairs");
        assert_eq!(read_header(&path).unwrap(), header);
        // Appending first moves the torn line aside, so the next event is whole.
        let mut appended = Transcript::append_to(&path).unwrap();
        appended
            .record(&TranscriptEvent::Message {
                message: Message::user("after the crash"),
            })
            .unwrap();
        let (_, messages) = load(&path).unwrap();
        assert_eq!(messages.len(), 3);
        assert_eq!(
            std::fs::read_to_string(path.with_extension("jsonl.torn")).unwrap(),
            "{\"type\":\"message\",\"mess\n"
        );
        // Damage in the middle is an error naming the line, not a silent cut.
        let mut text = std::fs::read_to_string(&path).unwrap();
        text.insert_str(text.find('\n').unwrap() + 1, "garbage\n");
        std::fs::write(&path, text).unwrap();
        let error = load(&path).unwrap_err().to_string();
        assert!(
            error.contains("line 2 is not a transcript event"),
            "{error}"
        );
    }

    #[test]
    fn a_last_line_cut_in_a_character_or_only_missing_its_newline() {
        let temp = tempfile::tempdir().unwrap();
        let header = header("s2");
        let mut transcript = Transcript::create(temp.path(), &header).unwrap();
        let path = transcript.path().to_path_buf();
        transcript
            .record(&TranscriptEvent::Message {
                message: Message::user("d\u{e9}j\u{e0} vu"),
            })
            .unwrap();
        drop(transcript);
        // Only the newline lost: the event is kept, and the next one lands on its own line.
        let text = std::fs::read(&path).unwrap();
        std::fs::write(&path, &text[..text.len() - 1]).unwrap();
        let mut appended = Transcript::append_to(&path).unwrap();
        appended
            .record(&TranscriptEvent::Message {
                message: Message::user("next"),
            })
            .unwrap();
        assert_eq!(load(&path).unwrap().1.len(), 2);
        assert!(!path.with_extension("jsonl.torn").exists());
        // Cut inside the two bytes of "é": not UTF-8, still only a torn last line.
        let text = std::fs::read(&path).unwrap();
        let mut torn = text.clone();
        torn.extend_from_slice(&text[text.len() / 2..]);
        let e_acute = torn.iter().rposition(|&b| b == 0xc3).unwrap();
        torn.truncate(e_acute + 1);
        std::fs::write(&path, &torn).unwrap();
        assert_eq!(load(&path).unwrap().1.len(), 2);
    }

    #[test]
    fn a_torn_line_followed_by_blank_lines_or_zeros_is_still_only_a_torn_tail() {
        let temp = tempfile::tempdir().unwrap();
        let header = header("s3");
        let mut transcript = Transcript::create(temp.path(), &header).unwrap();
        transcript
            .record(&TranscriptEvent::Message {
                message: Message::user("kept"),
            })
            .unwrap();
        let path = transcript.path().to_path_buf();
        drop(transcript);
        let whole = std::fs::read(&path).unwrap();
        for tail in [
            &b"{\"type\":\"mess\n\n\n"[..],
            &[0_u8; 4096][..],
            b"\0{\"type\":\"message\"}\n",
        ] {
            let mut damaged = whole.clone();
            damaged.extend_from_slice(tail);
            std::fs::write(&path, &damaged).unwrap();
            assert_eq!(load(&path).unwrap().1.len(), 1, "{tail:?}");
            let mut appended = Transcript::append_to(&path).unwrap();
            appended
                .record(&TranscriptEvent::Message {
                    message: Message::user("next"),
                })
                .unwrap();
            drop(appended);
            assert_eq!(load(&path).unwrap().1.len(), 2, "{tail:?}");
            let _ = std::fs::remove_file(path.with_extension("jsonl.torn"));
        }
    }
}
