//! Both providers, streaming and plain, against the scripted mock server over real HTTP.

#![allow(clippy::unwrap_used, clippy::panic, reason = "tests")]

use std::time::Duration;

use pretty_assertions::assert_eq;
use serde_json::json;
use skillet_llm::{
    Anthropic, Awaiting, ContentBlock, LlmError, Message, OpenAi, Provider, Request, Role,
    StopReason, StreamEvent, ToolSpec, Transport, Usage,
};
use skillet_test_support::{MockServer, MockUsage, Reply, Turn};

mod common;

use common::{anthropic, openai, transport};

fn providers(server: &MockServer) -> [Provider; 2] {
    [anthropic(server), openai(server)]
}

fn tools() -> Vec<ToolSpec> {
    vec![ToolSpec {
        name: "load_skill".into(),
        description: "Load a skill".into(),
        input_schema: json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}),
    }]
}

async fn send(
    provider: &Provider,
    stream: bool,
    events: &mut Vec<StreamEvent>,
) -> Result<skillet_llm::Response, LlmError> {
    let messages = [Message::user("hello")];
    let tools = tools();
    let mut sink = |event: StreamEvent| events.push(event);
    provider
        .send(
            Request {
                system: "You are a test.",
                messages: &messages,
                tools: &tools,
                max_tokens: 256,
                stream,
                thinking: None,
            },
            &mut sink,
        )
        .await
}

#[tokio::test]
async fn text_and_tool_calls_in_every_dialect_and_mode() {
    let server = MockServer::start();
    for provider in providers(&server) {
        for stream in [true, false] {
            let usage = MockUsage {
                input: 12,
                output: 7,
                cache_read: 30,
                cache_write: 0,
            };
            server.push_turn(Turn::text("Hello there").with_usage(usage));
            server.push_turn(
                Turn::tool("call_1", "load_skill", json!({"name": "pdf"})).with_text("Loading."),
            );
            let mut events = Vec::new();
            let response = send(&provider, stream, &mut events).await.unwrap();
            assert_eq!(response.message.text(), "Hello there");
            assert_eq!(response.stop_reason, StopReason::EndTurn);
            assert_eq!(
                response.usage,
                Usage {
                    input_tokens: 12,
                    output_tokens: 7,
                    cache_write_tokens: 0,
                    cache_read_tokens: 30
                },
                "{provider:?} stream={stream}"
            );
            if stream {
                let streamed: String = events
                    .iter()
                    .filter_map(|e| match e {
                        StreamEvent::TextDelta(t) => Some(t.as_str()),
                        _ => None,
                    })
                    .collect();
                assert_eq!(streamed, "Hello there");
            }
            let response = send(&provider, stream, &mut events).await.unwrap();
            assert_eq!(response.stop_reason, StopReason::ToolUse);
            assert_eq!(
                response.message.content,
                [
                    ContentBlock::text("Loading."),
                    ContentBlock::ToolUse {
                        id: "call_1".into(),
                        name: "load_skill".into(),
                        input: json!({"name": "pdf"})
                    }
                ]
            );
        }
    }
    let requests = server.requests();
    assert_eq!(requests.len(), 8);
    let anthropic_request = &requests[0];
    assert_eq!(anthropic_request.path, "/v1/messages");
    assert_eq!(anthropic_request.header("x-api-key"), Some("sk-test"));
    assert_eq!(
        anthropic_request.header("anthropic-version"),
        Some("2023-06-01")
    );
    assert_eq!(anthropic_request.body["stream"], true);
    assert_eq!(
        anthropic_request.body["system"][0]["text"],
        "You are a test."
    );
    let openai_request = &requests[4];
    assert_eq!(openai_request.path, "/v1/chat/completions");
    assert_eq!(
        openai_request.header("authorization"),
        Some("Bearer sk-openai")
    );
    assert_eq!(
        openai_request.body["messages"][0],
        json!({"role": "system", "content": "You are a test."})
    );
    assert_eq!(
        openai_request.body["tools"][0]["function"]["name"],
        "load_skill"
    );
}

