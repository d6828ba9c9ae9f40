//! Harness overhead per turn: one agent turn (one model request) against the same request
//! sent straight through the provider, both to the mock server on loopback with a history of
//! 40 messages. The difference is what the agent adds beyond the HTTP round trip.

#![allow(clippy::unwrap_used, reason = "benchmark setup")]

use std::sync::Arc;

use skillet_agent::transcript::SessionHeader;
use skillet_agent::{Agent, AgentConfig};
use skillet_llm::{Anthropic, Message, Provider, Request, Transport};
use skillet_skills::Library;
use skillet_test_support::{MockServer, Reply, Turn};

const HISTORY: usize = 40;

fn main() {
    divan::main();
}

struct Setup {
    server: MockServer,
    runtime: tokio::runtime::Runtime,
    library: Arc<Library>,
    history: Vec<Message>,
    cwd: std::path::PathBuf,
}

fn setup() -> Setup {
    let server = MockServer::start();
    server.answer_always(Reply::Turn(Turn::text("ok")));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let history = (0..HISTORY)
        .map(|index| {
            let mut message = Message::user(format!("message {index}: {}", "words ".repeat(40)));
            if index % 2 == 1 {
                message.role = skillet_llm::Role::Assistant;
            }
            message
        })
        .collect();
    Setup {
        server,
        runtime,
        library: Arc::new(Library::default()),
        history,
        cwd: std::env::temp_dir(),
    }
}

fn provider(setup: &Setup) -> Provider {
    Provider::Anthropic(Anthropic::new(
        Transport::new().unwrap(),
        &setup.server.url(),
        "k",
        "claude-bench",
    ))
}

#[divan::bench(sample_count = 200)]
fn provider_round_trip(bencher: divan::Bencher) {
    let setup = setup();
    let provider = provider(&setup);
    let mut messages = setup.history.clone();
    messages.push(Message::user("hi"));
    let system = "You are a benchmark.";
    bencher.bench_local(|| {
        setup.runtime.block_on(async {
            let request = Request {
                system,
                messages: &messages,
                tools: &[],
                max_tokens: 100,
                stream: false,
                thinking: None,
            };
            provider.send(request, &mut |_| {}).await.unwrap()
        })
    });
}

#[divan::bench(sample_count = 200)]
fn agent_turn(bencher: divan::Bencher) {
    let setup = setup();
    let config = AgentConfig {
        stream: false,
        max_tokens: 100,
        ..AgentConfig::new(setup.cwd.clone())
    };
    // One client for every agent, as in the other bench, so both reuse its setup.
    let shared = provider(&setup);
    bencher
        .with_inputs(|| {
            let fresh = Agent::new(shared.clone(), &setup.library, &config);
            let header = SessionHeader {
                system: "You are a benchmark.".into(),
                tools: vec![],
                ..fresh.header().clone()
            };
            Agent::resume(
                shared.clone(),
                &setup.library,
                &config,
                header,
                &setup.history,
            )
        })
        .bench_local_values(|mut agent| {
            setup
                .runtime
                .block_on(agent.run_turn("hi", &mut |_| {}))
                .unwrap();
            agent
        });
}
