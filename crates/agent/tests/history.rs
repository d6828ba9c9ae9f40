//! Histories the real APIs accept, checked against the strict mock (which answers what the
//! real APIs reject with their 400s): output limits hit again and again, calls whose arguments
//! were cut or are not JSON, empty text, a cancelled turn, a resumed session that stopped in the
//! middle of tool calls, and subagents.

#![allow(
    clippy::unwrap_used,
    clippy::panic,
    clippy::too_many_lines,
    reason = "tests"
)]

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use skillet_agent::permission::Permissions;
use skillet_agent::transcript::{self, SessionHeader, Transcript, TranscriptEvent};
use skillet_agent::{Agent, AgentConfig, AgentError, AgentEvent, CUT_CALL};
use skillet_llm::{Anthropic, ContentBlock, Message, OpenAi, Provider, Role, Transport};
use skillet_skills::{Library, Root, RootKind, discover};
use skillet_test_support::{MockServer, Turn};

struct Fixture {
    _temp: tempfile::TempDir,
    cwd: PathBuf,
    sessions: PathBuf,
    library: Arc<Library>,
}

fn fixture() -> Fixture {
    let temp = tempfile::tempdir().unwrap();
    let root = temp.path().canonicalize().unwrap();
    let cwd = root.join("project");
    std::fs::create_dir_all(&cwd).unwrap();
    std::fs::write(cwd.join("notes.txt"), "alpha\n").unwrap();
    let library = Arc::new(discover(&[Root::new(root.join("skills"), RootKind::User)]));
    Fixture {
        _temp: temp,
        cwd,
        sessions: root.join("sessions"),
        library,
    }
}

fn transport() -> Transport {
    let mut transport = Transport::new().unwrap();
    transport.retry.base_delay = Duration::from_millis(1);
    transport.retry.max_delay = Duration::from_millis(5);
    transport
}

/// Both dialects, against one server.
fn providers(server: &MockServer) -> [Provider; 2] {
    [
        Provider::Anthropic(Anthropic::new(
            transport(),
            &server.url(),
            "sk-ant",
            "claude-test",
        )),
        Provider::OpenAi(OpenAi::new(
            transport(),
            &format!("{}/v1", server.url()),
            Some("sk-oa"),
            "gpt-test",
        )),
    ]
}

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

/// Every request was accepted by the strict mock.
fn all_accepted(server: &MockServer) {
    assert_eq!(server.rejections(), Vec::<String>::new());
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
