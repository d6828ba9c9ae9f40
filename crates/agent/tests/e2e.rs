//! The agent loop end to end against the scripted mock model server, over real HTTP.

#![allow(
    clippy::unwrap_used,
    clippy::panic,
    clippy::too_many_lines,
    clippy::print_stderr,
    reason = "tests"
)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use skillet_agent::permission::Permissions;
use skillet_agent::transcript::{self, Transcript, TranscriptEvent};
use skillet_agent::{Agent, AgentConfig, AgentError, AgentEvent};
use skillet_llm::{Anthropic, OpenAi, Provider, Transport, Usage};
use skillet_skills::{Library, Root, RootKind, discover};
use skillet_test_support::{MockServer, MockUsage, RecordedRequest, Reply, Turn};

struct Fixture {
    _temp: tempfile::TempDir,
    cwd: PathBuf,
    skills: PathBuf,
    library: Arc<Library>,
}

fn fixture() -> Fixture {
    let temp = tempfile::tempdir().unwrap();
    let root = temp.path().canonicalize().unwrap();
    let cwd = root.join("project");
    std::fs::create_dir_all(&cwd).unwrap();
    std::fs::write(cwd.join("notes.txt"), "alpha\nbeta\n").unwrap();
    let skills = root.join("skills");
    let pdf = skills.join("pdf");
    std::fs::create_dir_all(pdf.join("references")).unwrap();
    std::fs::write(
        pdf.join("SKILL.md"),
        "---\nname: pdf\ndescription: Fill PDF forms. Use when the user mentions PDF forms.\n---\n# PDF\nRead references/forms.md first.\n",
    )
    .unwrap();
    std::fs::write(
        pdf.join("references/forms.md"),
        "FORMS GUIDE: use fill.py\n",
    )
    .unwrap();
    let library = Arc::new(discover(&[Root::new(&skills, RootKind::User)]));
    Fixture {
        _temp: temp,
        cwd,
        skills,
        library,
    }
}

fn transport() -> Transport {
    let mut transport = Transport::new().unwrap();
    transport.retry.base_delay = Duration::from_millis(1);
    transport.retry.max_delay = Duration::from_millis(5);
    transport
}

fn anthropic(server: &MockServer) -> Provider {
    Provider::Anthropic(Anthropic::new(
        transport(),
        &server.url(),
        "sk-ant",
        "claude-test",
    ))
}

fn openai(server: &MockServer) -> Provider {
    Provider::OpenAi(OpenAi::new(
        transport(),
        &format!("{}/v1", server.url()),
        Some("sk-oa"),
        "gpt-test",
    ))
}

fn config(fixture: &Fixture, stream: bool) -> AgentConfig {
    let mut config = AgentConfig::new(fixture.cwd.clone());
    config.stream = stream;
    config
}

async fn turn(
    agent: &mut Agent,
    text: &str,
) -> (
    Result<skillet_agent::TurnOutcome, AgentError>,
    Vec<AgentEvent>,
) {
    let mut events = Vec::new();
    let result = agent.run_turn(text, &mut |event| events.push(event)).await;
    (result, events)
}

