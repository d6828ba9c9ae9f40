//! `skillet` in a real terminal, for the tests: tmux runs the binary against the scripted mock
//! model server; a test types with `send-keys` and reads the screen with `capture-pane`, as a
//! user would see it. Each terminal has its own tmux server (its socket in the test's temp
//! folder), killed when dropped. Without tmux the tests skip, saying so (`apt-get install tmux`;
//! `.ci/run` installs it and sets `SKILLET_REQUIRE_TMUX`).
//!
//! `SKILLET_TERMINAL_BIN` runs another build of skillet (an older one, for a "before" screen).

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use skillet_test_support::MockServer;

use super::{API_KEY, Sandbox, write_skill};

/// How long a test waits for the screen (or the mock server) to show what it expects.
pub const WAIT: Duration = Duration::from_secs(10);
/// How often the screen is read while waiting.
pub const POLL: Duration = Duration::from_millis(50);
/// The terminal's size.
pub const COLUMNS: u16 = 120;
pub const ROWS: u16 = 40;
/// The tmux session's name.
pub const SESSION: &str = "skillet";
/// What the pane shows once skillet has exited.
pub const EXITED: &str = "[skillet exited";
/// Numbers each tmux server's socket.
static SERVERS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

pub fn tmux_missing() -> bool {
    let missing = !Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|output| output.status.success());
    if missing {
        // CI installs tmux and says so: there the tests must run, not skip.
        assert!(
            std::env::var_os("SKILLET_REQUIRE_TMUX").is_none(),
            "SKILLET_REQUIRE_TMUX is set but tmux cannot be run"
        );
        skillet_test_support::skip(
            "SKIPPED: terminal tests: tmux is not installed (apt-get install tmux)",
        );
    }
    missing
}

/// A project with skills, and a home, in a temp folder.
pub fn sandbox() -> Sandbox {
    let sandbox = Sandbox::empty();
    for (name, description) in [
        ("pdf", "Fill PDF forms"),
        ("review", "Review a change for bugs"),
        ("deploy", "Deploy the service"),
    ] {
        write_skill(
            &sandbox.project.join(".agents/skills"),
            name,
            &format!("---\nname: {name}\ndescription: {description}\n---\nThe {name} steps.\n"),
        );
    }
    std::fs::write(sandbox.project.join("notes.txt"), "one\n").unwrap();
    sandbox
}

/// `'text'` for `sh`.
pub fn quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// skillet running in a detached tmux session of its own tmux server; the server is killed
/// when this is dropped.
pub struct Terminal {
    socket: PathBuf,
}

impl Terminal {
    /// Starts `skillet ARGS` in the sandbox's project, with a clean environment pointing at
    /// the mock server.
    pub fn start(sandbox: &Sandbox, server: &MockServer, args: &[&str]) -> Self {
        Self::start_sized(sandbox, server, args, COLUMNS)
    }

    /// [`Terminal::start`] in a terminal `columns` wide.
    pub fn start_sized(
        sandbox: &Sandbox,
        server: &MockServer,
        args: &[&str],
        columns: u16,
    ) -> Self {
        let binary = std::env::var_os("SKILLET_TERMINAL_BIN").map_or_else(
            || PathBuf::from(env!("CARGO_BIN_EXE_skillet")),
            PathBuf::from,
        );
        let mut command = format!("cd {} && env -i", quote(&sandbox.project.to_string_lossy()));
        let mut environment = super::environment(sandbox, Some((server, API_KEY)));
        environment.extend([("TERM", "screen".into()), ("LANG", "C.UTF-8".into())]);
        for (key, value) in environment {
            let _ = write!(command, " {key}={}", quote(&value.to_string_lossy()));
        }
        command.push(' ');
        command.push_str(&quote(&binary.to_string_lossy()));
        for arg in args {
            command.push(' ');
            command.push_str(&quote(arg));
        }
        // Keep the pane once skillet exits, showing how it ended.
        let _ = write!(command, "; echo \"{EXITED} $?]\"; sleep 600");
        let terminal = Self {
            socket: sandbox.temp.path().join(format!(
                "tmux-{}.sock",
                SERVERS.fetch_add(1, std::sync::atomic::Ordering::SeqCst)
            )),
        };
        let (columns, rows) = (columns.to_string(), ROWS.to_string());
        terminal.tmux(&[
            "new-session",
            "-d",
            "-s",
            SESSION,
            "-x",
            &columns,
            "-y",
            &rows,
            &command,
        ]);
        terminal
    }

    pub fn tmux(&self, args: &[&str]) -> Output {
        let output = Command::new("tmux")
            .arg("-u")
            .arg("-S")
            .arg(&self.socket)
            .args(["-f", "/dev/null"])
            .args(args)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "tmux {args:?} failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        output
    }

