//! Both providers, streaming and plain, against the scripted mock server over real HTTP.

#![allow(clippy::unwrap_used, clippy::panic, reason = "tests")]

use std::time::Duration;

use pretty_assertions::assert_eq;
use serde_json::json;
use skillet_llm::{
    Anthropic, ContentBlock, LlmError, Message, OpenAi, Provider, Request, StopReason, StreamEvent,
    ToolSpec, Transport, Usage,
};
use skillet_test_support::{MockServer, MockUsage, Reply, Turn};

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
        "sk-test",
        "claude-test",
    ))
}

fn openai(server: &MockServer) -> Provider {
    Provider::OpenAi(OpenAi::new(
        transport(),
        &format!("{}/v1", server.url()),
        Some("sk-openai"),
        "gpt-test",
    ))
}

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
async fn an_unreachable_server_is_a_connect_error_after_retries() {
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
            "cannot reach http://127.0.0.1:{port}/v1/chat/completions after 5 attempts"
        )),
        "{error}"
    );
    assert!(
        error.to_string().contains("hint: check the base URL"),
        "{error}"
    );
    assert_eq!(events.len(), 4);
}