#[tokio::test]
async fn retries_overloaded_then_succeeds_and_honours_retry_after() {
    let server = MockServer::start();
    for provider in providers(&server) {
        server.push(Reply::error(529, "Overloaded"));
        server.push(Reply::Status {
            status: 429,
            body: json!({"error": {"message": "slow down"}}).to_string(),
            retry_after: Some(0),
        });
        server.push_turn(Turn::text("finally"));
        let mut events = Vec::new();
        let response = send(&provider, true, &mut events).await.unwrap();
        assert_eq!(response.message.text(), "finally");
        let retries: Vec<_> = events
            .iter()
            .filter_map(|e| match e {
                StreamEvent::Retrying {
                    attempt,
                    delay_ms,
                    reason,
                } => Some((*attempt, *delay_ms, reason.clone())),
                _ => None,
            })
            .collect();
        assert_eq!(retries.len(), 2);
        assert_eq!(retries[0].0, 2);
        assert!(retries[0].2.contains("529"), "{retries:?}");
        assert_eq!(
            (retries[1].0, retries[1].1),
            (3, 0),
            "retry-after: 0 is honoured"
        );
    }
}

#[tokio::test]
async fn retries_give_up_with_the_last_status() {
    let server = MockServer::start();
    let provider = anthropic(&server);
    for _ in 0..5 {
        server.push(Reply::error(503, "unavailable"));
    }
    let error = send(&provider, false, &mut Vec::new()).await.unwrap_err();
    assert_eq!(
        error.to_string(),
        "Anthropic answered HTTP 503 after 5 attempts: unavailable"
    );
}

#[tokio::test]
async fn auth_not_found_and_bad_request_errors_say_what_to_do() {
    let server = MockServer::start();
    server.push(Reply::error(401, "invalid x-api-key"));
    let error = send(&anthropic(&server), true, &mut Vec::new())
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "Anthropic refused the API key (HTTP 401): invalid x-api-key\nhint: check ANTHROPIC_API_KEY"
    );
    server.push(Reply::error(401, "Incorrect API key"));
    let error = send(&openai(&server), true, &mut Vec::new())
        .await
        .unwrap_err();
    assert!(
        error.to_string().ends_with("hint: check OPENAI_API_KEY"),
        "{error}"
    );
    server.push(Reply::error(404, "model 'gpt-test' not found"));
    let error = send(&openai(&server), false, &mut Vec::new())
        .await
        .unwrap_err();
    assert!(
        error.to_string().contains("--model, now 'gpt-test'"),
        "{error}"
    );
    assert!(
        error.to_string().contains("/v1/chat/completions"),
        "{error}"
    );
    server.push(Reply::error(400, "max_tokens: must be at most 8192"));
    let error = send(&anthropic(&server), false, &mut Vec::new())
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "Anthropic rejected the request (HTTP 400): max_tokens: must be at most 8192"
    );
    assert_eq!(server.requests().len(), 4, "client errors are not retried");
}

#[tokio::test]
async fn a_stream_cut_in_the_middle_is_a_clear_error() {
    let server = MockServer::start();
    for provider in providers(&server) {
        server.push(Reply::CutStream(
            Turn::text("partial answer that never ends"),
            3,
        ));
        let mut events = Vec::new();
        let error = send(&provider, true, &mut events).await.unwrap_err();
        assert!(matches!(error, LlmError::StreamCut { .. }), "{error:?}");
        assert!(
            error.to_string().contains("cut off before it finished"),
            "{error}"
        );
    }
}

#[tokio::test]
async fn an_unreachable_server_is_a_connect_error_after_one_retry() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let provider = Provider::OpenAi(OpenAi::new(
        transport(),
        &format!("http://127.0.0.1:{port}/v1"),
        None,
        "m",
    ));
    let mut events = Vec::new();
    let error = send(&provider, true, &mut events).await.unwrap_err();
    assert!(
        error.to_string().starts_with(&format!(
            "cannot reach http://127.0.0.1:{port}/v1/chat/completions after 2 attempts: Connection refused"
        )),
        "{error}"
    );
    assert!(
        error.to_string().contains("hint: check the base URL"),
        "{error}"
    );
    // Refused is refused: tried once more (MAX_CONNECT_RETRIES), not through every backoff.
    assert_eq!(events.len(), 1);
}