    /// Presses keys (tmux names: `Enter`, `Tab`, `C-c`).
    pub fn press(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", SESSION];
        args.extend_from_slice(keys);
        self.tmux(&args);
    }

    /// Answers an approval question on screen: keys pressed in the question's first moment are
    /// dropped as typed before it (`APPROVAL_GUARD` in `ui/approve.rs`), so this waits it out.
    pub fn answer(&self, keys: &[&str]) {
        std::thread::sleep(Duration::from_millis(400));
        self.press(keys);
    }

    /// Types text as it is, without pressing Enter.
    pub fn type_text(&self, text: &str) {
        self.tmux(&["send-keys", "-t", SESSION, "-l", text]);
    }

    /// Waits for the prompt, then types a line and presses Enter.
    pub fn line(&self, text: &str) {
        self.wait_for_prompt();
        self.type_text(text);
        self.press(&["Enter"]);
    }

    /// The whole screen with its scrollback, as plain text.
    pub fn screen(&self) -> String {
        let output = self.tmux(&["capture-pane", "-p", "-J", "-S", "-", "-t", SESSION]);
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// The screen with its scrollback as the terminal shows it: each row on its own (a line
    /// the terminal wrapped is two rows here, not joined as [`Terminal::screen`] joins it).
    pub fn rows(&self) -> String {
        let output = self.tmux(&["capture-pane", "-p", "-S", "-", "-t", SESSION]);
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// The screen with its colours and attributes as escape sequences (`capture-pane -e`).
    pub fn styled(&self) -> String {
        let output = self.tmux(&["capture-pane", "-p", "-e", "-S", "-", "-t", SESSION]);
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// Waits until the screen satisfies `ready`; fails showing the screen after [`WAIT`].
    pub fn wait_until(&self, what: &str, ready: impl Fn(&str) -> bool) -> String {
        let started = Instant::now();
        loop {
            let screen = self.screen();
            if ready(&screen) {
                return screen;
            }
            assert!(
                started.elapsed() < WAIT,
                "after {WAIT:?} the terminal still does not show {what}; the screen:\n{screen}"
            );
            std::thread::sleep(POLL);
        }
    }

    /// Waits until the screen shows `text`.
    pub fn wait_for(&self, text: &str) -> String {
        self.wait_until(&format!("{text:?}"), |screen| screen.contains(text))
    }

    /// Waits until the last line with something on it is the prompt, with nothing typed (the
    /// status line under it aside).
    pub fn wait_for_prompt(&self) -> String {
        self.wait_until("the prompt `›`", |screen| last_line(screen) == "›")
    }
}

impl Drop for Terminal {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .arg("kill-server")
            .output();
    }
}

/// What the status line under the prompt starts a line with (the model the mock serves).
pub const STATUS_START: &str = "claude-sonnet-4-5 · context ";

/// Whether a line is the status line (`MODEL · context N% of …`).
pub fn is_status(line: &str) -> bool {
    line.contains(" · context ") && line.contains("% of ")
}

/// The screen without the status line under the prompt, when it ends with one.
pub fn without_status(screen: &str) -> &str {
    let trimmed = screen.trim_end();
    match trimmed.rfind('\n') {
        Some(at) if is_status(&trimmed[at + 1..]) => &trimmed[..at],
        _ => screen,
    }
}

/// The last line of the screen that is not blank, trimmed (the status line under the prompt
/// aside).
pub fn last_line(screen: &str) -> &str {
    without_status(screen)
        .lines()
        .rev()
        .map(str::trim)
        .find(|line| !line.is_empty())
        .unwrap_or_default()
}

/// Waits until the mock server has received `count` requests.
pub fn wait_for_requests(server: &MockServer, count: usize) {
    let started = Instant::now();
    while server.requests().len() < count {
        assert!(
            started.elapsed() < WAIT,
            "after {WAIT:?} the server has {} requests, not {count}",
            server.requests().len()
        );
        std::thread::sleep(POLL);
    }
}

/// The text of the last message of request `index`.
pub fn last_message_text(server: &MockServer, index: usize) -> String {
    let request = &server.requests()[index];
    let messages = request.body["messages"].as_array().unwrap();
    messages.last().unwrap()["content"]
        .as_array()
        .unwrap()
        .iter()
        .find_map(|block| block["text"].as_str())
        .unwrap_or_default()
        .to_string()
}

/// A skill `marker` in the sandbox's project that acts: its dynamic context runs
/// `echo dynamic-context-ran` and its `allowed-tools` are `allowed` (so trust is asked about).
pub fn acting_skill(sandbox: &Sandbox, allowed: &str) {
    write_skill(
        &sandbox.project.join(".agents/skills"),
        "marker",
        &format!(
            "---\nname: marker\ndescription: Leave a marker\nallowed-tools: {allowed}\n---\nToday: !`echo dynamic-context-ran`\n"
        ),
    );
}
