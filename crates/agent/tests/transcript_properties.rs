//! Property tests of session transcripts with fixed budgets (run by `cargo test`;
//! `scripts/fuzz.sh` runs them for longer), through the public API: transcripts are written by
//! [`Transcript`] from generated events, then damaged.
//!
//! - Whatever bytes are changed, inserted or removed, reading never panics.
//! - Cut anywhere in its last record, a transcript reads back every earlier record, and resuming
//!   it (moving the torn line aside) then appending reads back those and the new one.
//! - A damaged line before the last is an error naming that line.
//! - Whatever [`transcript::load`] accepts, resuming and appending keeps: the same header and
//!   messages, and the new one.
//!
//! `PROPTEST_CASES` overrides the budgets; failing cases are saved in
//! `proptest-regressions/transcript_properties.txt` (commit it) and replayed first.

#![allow(
    clippy::unwrap_used,
    clippy::panic,
    clippy::print_stderr,
    reason = "test helpers"
)]

use std::fmt::Debug;
use std::path::{Path, PathBuf};

use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::TestCaseResult;
use serde_json::json;
use skillet_agent::transcript::{self, SessionHeader, Transcript, TranscriptEvent};
use skillet_llm::{ContentBlock, Message, Role, ToolSpec, Usage};

/// Where failing cases are saved and replayed from (committed).
const REGRESSIONS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/proptest-regressions/transcript_properties.txt"
);

/// [`skillet_test_support::check_property`] with this file's regressions.
fn check<S>(name: &str, cases: u32, strategy: S, test: impl Fn(S::Value) -> TestCaseResult)
where
    S: Strategy,
    S::Value: Debug,
{
    skillet_test_support::check_property(REGRESSIONS, name, cases, strategy, test);
}

/// A temporary folder in memory where there is one: resuming syncs the file to disk, which on
/// a busy disk costs more than the rest of the test.
fn scratch_dir() -> tempfile::TempDir {
    let shm = Path::new("/dev/shm");
    if shm.is_dir()
        && let Ok(dir) = tempfile::tempdir_in(shm)
    {
        return dir;
    }
    tempfile::tempdir().unwrap()
}

/// Text of every kind: plain, any printable character, control characters and line breaks
/// (which JSON escapes).
fn text() -> BoxedStrategy<String> {
    prop_oneof![
        4 => "[a-z ]{0,12}",
        2 => "\\PC{0,12}",
        1 => any::<String>(),
        1 => "[\n\r\t\"\\\\\u{0}\u{2028}é]{0,6}",
    ]
    .boxed()
}

fn header() -> impl Strategy<Value = SessionHeader> {
    (
        "[0-9a-z-]{1,20}",
        any::<u64>(),
        text(),
        text(),
        text(),
        prop::collection::vec((text(), text()), 0..2),
    )
        .prop_map(|(id, created, cwd, model, system, tools)| SessionHeader {
            id,
            created,
            cwd: PathBuf::from(format!("/w/{cwd}")),
            provider: "anthropic".into(),
            model,
            system,
            tools: tools
                .into_iter()
                .map(|(name, description)| ToolSpec {
                    name,
                    description,
                    input_schema: json!({"type": "object", "properties": {}}),
                })
                .collect(),
        })
}

fn message() -> impl Strategy<Value = Message> {
    let block = prop_oneof![
        3 => text().prop_map(ContentBlock::text),
        1 => (text(), text(), text(), any::<i64>()).prop_map(|(id, name, argument, number)| {
            ContentBlock::ToolUse {
                id,
                name,
                input: json!({"command": argument, "n": number, "list": [argument, null, true]}),
            }
        }),
        1 => (text(), text(), any::<bool>()).prop_map(|(tool_use_id, content, is_error)| {
            ContentBlock::ToolResult {
                tool_use_id,
                content,
                is_error,
            }
        }),
    ];
    (any::<bool>(), prop::collection::vec(block, 0..3)).prop_map(|(user, content)| Message {
        role: if user { Role::User } else { Role::Assistant },
        content,
    })
}

fn event() -> impl Strategy<Value = TranscriptEvent> {
    prop_oneof![
        6 => message().prop_map(|message| TranscriptEvent::Message { message }),
        1 => (any::<u64>(), any::<u64>()).prop_map(|(input_tokens, output_tokens)| {
            TranscriptEvent::Usage {
                usage: Usage {
                    input_tokens,
                    output_tokens,
                    ..Usage::default()
                },
            }
        }),
        1 => text().prop_map(|text| TranscriptEvent::Notice { text }),
        1 => text().prop_map(|message| TranscriptEvent::Error { message }),
        1 => prop::collection::vec(message(), 0..3)
            .prop_map(|messages| TranscriptEvent::Repaired { messages }),
        1 => prop::collection::vec(message(), 0..3)
            .prop_map(|messages| TranscriptEvent::Compacted { messages }),
        1 => (text(), message()).prop_map(|(call_id, message)| TranscriptEvent::Subagent {
            call_id,
            event: Box::new(TranscriptEvent::Message { message }),
        }),
    ]
}