fn retries(events: &[StreamEvent]) -> Vec<(u32, u64, String)> {
    events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::Retrying {
                attempt,
                delay_ms,
                reason,
            } => Some((*attempt, *delay_ms, reason.clone())),
            _ => None,
        })
        .collect()
}

fn with_transport(server: &MockServer, transport: Transport) -> [Provider; 2] {
    [
        Provider::Anthropic(Anthropic::new(
            transport.clone(),
            &server.url(),
            "sk-test",
            "claude-test",
        )),
        Provider::OpenAi(OpenAi::new(
            transport,
            &format!("{}/v1", server.url()),
            Some("sk-openai"),
            "gpt-test",
        )),
    ]
}

#[tokio::test]
async fn unreadable_retry_after_values_fall_back_to_backoff() {
    let server = MockServer::start();
    for provider in providers(&server) {
        for value in [
            "inf",
            "NaN",
            "-1",
            "-0.5",
            "soon",
            "Sun, 06 Nov 1994 08:49:37 GMT",
        ] {
            server.push(Reply::retry_after(429, value));
            server.push_turn(Turn::text("ok"));
            let mut events = Vec::new();
            let response = send(&provider, true, &mut events).await.unwrap();
            assert_eq!(response.message.text(), "ok");
            let retries = retries(&events);
            assert_eq!(retries.len(), 1, "{value}: {retries:?}");
            assert!(retries[0].1 <= 10, "{value}: waited {} ms", retries[0].1);
        }
    }
    assert_eq!(server.rejections(), Vec::<String>::new());
}

#[tokio::test]
async fn a_retry_after_beyond_the_limit_fails_at_once_saying_so() {
    let server = MockServer::start();
    for value in ["1e308", "86400000", "Fri, 31 Dec 9999 23:59:59 GMT", "3600"] {
        server.push(Reply::retry_after(429, value));
        let error = send(&anthropic(&server), false, &mut Vec::new())
            .await
            .unwrap_err();
        assert!(
            matches!(error, LlmError::Http { status: 429, .. }),
            "{error:?}"
        );
        let expected = if value == "3600" { "1 h" } else { "24 h" };
        assert!(
            error.to_string().ends_with(&format!(
                "(it asked to wait {expected} before retrying; skillet waits at most 2 min)"
            )),
            "{value}: {error}"
        );
    }
    assert_eq!(
        server.requests().len(),
        4,
        "no retry when asked to wait too long"
    );
}

#[tokio::test]
async fn an_overload_reported_in_the_stream_before_content_is_retried() {
    let server = MockServer::start();
    for provider in providers(&server) {
        server.push(Reply::overloaded());
        server.push_turn(Turn::text("after the overload"));
        let mut events = Vec::new();
        let response = send(&provider, true, &mut events).await.unwrap();
        assert_eq!(response.message.text(), "after the overload");
        let retries = retries(&events);
        assert_eq!(retries.len(), 1, "{retries:?}");
        assert_eq!(retries[0].0, 2);
        assert_eq!(retries[0].2, "overloaded_error: Overloaded");
    }
    assert_eq!(server.requests().len(), 4);
}

#[tokio::test]
async fn http_and_in_stream_retries_share_one_budget() {
    let server = MockServer::start();
    for _ in 0..3 {
        server.push(Reply::error(529, "Overloaded"));
    }
    server.push(Reply::overloaded());
    server.push(Reply::overloaded());
    server.push_turn(Turn::text("never reached"));
    let mut events = Vec::new();
    let error = send(&anthropic(&server), true, &mut events)
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "Anthropic reported an error (overloaded_error): Overloaded"
    );
    assert_eq!(retries(&events).len(), 4, "max_retries is 4 in all");
    assert_eq!(server.requests().len(), 5);
    assert_eq!(server.pending(), 1);
}

