//! Property tests of the SSE framing with fixed budgets (run by `cargo test`; `scripts/fuzz.sh`
//! runs them for longer): however the bytes of a stream are split into chunks (inside a UTF-8
//! sequence, between `\r` and `\n`, into empty chunks), the parser gives the same events as when
//! it is fed the whole stream, and those are the events the WHATWG rules give.
//!
//! `PROPTEST_CASES` overrides the budgets; failing cases are saved in
//! `proptest-regressions/sse_properties.txt` (commit it) and replayed first.

#![allow(
    clippy::unwrap_used,
    clippy::panic,
    clippy::print_stderr,
    reason = "test helpers"
)]

use std::fmt::Debug;

use proptest::prelude::*;
use proptest::sample::select;
use proptest::test_runner::TestCaseResult;
use skillet_llm::sse::{Event, Parser};

/// Where failing cases are saved and replayed from (committed).
const REGRESSIONS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/proptest-regressions/sse_properties.txt"
);

/// [`skillet_test_support::check_property`] with this file's regressions.
fn check<S>(name: &str, cases: u32, strategy: S, test: impl Fn(S::Value) -> TestCaseResult)
where
    S: Strategy,
    S::Value: Debug,
{
    skillet_test_support::check_property(REGRESSIONS, name, cases, strategy, test);
}

/// A stream of SSE lines (fields, comments, blank lines, multibyte and invalid UTF-8 payloads)
/// with mixed line ends, or any bytes at all.
fn stream() -> impl Strategy<Value = Vec<u8>> {
    let payload = prop_oneof![
        4 => "[a-z{}\":, ]{0,12}".prop_map(String::into_bytes),
        2 => "\\PC{0,6}".prop_map(String::into_bytes),
        1 => select(&["é", "日本", "👍🏽", "\u{feff}", "\u{2028}"][..]).prop_map(|s| s.as_bytes().to_vec()),
        1 => prop::collection::vec(any::<u8>(), 0..4),
    ];
    let line = (
        select(
            &[
                "data: ", "data:", "data", "event: ", "event:", "id: ", "retry: ", ": ", ":", "",
                "", "dat", "Data: ", " data: ",
            ][..],
        ),
        payload,
        select(&["\n", "\n", "\r\n", "\r"][..]),
    )
        .prop_map(|(field, payload, end)| {
            let mut line = field.as_bytes().to_vec();
            if !field.is_empty() {
                line.extend(payload);
            }
            line.extend_from_slice(end.as_bytes());
            line
        });
    prop_oneof![
        8 => prop::collection::vec(line, 0..16).prop_map(|lines| lines.concat()),
        1 => prop::collection::vec(
            prop_oneof![any::<u8>(), select(&[b'\r', b'\n', b':', b' '][..])],
            0..64,
        ),
    ]
}

/// A stream and where to cut it: cut points may repeat (empty chunks) and fall anywhere, inside
/// a character or between `\r` and `\n`.
fn stream_and_cuts() -> impl Strategy<Value = (Vec<u8>, Vec<usize>)> {
    stream().prop_flat_map(|bytes| {
        let length = bytes.len();
        let cuts = prop_oneof![
            3 => prop::collection::vec(0..=length, 0..12),
            1 => Just((0..=length).collect::<Vec<_>>()),
        ]
        .prop_map(|mut cuts| {
            cuts.sort_unstable();
            cuts
        });
        (Just(bytes), cuts)
    })
}

/// The events of feeding `bytes` cut at `cuts` (sorted; repeats give empty chunks).
fn feed_in_chunks(bytes: &[u8], cuts: &[usize]) -> Vec<Event> {
    let mut parser = Parser::default();
    let mut events = Vec::new();
    let mut from = 0;
    for &cut in cuts {
        events.extend(parser.feed(&bytes[from..cut]));
        from = cut;
    }
    events.extend(parser.feed(&bytes[from..]));
    events
}

/// The WHATWG `text/event-stream` interpretation, written plainly over the whole stream (the
/// leading byte order mark aside, which the parser keeps and no server sends).
fn reference(bytes: &[u8]) -> Vec<Event> {
    let text = String::from_utf8_lossy(bytes);
    let mut events = Vec::new();
    let (mut event, mut data, mut has_data) = (String::new(), String::new(), false);
    let mut rest: &str = &text;
    // Only lines that end are read: what follows the last line end is still incomplete.
    while let Some(end) = rest.find(['\r', '\n']) {
        let line = &rest[..end];
        rest = if rest[end..].starts_with("\r\n") {
            &rest[end + 2..]
        } else {
            &rest[end + 1..]
        };
        if line.is_empty() {
            if has_data {
                let kind = if event.is_empty() {
                    "message".to_string()
                } else {
                    event.clone()
                };
                events.push(Event {
                    event: kind,
                    data: std::mem::take(&mut data),
                });
            }
            event.clear();
            data.clear();
            has_data = false;
            continue;
        }
        if line.starts_with(':') {
            continue;
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        match field {
            "event" => value.clone_into(&mut event),
            "data" => {
                if has_data {
                    data.push('\n');
                }
                data.push_str(value);
                has_data = true;
            }
            _ => {}
        }
    }
    events
}

/// Any split of the byte stream into chunks gives the events of feeding it whole.
#[test]
fn any_split_gives_the_same_events() {
    check("sse_any_split", 4096, stream_and_cuts(), |(bytes, cuts)| {
        let whole = Parser::default().feed(&bytes);
        prop_assert_eq!(feed_in_chunks(&bytes, &cuts), whole);
        Ok(())
    });
}

/// Fed whole or byte by byte, the parser gives the events the WHATWG rules give.
#[test]
fn events_are_those_of_the_whatwg_rules() {
    check("sse_whatwg_rules", 2048, stream(), |bytes| {
        let expected = reference(&bytes);
        prop_assert_eq!(Parser::default().feed(&bytes), expected.clone());
        let mut parser = Parser::default();
        let one_by_one: Vec<Event> = bytes
            .iter()
            .flat_map(|byte| parser.feed(std::slice::from_ref(byte)))
            .collect();
        prop_assert_eq!(one_by_one, expected);
        Ok(())
    });
}
