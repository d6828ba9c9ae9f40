//! Compaction against the strict mock (which refuses what the real APIs refuse): the summary
//! request is valid and sent with the session's own prompt and tools, the history becomes one
//! summary message that the next turn follows, the transcript reloads to it, and every refusal
//! (nothing to compact, a turn in progress, no summary, a cut summary) leaves the history as it
//! was.

#![allow(clippy::unwrap_used, clippy::panic, reason = "tests")]

mod common;

use common::{all_accepted, providers};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use skillet_agent::compact::{COMPACT_REQUEST, SUMMARY_ACKNOWLEDGED, SUMMARY_HEADER};
use skillet_agent::permission::Permissions;
use skillet_agent::transcript::{self, Transcript, TranscriptEvent};
use skillet_agent::{Agent, AgentConfig, AgentError, AgentEvent, CompactError};
use skillet_llm::{Message, Role};
use skillet_skills::Library;
use skillet_test_support::{MockServer, RecordedRequest, Turn};

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
    std::fs::write(cwd.join("notes.txt"), "alpha\n".repeat(200)).unwrap();
    Fixture {
        _temp: temp,
        cwd,
        sessions: root.join("sessions"),
        library: Arc::new(Library::default()),
    }
}

fn config(f: &Fixture) -> AgentConfig {
    let mut config = AgentConfig::new(f.cwd.clone());
    config.permissions = Permissions::Allow;
    config
}

/// A turn that reads a file (one call, one result), then answers.
async fn a_turn_with_a_call(server: &MockServer, agent: &mut Agent) {
    server.push_turn(Turn::tool("c1", "read_file", json!({"path": "notes.txt"})));
    server.push_turn(Turn::text("The notes say alpha, many times."));
    agent
        .run_turn("What do the notes say?", &mut |_| {})
        .await
        .unwrap();
}

/// The system prompt and the tools a request carried, in either dialect.
fn fixed_part(request: &RecordedRequest) -> (Value, Value) {
    let system = if request.body["system"].is_null() {
        request.body["messages"][0].clone()
    } else {
        request.body["system"].clone()
    };
    (system, request.body["tools"].clone())
}

/// The text of the last message of a request (both dialects put a user's text there).
fn last_message_text(request: &RecordedRequest) -> String {
    let last = request.body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    match &last["content"] {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|block| block["text"].as_str())
            .collect::<Vec<_>>()
            .join(""),
        other => panic!("unexpected content {other}"),
    }
}