#[tokio::test]
async fn an_error_in_the_stream_after_content_is_not_retried() {
    let server = MockServer::start();
    // Anthropic: message_start, ping, content_block_start, the first text delta; OpenAI: the
    // role chunk, the first text chunk.
    for (provider, after) in providers(&server).into_iter().zip([4, 2]) {
        server.push(Reply::StreamError {
            turn: Turn::text("shown already"),
            after,
            kind: "overloaded_error".into(),
            message: "Overloaded".into(),
        });
        let mut events = Vec::new();
        let error = send(&provider, true, &mut events).await.unwrap_err();
        assert!(matches!(error, LlmError::Provider { .. }), "{error:?}");
        assert!(matches!(events[0], StreamEvent::TextDelta(_)), "{events:?}");
        assert!(retries(&events).is_empty());
    }
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn an_error_body_that_never_finishes_times_out() {
    let server = MockServer::start();
    let mut transport = transport();
    transport.body_timeout = Duration::from_millis(200);
    for provider in with_transport(&server, transport) {
        server.push(Reply::StalledStatus(400));
        let started = std::time::Instant::now();
        let error = send(&provider, false, &mut Vec::new()).await.unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(5));
        assert!(matches!(error, LlmError::BadRequest { .. }), "{error:?}");
        assert!(
            error
                .to_string()
                .ends_with("(HTTP 400): (the error body did not arrive within 200 ms)"),
            "{error}"
        );
    }
}

#[tokio::test]
async fn a_stream_that_stalls_hits_the_idle_timeout() {
    let server = MockServer::start();
    let mut transport = transport();
    transport.idle_timeout = Duration::from_millis(300);
    for provider in with_transport(&server, transport) {
        server.push(Reply::Stall(Turn::text("partial answer"), 3));
        let mut events = Vec::new();
        let error = send(&provider, true, &mut events).await.unwrap_err();
        assert!(
            matches!(
                error,
                LlmError::Timeout {
                    awaiting: Awaiting::NextEvent,
                    ..
                }
            ),
            "{error:?}"
        );
        assert!(
            error
                .to_string()
                .contains("went silent for 300 ms in the middle of its answer; gave up"),
            "{error}"
        );
        server.push(Reply::Silent);
        let error = send(&provider, true, &mut events).await.unwrap_err();
        assert!(
            error
                .to_string()
                .contains("sent nothing for 300 ms after the request"),
            "{error}"
        );
    }
}

#[tokio::test]
async fn a_plain_request_has_its_own_timeout_for_the_whole_answer() {
    let server = MockServer::start();
    let mut transport = transport();
    transport.idle_timeout = Duration::from_millis(100);
    transport.request_timeout = Duration::from_millis(400);
    for provider in with_transport(&server, transport) {
        // Longer than the idle timeout, within the request timeout: fine.
        server.push(Reply::Delayed(
            Duration::from_millis(200),
            Box::new(Reply::Turn(Turn::text("slow but whole"))),
        ));
        let response = send(&provider, false, &mut Vec::new()).await.unwrap();
        assert_eq!(response.message.text(), "slow but whole");
        for reply in [Reply::Silent, Reply::Stall(Turn::text("half of it"), 0)] {
            server.push(reply);
            let error = send(&provider, false, &mut Vec::new()).await.unwrap_err();
            assert!(
                matches!(
                    error,
                    LlmError::Timeout {
                        awaiting: Awaiting::WholeAnswer,
                        ..
                    }
                ),
                "{error:?}"
            );
            assert!(
                error
                    .to_string()
                    .contains("did not finish its answer within 400 ms; gave up\nhint:"),
                "{error}"
            );
        }
    }
}