/// The messages of a request without cache markers, to compare requests as prefixes.
fn messages(request: &RecordedRequest) -> Vec<Value> {
    let mut messages = request.body["messages"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    for message in &mut messages {
        if let Some(content) = message.get_mut("content").and_then(Value::as_array_mut) {
            for block in content {
                if let Some(block) = block.as_object_mut() {
                    block.remove("cache_control");
                }
            }
        }
    }
    messages
}

fn script_skill_session(server: &MockServer, skills: &Path) {
    server.push_turn(
        Turn::tool("call_1", "load_skill", json!({"name": "pdf"}))
            .with_text("I'll load the PDF skill."),
    );
    server.push_turn(Turn::tool(
        "call_2",
        "read_file",
        json!({"path": skills.join("pdf/references/forms.md").display().to_string()}),
    ));
    server.push_turn(Turn::text("Done: use fill.py.").with_usage(MockUsage {
        input: 50,
        output: 5,
        cache_read: 900,
        cache_write: 0,
    }));
}

#[tokio::test]
async fn the_skill_flow_in_both_dialects_streaming_and_not() {
    for (dialect, stream) in [
        ("anthropic", true),
        ("anthropic", false),
        ("openai", true),
        ("openai", false),
    ] {
        let fixture = fixture();
        let server = MockServer::start();
        let provider = if dialect == "anthropic" {
            anthropic(&server)
        } else {
            openai(&server)
        };
        script_skill_session(&server, &fixture.skills);
        let mut agent = Agent::new(provider, &fixture.library, &config(&fixture, stream));
        let (result, events) = turn(&mut agent, "Fill in the PDF form for me").await;
        let outcome = result.unwrap();
        assert_eq!(outcome.text, "Done: use fill.py.", "{dialect} {stream}");
        assert_eq!(outcome.steps, 3);
        let requests = server.requests();
        assert_eq!(requests.len(), 3);

        // The catalog is in the system prompt; no body is.
        let system = if dialect == "anthropic" {
            requests[0].body["system"][0]["text"]
                .as_str()
                .unwrap()
                .to_string()
        } else {
            requests[0].body["messages"][0]["content"]
                .as_str()
                .unwrap()
                .to_string()
        };
        assert!(
            system.contains("  - pdf: Fill PDF forms. Use when the user mentions PDF forms."),
            "{system}"
        );
        assert!(!system.contains("Read references/forms.md first."));
        assert_eq!(system, agent.system_prompt());

        // The second request answers call_1 with the skill's body.
        let second = messages(&requests[1]);
        let result = second
            .iter()
            .rev()
            .find_map(|message| {
                if dialect == "anthropic" {
                    message["content"]
                        .as_array()?
                        .iter()
                        .find(|b| b["type"] == "tool_result")
                        .cloned()
                } else {
                    (message["role"] == "tool").then(|| message.clone())
                }
            })
            .unwrap();
        let (answered, content) = if dialect == "anthropic" {
            (
                result["tool_use_id"].clone(),
                result["content"].as_str().unwrap().to_string(),
            )
        } else {
            (
                result["tool_call_id"].clone(),
                result["content"].as_str().unwrap().to_string(),
            )
        };
        assert_eq!(answered, "call_1");
        assert!(
            content.starts_with("<skill name=\"pdf\">\n# PDF\nRead references/forms.md first."),
            "{content}"
        );
        assert!(content.contains("- references/forms.md"));

        // The third answers call_2 with the reference file, read from the skill's folder.
        let third = serde_json::to_string(&messages(&requests[2])).unwrap();
        assert!(third.contains("FORMS GUIDE: use fill.py"), "{third}");

        // System prompt and tools never change; each request extends the one before.
        for pair in requests.windows(2) {
            assert_eq!(pair[0].body["tools"], pair[1].body["tools"]);
            assert_eq!(pair[0].body["system"], pair[1].body["system"]);
            let (before, after) = (messages(&pair[0]), messages(&pair[1]));
            assert!(after.len() > before.len());
            assert_eq!(
                before[..],
                after[..before.len()],
                "{dialect} {stream}: history was edited"
            );
        }

        if dialect == "anthropic" {
            for request in &requests {
                assert_eq!(
                    request.body["system"][0]["cache_control"],
                    json!({"type": "ephemeral"})
                );
                let last = request.body["messages"].as_array().unwrap().last().unwrap();
                let block = last["content"].as_array().unwrap().last().unwrap();
                assert_eq!(block["cache_control"], json!({"type": "ephemeral"}));
            }
        }

        // Usage is summed over the requests.
        assert_eq!(
            agent.usage(),
            Usage {
                input_tokens: 250,
                output_tokens: 25,
                cache_write_tokens: 0,
                cache_read_tokens: 900
            }
        );
        let calls: Vec<&str> = events
            .iter()
            .filter_map(|e| match e {
                AgentEvent::ToolCall { name, .. } => Some(name.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(calls, ["load_skill", "read_file"]);
        // Streamed or not, the user is shown the whole answer.
        let text: String = events
            .iter()
            .filter_map(|e| match e {
                AgentEvent::Text(t) => Some(t.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(
            text, "I'll load the PDF skill.Done: use fill.py.",
            "{dialect} {stream}"
        );
    }
}

#[tokio::test]
async fn several_calls_in_one_answer_get_one_message_of_results_in_order() {
    let fixture = fixture();
    let server = MockServer::start();
    server.push_turn(
        Turn::tool("a", "read_file", json!({"path": "notes.txt"}))
            .and_tool("b", "glob", json!({"pattern": "*.txt"}))
            .and_tool("c", "no_such_tool", json!({})),
    );
    server.push_turn(Turn::text("ok"));
    let mut agent = Agent::new(
        anthropic(&server),
        &fixture.library,
        &config(&fixture, true),
    );
    turn(&mut agent, "look").await.0.unwrap();
    let last = server.requests()[1].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    let blocks = last["content"].as_array().unwrap();
    let ids: Vec<&str> = blocks
        .iter()
        .map(|b| b["tool_use_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["a", "b", "c"]);
    assert!(
        blocks[0]["content"]
            .as_str()
            .unwrap()
            .contains("     1\talpha")
    );
    assert_eq!(blocks[1]["content"], "notes.txt");
    assert_eq!(blocks[2]["is_error"], true);
    assert!(
        blocks[2]["content"]
            .as_str()
            .unwrap()
            .contains("unknown tool 'no_such_tool'")
    );
}

#[tokio::test]
async fn retries_on_529_then_succeeds() {
    let fixture = fixture();
    let server = MockServer::start();
    server.push(Reply::error(529, "Overloaded"));
    server.push_turn(Turn::text("fine"));
    let mut agent = Agent::new(
        anthropic(&server),
        &fixture.library,
        &config(&fixture, true),
    );
    let (result, events) = turn(&mut agent, "hi").await;
    assert_eq!(result.unwrap().text, "fine");
    assert!(
        events
            .iter()
            .any(|e| matches!(e, AgentEvent::Retrying { attempt: 2, .. }))
    );
}

#[tokio::test]
async fn a_bad_key_gives_the_hint() {
    let fixture = fixture();
    let server = MockServer::start();
    server.push(Reply::error(401, "invalid x-api-key"));
    let mut agent = Agent::new(
        anthropic(&server),
        &fixture.library,
        &config(&fixture, true),
    );
    let error = turn(&mut agent, "hi").await.0.unwrap_err();
    assert!(
        error.to_string().contains("hint: check ANTHROPIC_API_KEY"),
        "{error}"
    );
}

#[tokio::test]
async fn a_stream_cut_midway_is_a_clear_error_and_the_transcript_keeps_everything_before() {
    let fixture = fixture();
    let server = MockServer::start();
    server.push_turn(Turn::tool(
        "call_1",
        "read_file",
        json!({"path": "notes.txt"}),
    ));
    server.push(Reply::CutStream(
        Turn::text("This answer never finishes"),
        4,
    ));
    let mut agent = Agent::new(
        anthropic(&server),
        &fixture.library,
        &config(&fixture, true),
    );
    let sessions = fixture.cwd.join("sessions");
    agent
        .attach_transcript(Transcript::create(&sessions, agent.header()).unwrap())
        .unwrap();
    let (result, events) = turn(&mut agent, "read my notes").await;
    let error = result.unwrap_err();
    assert!(
        error.to_string().contains("cut off before it finished"),
        "{error}"
    );
    assert!(
        events
            .iter()
            .any(|e| matches!(e, AgentEvent::Text(t) if t.starts_with("This answer"))),
        "the part before the cut was streamed"
    );
    let path = sessions.join(format!("{}.jsonl", agent.header().id));
    let lines: Vec<TranscriptEvent> = std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let kinds: Vec<&str> = lines
        .iter()
        .map(|e| match e {
            TranscriptEvent::Session(_) => "session",
            TranscriptEvent::Message { .. } => "message",
            TranscriptEvent::Usage { .. } => "usage",
            TranscriptEvent::Notice { .. } => "notice",
            TranscriptEvent::Error { .. } => "error",
            TranscriptEvent::Repaired { .. } => "repaired",
            TranscriptEvent::Compacted { .. } => "compacted",
            TranscriptEvent::Model { .. } => "model",
            TranscriptEvent::Subagent { .. } => "subagent",
        })
        .collect();
    assert_eq!(
        kinds,
        ["session", "message", "usage", "message", "message", "error"]
    );
    // Resuming gives the same history and the same system prompt.
    let (header, history) = transcript::load(&path).unwrap();
    assert_eq!(header.system, agent.system_prompt());
    assert_eq!(history, agent.history());
}

#[tokio::test]
async fn a_resumed_session_sends_the_old_prompt_and_history() {
    let fixture = fixture();
    let server = MockServer::start();
    server.push_turn(Turn::text("first answer"));
    let mut agent = Agent::new(
        anthropic(&server),
        &fixture.library,
        &config(&fixture, true),
    );
    let sessions = fixture.cwd.join("sessions");
    agent
        .attach_transcript(Transcript::create(&sessions, agent.header()).unwrap())
        .unwrap();
    turn(&mut agent, "first").await.0.unwrap();
    let path = sessions.join(format!("{}.jsonl", agent.header().id));
    // Continued only once the first session has let go of it.
    drop(agent);
    let (header, history) = transcript::load(&path).unwrap();
    let mut resumed = Agent::resume(
        anthropic(&server),
        &fixture.library,
        &config(&fixture, true),
        header,
        &history,
    );
    resumed
        .attach_transcript(Transcript::append_to(&path).unwrap())
        .unwrap();
    server.push_turn(Turn::text("second answer"));
    turn(&mut resumed, "second").await.0.unwrap();
    let requests = server.requests();
    assert_eq!(requests[0].body["system"], requests[1].body["system"]);
    assert_eq!(requests[0].body["tools"], requests[1].body["tools"]);
    let texts: Vec<String> = requests[1].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            m["content"][0]["text"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
        .collect();
    assert_eq!(texts, ["first", "first answer", "second"]);
}

#[tokio::test]
async fn writes_are_denied_without_permission_and_allowed_with_it() {
    let fixture = fixture();
    let server = MockServer::start();
    server.push_turn(Turn::tool(
        "w1",
        "write_file",
        json!({"path": "out.txt", "content": "x"}),
    ));
    server.push_turn(Turn::text("could not"));
    let mut denied = config(&fixture, false);
    denied.permissions = Permissions::Deny {
        reason: "writes need --yes".into(),
    };
    let mut agent = Agent::new(anthropic(&server), &fixture.library, &denied);
    let (_, events) = turn(&mut agent, "write").await;
    assert!(events.iter().any(|e| matches!(e, AgentEvent::ToolResult { is_error: true, content, .. } if content == "error: denied: writes need --yes")));
    assert!(!fixture.cwd.join("out.txt").exists());

    server.push_turn(Turn::tool(
        "w2",
        "write_file",
        json!({"path": "out.txt", "content": "x"}),
    ));
    server.push_turn(Turn::text("wrote it"));
    let mut allowed = config(&fixture, false);
    allowed.permissions = Permissions::Allow;
    let mut agent = Agent::new(anthropic(&server), &fixture.library, &allowed);
    turn(&mut agent, "write").await.0.unwrap();
    assert_eq!(
        std::fs::read_to_string(fixture.cwd.join("out.txt")).unwrap(),
        "x"
    );
}

#[tokio::test]
async fn the_step_limit_ends_a_runaway_turn() {
    let fixture = fixture();
    let server = MockServer::start();
    for index in 0..3 {
        server.push_turn(Turn::tool(
            &format!("c{index}"),
            "glob",
            json!({"pattern": "*"}),
        ));
    }
    let mut limited = config(&fixture, false);
    limited.max_steps = 2;
    let mut agent = Agent::new(anthropic(&server), &fixture.library, &limited);
    let error = turn(&mut agent, "loop").await.0.unwrap_err();
    assert!(matches!(error, AgentError::StepLimit { steps: 2 }));
}

#[tokio::test]
async fn max_tokens_is_reported_and_continued_once() {
    let fixture = fixture();
    let server = MockServer::start();
    let mut cut = Turn::text("The first half");
    cut.stop = Some("max_tokens".into());
    server.push_turn(cut.clone());
    server.push_turn(cut);
    let mut agent = Agent::new(openai(&server), &fixture.library, &config(&fixture, true));
    let (result, events) = turn(&mut agent, "write a lot").await;
    assert_eq!(result.unwrap().steps, 2);
    let notices: Vec<&String> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Notice(n) => Some(n),
            _ => None,
        })
        .collect();
    assert_eq!(notices.len(), 2);
    assert!(notices[0].contains("asking it to continue once"));
    assert!(notices[1].contains("stopping the turn"));
    let second = &server.requests()[1].body["messages"];
    assert!(
        second
            .to_string()
            .contains("Continue exactly where you stopped.")
    );
}

#[tokio::test]
async fn a_subagent_runs_with_a_fresh_history_and_returns_its_final_text() {
    let fixture = fixture();
    let server = MockServer::start();
    server.push_turn(Turn::tool(
        "t1",
        "task",
        json!({"description": "count", "prompt": "Count the notes"}),
    ));
    server.push_turn(Turn::tool("s1", "read_file", json!({"path": "notes.txt"})));
    server.push_turn(Turn::text("There are 2 notes."));
    server.push_turn(Turn::text("The subagent says 2."));
    let mut agent = Agent::new(
        anthropic(&server),
        &fixture.library,
        &config(&fixture, false),
    );
    let outcome = turn(&mut agent, "How many notes?").await.0.unwrap();
    assert_eq!(outcome.text, "The subagent says 2.");
    let requests = server.requests();
    let sub_first = &requests[1].body;
    assert_eq!(sub_first["messages"].as_array().unwrap().len(), 1);
    assert_eq!(
        sub_first["messages"][0]["content"][0]["text"],
        "Count the notes"
    );
    let tool_names = |body: &Value| -> Vec<String> {
        body["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_string())
            .collect()
    };
    assert!(tool_names(&requests[0].body).contains(&"task".to_string()));
    assert!(!tool_names(sub_first).contains(&"task".to_string()));
    let last = requests[3].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(last["content"][0]["content"], "There are 2 notes.");
}

#[tokio::test]
async fn catalog_in_the_tool_description_with_an_enum() {
    let fixture = fixture();
    let server = MockServer::start();
    server.push_turn(Turn::text("ok"));
    let mut tool_config = config(&fixture, false);
    tool_config.placement = skillet_agent::tool::CatalogPlacement::Tool;
    let mut agent = Agent::new(anthropic(&server), &fixture.library, &tool_config);
    turn(&mut agent, "hi").await.0.unwrap();
    let body = &server.requests()[0].body;
    let load = body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "load_skill")
        .unwrap()
        .clone();
    assert!(
        load["description"]
            .as_str()
            .unwrap()
            .contains("  - pdf: Fill PDF forms.")
    );
    assert_eq!(
        load["input_schema"]["properties"]["name"]["enum"],
        json!(["pdf"])
    );
    let system = body["system"][0]["text"].as_str().unwrap();
    assert!(!system.contains("  - pdf:"));
    assert!(system.contains("The load_skill tool lists the available skills."));
}

fn model_dir() -> Option<PathBuf> {
    let dir = skillet_test_support::embedding_model_dir();
    if dir.is_none() {
        skillet_test_support::skip("SKIPPED: no embedding model (scripts/fetch-model.sh)");
    }
    dir
}

fn matching_config(
    fixture: &Fixture,
    model: &Path,
    mode: skillet_agent::SkillMatch,
) -> AgentConfig {
    let cache = fixture.cwd.join("embeddings");
    let (index, _) = skillet_library::index::SkillIndex::semantic(
        &fixture.library,
        &skillet_library::facts::Facts::gather(&fixture.library, None),
        model,
        &cache,
        &mut |_, _| {},
    )
    .unwrap();
    let mut config = config(fixture, false);
    config.skill_match = mode;
    config.skill_index = Some(Arc::new(index));
    config
}

fn last_user_blocks(request: &RecordedRequest) -> Vec<String> {
    let messages = request.body["messages"].as_array().unwrap();
    let last = messages.iter().rev().find(|m| m["role"] == "user").unwrap();
    last["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["text"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[tokio::test]
async fn suggest_appends_a_note_and_leaves_the_system_prompt_alone() {
    let Some(model) = model_dir() else { return };
    let fixture = fixture();
    let server = MockServer::start();
    server.push_turn(Turn::text("ok"));
    server.push_turn(Turn::text("ok"));
    let plain = Agent::new(
        anthropic(&server),
        &fixture.library,
        &config(&fixture, false),
    );
    let mut agent = Agent::new(
        anthropic(&server),
        &fixture.library,
        &matching_config(&fixture, &model, skillet_agent::SkillMatch::Suggest),
    );
    assert_eq!(agent.system_prompt(), plain.system_prompt());
    let (_, events) = turn(&mut agent, "Fill in the PDF form for me").await;
    let requests = server.requests();
    let blocks = last_user_blocks(&requests[0]);
    assert_eq!(blocks[0], "Fill in the PDF form for me");
    assert!(
        blocks[1].starts_with("<skill_suggestions>")
            && blocks[1].contains("- pdf: Fill PDF forms."),
        "{blocks:?}"
    );
    assert_eq!(blocks.len(), 2, "suggest never loads the body");
    assert!(
        events
            .iter()
            .any(|e| matches!(e, AgentEvent::Notice(n) if n == "suggested skills: pdf"))
    );
    assert_eq!(requests[0].body["system"][0]["text"], plain.system_prompt());
    turn(&mut agent, "what's a good recipe for banana bread")
        .await
        .0
        .unwrap();
    assert_eq!(
        last_user_blocks(&server.requests()[1]),
        ["what's a good recipe for banana bread"]
    );
}

#[tokio::test]
async fn auto_injects_the_skill_once() {
    let Some(model) = model_dir() else { return };
    let fixture = fixture();
    let server = MockServer::start();
    server.push_turn(Turn::text("done"));
    server.push_turn(Turn::text("done again"));
    let mut agent = Agent::new(
        anthropic(&server),
        &fixture.library,
        &matching_config(&fixture, &model, skillet_agent::SkillMatch::Auto),
    );
    turn(&mut agent, "Fill in the PDF form for me")
        .await
        .0
        .unwrap();
    turn(&mut agent, "Now fill in the second PDF form")
        .await
        .0
        .unwrap();
    let requests = server.requests();
    let first = last_user_blocks(&requests[0]);
    assert!(
        first.iter().any(|b| b.starts_with("<skill name=\"pdf\">")),
        "{first:?}"
    );
    let second = last_user_blocks(&requests[1]);
    assert!(
        !second.iter().any(|b| b.starts_with("<skill name=\"pdf\">")),
        "{second:?}"
    );
    assert!(second.iter().any(|b| b.contains("<skill_suggestions>")));
    // The first message, as sent, is unchanged in the second request.
    assert_eq!(
        requests[1].body["messages"][0],
        requests[0].body["messages"][0]
            .as_object()
            .map(|m| {
                let mut m = m.clone();
                if let Some(content) = m.get_mut("content").and_then(Value::as_array_mut) {
                    for block in content {
                        if let Some(b) = block.as_object_mut() {
                            b.remove("cache_control");
                        }
                    }
                }
                Value::Object(m)
            })
            .unwrap()
    );
}

#[tokio::test]
async fn a_library_over_budget_gets_search_skills() {
    let fixture = fixture();
    let many = fixture.cwd.join("many");
    for index in 0..60 {
        let name = format!("tool-{index:02}");
        let dir = many.join(&name);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("SKILL.md"),
            format!("---\nname: {name}\ndescription: Generic helper number {index} for assorted chores around the house and office.\n---\nbody\n"),
        )
        .unwrap();
    }
    let special = many.join("zz-tax-filing");
    std::fs::create_dir_all(&special).unwrap();
    std::fs::write(special.join("SKILL.md"), "---\nname: zz-tax-filing\ndescription: Prepare and file annual income tax returns with receipts.\n---\nbody\n").unwrap();
    let library = Arc::new(discover(&[Root::new(&many, RootKind::User)]));
    let server = MockServer::start();
    server.push_turn(Turn::tool(
        "s1",
        "search_skills",
        json!({"query": "file my income tax return", "top_k": 2}),
    ));
    server.push_turn(Turn::text("Use zz-tax-filing."));
    let mut large = config(&fixture, false);
    large.catalog_budget = Some(600);
    large.skill_index = Some(Arc::new(skillet_library::index::SkillIndex::lexical(
        &library,
    )));
    large.first_message = Some("help me file my income tax return".into());
    let mut agent = Agent::new(anthropic(&server), &library, &large);
    assert!(!agent.catalog_report().dropped.is_empty());
    let (result, events) = turn(&mut agent, "help me file my income tax return").await;
    assert_eq!(result.unwrap().text, "Use zz-tax-filing.");
    let requests = server.requests();
    let system = requests[0].body["system"][0]["text"].as_str().unwrap();
    assert!(
        system.contains("There are 61 skills; the list shows"),
        "{system}"
    );
    assert!(system.contains("Use search_skills to find the others"));
    // The most relevant skill is listed first, though it sorts last by name.
    assert!(
        system.contains("Available skills:\n  - zz-tax-filing: Prepare and file"),
        "{system}"
    );
    let tools: Vec<&str> = requests[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(tools.contains(&"search_skills"));
    let result = events
        .iter()
        .find_map(|e| match e {
            AgentEvent::ToolResult { name, content, .. } if name == "search_skills" => {
                Some(content.clone())
            }
            _ => None,
        })
        .unwrap();
    assert!(result.starts_with("zz-tax-filing ("), "{result}");
    assert_eq!(
        result.lines().count(),
        1,
        "only skills sharing words are listed: {result}"
    );
    // A library that fits gets no search tool.
    let small = Agent::new(
        anthropic(&server),
        &fixture.library,
        &config(&fixture, false),
    );
    assert!(
        !small
            .header()
            .tools
            .iter()
            .any(|t| t.name == "search_skills")
    );
}

#[tokio::test]
async fn a_skill_created_mid_session_is_announced_in_the_next_message_with_the_prompt_unchanged() {
    let fixture = fixture();
    let server = MockServer::start();
    server.push_turn(Turn::text("first"));
    server.push_turn(Turn::tool("l1", "load_skill", json!({"name": "deploy"})));
    server.push_turn(Turn::text("second"));
    server.push_turn(Turn::text("third"));
    let mut agent = Agent::new(
        anthropic(&server),
        &fixture.library,
        &config(&fixture, false),
    );
    turn(&mut agent, "hello").await.0.unwrap();
    // A skill appears, another changes; the roots are found again between turns.
    std::fs::create_dir_all(fixture.skills.join("deploy")).unwrap();
    std::fs::write(
        fixture.skills.join("deploy/SKILL.md"),
        "---\nname: deploy\ndescription: Ship the app <skills_changed> to production\n---\nRun the deploy script.\n",
    )
    .unwrap();
    std::fs::write(
        fixture.skills.join("pdf/SKILL.md"),
        "---\nname: pdf\ndescription: Fill PDF forms. Use when the user mentions PDF forms.\n---\n# PDF\nNew steps.\n",
    )
    .unwrap();
    let library = Arc::new(discover(&[Root::new(&fixture.skills, RootKind::User)]));
    let changes = agent.reload_skills(library, None);
    assert_eq!(
        changes.summary(),
        "skills changed: added deploy; changed pdf"
    );
    turn(&mut agent, "ship it").await.0.unwrap();
    turn(&mut agent, "thanks").await.0.unwrap();
    let requests = server.requests();
    assert_eq!(requests.len(), 4);
    // The system prompt and the tools are byte for byte those of the first request.
    for request in &requests[1..] {
        assert_eq!(request.body["system"], requests[0].body["system"]);
        assert_eq!(request.body["tools"], requests[0].body["tools"]);
    }
    let second = requests[1].body["messages"].as_array().unwrap();
    let note = second.last().unwrap()["content"].to_string();
    assert!(note.contains("- added: deploy: Ship the app"), "{note}");
    assert!(!note.contains("Ship the app <skills_changed>"), "{note}");
    assert!(
        note.contains("- changed (load it again before relying on it): pdf"),
        "{note}"
    );
    // The new skill loads; the note is told once.
    let loaded = requests[2].body["messages"].to_string();
    assert!(loaded.contains("Run the deploy script."), "{loaded}");
    let third = requests[3].body["messages"].as_array().unwrap();
    assert!(!third.last().unwrap().to_string().contains("skills_changed"));
    assert_eq!(server.rejections(), Vec::<String>::new());
}

/// Says yes to everything, keeping each question.
struct YesToAll(std::sync::Mutex<Vec<skillet_agent::permission::ApprovalRequest>>);

impl skillet_agent::permission::Approver for YesToAll {
    fn approve(
        &self,
        request: &skillet_agent::permission::ApprovalRequest,
    ) -> skillet_agent::permission::Approval {
        self.0.lock().unwrap().push(request.clone());
        skillet_agent::permission::Approval::Always
    }
}

#[tokio::test]
async fn save_skill_writes_a_skill_that_validates_and_loads_and_asks_each_time() {
    let fixture = fixture();
    let project_skills = fixture.cwd.join(".agents/skills");
    let roots = vec![
        Root::new(&project_skills, RootKind::Project),
        Root::new(&fixture.skills, RootKind::User),
    ];
    let server = MockServer::start();
    let skill = json!({
        "name": "release-notes",
        "description": "Write release notes: \"what changed\" --- from git log, grouped by kind of change, with the authors named. Use when asked for notes.",
        "body": "# Release notes\n\nRun scripts/log.sh, then group by type.",
        "files": {"scripts/log.sh": "git log --oneline\n"}
    });
    server.push_turn(Turn::tool("s1", "save_skill", skill.clone()));
    server.push_turn(Turn::tool(
        "l1",
        "load_skill",
        json!({"name": "release-notes"}),
    ));
    server.push_turn(Turn::tool("s2", "save_skill", skill.clone()));
    server.push_turn(Turn::tool(
        "s3",
        "save_skill",
        json!({"name": "Bad Name", "description": "d", "body": "b"}),
    ));
    server.push_turn(Turn::tool(
        "s4",
        "save_skill",
        json!({"name": "nested", "description": "Does n. Use for n.", "body": "b",
               "files": {"inner/SKILL.md": "---\nname: inner\nallowed-tools: Bash\n---\n"}}),
    ));
    server.push_turn(Turn::text("saved"));
    let approver = Arc::new(YesToAll(std::sync::Mutex::new(Vec::new())));
    let mut config = config(&fixture, false);
    config.permissions = Permissions::Ask(approver.clone());
    config.save_skills = Some(skillet_agent::tools::save_skill::SaveSkills {
        dir: project_skills.clone(),
        roots: roots.clone(),
    });
    let library = Arc::new(discover(&roots));
    let mut agent = Agent::new(anthropic(&server), &library, &config);
    turn(&mut agent, "keep this as a skill").await.0.unwrap();
    let dir = project_skills.join("release-notes");
    let validations = skillet_skills::validate_path(&dir);
    assert_eq!(validations.len(), 1);
    // Valid, and without a warning either.
    assert!(
        validations[0].diagnostics.is_empty(),
        "{:?}",
        validations[0].diagnostics
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("scripts/log.sh")).unwrap(),
        "git log --oneline\n"
    );
    let requests = server.requests();
    let result = |index: usize| {
        requests[index].body["messages"]
            .as_array()
            .unwrap()
            .last()
            .unwrap()["content"][0]["content"]
            .to_string()
    };
    assert!(
        result(1).contains("saved skill 'release-notes'"),
        "{}",
        result(1)
    );
    // Loaded in the same turn, with its file listed.
    assert!(
        result(2).contains("Run scripts/log.sh, then group by type."),
        "{}",
        result(2)
    );
    assert!(result(2).contains("scripts/log.sh"), "{}", result(2));
    // Not over an existing skill unless asked; a bad name is refused before any question.
    assert!(result(3).contains("pass overwrite: true"), "{}", result(3));
    assert!(result(4).contains("cannot be used"), "{}", result(4));
    // A skill file in a subfolder would be a skill of its own, never validated: refused.
    assert!(result(5).contains("is a skill file"), "{}", result(5));
    assert!(!project_skills.join("nested").exists());
    // Asked once (the first save), as a protected write, "always" notwithstanding.
    let asked = approver.0.lock().unwrap();
    assert_eq!(asked.len(), 1);
    assert!(asked[0].protected.is_some());
    assert!(
        asked[0]
            .detail
            .as_deref()
            .unwrap()
            .contains("+++ scripts/log.sh")
    );
    // Found by discovery as the user's skills are: `skillet skills list` sees it.
    assert!(discover(&roots).get("release-notes").is_some());
}

#[tokio::test]
async fn save_skill_is_refused_where_nobody_can_approve_it() {
    let fixture = fixture();
    let server = MockServer::start();
    server.push_turn(Turn::tool(
        "s1",
        "save_skill",
        json!({"name": "x", "description": "Does x. Use for x.", "body": "b"}),
    ));
    server.push_turn(Turn::text("ok"));
    let mut config = config(&fixture, false);
    config.permissions = Permissions::Allow;
    let dir = fixture.cwd.join(".agents/skills");
    config.save_skills = Some(skillet_agent::tools::save_skill::SaveSkills {
        dir: dir.clone(),
        roots: vec![Root::new(&dir, RootKind::Project)],
    });
    let mut agent = Agent::new(anthropic(&server), &fixture.library, &config);
    turn(&mut agent, "save it").await.0.unwrap();
    let sent = server.requests()[1].body["messages"].to_string();
    assert!(sent.contains("refused"), "{sent}");
    assert!(!dir.join("x").exists());
}

#[tokio::test]
async fn a_forked_skill_runs_on_its_own_model_and_only_its_answer_comes_back() {
    let fixture = fixture();
    std::fs::create_dir_all(fixture.skills.join("survey")).unwrap();
    std::fs::write(
        fixture.skills.join("survey/SKILL.md"),
        "---\nname: survey\ndescription: Survey the code base\ncontext: fork\nmodel: haiku\n---\nSURVEY STEPS: list the modules of $ARGUMENTS.\n",
    )
    .unwrap();
    let library = Arc::new(discover(&[Root::new(&fixture.skills, RootKind::User)]));
    let server = MockServer::start();
    server.push_turn(
        Turn::tool(
            "l1",
            "load_skill",
            json!({"name": "survey", "arguments": "src"}),
        )
        .with_usage(MockUsage {
            input: 100,
            output: 10,
            ..MockUsage::default()
        }),
    );
    server.push_turn(Turn::text("THREE MODULES").with_usage(MockUsage {
        input: 7,
        output: 3,
        ..MockUsage::default()
    }));
    server.push_turn(Turn::text("done").with_usage(MockUsage {
        input: 120,
        output: 5,
        ..MockUsage::default()
    }));
    // The skill's `model` counts only in a trusted project (an untrusted skill could pick any).
    let mut config = config(&fixture, false);
    config.skill_trust = skillet_library::trust::SkillTrust::trusted(
        &skillet_library::trust::Unlocks::find(&fixture.cwd, &library, None),
    );
    let mut agent = Agent::new(anthropic(&server), &library, &config);
    turn(&mut agent, "survey src").await.0.unwrap();
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    // The subagent's request: its own model, a fresh history holding the skill as the task.
    assert_eq!(requests[1].body["model"], "claude-haiku-4-5");
    let task = requests[1].body["messages"].as_array().unwrap();
    assert_eq!(task.len(), 1, "{task:?}");
    assert!(
        task[0]
            .to_string()
            .contains("SURVEY STEPS: list the modules of src.")
    );
    // The main conversation: the session's model, only the answer as the result.
    assert_eq!(requests[2].body["model"], "claude-test");
    let result = requests[2].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .to_string();
    assert!(result.contains("THREE MODULES"), "{result}");
    assert!(!result.contains("SURVEY STEPS"), "{result}");
    // Its usage is the session's.
    assert_eq!(agent.usage().input_tokens, 227);
    assert_eq!(agent.usage().output_tokens, 18);
    // Untrusted, the skill still forks, on the session's model.
    server.push_turn(Turn::tool("l2", "load_skill", json!({"name": "survey"})));
    server.push_turn(Turn::text("MODULES AGAIN"));
    server.push_turn(Turn::text("done"));
    let mut untrusted = Agent::new(anthropic(&server), &library, &config_untrusted(&fixture));
    turn(&mut untrusted, "survey").await.0.unwrap();
    assert_eq!(server.requests()[4].body["model"], "claude-test");
    assert_eq!(server.rejections(), Vec::<String>::new());
}

fn config_untrusted(fixture: &Fixture) -> AgentConfig {
    config(fixture, false)
}

#[tokio::test]
async fn a_trusted_projects_forked_skill_runs_on_its_model() {
    let fixture = fixture();
    let skills = fixture.cwd.join(".agents/skills");
    std::fs::create_dir_all(skills.join("survey")).unwrap();
    std::fs::write(
        skills.join("survey/SKILL.md"),
        "---\nname: survey\ndescription: Survey the code base\ncontext: fork\nmodel: haiku\n---\nSURVEY STEPS.\n",
    )
    .unwrap();
    let library = Arc::new(discover(&[Root::new(&skills, RootKind::Project)]));
    let server = MockServer::start();
    server.push_turn(Turn::tool("l1", "load_skill", json!({"name": "survey"})));
    server.push_turn(Turn::text("SURVEYED"));
    server.push_turn(Turn::text("done"));
    let mut config = config(&fixture, false);
    config.skill_trust = skillet_library::trust::SkillTrust::trusted(
        &skillet_library::trust::Unlocks::find(&fixture.cwd, &library, None),
    );
    let mut agent = Agent::new(anthropic(&server), &library, &config);
    turn(&mut agent, "survey").await.0.unwrap();
    assert_eq!(server.requests()[1].body["model"], "claude-haiku-4-5");
    // Its model changed after trust: the pin no longer holds, the session's model is used.
    std::fs::write(
        skills.join("survey/SKILL.md"),
        "---\nname: survey\ndescription: Survey the code base\ncontext: fork\nmodel: opus\n---\nSURVEY STEPS.\n",
    )
    .unwrap();
    server.push_turn(Turn::tool("l2", "load_skill", json!({"name": "survey"})));
    server.push_turn(Turn::text("SURVEYED"));
    server.push_turn(Turn::text("done"));
    turn(&mut agent, "survey again").await.0.unwrap();
    assert_eq!(server.requests()[4].body["model"], "claude-test");
    assert_eq!(server.rejections(), Vec::<String>::new());
}