#[derive(Debug, Clone)]
struct Session {
    header: SessionHeader,
    events: Vec<TranscriptEvent>,
}

fn session(min_events: usize) -> impl Strategy<Value = Session> {
    (header(), prop::collection::vec(event(), min_events..8))
        .prop_map(|(header, events)| Session { header, events })
}

/// The messages a reader should give for `events`: a `repaired` event replaces those before.
fn messages_of(events: &[TranscriptEvent]) -> Vec<Message> {
    let mut messages = Vec::new();
    for event in events {
        match event {
            TranscriptEvent::Message { message } => messages.push(message.clone()),
            TranscriptEvent::Repaired { messages: repaired }
            | TranscriptEvent::Compacted { messages: repaired } => messages.clone_from(repaired),
            _ => {}
        }
    }
    messages
}

/// Writes the session with the real writer; the file and its bytes.
fn write(dir: &Path, session: &Session) -> (PathBuf, Vec<u8>) {
    let mut transcript = Transcript::create(dir, &session.header).unwrap();
    for event in &session.events {
        transcript.record(event).unwrap();
    }
    let path = transcript.path().to_path_buf();
    drop(transcript);
    let bytes = std::fs::read(&path).unwrap();
    (path, bytes)
}

/// The byte ranges of the file's lines, each with its `\n`.
fn line_ranges(bytes: &[u8]) -> Vec<std::ops::Range<usize>> {
    let mut ranges = Vec::new();
    let mut start = 0;
    for (at, &byte) in bytes.iter().enumerate() {
        if byte == b'\n' {
            ranges.push(start..at + 1);
            start = at + 1;
        }
    }
    if start < bytes.len() {
        ranges.push(start..bytes.len());
    }
    ranges
}

/// Resumes the transcript, appends one message, and reads it back.
fn resume_and_append(path: &Path) -> Result<(SessionHeader, Vec<Message>), String> {
    let mut appended = Transcript::append_to(path).map_err(|error| error.to_string())?;
    appended
        .record(&TranscriptEvent::Message {
            message: Message::user("after resuming"),
        })
        .map_err(|error| error.to_string())?;
    drop(appended);
    transcript::load(path).map_err(|error| error.to_string())
}

/// A change of bytes.
#[derive(Debug, Clone)]
enum Edit {
    Set(Index, u8),
    Insert(Index, Vec<u8>),
    Remove(Index, usize),
    Truncate(Index),
}

fn edit() -> impl Strategy<Value = Edit> {
    const PIECES: &[&[u8]] = &[b"\n", b"\n\n", b"{", b"}", b"\"", b"\xff", b" \n"];
    let bytes = prop_oneof![
        prop::collection::vec(any::<u8>(), 1..4),
        prop::sample::select(PIECES).prop_map(<[u8]>::to_vec),
    ];
    prop_oneof![
        (any::<Index>(), any::<u8>()).prop_map(|(at, byte)| Edit::Set(at, byte)),
        (any::<Index>(), bytes).prop_map(|(at, bytes)| Edit::Insert(at, bytes)),
        (any::<Index>(), 1..8usize).prop_map(|(at, length)| Edit::Remove(at, length)),
        any::<Index>().prop_map(Edit::Truncate),
    ]
}

fn apply(bytes: &mut Vec<u8>, edit: &Edit) {
    match edit {
        Edit::Set(at, byte) if !bytes.is_empty() => {
            let at = at.index(bytes.len());
            bytes[at] = *byte;
        }
        Edit::Insert(at, inserted) => {
            let at = at.index(bytes.len() + 1);
            bytes.splice(at..at, inserted.iter().copied());
        }
        Edit::Remove(at, length) if !bytes.is_empty() => {
            let at = at.index(bytes.len());
            let end = (at + length).min(bytes.len());
            bytes.drain(at..end);
        }
        Edit::Truncate(at) => {
            let at = at.index(bytes.len() + 1);
            bytes.truncate(at);
        }
        // Nothing to change or remove in an empty file.
        Edit::Set(..) | Edit::Remove(..) => {}
    }
}

/// Whatever bytes are changed, reading the header, loading and resuming never panic.
#[test]
fn damaged_transcripts_never_panic() {
    let temp = scratch_dir();
    let cases = (session(0), prop::collection::vec(edit(), 1..5));
    check(
        "transcript_damage_never_panics",
        512,
        cases,
        |(session, edits)| {
            let dir = tempfile::tempdir_in(temp.path()).unwrap();
            let (path, mut bytes) = write(dir.path(), &session);
            for edit in &edits {
                apply(&mut bytes, edit);
            }
            std::fs::write(&path, &bytes).unwrap();
            let _ = transcript::read_header(&path);
            let _ = transcript::load(&path);
            let _ = resume_and_append(&path);
            Ok(())
        },
    );
}