#[tokio::test]
async fn cut_tool_arguments_are_reported_not_fatal() {
    let server = MockServer::start();
    for provider in providers(&server) {
        for stream in [true, false] {
            server.push_turn(
                Turn::cut_tool("call_cut", "load_skill", r#"{"name": "pd"#).with_text("Loading."),
            );
            let response = send(&provider, stream, &mut Vec::new()).await.unwrap();
            let label = format!("{provider:?} stream={stream}");
            assert_eq!(response.stop_reason, StopReason::MaxTokens, "{label}");
            assert_eq!(
                response.message.content,
                [
                    ContentBlock::text("Loading."),
                    ContentBlock::ToolUse {
                        id: "call_cut".into(),
                        name: "load_skill".into(),
                        input: json!({})
                    }
                ],
                "{label}"
            );
            let [malformed] = response.malformed_calls.as_slice() else {
                panic!("{label}: {:?}", response.malformed_calls);
            };
            assert_eq!(
                (malformed.id.as_str(), malformed.name.as_str()),
                ("call_cut", "load_skill")
            );
            assert!(
                malformed.error.starts_with("the arguments are ")
                    && malformed
                        .error
                        .ends_with("; they were probably cut off by the output limit"),
                "{label}: {}",
                malformed.error
            );
            // The kept call, answered with an error, is a history the real API accepts.
            server.push_turn(Turn::text("I will retry with less."));
            let history = [
                Message::user("hello"),
                response.message.clone(),
                Message {
                    role: Role::User,
                    content: vec![ContentBlock::ToolResult {
                        tool_use_id: "call_cut".into(),
                        content: format!("error: {}", malformed.error),
                        is_error: true,
                    }],
                },
            ];
            let answer = send_history(&provider, &history).await.unwrap();
            assert_eq!(answer.message.text(), "I will retry with less.");
        }
    }
    assert_eq!(server.rejections(), Vec::<String>::new());
}

async fn send_history(
    provider: &Provider,
    messages: &[Message],
) -> Result<skillet_llm::Response, LlmError> {
    let tools = tools();
    provider
        .send(
            Request {
                system: "You are a test.",
                messages,
                tools: &tools,
                max_tokens: 256,
                stream: true,
                thinking: None,
            },
            &mut |_| {},
        )
        .await
}

#[tokio::test]
async fn empty_text_blocks_never_reach_the_message() {
    let server = MockServer::start();
    for provider in providers(&server) {
        for stream in [true, false] {
            server.push_turn(
                Turn::tool("call_1", "load_skill", json!({"name": "pdf"})).with_text(""),
            );
            let response = send(&provider, stream, &mut Vec::new()).await.unwrap();
            assert_eq!(
                response.message.content,
                [ContentBlock::ToolUse {
                    id: "call_1".into(),
                    name: "load_skill".into(),
                    input: json!({"name": "pdf"})
                }],
                "{provider:?} stream={stream}"
            );
            assert!(response.malformed_calls.is_empty());
        }
    }
}

#[tokio::test]
async fn an_anthropic_call_without_an_id_is_a_protocol_error() {
    let server = MockServer::start();
    for stream in [true, false] {
        server.push_turn(Turn::tool("", "load_skill", json!({"name": "pdf"})));
        let error = send(&anthropic(&server), stream, &mut Vec::new())
            .await
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            "unexpected answer from Anthropic: a call of tool 'load_skill' came without an id"
        );
    }
}

#[tokio::test]
async fn reasoning_models_get_max_completion_tokens() {
    let server = MockServer::start();
    for (model, field, absent) in [
        ("o3-mini", "max_completion_tokens", "max_tokens"),
        ("gpt-5.1", "max_completion_tokens", "max_tokens"),
        ("llama3.2", "max_tokens", "max_completion_tokens"),
    ] {
        let provider = Provider::OpenAi(OpenAi::new(
            transport(),
            &format!("{}/v1", server.url()),
            None,
            model,
        ));
        server.push_turn(Turn::text("ok"));
        let response = send(&provider, true, &mut Vec::new()).await.unwrap();
        assert_eq!(response.message.text(), "ok");
        let request = server.requests().pop().unwrap();
        assert_eq!(request.body[field], 256, "{model}");
        assert_eq!(request.body.get(absent), None, "{model}");
    }
    assert_eq!(server.rejections(), Vec::<String>::new());
}