#[tokio::test]
async fn compaction_leaves_a_valid_history_that_the_next_turn_follows_in_both_dialects() {
    let f = fixture();
    for dialect in 0..2 {
        let server = MockServer::start();
        let provider = providers(&server)[dialect].clone();
        let mut agent = Agent::new(provider, &f.library, &config(&f));
        let system = agent.system_prompt().to_string();
        a_turn_with_a_call(&server, &mut agent).await;
        let before = agent.history().to_vec();
        assert_eq!(before.len(), 4);

        server.push_turn(Turn::text(
            "The user asked what notes.txt says; it says alpha.",
        ));
        let mut events = Vec::new();
        let outcome = agent
            .compact(Some("keep the file names"), &mut |event| events.push(event))
            .await
            .unwrap();
        assert_eq!(
            outcome.summary,
            "The user asked what notes.txt says; it says alpha."
        );
        assert_eq!(outcome.messages_before, 4);
        assert!(
            outcome.tokens_after < outcome.tokens_before,
            "{} -> {}",
            outcome.tokens_before,
            outcome.tokens_after
        );
        assert_eq!(
            outcome.tokens_before,
            skillet_agent::compact::estimate_tokens(&before)
        );
        assert!(events.iter().any(|e| matches!(e, AgentEvent::Usage(_))));
        assert!(
            !events.iter().any(|e| matches!(e, AgentEvent::Text(_))),
            "the summary is returned, not shown as an answer"
        );

        // The history: one user message, marked as the summary, and the model's short answer
        // (roles alternate).
        let history = agent.history();
        assert_eq!(history.len(), 2);
        assert_eq!(history[0].role, Role::User);
        assert_eq!(
            (history[1].role, history[1].text()),
            (Role::Assistant, SUMMARY_ACKNOWLEDGED.to_string())
        );
        assert_eq!(
            history[0].text(),
            format!("{SUMMARY_HEADER}\n\nThe user asked what notes.txt says; it says alpha.")
        );
        skillet_llm::history::check(history).unwrap();
        assert_eq!(agent.system_prompt(), system, "the prompt never changes");

        // The summary request: the whole history, every call answered, then the request.
        let requests = server.requests();
        let summary_request = &requests[2];
        let sent = summary_request.body["messages"].as_array().unwrap();
        let offset = usize::from(dialect == 1); // OpenAI's system message comes first.
        assert!(sent.len() >= before.len() + 1 + offset);
        let asked = last_message_text(summary_request);
        assert!(asked.starts_with(COMPACT_REQUEST), "{asked}");
        assert!(asked.ends_with("The user adds, for this summary: keep the file names"));
        assert_eq!(
            fixed_part(summary_request),
            fixed_part(&requests[0]),
            "same system prompt and tools: the cache still hits"
        );

        // The next turn is accepted and follows the summary.
        server.push_turn(Turn::text("Going on."));
        agent.run_turn("And now?", &mut |_| {}).await.unwrap();
        let next = &server.requests()[3];
        assert_eq!(last_message_text(next), "And now?");
        assert!(
            next.body
                .to_string()
                .contains("The user asked what notes.txt says"),
            "the summary is sent"
        );
        assert!(
            !next.body.to_string().contains("\"c1\""),
            "the compacted calls are gone"
        );
        assert_eq!(fixed_part(next), fixed_part(&requests[0]));
        all_accepted(&server);
    }
}

#[tokio::test]
async fn the_transcript_reloads_to_the_compacted_history_and_resumes() {
    let f = fixture();
    let server = MockServer::start();
    let [provider, _] = providers(&server);
    let mut agent = Agent::new(provider.clone(), &f.library, &config(&f));
    agent
        .attach_transcript(Transcript::create(&f.sessions, agent.header()).unwrap())
        .unwrap();
    a_turn_with_a_call(&server, &mut agent).await;
    server.push_turn(Turn::text("Summary: notes say alpha."));
    agent.compact(None, &mut |_| {}).await.unwrap();
    let path = f.sessions.join(format!("{}.jsonl", agent.header().id));

    let (header, history) = transcript::load(&path).unwrap();
    assert_eq!(history, agent.history());
    let kinds: Vec<String> = std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap()["type"].to_string())
        .collect();
    assert_eq!(
        kinds.last().map(String::as_str),
        Some("\"compacted\""),
        "{kinds:?}"
    );
    assert!(
        std::fs::read_to_string(&path)
            .unwrap()
            .lines()
            .filter_map(|line| serde_json::from_str::<TranscriptEvent>(line).ok())
            .any(|event| matches!(event, TranscriptEvent::Compacted { messages } if messages == agent.history()))
    );

    let mut resumed = Agent::resume(provider, &f.library, &config(&f), header, &history);
    assert!(resumed.repairs().is_empty(), "{:?}", resumed.repairs());
    assert_eq!(resumed.history(), agent.history());
    assert_eq!(resumed.system_prompt(), agent.system_prompt());
    // The first session lets go of its transcript before another continues it.
    drop(agent);
    resumed
        .attach_transcript(Transcript::append_to(&path).unwrap())
        .unwrap();
    server.push_turn(Turn::text("Resumed fine."));
    let outcome = resumed.run_turn("continue", &mut |_| {}).await.unwrap();
    assert_eq!(outcome.text, "Resumed fine.");
    assert_eq!(transcript::load(&path).unwrap().1.len(), 4);
    all_accepted(&server);
}

