//! What the agent's integration tests share: a client that retries fast, and both dialects
//! against one strict mock server.

#![allow(
    dead_code,
    clippy::unwrap_used,
    reason = "each test file uses a part; test helpers"
)]

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use skillet_skills::{Library, Root, RootKind, discover};

use skillet_llm::{Anthropic, OpenAi, Provider, Transport};
use skillet_test_support::MockServer;

/// A client whose retries wait milliseconds, not seconds.
pub fn transport() -> Transport {
    let mut transport = Transport::new().unwrap();
    transport.retry.base_delay = Duration::from_millis(1);
    transport.retry.max_delay = Duration::from_millis(5);
    transport
}

/// Both dialects, against one server.
pub fn providers(server: &MockServer) -> [Provider; 2] {
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

/// Every request was accepted by the strict mock.
pub fn all_accepted(server: &MockServer) {
    assert_eq!(server.rejections(), Vec::<String>::new());
}

/// A project with `notes.txt` ("alpha"), an empty user skills folder, and a sessions folder.
pub struct Fixture {
    _temp: tempfile::TempDir,
    /// The project (real path).
    pub cwd: PathBuf,
    /// Where transcripts go.
    pub sessions: PathBuf,
    /// The skills found (none).
    pub library: Arc<Library>,
}

/// A fresh [`Fixture`].
pub fn fixture() -> Fixture {
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