/// Whatever `load` accepts, resuming keeps: after `append_to` and one more event, the file reads
/// back the same header and messages, and the new message.
#[test]
fn what_loads_still_loads_after_resuming() {
    let temp = scratch_dir();
    let cases = (session(0), prop::collection::vec(edit(), 1..4));
    check(
        "transcript_resume_keeps_what_loads",
        512,
        cases,
        |(session, edits)| {
            let dir = tempfile::tempdir_in(temp.path()).unwrap();
            let (path, mut bytes) = write(dir.path(), &session);
            for edit in &edits {
                apply(&mut bytes, edit);
            }
            std::fs::write(&path, &bytes).unwrap();
            let Ok((header, mut messages)) = transcript::load(&path) else {
                return Ok(());
            };
            messages.push(Message::user("after resuming"));
            let resumed = resume_and_append(&path);
            prop_assert_eq!(
                resumed,
                Ok((header, messages)),
                "file before resuming: {:?}",
                String::from_utf8_lossy(&bytes)
            );
            Ok(())
        },
    );
}

/// Cut anywhere in its last record, a transcript reads back every earlier record (all of them
/// when only the newline is lost); resuming moves the torn part aside and appends after them.
#[test]
fn a_torn_last_record_keeps_every_earlier_one() {
    let temp = scratch_dir();
    let cases = (session(1), any::<Index>());
    check(
        "transcript_torn_last_record",
        512,
        cases,
        |(session, cut)| {
            let dir = tempfile::tempdir_in(temp.path()).unwrap();
            let (path, bytes) = write(dir.path(), &session);
            let last = line_ranges(&bytes).pop().unwrap();
            let kept = cut.index(last.len());
            let torn = &bytes[last.start..last.start + kept];
            std::fs::write(&path, &bytes[..last.start + kept]).unwrap();
            let whole = kept + 1 == last.len();
            let events = if whole {
                &session.events[..]
            } else {
                &session.events[..session.events.len() - 1]
            };
            let mut expected = messages_of(events);
            prop_assert_eq!(
                transcript::load(&path).map_err(|error| error.to_string()),
                Ok((session.header.clone(), expected.clone()))
            );
            prop_assert_eq!(
                transcript::read_header(&path).map_err(|error| error.to_string()),
                Ok(session.header.clone())
            );
            expected.push(Message::user("after resuming"));
            prop_assert_eq!(
                resume_and_append(&path),
                Ok((session.header.clone(), expected))
            );
            let aside = std::fs::read(path.with_extension("jsonl.torn")).ok();
            if whole || kept == 0 {
                prop_assert_eq!(aside, None);
            } else {
                prop_assert_eq!(aside, Some([torn, b"\n"].concat()));
            }
            Ok(())
        },
    );
}

/// How a line is damaged so that it is no event: a byte that is never UTF-8 put in, cut short
/// (never to nothing), or replaced by other text.
#[derive(Debug, Clone)]
enum Damage {
    Insert(Index),
    CutShort(Index),
    Replace(String),
}

/// A damaged line before the last one is an error naming that line (1-based), the header's
/// included.
#[test]
fn a_damaged_middle_line_is_an_error_naming_it() {
    let temp = scratch_dir();
    let damage = prop_oneof![
        any::<Index>().prop_map(Damage::Insert),
        any::<Index>().prop_map(Damage::CutShort),
        "[^\n]{0,8}[!-~][^\n]{0,8}".prop_map(Damage::Replace),
    ];
    let cases = (session(1), any::<Index>(), damage);
    check(
        "transcript_damaged_middle_line",
        1024,
        cases,
        |(session, which, damage)| {
            let dir = tempfile::tempdir_in(temp.path()).unwrap();
            let (path, bytes) = write(dir.path(), &session);
            let lines = line_ranges(&bytes);
            // Any line but the last: a damaged last line is a torn one.
            let index = which.index(lines.len() - 1);
            let range = lines[index].clone();
            let line = &bytes[range.start..range.end - 1];
            let damaged: Vec<u8> = match &damage {
                Damage::Insert(at) => {
                    let at = at.index(line.len() + 1);
                    [&line[..at], b"\xff", &line[at..]].concat()
                }
                Damage::CutShort(at) => line[..=at.index(line.len() - 1)].to_vec(),
                Damage::Replace(text) => {
                    prop_assume!(serde_json::from_str::<TranscriptEvent>(text).is_err());
                    text.as_bytes().to_vec()
                }
            };
            let file = [&bytes[..range.start], &damaged, b"\n", &bytes[range.end..]].concat();
            std::fs::write(&path, &file).unwrap();
            let error = transcript::load(&path)
                .map(|_| ())
                .map_err(|error| error.to_string());
            let named = format!("line {} is not a transcript event", index + 1);
            prop_assert!(
                error.as_ref().is_err_and(|error| error.contains(&named)),
                "expected an error naming line {}, got {:?}",
                index + 1,
                error
            );
            Ok(())
        },
    );
}

/// Written and read back untouched, a transcript gives its header and messages.
#[test]
fn transcripts_read_back_as_written() {
    let temp = scratch_dir();
    check("transcript_round_trip", 1024, session(0), |session| {
        let dir = tempfile::tempdir_in(temp.path()).unwrap();
        let (path, _) = write(dir.path(), &session);
        prop_assert_eq!(
            transcript::load(&path).map_err(|error| error.to_string()),
            Ok((session.header.clone(), messages_of(&session.events)))
        );
        Ok(())
    });
}
