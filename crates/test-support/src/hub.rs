//! A stand-in for the Hugging Face hub on loopback: serves the files of model repositories at
//! `/{repo}/resolve/main/{file}` the way the hub does (range requests, `etag`,
//! `x-repo-commit`, `content-range`), or answers every request with one error status.

use std::collections::HashMap;
use std::io::Write as _;
use std::net::TcpStream;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::{Listener, read_request};

/// The commit every file is served at.
pub const HUB_COMMIT: &str = "0123456789abcdef0123456789abcdef01234567";

#[derive(Default)]
struct HubState {
    files: HashMap<String, Vec<u8>>,
    /// When set, every request gets this status.
    failing: Option<u16>,
    /// Paths requested, in order, with their `range` header.
    requests: Vec<(String, Option<String>)>,
}

/// The hub stand-in, stopped when dropped.
pub struct HubServer {
    state: Arc<Mutex<HubState>>,
    listener: Listener,
}

impl HubServer {
    /// Starts a server with no files on a free loopback port.
    pub fn start() -> Self {
        let state = Arc::new(Mutex::new(HubState::default()));
        let listener = Listener::start(&state, serve);
        Self { state, listener }
    }

    /// `http://127.0.0.1:PORT` (what `HF_ENDPOINT` is set to).
    pub fn url(&self) -> String {
        self.listener.url()
    }

    /// Serves `content` as `file` of `repo` (`owner/name`).
    pub fn add_file(&self, repo: &str, file: &str, content: Vec<u8>) {
        self.state
            .lock()
            .expect("state")
            .files
            .insert(format!("/{repo}/resolve/main/{file}"), content);
    }

    /// Answers every request with `status` from now on.
    pub fn fail_with(&self, status: u16) {
        self.state.lock().expect("state").failing = Some(status);
    }

    /// The paths requested so far, with their `range` header.
    pub fn requests(&self) -> Vec<(String, Option<String>)> {
        self.state.lock().expect("state").requests.clone()
    }
}

fn serve(mut connection: TcpStream, state: &Mutex<HubState>) {
    let _ = connection.set_read_timeout(Some(Duration::from_secs(10)));
    let Some(request) = read_request(&connection) else {
        return;
    };
    let range = request.header("range").map(str::to_string);
    let (failing, file) = {
        let mut state = state.lock().expect("state");
        state.requests.push((request.path.clone(), range.clone()));
        (state.failing, state.files.get(&request.path).cloned())
    };
    let result = match (failing, file) {
        (Some(status), _) => write_status(&mut connection, status),
        (None, None) => write_status(&mut connection, 404),
        (None, Some(content)) => write_file(&mut connection, &content, range.as_deref()),
    };
    let _ = result;
}

fn write_status(connection: &mut TcpStream, status: u16) -> std::io::Result<()> {
    write!(
        connection,
        "HTTP/1.1 {status} Status\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
    )?;
    connection.flush()
}

/// The file, or the byte range asked for (`bytes=START-` or `bytes=START-END`).
fn write_file(
    connection: &mut TcpStream,
    content: &[u8],
    range: Option<&str>,
) -> std::io::Result<()> {
    let size = content.len();
    let (start, end) = range
        .and_then(|r| r.strip_prefix("bytes="))
        .and_then(|r| r.split_once('-'))
        .map_or((0, size.saturating_sub(1)), |(start, end)| {
            let start = start.parse().unwrap_or(0);
            let end = end.parse().unwrap_or(size.saturating_sub(1));
            (start, end.min(size.saturating_sub(1)))
        });
    let body = content.get(start..=end).unwrap_or_default();
    // The hub's etag for a file is a hash of it; any stable value per content works here.
    let etag = format!("{:016x}{:08x}", fnv(content), size);
    write!(
        connection,
        "HTTP/1.1 206 Partial Content\r\netag: \"{etag}\"\r\nx-repo-commit: {HUB_COMMIT}\r\n\
         content-range: bytes {start}-{end}/{size}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        body.len()
    )?;
    connection.write_all(body)?;
    connection.flush()
}

fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
}
