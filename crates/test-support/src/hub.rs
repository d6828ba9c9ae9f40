//! A stand-in for the Hugging Face hub on loopback: serves the files of model repositories at
//! `/{repo}/resolve/{revision}/{file}` the way the hub does (range requests, `etag`,
//! `x-repo-commit` naming the commit the revision resolves to, `content-range`). Files are
//! added per revision; one file can be served with wrong bytes or answered with an error
//! status, or every request answered with one error status.

use std::collections::HashMap;
use std::io::Write as _;
use std::net::TcpStream;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::{Listener, read_request};

#[derive(Default)]
struct HubState {
    /// Files by request path (`/{repo}/resolve/{revision}/{file}`).
    files: HashMap<String, Served>,
    /// Statuses answered instead of a file, by request path.
    file_statuses: HashMap<String, u16>,
    /// The commit a revision resolves to, by `{repo}@{revision}`, where it is not the revision
    /// itself (a branch name, or a hub that answers with another commit).
    commits: HashMap<String, String>,
    /// When set, every request gets this status.
    failing: Option<u16>,
    /// Paths requested, in order, with their `range` header.
    requests: Vec<(String, Option<String>)>,
}

/// A file's content and etag (computed once: the model's weights are 90 MB).
#[derive(Clone)]
struct Served {
    content: Arc<[u8]>,
    etag: String,
}

impl Served {
    fn new(content: Vec<u8>) -> Self {
        // The hub's etag for a file is a hash of it; any stable value per content works here.
        let etag = format!("{:016x}{:08x}", fnv(&content), content.len());
        Self {
            content: content.into(),
            etag,
        }
    }
}

/// The hub stand-in, stopped when dropped.
pub struct HubServer {
    state: Arc<Mutex<HubState>>,
    listener: Listener,
}

/// The path a file of `repo` (`owner/name`) at `revision` is requested at.
pub fn resolve_path(repo: &str, revision: &str, file: &str) -> String {
    format!("/{repo}/resolve/{revision}/{file}")
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

    /// Serves `content` as `file` of `repo` (`owner/name`) at `revision`.
    pub fn add_file(&self, repo: &str, revision: &str, file: &str, content: Vec<u8>) {
        self.state
            .lock()
            .expect("state")
            .files
            .insert(resolve_path(repo, revision, file), Served::new(content));
    }

    /// Serves `file` (added before) with its last byte changed: the same size, other bytes.
    pub fn corrupt_file(&self, repo: &str, revision: &str, file: &str) {
        let mut state = self.state.lock().expect("state");
        let served = state
            .files
            .get_mut(&resolve_path(repo, revision, file))
            .expect("corrupt_file: the file was not added");
        let mut bytes = served.content.to_vec();
        if let Some(last) = bytes.last_mut() {
            *last ^= 0xff;
        } else {
            bytes.push(0);
        }
        *served = Served::new(bytes);
    }

    /// Answers requests for `file` of `repo` at `revision` with `status` from now on.
    pub fn fail_file_with(&self, repo: &str, revision: &str, file: &str, status: u16) {
        self.state
            .lock()
            .expect("state")
            .file_statuses
            .insert(resolve_path(repo, revision, file), status);
    }

    /// Says (`x-repo-commit`) that `revision` of `repo` is `commit`, as the hub does for a
    /// branch; by default a revision is its own commit.
    pub fn set_commit(&self, repo: &str, revision: &str, commit: &str) {
        self.state
            .lock()
            .expect("state")
            .commits
            .insert(format!("{repo}@{revision}"), commit.to_string());
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

/// What a request path names: the repository and the revision (`/{repo}/resolve/{revision}/…`).
fn repo_and_revision(path: &str) -> Option<(&str, &str)> {
    let (repo, rest) = path.strip_prefix('/')?.split_once("/resolve/")?;
    let (revision, _file) = rest.split_once('/')?;
    Some((repo, revision))
}

fn serve(mut connection: TcpStream, state: &Mutex<HubState>) {
    let _ = connection.set_read_timeout(Some(Duration::from_secs(10)));
    let Some(request) = read_request(&connection) else {
        return;
    };
    let range = request.header("range").map(str::to_string);
    let (failing, file, commit) = {
        let mut state = state.lock().expect("state");
        state.requests.push((request.path.clone(), range.clone()));
        let failing = state
            .failing
            .or_else(|| state.file_statuses.get(&request.path).copied());
        let commit = repo_and_revision(&request.path).map(|(repo, revision)| {
            state
                .commits
                .get(&format!("{repo}@{revision}"))
                .cloned()
                .unwrap_or_else(|| revision.to_string())
        });
        (failing, state.files.get(&request.path).cloned(), commit)
    };
    let result = match (failing, file, commit) {
        (Some(status), _, _) => write_status(&mut connection, status),
        (None, Some(served), Some(commit)) => {
            write_file(&mut connection, &served, &commit, range.as_deref())
        }
        (None, _, _) => write_status(&mut connection, 404),
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
    served: &Served,
    commit: &str,
    range: Option<&str>,
) -> std::io::Result<()> {
    let content = &served.content;
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
    let etag = &served.etag;
    write!(
        connection,
        "HTTP/1.1 206 Partial Content\r\netag: \"{etag}\"\r\nx-repo-commit: {commit}\r\n\
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
