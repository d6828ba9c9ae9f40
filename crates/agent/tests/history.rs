//! Histories the real APIs accept, checked against the strict mock (which answers what the
//! real APIs reject with their 400s): output limits hit again and again, calls whose arguments
//! were cut or are not JSON, empty text, an empty answer, a stream that stalls, a cancelled turn,
//! a resumed session that stopped in the middle of tool calls or was cut at any byte, and
//! subagents.

#![allow(
    clippy::unwrap_used,
    clippy::panic,
    clippy::too_many_lines,
    reason = "tests"
)]

mod common;

use common::{Fixture, all_accepted, fixture, providers, transport};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use skillet_agent::permission::{Approval, ApprovalRequest, Approver, Permissions};
use skillet_agent::transcript::{self, SessionHeader, Transcript, TranscriptEvent};
use skillet_agent::{Agent, AgentConfig, AgentError, AgentEvent, CUT_CALL};
use skillet_llm::{Anthropic, ContentBlock, Message, OpenAi, Provider, Role};
use skillet_test_support::{MockServer, Reply, Turn};

fn config(fixture: &Fixture) -> AgentConfig {
    let mut config = AgentConfig::new(fixture.cwd.clone());
    config.permissions = Permissions::Allow;
    config
}

async fn turn(agent: &mut Agent, text: &str) -> (Result<String, AgentError>, Vec<AgentEvent>) {
    let mut events = Vec::new();
    let result = agent
        .run_turn(text, &mut |event| events.push(event))
        .await
        .map(|outcome| outcome.text);
    (result, events)
}

