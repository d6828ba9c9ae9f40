//! A long session: 200 turns on the mock provider (on loopback), each a `read_file` call and an
//! answer, with a transcript written as in `chat`. The mock reports usage growing with the
//! history, so the session fills 80% of the model's context window and compacts itself once,
//! between turns. Printed: the time per turn (agent, transcript, HTTP to the mock) before and
//! after the compaction, the history's size, and the process's peak memory (the mock server
//! runs in the same process and is counted too).
//!
//! `cargo bench -p skillet-agent --bench long_session`

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::cast_precision_loss,
    clippy::too_many_lines,
    reason = "a measurement printed for a person, in one readable script"
)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use skillet_agent::compact::estimate_tokens;
use skillet_agent::transcript::Transcript;
use skillet_agent::{Agent, AgentConfig, AgentEvent};
use skillet_llm::{Anthropic, Provider, Transport};
use skillet_skills::{Root, RootKind, discover};
use skillet_test_support::{MockServer, MockUsage, Turn};

/// Turns in the session.
const TURNS: usize = 200;
/// Tokens the mock says each turn adds to the context (so turn 160 reaches 80% of 200,000).
const TOKENS_PER_TURN: u64 = 1_000;

fn main() {
    let temp = tempfile::tempdir().unwrap();
    let root = temp.path().canonicalize().unwrap();
    let cwd = root.join("project");
    std::fs::create_dir_all(cwd.join("skills/notes")).unwrap();
    std::fs::write(cwd.join("notes.txt"), "a line of notes\n".repeat(250)).unwrap();
    std::fs::write(
        cwd.join("skills/notes/SKILL.md"),
        "---\nname: notes\ndescription: Read the notes\n---\nRead notes.txt, then answer.\n",
    )
    .unwrap();
    let library = Arc::new(discover(&[Root::new(cwd.join("skills"), RootKind::User)]));
    let server = MockServer::start();
    // The mock keeps no request: the memory measured is the session's (and the mock's parsing).
    server.stop_recording();
    let provider = Provider::Anthropic(Anthropic::new(
        Transport::new().unwrap(),
        &server.url(),
        "k",
        "claude-bench",
    ));
    let mut config = AgentConfig::new(cwd.clone());
    config.stream = false;
    let mut agent = Agent::new(provider, &library, &config);
    agent
        .attach_transcript(Transcript::create(&root.join("sessions"), agent.header()).unwrap())
        .unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut times = Vec::with_capacity(TURNS);
    let mut compacted_at = None;
    let mut since = 0_u64;
    let mut peak_history = (0, 0);
    for turn in 1..=TURNS {
        since += 1;
        // The summary request comes first when the last turn filled the window.
        if since * TOKENS_PER_TURN >= 160_000 + TOKENS_PER_TURN {
            server.push_turn(Turn::text("SUMMARY: the notes were read, turn after turn."));
            since = 1;
        }
        if turn == 1 {
            server.push_turn(Turn::tool("l", "load_skill", json!({"name": "notes"})));
        }
        server.push_turn(Turn::tool(
            &format!("r{turn}"),
            "read_file",
            json!({"path": "notes.txt"}),
        ));
        server.push_turn(
            Turn::text(&format!(
                "Turn {turn}: {}",
                "the notes say the same ".repeat(20)
            ))
            .with_usage(MockUsage {
                input: since * TOKENS_PER_TURN,
                output: 50,
                ..MockUsage::default()
            }),
        );
        let started = Instant::now();
        let mut compacted = false;
        runtime
            .block_on(agent.run_turn(
                &format!(
                    "turn {turn}: what do the notes say? {}",
                    "please ".repeat(30)
                ),
                &mut |event| {
                    if let AgentEvent::Notice(text) = &event
                        && text.contains("compacted")
                    {
                        compacted = true;
                    }
                },
            ))
            .unwrap();
        times.push(started.elapsed());
        if compacted {
            compacted_at = Some(turn);
        }
        let history = agent.history();
        if history.len() > peak_history.0 {
            peak_history = (history.len(), estimate_tokens(history));
        }
    }
    assert_eq!(server.rejections(), Vec::<String>::new());
    let compacted_at = compacted_at.expect("the session compacted itself");
    let mean = |range: std::ops::Range<usize>| {
        let slice = &times[range.start - 1..range.end - 1];
        slice.iter().sum::<Duration>() / u32::try_from(slice.len()).unwrap()
    };
    println!("{TURNS} turns; compacted before turn {compacted_at}");
    println!(
        "largest history: {} messages, about {} tokens; after the last turn: {} messages",
        peak_history.0,
        peak_history.1,
        agent.history().len()
    );
    println!("per turn, turns 2-21:        {:?}", mean(2..22));
    println!(
        "per turn, the 20 before it:  {:?}",
        mean(compacted_at - 20..compacted_at)
    );
    println!("the compacting turn:         {:?}", times[compacted_at - 1]);
    println!(
        "per turn, the 20 after it:   {:?}",
        mean(compacted_at + 1..(compacted_at + 21).min(TURNS + 1))
    );
    println!("peak memory (VmHWM):         {}", peak_memory());
}

/// The process's peak resident memory, as Linux reports it.
fn peak_memory() -> String {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find(|line| line.starts_with("VmHWM:"))
                .map(|line| line["VmHWM:".len()..].trim().to_string())
        })
        .unwrap_or_else(|| "unknown (no /proc/self/status)".to_string())
}