/// A history whose tool call is never answered.
fn unanswered_history() -> Vec<Message> {
    vec![
        Message::user("hello"),
        Message {
            role: Role::Assistant,
            content: vec![ContentBlock::ToolUse {
                id: "toolu_1".into(),
                name: "load_skill".into(),
                input: json!({"name": "pdf"}),
            }],
        },
        Message::user("and now?"),
    ]
}

#[tokio::test]
async fn the_mock_refuses_an_invalid_history_as_the_real_api_does() {
    let server = MockServer::start();
    server.push_turn(Turn::text("not for a refused request"));
    // Sent straight to the wire, past Provider::send's check.
    let body = json!({
        "model": "claude-test",
        "max_tokens": 100,
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "hello"}]},
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "toolu_1", "name": "load_skill", "input": {"name": "pdf"}}
            ]},
            {"role": "user", "content": [{"type": "text", "text": "and now?"}]},
        ],
    });
    let response = reqwest::Client::new()
        .post(format!("{}/v1/messages", server.url()))
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 400);
    let body: serde_json::Value = response.json().await.unwrap();
    let expected = "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_1. Each `tool_use` block must have a corresponding `tool_result` block in the next message.";
    assert_eq!(
        body,
        json!({"type": "error", "error": {"type": "invalid_request_error", "message": expected}})
    );
    assert_eq!(server.rejections(), [expected]);
    assert_eq!(server.pending(), 1, "a refused request takes no reply");
}

#[tokio::test]
async fn provider_send_refuses_an_invalid_history_before_sending() {
    let server = MockServer::start();
    for provider in providers(&server) {
        let error = send_history(&provider, &unanswered_history())
            .await
            .unwrap_err();
        assert!(
            matches!(error, LlmError::InvalidHistory { .. }),
            "{error:?}"
        );
        assert_eq!(
            error.to_string(),
            "skillet bug: the conversation history is invalid, so it was not sent: message 1: tool call 'toolu_1' has no result in the next message\nhint: please report this bug"
        );
    }
    assert_eq!(server.requests().len(), 0);
}

#[tokio::test]
async fn a_stream_that_never_ends_is_cut_at_the_stream_timeout() {
    let server = MockServer::start();
    let mut transport = transport();
    transport.stream_timeout = Duration::from_millis(400);
    for provider in with_transport(&server, transport) {
        server.push(Reply::Endless(Turn::text("never done")));
        let error = send(&provider, true, &mut Vec::new()).await.unwrap_err();
        assert!(
            error
                .to_string()
                .contains("the answer went on for over 400 ms; gave up"),
            "{error}"
        );
    }
}

#[tokio::test]
async fn a_huge_event_is_read_within_the_byte_cap_or_refused_past_it() {
    let server = MockServer::start();
    // 10 MB in one answer passes under the default cap.
    for provider in with_transport(&server, transport()) {
        server.push(Reply::HugeEvent(10 * 1024 * 1024));
        let response = send(&provider, true, &mut Vec::new()).await.unwrap();
        assert_eq!(response.message.text().len(), 10 * 1024 * 1024);
    }
    let mut small = transport();
    small.max_answer_bytes = 1024 * 1024;
    for provider in with_transport(&server, small) {
        server.push(Reply::HugeEvent(10 * 1024 * 1024));
        let error = send(&provider, true, &mut Vec::new()).await.unwrap_err();
        assert!(
            error.to_string().contains("passed 1048576 bytes"),
            "{error}"
        );
        server.push_turn(Turn::text(&"y".repeat(2 * 1024 * 1024)));
        let error = send(&provider, false, &mut Vec::new()).await.unwrap_err();
        assert!(
            error.to_string().contains("passed 1048576 bytes"),
            "{error}"
        );
    }
}
