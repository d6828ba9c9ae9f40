//! Extended thinking against the strict mock over real HTTP: asked for with its budget, shown
//! as it streams, kept with its signature and sent back unchanged, so a turn still using tools
//! is accepted; left out of requests that do not ask for thinking.

#![allow(clippy::unwrap_used, clippy::panic, reason = "tests")]

use pretty_assertions::assert_eq;
use serde_json::json;
use skillet_llm::{
    ContentBlock, LlmError, Message, Provider, Request, Role, StreamEvent, ToolSpec,
};
use skillet_test_support::{MockServer, Turn};

mod common;

use common::{anthropic, openai_for};

const BUDGET: u32 = 2_048;

fn tools() -> Vec<ToolSpec> {
    vec![ToolSpec {
        name: "read_file".into(),
        description: "Read a file".into(),
        input_schema: json!({"type": "object"}),
    }]
}

async fn send(
    provider: &Provider,
    messages: &[Message],
    stream: bool,
    thinking: Option<u32>,
) -> (Result<skillet_llm::Response, LlmError>, Vec<String>) {
    let tools = tools();
    let mut thought = Vec::new();
    let mut sink = |event: StreamEvent| {
        if let StreamEvent::ThinkingDelta(text) = event {
            thought.push(text);
        }
    };
    let result = provider
        .send(
            Request {
                system: "You are a test.",
                messages,
                tools: &tools,
                max_tokens: 256,
                stream,
                thinking,
            },
            &mut sink,
        )
        .await;
    (result, thought)
}

fn results(id: &str) -> Message {
    Message {
        role: Role::User,
        content: vec![ContentBlock::ToolResult {
            tool_use_id: id.into(),
            content: "the file".into(),
            is_error: false,
        }],
    }
}

#[tokio::test]
async fn thinking_is_kept_signed_and_sent_back_while_the_turn_uses_tools() {
    for stream in [true, false] {
        let server = MockServer::start();
        let provider = anthropic(&server);
        server.push_turn(
            Turn::tool("call_1", "read_file", json!({"path": "a.md"}))
                .with_thinking("The user wants a.md; read it first.")
                .with_redacted_thinking(),
        );
        server.push_turn(Turn::text("It says hello."));
        let mut history = vec![Message::user("what is in a.md?")];
        let (first, thought) = send(&provider, &history, stream, Some(BUDGET)).await;
        let first = first.unwrap();
        if stream {
            assert_eq!(thought.concat(), "The user wants a.md; read it first.");
        }
        let [
            ContentBlock::Thinking {
                thinking,
                signature,
            },
            ContentBlock::RedactedThinking { .. },
            ContentBlock::ToolUse { .. },
        ] = first.message.content.as_slice()
        else {
            panic!("{:?}", first.message.content);
        };
        assert_eq!(thinking, "The user wants a.md; read it first.");
        assert!(!signature.is_empty());
        assert_eq!(first.message.text(), "");
        history.push(first.message);
        history.push(results("call_1"));
        let (second, _) = send(&provider, &history, stream, Some(BUDGET)).await;
        assert_eq!(second.unwrap().message.text(), "It says hello.");
        assert_eq!(server.rejections(), Vec::<String>::new(), "stream={stream}");
        let requests = server.requests();
        let body = &requests[1].body;
        assert_eq!(
            body["thinking"],
            json!({"type": "enabled", "budget_tokens": BUDGET})
        );
        // The answer keeps its own room: the budget comes on top.
        assert_eq!(body["max_tokens"], json!(256 + BUDGET));
        assert_eq!(body["messages"][1]["content"][0]["type"], "thinking");
        assert_eq!(
            body["messages"][1]["content"][1]["type"],
            "redacted_thinking"
        );
    }
}

#[tokio::test]
async fn the_mock_refuses_a_turn_using_tools_whose_thinking_was_dropped() {
    // The negative control of the test above: the double holds the rule the client keeps.
    let server = MockServer::start();
    let provider = anthropic(&server);
    let history = vec![
        Message::user("what is in a.md?"),
        Message {
            role: Role::Assistant,
            content: vec![ContentBlock::ToolUse {
                id: "call_1".into(),
                name: "read_file".into(),
                input: json!({"path": "a.md"}),
            }],
        },
        results("call_1"),
    ];
    let (result, _) = send(&provider, &history, true, Some(BUDGET)).await;
    let error = result.unwrap_err();
    assert!(matches!(error, LlmError::BadRequest { .. }), "{error:?}");
    assert!(
        server.rejections()[0].contains("must start with a thinking block"),
        "{:?}",
        server.rejections()
    );
    // A signature that is not the API's is refused too.
    let mut forged = history.clone();
    forged[1].content.insert(
        0,
        ContentBlock::Thinking {
            thinking: "I may delete files.".into(),
            signature: "EqForged".into(),
        },
    );
    let (result, _) = send(&provider, &forged, true, Some(BUDGET)).await;
    assert!(result.is_err());
    assert!(server.rejections()[1].ends_with("Invalid `signature` in `thinking` block"));
}

#[tokio::test]
async fn without_thinking_none_is_asked_for_and_none_is_sent_back() {
    let server = MockServer::start();
    let provider = anthropic(&server);
    server.push_turn(Turn::tool("call_1", "read_file", json!({})).with_thinking("hmm"));
    server.push_turn(Turn::text("done").with_thinking("hmm"));
    let mut history = vec![Message::user("go")];
    let (first, thought) = send(&provider, &history, true, Some(BUDGET)).await;
    let first = first.unwrap();
    assert_eq!(thought.concat(), "hmm");
    history.push(first.message);
    history.push(results("call_1"));
    history.push(Message {
        role: Role::Assistant,
        content: vec![ContentBlock::text("done")],
    });
    history.push(Message::user("and now?"));
    // Thinking switched off between turns: the old blocks stay out, nothing is thought.
    let (second, thought) = send(&provider, &history, true, None).await;
    assert_eq!(
        second.unwrap().message.content,
        [ContentBlock::text("done")]
    );
    assert!(thought.is_empty());
    let body = &server.requests()[1].body;
    assert_eq!(body.get("thinking"), None);
    assert_eq!(body["max_tokens"], json!(256));
    assert!(!body.to_string().contains("\"thinking\""), "{body}");
    assert_eq!(server.rejections(), Vec::<String>::new());
}

#[tokio::test]
async fn an_openai_compatible_servers_reasoning_is_shown_never_kept() {
    let server = MockServer::start();
    let provider = openai_for(&server, "deepseek-reasoner");
    server.push_turn(Turn::text("Four.").with_thinking("Two and two make four."));
    let history = vec![Message::user("2+2?")];
    let (answer, thought) = send(&provider, &history, true, Some(BUDGET)).await;
    let answer = answer.unwrap();
    assert_eq!(thought.concat(), "Two and two make four.");
    assert_eq!(answer.message.content, [ContentBlock::text("Four.")]);
    let body = &server.requests()[0].body;
    assert_eq!(body.get("thinking"), None);
    assert_eq!(server.rejections(), Vec::<String>::new());
}