/// The tool results of a history, in order: (id, content).
fn results(history: &[Message]) -> Vec<(String, String)> {
    history
        .iter()
        .flat_map(|message| &message.content)
        .filter_map(|block| match block {
            ContentBlock::ToolResult {
                tool_use_id,
                content,
                ..
            } => Some((tool_use_id.clone(), content.clone())),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn the_output_limit_hit_twice_with_calls_leaves_a_valid_history() {
    let f = fixture();
    let server = MockServer::start();
    for provider in providers(&server) {
        let mut cut = Turn::tool("c1", "read_file", json!({"path": "notes.txt"}));
        cut.stop = Some("max_tokens".into());
        server.push_turn(cut);
        let mut again = Turn::tool("c2", "read_file", json!({"path": "notes.txt"}));
        again.stop = Some("max_tokens".into());
        server.push_turn(again);
        server.push_turn(Turn::text("next turn works"));
        let mut agent = Agent::new(provider, &f.library, &config(&f));
        let (result, events) = turn(&mut agent, "read it").await;
        result.unwrap();
        assert!(
            events
                .iter()
                .any(|e| matches!(e, AgentEvent::Notice(n) if n.contains("stopping the turn")))
        );
        assert_eq!(
            results(agent.history()),
            [
                ("c1".to_string(), CUT_CALL.to_string()),
                ("c2".to_string(), CUT_CALL.to_string())
            ]
        );
        assert_eq!(
            turn(&mut agent, "go on").await.0.unwrap(),
            "next turn works"
        );
        all_accepted(&server);
    }
}

#[tokio::test]
async fn a_call_with_cut_or_broken_arguments_is_answered_and_the_model_can_retry() {
    let f = fixture();
    let server = MockServer::start();
    for provider in providers(&server) {
        server.push_turn(Turn::cut_tool(
            "cut1",
            "write_file",
            r#"{"path": "big.txt", "content": "aaaa"#,
        ));
        let mut broken = Turn::cut_tool("bad1", "read_file", r#"{"path": notes.txt}"#);
        broken.stop = None;
        server.push_turn(broken);
        server.push_turn(Turn::tool("ok1", "read_file", json!({"path": "notes.txt"})));
        server.push_turn(Turn::text("done"));
        let mut agent = Agent::new(provider, &f.library, &config(&f));
        assert_eq!(turn(&mut agent, "write").await.0.unwrap(), "done");
        let results = results(agent.history());
        assert_eq!(results[0].0, "cut1");
        assert!(
            results[0].1.contains("output limit cut this call"),
            "{results:?}"
        );
        assert_eq!(results[1].0, "bad1");
        assert!(
            results[1].1.contains("not valid JSON") && results[1].1.contains("did not run"),
            "{results:?}"
        );
        assert!(results[2].1.contains("alpha"), "{results:?}");
        assert!(!f.cwd.join("big.txt").exists());
        all_accepted(&server);
    }
}

#[tokio::test]
async fn empty_text_never_reaches_the_wire() {
    let f = fixture();
    let server = MockServer::start();
    for provider in providers(&server) {
        server.push_turn(Turn::tool("c1", "read_file", json!({"path": "notes.txt"})).with_text(""));
        server.push_turn(Turn::text("  \n"));
        server.push_turn(Turn::text("second"));
        let mut agent = Agent::new(provider, &f.library, &config(&f));
        let sent = server.requests().len();
        let error = turn(&mut agent, "   ").await.0.unwrap_err();
        assert!(matches!(error, AgentError::EmptyMessage), "{error}");
        assert_eq!(server.requests().len(), sent, "an empty message was sent");
        assert_eq!(turn(&mut agent, "first").await.0.unwrap(), "");
        assert_eq!(turn(&mut agent, "again").await.0.unwrap(), "second");
        all_accepted(&server);
    }
}

#[tokio::test]
async fn a_cancelled_turn_keeps_the_results_of_calls_that_finished() {
    let f = fixture();
    let server = MockServer::start();
    server.push_turn(
        Turn::tool("fast", "bash", json!({"command": "echo finished-first"})).and_tool(
            "slow",
            "bash",
            json!({"command": "sleep 30"}),
        ),
    );
    server.push_turn(Turn::text("after the cancel"));
    let [provider, _] = providers(&server);
    let mut agent = Agent::new(provider, &f.library, &config(&f));
    let mut seen = Vec::new();
    let cancelled = tokio::time::timeout(
        Duration::from_secs(3),
        agent.run_turn("run both", &mut |event| seen.push(event)),
    )
    .await;
    assert!(cancelled.is_err(), "the slow call should still run");
    agent.close_cancelled_turn();
    assert_eq!(
        results(agent.history()),
        [
            ("fast".to_string(), "finished-first\n".to_string()),
            (
                "slow".to_string(),
                skillet_agent::INTERRUPTED_CALL.to_string()
            )
        ]
    );
    assert_eq!(
        turn(&mut agent, "next").await.0.unwrap(),
        "after the cancel"
    );
    all_accepted(&server);
}

/// Answers each approval from a list, in order.
struct Answers(std::sync::Mutex<Vec<Approval>>);

impl Approver for Answers {
    fn approve(&self, _request: &ApprovalRequest) -> Approval {
        self.0.lock().unwrap().remove(0)
    }
}

#[tokio::test]
async fn stopped_at_an_approval_the_turn_ends_with_every_call_answered_and_no_request() {
    let f = fixture();
    let server = MockServer::start();
    server.push_turn(
        Turn::tool("one", "bash", json!({"command": "touch one.marker"}))
            .and_tool("two", "bash", json!({"command": "touch two.marker"}))
            .and_tool("three", "read_file", json!({"path": "notes.txt"})),
    );
    server.push_turn(Turn::tool(
        "four",
        "bash",
        json!({"command": "touch four.marker"}),
    ));
    server.push_turn(Turn::text("done"));
    let [provider, _] = providers(&server);
    let mut config = config(&f);
    config.permissions = Permissions::Ask(Arc::new(Answers(std::sync::Mutex::new(vec![
        Approval::Yes,
        Approval::Stop,
        Approval::Yes,
    ]))));
    let mut agent = Agent::new(provider, &f.library, &config);
    let (result, _) = turn(&mut agent, "make markers").await;
    assert!(matches!(result, Err(AgentError::Cancelled)), "{result:?}");
    assert_eq!(server.requests().len(), 1, "no request after the stop");
    assert!(f.cwd.join("one.marker").exists());
    assert!(!f.cwd.join("two.marker").exists());
    // Every call answered: the stopped one refused, the one after it (a read: never asked
    // about) cancelled without running.
    let answered = results(agent.history());
    assert_eq!(answered.len(), 3, "{answered:?}");
    assert!(answered[1].1.contains("stopped the turn"), "{answered:?}");
    assert_eq!(answered[2].1, skillet_agent::CANCELLED_CALL);
    // The next turn asks again, and its requests are valid.
    assert_eq!(turn(&mut agent, "go on").await.0.unwrap(), "done");
    assert!(f.cwd.join("four.marker").exists());
    all_accepted(&server);
}

fn header(f: &Fixture, id: &str) -> SessionHeader {
    SessionHeader {
        id: id.into(),
        created: 0,
        cwd: f.cwd.clone(),
        provider: "anthropic".into(),
        model: "claude-test".into(),
        system: "You are a test.".into(),
        tools: vec![],
    }
}

#[tokio::test]
async fn resuming_repairs_calls_left_open_anywhere_and_records_the_repair() {
    let f = fixture();
    let server = MockServer::start();
    // A transcript an older skillet could leave: a call unanswered in the middle (a second
    // output limit), an empty text block, and a call left open at the end (a crash).
    let call = |id: &str| ContentBlock::ToolUse {
        id: id.into(),
        name: "read_file".into(),
        input: json!({"path": "notes.txt"}),
    };
    let stored = vec![
        Message::user("first"),
        Message {
            role: Role::Assistant,
            content: vec![ContentBlock::text(""), call("mid")],
        },
        Message::user("second"),
        Message {
            role: Role::Assistant,
            content: vec![call("end")],
        },
    ];
    let mut file = Transcript::create(&f.sessions, &header(&f, "s1")).unwrap();
    for message in &stored {
        file.record(&TranscriptEvent::Message {
            message: message.clone(),
        })
        .unwrap();
    }
    let path = file.path().to_path_buf();
    drop(file);
    let (loaded_header, history) = transcript::load(&path).unwrap();
    assert_eq!(history, stored);
    let [provider, _] = providers(&server);
    let mut agent = Agent::resume(provider, &f.library, &config(&f), loaded_header, &history);
    assert_eq!(agent.repairs().len(), 2, "{:?}", agent.repairs());
    agent
        .attach_transcript(Transcript::append_to(&path).unwrap())
        .unwrap();
    // The repair is in the file: reading it again gives the repaired history.
    let (_, reloaded) = transcript::load(&path).unwrap();
    assert_eq!(reloaded, agent.history());
    assert_eq!(
        results(&reloaded)
            .iter()
            .map(|(id, _)| id.as_str())
            .collect::<Vec<_>>(),
        ["mid", "end"]
    );
    server.push_turn(Turn::text("resumed fine"));
    assert_eq!(turn(&mut agent, "third").await.0.unwrap(), "resumed fine");
    all_accepted(&server);
    let sent: Vec<Value> = server.requests()[0].body["messages"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(sent.len(), 6, "{sent:#?}");
}

#[tokio::test]
async fn a_subagents_work_is_in_the_transcript_and_the_events_marked_as_its() {
    let f = fixture();
    let server = MockServer::start();
    server.push_turn(Turn::tool(
        "task1",
        "task",
        json!({"description": "look", "prompt": "read notes.txt"}),
    ));
    server.push_turn(Turn::tool(
        "sub1",
        "read_file",
        json!({"path": "notes.txt"}),
    ));
    server.push_turn(Turn::text("the notes say alpha"));
    server.push_turn(Turn::text("alpha it is"));
    let [provider, _] = providers(&server);
    let mut agent = Agent::new(provider, &f.library, &config(&f));
    let file = Transcript::create(&f.sessions, agent.header()).unwrap();
    let path = file.path().to_path_buf();
    agent.attach_transcript(file).unwrap();
    let (result, events) = turn(&mut agent, "what do the notes say?").await;
    assert_eq!(result.unwrap(), "alpha it is");
    all_accepted(&server);
    assert!(events.iter().any(|e| matches!(
        e,
        AgentEvent::Subagent { call_id, event } if call_id == "task1"
            && matches!(event.as_ref(), AgentEvent::ToolResult { name, .. } if name == "read_file")
    )));
    let lines: Vec<TranscriptEvent> = std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let sub: Vec<&TranscriptEvent> = lines
        .iter()
        .filter_map(|event| match event {
            TranscriptEvent::Subagent { call_id, event } if call_id == "task1" => Some(&**event),
            _ => None,
        })
        .collect();
    let messages: Vec<&Message> = sub
        .iter()
        .filter_map(|event| match event {
            TranscriptEvent::Message { message } => Some(message),
            _ => None,
        })
        .collect();
    assert_eq!(messages.len(), 4, "{sub:#?}");
    assert_eq!(messages[0], &Message::user("read notes.txt"));
    // The subagent's messages are not part of the session's own history.
    let (_, history) = transcript::load(&path).unwrap();
    assert_eq!(history, agent.history());
    assert_eq!(history.len(), 4);
}

#[tokio::test]
async fn repeated_or_odd_call_ids_from_a_server_are_made_unique() {
    let f = fixture();
    let server = MockServer::start();
    for provider in providers(&server) {
        // Some servers number calls afresh on every answer, or use ids Anthropic refuses.
        server.push_turn(Turn::tool(
            "call_0",
            "read_file",
            json!({"path": "notes.txt"}),
        ));
        server.push_turn(
            Turn::tool("call_0", "read_file", json!({"path": "notes.txt"})).and_tool(
                "functions.read_file:0",
                "read_file",
                json!({"path": "notes.txt"}),
            ),
        );
        server.push_turn(Turn::text("read twice"));
        let mut agent = Agent::new(provider, &f.library, &config(&f));
        assert_eq!(turn(&mut agent, "read").await.0.unwrap(), "read twice");
        let ids: Vec<String> = results(agent.history())
            .into_iter()
            .map(|(id, _)| id)
            .collect();
        assert_eq!(ids, ["call_0", "call_0_2", "functions_read_file_0"]);
        all_accepted(&server);
    }
}

/// The byte offsets where each line of a file starts (and the file's end).
fn line_starts(bytes: &[u8]) -> Vec<usize> {
    let mut starts = vec![0];
    starts.extend(
        bytes
            .iter()
            .enumerate()
            .filter(|(_, byte)| **byte == b'\n')
            .map(|(at, _)| at + 1),
    );
    starts
}

#[tokio::test]
async fn a_transcript_cut_at_every_byte_of_its_last_records_resumes_to_a_valid_history() {
    let f = fixture();
    let server = MockServer::start();
    let [provider, _] = providers(&server);
    // A real session: a turn with a tool call, then a plain one; its file is what a crash at
    // any moment of the last records would leave.
    let mut agent = Agent::new(provider, &f.library, &config(&f));
    agent
        .attach_transcript(Transcript::create(&f.sessions, agent.header()).unwrap())
        .unwrap();
    server.push_turn(Turn::tool("r1", "read_file", json!({"path": "notes.txt"})));
    server.push_turn(Turn::text("it says alpha"));
    assert_eq!(
        turn(&mut agent, "read it").await.0.unwrap(),
        "it says alpha"
    );
    server.push_turn(Turn::tool("r2", "read_file", json!({"path": "notes.txt"})));
    server.push_turn(Turn::text("still alpha"));
    assert_eq!(turn(&mut agent, "again").await.0.unwrap(), "still alpha");
    let path = f.sessions.join(format!("{}.jsonl", agent.header().id));
    drop(agent);
    let whole = std::fs::read(&path).unwrap();
    let starts = line_starts(&whole);
    // The lines of the second turn's answer: the call, its result and the final text (and the
    // usage records between them).
    let lines = starts.len() - 1;
    let second_turn = (0..lines)
        .rev()
        .find(|&line| {
            let event: TranscriptEvent =
                serde_json::from_slice(&whole[starts[line]..starts[line + 1] - 1]).unwrap();
            matches!(event, TranscriptEvent::Message { message } if message.role == Role::User
                && message.content.iter().any(|b| matches!(b, ContentBlock::Text { text } if text == "again")))
        })
        .unwrap();
    let from = starts[second_turn + 1];
    // One client for every resume (building one loads the TLS roots each time).
    let [provider, _] = providers(&server);
    assert!(
        whole.len() - from > 200,
        "the cut range covers whole records"
    );
    let cuts = from..whole.len();
    let cut_count = cuts.len();
    let started = std::time::Instant::now();
    for cut in cuts {
        let dir = tempfile::tempdir().unwrap();
        let copy = dir.path().join("s.jsonl");
        std::fs::write(&copy, &whole[..cut]).unwrap();
        // What survives: every record whose line is whole, or lost only its newline.
        let expected: Vec<Message> = (0..lines)
            .filter(|&line| starts[line + 1] - 1 <= cut)
            .filter_map(|line| {
                match serde_json::from_slice(&whole[starts[line]..starts[line + 1] - 1]).unwrap() {
                    TranscriptEvent::Message { message } => Some(message),
                    _ => None,
                }
            })
            .collect();
        let (header, history) =
            transcript::load(&copy).unwrap_or_else(|error| panic!("cut at byte {cut}: {error}"));
        assert_eq!(history, expected, "cut at byte {cut}");
        let mut agent = Agent::resume(provider.clone(), &f.library, &config(&f), header, &history);
        agent
            .attach_transcript(Transcript::append_to(&copy).unwrap())
            .unwrap();
        skillet_llm::history::check(agent.history())
            .unwrap_or_else(|error| panic!("cut at byte {cut}: {error}"));
        // And the strict mock takes the next request.
        server.push_turn(Turn::text("resumed"));
        let (result, _) = turn(&mut agent, "go on").await;
        assert_eq!(result.unwrap(), "resumed", "cut at byte {cut}");
        drop(agent);
        // The file reads back whole, with the repairs and the resumed turn in it.
        let (_, reread) = transcript::load(&copy)
            .unwrap_or_else(|error| panic!("cut at byte {cut}, after resuming: {error}"));
        skillet_llm::history::check(&reread)
            .unwrap_or_else(|error| panic!("cut at byte {cut}, read back: {error}"));
        assert_eq!(
            reread.last().unwrap().content,
            vec![ContentBlock::text("resumed")],
            "cut at byte {cut}"
        );
        // A cut inside a line keeps the torn bytes aside; a cut at a line's end leaves none.
        let torn = copy.with_extension("jsonl.torn");
        let at_line_end = starts.contains(&cut) || starts.contains(&(cut + 1));
        assert_eq!(torn.exists(), !at_line_end, "cut at byte {cut}");
    }
    all_accepted(&server);
    assert!(cut_count > 200, "{cut_count} cuts");
    eprintln!(
        "{cut_count} cuts resumed, each with a turn, in {:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn a_stream_that_stalls_ends_the_turn_with_a_clear_error_and_the_transcript_intact() {
    let f = fixture();
    let server = MockServer::start();
    let mut slow = transport();
    slow.idle_timeout = Duration::from_millis(300);
    let providers = [
        Provider::Anthropic(Anthropic::new(
            slow.clone(),
            &server.url(),
            "sk-ant",
            "claude-test",
        )),
        Provider::OpenAi(OpenAi::new(
            slow,
            &format!("{}/v1", server.url()),
            Some("sk-oa"),
            "gpt-test",
        )),
    ];
    for provider in providers {
        let mut agent = Agent::new(provider, &f.library, &config(&f));
        agent
            .attach_transcript(Transcript::create(&f.sessions, agent.header()).unwrap())
            .unwrap();
        server.push_turn(Turn::tool("r1", "read_file", json!({"path": "notes.txt"})));
        server.push(Reply::Stall(Turn::text("half an answ"), 3));
        let (result, _) = turn(&mut agent, "read it").await;
        let error = result.unwrap_err().to_string();
        assert!(
            error.contains("went silent for 300 ms in the middle of its answer"),
            "{error}"
        );
        // Everything before the stall is in the file, the error last, and it reads back as the
        // agent's own history, which the next request may follow.
        let path = f.sessions.join(format!("{}.jsonl", agent.header().id));
        let text = std::fs::read_to_string(&path).unwrap();
        let last: TranscriptEvent = serde_json::from_str(text.lines().last().unwrap()).unwrap();
        assert!(
            matches!(&last, TranscriptEvent::Error { message } if message.contains("went silent")),
            "{last:?}"
        );
        let (_, history) = transcript::load(&path).unwrap();
        assert_eq!(history, agent.history());
        assert_eq!(results(&history).len(), 1);
        server.push_turn(Turn::text("back"));
        assert_eq!(turn(&mut agent, "again").await.0.unwrap(), "back");
        all_accepted(&server);
    }
}

#[tokio::test]
async fn an_empty_answer_ends_the_turn_with_a_notice_and_the_session_goes_on() {
    let f = fixture();
    let server = MockServer::start();
    for provider in providers(&server) {
        let mut agent = Agent::new(provider, &f.library, &config(&f));
        agent
            .attach_transcript(Transcript::create(&f.sessions, agent.header()).unwrap())
            .unwrap();
        server.push_turn(Turn::text(""));
        let (result, events) = turn(&mut agent, "say nothing").await;
        assert_eq!(result.unwrap(), "");
        assert!(
            events.iter().any(
                |e| matches!(e, AgentEvent::Notice(n) if n.contains("the model sent an empty answer"))
            ),
            "{events:?}"
        );
        assert_eq!(agent.history().len(), 1, "nothing appended for the answer");
        // The next turn follows the unanswered user message; the API takes it.
        server.push_turn(Turn::text("now something"));
        assert_eq!(
            turn(&mut agent, "say something").await.0.unwrap(),
            "now something"
        );
        all_accepted(&server);
        let path = f.sessions.join(format!("{}.jsonl", agent.header().id));
        let (_, history) = transcript::load(&path).unwrap();
        assert_eq!(history, agent.history());
    }
}
