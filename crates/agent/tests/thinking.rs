//! Extended thinking through whole turns against the strict mock: shown as it comes, kept with
//! its signature so a turn still using tools is accepted (streamed or not), carried through
//! the transcript into a resumed session, switched off between turns, and a thinking-only
//! answer kept out of the history.

#![allow(clippy::unwrap_used, clippy::panic, reason = "tests")]

mod common;

use std::sync::Arc;

use common::{all_accepted, fixture, providers};
use serde_json::json;
use skillet_agent::permission::Permissions;
use skillet_agent::transcript::{self, Transcript};
use skillet_agent::{Agent, AgentConfig, AgentEvent};
use skillet_llm::{ContentBlock, Role};
use skillet_skills::discover;
use skillet_test_support::{MockServer, Turn};

const BUDGET: u32 = 2_048;

fn thought(events: &[AgentEvent]) -> String {
    events
        .iter()
        .filter_map(|event| match event {
            AgentEvent::Thinking(text) => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn a_turn_that_thinks_and_uses_tools_is_accepted_and_its_thinking_survives_a_resume() {
    for stream in [true, false] {
        let f = fixture();
        let library = Arc::clone(&f.library);
        let mut config = AgentConfig::new(f.cwd.clone());
        config.permissions = Permissions::Allow;
        config.thinking = Some(BUDGET);
        config.stream = stream;
        let server = MockServer::start();
        server.push_turn(
            Turn::tool("t1", "read_file", json!({"path": "notes.txt"}))
                .with_thinking("Read the notes first."),
        );
        // As without interleaved thinking: the answers after tool results think no more.
        server.push_turn(Turn::tool("t2", "read_file", json!({"path": "notes.txt"})));
        server.push_turn(Turn::text("They say alpha."));
        let [provider, _] = providers(&server);
        let mut agent = Agent::new(provider.clone(), &library, &config);
        let file = Transcript::create(&f.sessions, agent.header()).unwrap();
        let path = file.path().to_path_buf();
        agent.attach_transcript(file).unwrap();
        let mut events = Vec::new();
        let outcome = agent
            .run_turn("what do the notes say?", &mut |event| events.push(event))
            .await
            .unwrap();
        assert_eq!(outcome.text, "They say alpha.");
        assert_eq!(thought(&events), "Read the notes first.", "stream={stream}");
        all_accepted(&server);
        let thinking_sent = |request: usize, message: usize| {
            server.requests()[request].body["messages"][message]["content"][0]["type"].clone()
        };
        assert_eq!(thinking_sent(2, 1), "thinking");
        assert_eq!(
            server.requests()[2].body["max_tokens"],
            json!(8_192 + BUDGET)
        );

        // The transcript keeps it: a resumed session sends it back as it came.
        let (header, history) = transcript::load(&path).unwrap();
        assert!(matches!(
            history[1].content[0],
            ContentBlock::Thinking { .. }
        ));
        let mut resumed = Agent::resume(provider, &library, &config, header, &history);
        server.push_turn(
            Turn::tool("t3", "read_file", json!({"path": "notes.txt"})).with_thinking("Again."),
        );
        server.push_turn(Turn::text("Still alpha."));
        let outcome = resumed.run_turn("and now?", &mut |_| {}).await.unwrap();
        assert_eq!(outcome.text, "Still alpha.");
        all_accepted(&server);
        assert_eq!(thinking_sent(4, 1), "thinking");

        // Off between turns: nothing asked, no thinking block sent.
        assert!(resumed.set_thinking(None));
        server.push_turn(Turn::text("Done.").with_thinking("never sent"));
        let mut events = Vec::new();
        resumed
            .run_turn("thanks", &mut |event| events.push(event))
            .await
            .unwrap();
        assert_eq!(thought(&events), "");
        let body = &server.requests()[5].body;
        assert_eq!(body.get("thinking"), None);
        assert!(!body.to_string().contains("\"type\":\"thinking\""));
        all_accepted(&server);
    }
}

#[tokio::test]
async fn an_answer_of_thinking_alone_is_shown_but_not_kept() {
    let temp = tempfile::tempdir().unwrap();
    let cwd = temp.path().canonicalize().unwrap();
    let library = Arc::new(discover(&[]));
    let mut config = AgentConfig::new(cwd);
    config.thinking = Some(BUDGET);
    let server = MockServer::start();
    let mut only_thinking = Turn::text("").with_thinking("Nothing to say.");
    only_thinking.text = None;
    server.push_turn(only_thinking);
    server.push_turn(Turn::text("Hello."));
    let [provider, _] = providers(&server);
    let mut agent = Agent::new(provider, &library, &config);
    let mut events = Vec::new();
    agent
        .run_turn("hi", &mut |event| events.push(event))
        .await
        .unwrap();
    assert_eq!(thought(&events), "Nothing to say.");
    assert!(
        events.iter().any(
            |event| matches!(event, AgentEvent::Notice(text) if text.contains("empty answer"))
        )
    );
    assert!(
        agent
            .history()
            .iter()
            .all(|message| message.role == Role::User)
    );
    let outcome = agent.run_turn("hello?", &mut |_| {}).await.unwrap();
    assert_eq!(outcome.text, "Hello.");
    all_accepted(&server);
}