#[tokio::test]
async fn an_empty_or_summary_only_history_is_nothing_to_compact() {
    let f = fixture();
    let server = MockServer::start();
    let [provider, _] = providers(&server);
    let mut agent = Agent::new(provider, &f.library, &config(&f));
    let error = agent.compact(None, &mut |_| {}).await.unwrap_err();
    assert!(
        matches!(error, AgentError::Compact(CompactError::NothingToCompact)),
        "{error}"
    );
    assert!(
        error.to_string().starts_with("nothing to compact"),
        "{error}"
    );
    assert!(server.requests().is_empty(), "nothing was sent");

    // Compacted once, with nothing said since: nothing to compact again.
    a_turn_with_a_call(&server, &mut agent).await;
    server.push_turn(Turn::text("summary"));
    agent.compact(None, &mut |_| {}).await.unwrap();
    let sent = server.requests().len();
    let error = agent.compact(None, &mut |_| {}).await.unwrap_err();
    assert!(matches!(
        error,
        AgentError::Compact(CompactError::NothingToCompact)
    ));
    assert_eq!(server.requests().len(), sent);
    all_accepted(&server);
}

#[tokio::test]
async fn a_turn_in_progress_is_not_compacted_until_its_calls_are_answered() {
    let f = fixture();
    let server = MockServer::start();
    server.push_turn(Turn::tool("slow", "bash", json!({"command": "sleep 30"})));
    let [provider, _] = providers(&server);
    let mut agent = Agent::new(provider, &f.library, &config(&f));
    let cancelled = tokio::time::timeout(
        Duration::from_secs(3),
        agent.run_turn("run it", &mut |_| {}),
    )
    .await;
    assert!(cancelled.is_err(), "the slow call should still run");
    let before: Vec<Message> = agent.history().to_vec();
    let error = agent.compact(None, &mut |_| {}).await.unwrap_err();
    assert!(
        matches!(error, AgentError::Compact(CompactError::MidTurn)),
        "{error}"
    );
    assert_eq!(agent.history(), before);
    assert_eq!(server.requests().len(), 1, "nothing was sent");

    agent.close_cancelled_turn();
    server.push_turn(Turn::text("summary of a cancelled command"));
    agent.compact(None, &mut |_| {}).await.unwrap();
    assert_eq!(agent.history().len(), 2);
    all_accepted(&server);
}

#[tokio::test]
async fn no_summary_or_a_cut_one_leaves_the_history_as_it_was() {
    let f = fixture();
    let server = MockServer::start();
    let [provider, _] = providers(&server);
    let mut agent = Agent::new(provider, &f.library, &config(&f));
    a_turn_with_a_call(&server, &mut agent).await;
    let before = agent.history().to_vec();

    // A tool call instead of a summary: not run, not kept.
    server.push_turn(Turn::tool("c9", "bash", json!({"command": "touch ran"})));
    let error = agent.compact(None, &mut |_| {}).await.unwrap_err();
    assert!(
        matches!(
            error,
            AgentError::Compact(CompactError::NoSummary { calls: 1 })
        ),
        "{error}"
    );
    assert_eq!(agent.history(), before);
    assert!(!f.cwd.join("ran").exists(), "the call did not run");

    // Cut by the output limit.
    let mut cut = Turn::text("The user asked");
    cut.stop = Some("max_tokens".into());
    server.push_turn(cut);
    let error = agent.compact(None, &mut |_| {}).await.unwrap_err();
    assert!(
        matches!(error, AgentError::Compact(CompactError::Cut { .. })),
        "{error}"
    );
    assert_eq!(agent.history(), before);

    // The session goes on as if nothing happened.
    server.push_turn(Turn::text("still here"));
    agent.run_turn("next", &mut |_| {}).await.unwrap();
    assert_eq!(agent.history().len(), before.len() + 2);
    all_accepted(&server);
}

#[tokio::test]
async fn a_full_context_compacts_itself_keeping_the_loaded_skills_and_resumes() {
    let f = fixture();
    let skills = f.cwd.join("skills");
    std::fs::create_dir_all(skills.join("pdf")).unwrap();
    std::fs::write(
        skills.join("pdf/SKILL.md"),
        "---\nname: pdf\ndescription: Fill PDF forms\n---\nPDF STEPS: read references/forms.md first.\n",
    )
    .unwrap();
    let library = Arc::new(skillet_skills::discover(&[skillet_skills::Root::new(
        &skills,
        skillet_skills::RootKind::User,
    )]));
    let server = MockServer::start();
    let [provider, _] = providers(&server);
    let mut agent = Agent::new(provider.clone(), &library, &config(&f));
    agent
        .attach_transcript(Transcript::create(&f.sessions, agent.header()).unwrap())
        .unwrap();
    // A turn that loads a skill; its last request fills 85% of claude-test's 200,000 tokens.
    server.push_turn(Turn::tool("l1", "load_skill", json!({"name": "pdf"})));
    server.push_turn(
        Turn::text("Filled.").with_usage(skillet_test_support::MockUsage {
            input: 10_000,
            cache_read: 160_000,
            output: 100,
            ..skillet_test_support::MockUsage::default()
        }),
    );
    agent.run_turn("fill the form", &mut |_| {}).await.unwrap();
    // The next message: compacted first, said, then sent after the summary.
    server.push_turn(Turn::text("SUMMARY: the form was filled."));
    server.push_turn(Turn::text("Next done."));
    let mut notices = Vec::new();
    agent
        .run_turn("and the next one", &mut |event| {
            if let AgentEvent::Notice(text) = event {
                notices.push(text);
            }
        })
        .await
        .unwrap();
    assert!(
        notices
            .iter()
            .any(|notice| notice.contains("filled 170100 of the model's 200000 tokens")),
        "{notices:?}"
    );
    let requests = server.requests();
    assert_eq!(last_message_text(&requests[2]), COMPACT_REQUEST);
    let sent = &requests[3].body["messages"];
    assert_eq!(sent.as_array().unwrap().len(), 3, "{sent}");
    let summary = sent[0].to_string();
    assert!(
        summary.contains("SUMMARY: the form was filled."),
        "{summary}"
    );
    assert!(
        summary.contains("Skills loaded before the compaction"),
        "{summary}"
    );
    assert!(
        summary.contains("PDF STEPS: read references/forms.md first."),
        "{summary}"
    );
    // A new cache prefix from here on: the same system prompt and tools.
    assert_eq!(fixed_part(&requests[3]), fixed_part(&requests[0]));
    // The transcript rebuilds it.
    let path = f.sessions.join(format!("{}.jsonl", agent.header().id));
    let (header, history) = transcript::load(&path).unwrap();
    assert_eq!(history, agent.history());
    let resumed = Agent::resume(provider, &library, &config(&f), header, &history);
    assert!(resumed.history()[0].text().contains("PDF STEPS"));
    // A second compaction keeps the skill again (found in the summary).
    let kept = skillet_agent::compact::loaded_skills(agent.history());
    assert_eq!(kept.len(), 1);
    assert!(kept[0].starts_with("<skill name=\"pdf\">"));
    all_accepted(&server);
}

#[tokio::test]
async fn the_thinking_budget_counts_in_the_room_a_request_needs() {
    // A conversation at 150,000 of 200,000 tokens: room enough for an 8,192-token answer, not
    // for one that may think 60,000 tokens first.
    for (thinking, compacts) in [(None, false), (Some(60_000), true)] {
        let f = fixture();
        let server = MockServer::start();
        let [provider, _] = providers(&server);
        let mut config = config(&f);
        config.thinking = thinking;
        let mut agent = Agent::new(provider, &Arc::new(skillet_skills::discover(&[])), &config);
        server.push_turn(
            Turn::text("Long.").with_usage(skillet_test_support::MockUsage {
                input: 150_000,
                output: 100,
                ..skillet_test_support::MockUsage::default()
            }),
        );
        agent.run_turn("one", &mut |_| {}).await.unwrap();
        server.push_turn(Turn::text("SUMMARY: long."));
        server.push_turn(Turn::text("Next."));
        agent.run_turn("two", &mut |_| {}).await.unwrap();
        let compacted = server
            .requests()
            .iter()
            .any(|request| last_message_text(request) == COMPACT_REQUEST);
        assert_eq!(compacted, compacts, "thinking {thinking:?}");
        all_accepted(&server);
    }
}
