//! `skillet mcp --http ADDR`: the same server over MCP's streamable HTTP transport at
//! `http://ADDR/mcp`. It binds a loopback address unless told `--allow-remote`; the `Host`
//! header must name the loopback host (the SDK's check, against DNS rebinding) and a browser's
//! `Origin`, when sent, must be a loopback one. Each HTTP session is a handler over the one
//! shared state, so every session sees the same library and is told of the same changes.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;

use http_body_util::{BodyExt as _, Full};
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};

use crate::{ServeError, Shared, SkilletServer};

/// A task stopped when the value is dropped.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// The path the server answers on.
pub const MCP_PATH: &str = "/mcp";
/// The largest request body taken (a request is a small JSON-RPC message).
pub const MAX_REQUEST_BODY_BYTES: usize = 4 * 1024 * 1024;

/// How long a connection may take to send a request's headers; past it the connection is
/// closed (1,100 connections that never finished their headers kept `initialize` waiting).
pub const HEADER_READ_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);
/// How long a request's body may take to arrive once its headers have (a body promised and
/// never sent held its connection, and with 512 of them every client, for good).
pub const BODY_READ_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);
/// The most connections served at once; past it new ones wait to be accepted.
pub const MAX_CONNECTIONS: usize = 512;

/// Origins a browser may send: pages served from this machine.
const LOOPBACK_ORIGINS: [&str; 3] = ["http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*"];

type Answer = Response<http_body_util::combinators::BoxBody<Bytes, Infallible>>;

/// A POST of JSON, its body read (at most [`MAX_REQUEST_BODY_BYTES`]) and checked as a message
/// ([`crate::jsonrpc`]): a malformed one is answered here, 400 with the JSON-RPC error (the SDK
/// answers a body it cannot read, a batch among them, 415). Other requests pass as they came.
async fn checked(
    request: Request<Incoming>,
    sessions: &crate::sessions::CappedSessions,
) -> Result<
    (
        Request<Full<Bytes>>,
        Option<tokio::sync::OwnedSemaphorePermit>,
    ),
    Answer,
> {
    let json = request
        .headers()
        .get(hyper::header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| {
            value
                .split(';')
                .next()
                .is_some_and(|essence| essence.trim().eq_ignore_ascii_case("application/json"))
        });
    let (parts, body) = request.into_parts();
    let limited = http_body_util::Limited::new(body, MAX_REQUEST_BODY_BYTES);
    let bytes = match tokio::time::timeout(BODY_READ_TIMEOUT, limited.collect()).await {
        Ok(Ok(collected)) => collected.to_bytes(),
        Err(_) => {
            return Err(plain(
                StatusCode::REQUEST_TIMEOUT,
                format!(
                    "Request Timeout: the body did not arrive within {} s\n",
                    BODY_READ_TIMEOUT.as_secs()
                ),
            ));
        }
        Ok(Err(_)) => {
            return Err(plain(
                StatusCode::PAYLOAD_TOO_LARGE,
                format!(
                    "Payload Too Large: a request body is at most {MAX_REQUEST_BODY_BYTES} bytes\n"
                ),
            ));
        }
    };
    if json && parts.method == hyper::Method::POST {
        let text = String::from_utf8_lossy(&bytes);
        let checked = crate::jsonrpc::check(&text);
        if matches!(checked, crate::jsonrpc::Checked::Ignored) {
            return Err(plain(StatusCode::ACCEPTED, String::new()));
        }
        if let crate::jsonrpc::Checked::Invalid(answer) = checked {
            let body = Full::new(Bytes::from(answer.to_string()))
                .map_err(|never: Infallible| match never {})
                .boxed();
            let mut response = Response::new(body);
            *response.status_mut() = StatusCode::BAD_REQUEST;
            response.headers_mut().insert(
                hyper::header::CONTENT_TYPE,
                hyper::header::HeaderValue::from_static("application/json"),
            );
            return Err(response);
        }
    }
    // A new session past the cap: refused here with 503 (the SDK says 500).
    if parts.method == hyper::Method::POST
        && !parts.headers.contains_key("mcp-session-id")
        && method_of(&bytes).as_deref() == Some("initialize")
        && sessions.is_full().await
    {
        return Err(plain(
            StatusCode::SERVICE_UNAVAILABLE,
            format!(
                "Service Unavailable: {}\n",
                crate::sessions::SessionsError::Full
            ),
        ));
    }
    // A read waits for a permit, held until its answer has been sent: answers built and not
    // yet taken by their clients stay bounded.
    let permit = if parts.method == hyper::Method::POST && is_read(&bytes) {
        let busy = || {
            plain(
                StatusCode::SERVICE_UNAVAILABLE,
                format!(
                    "Service Unavailable: {} reads are being sent; try again\n",
                    crate::stdio::MAX_READS_UNANSWERED
                ),
            )
        };
        match tokio::time::timeout(READ_WAIT, std::sync::Arc::clone(&READS).acquire_owned()).await {
            Ok(Ok(permit)) => Some(permit),
            Ok(Err(_)) | Err(_) => return Err(busy()),
        }
    } else {
        None
    };
    Ok((Request::from_parts(parts, Full::new(bytes)), permit))
}

/// How long a read waits for a permit before it is answered 503 (clients that never take their
/// answers hold the permits).
const READ_WAIT: std::time::Duration = std::time::Duration::from_secs(30);

/// The permits for reads whose answers are not yet sent, shared by every connection.
static READS: std::sync::LazyLock<std::sync::Arc<tokio::sync::Semaphore>> =
    std::sync::LazyLock::new(|| {
        std::sync::Arc::new(tokio::sync::Semaphore::new(
            crate::stdio::MAX_READS_UNANSWERED,
        ))
    });

/// The method a body names, if it is a message with one.
fn method_of(body: &[u8]) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Head {
        method: Option<String>,
    }
    serde_json::from_slice::<Head>(body).ok()?.method
}

/// Whether a body is a `resources/read` request.
fn is_read(body: &[u8]) -> bool {
    method_of(body).as_deref() == Some("resources/read")
}

/// How long the answer to a read may take to be taken by its client; past it the connection is
/// closed (a client that never reads would hold a permit for good).
pub const READ_SEND_TIMEOUT: std::time::Duration = std::time::Duration::from_mins(1);

/// A response body that holds a permit until it is dropped (sent, or the client gone).
struct Holding {
    body: http_body_util::combinators::BoxBody<Bytes, Infallible>,
    _permit: tokio::sync::OwnedSemaphorePermit,
    /// Alive while the answer is being sent (the timer of [`READ_SEND_TIMEOUT`] watches it).
    _sending: Arc<()>,
}

impl hyper::body::Body for Holding {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        context: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<hyper::body::Frame<Bytes>, Infallible>>> {
        std::pin::Pin::new(&mut self.body).poll_frame(context)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.body.size_hint()
    }
}

/// A plain-text answer.
fn plain(status: StatusCode, text: String) -> Answer {
    let body = Full::new(Bytes::from(text))
        .map_err(|never: Infallible| match never {})
        .boxed();
    let mut response = Response::new(body);
    *response.status_mut() = status;
    response
}

/// Serves `shared` over streamable HTTP on `addr` until the process ends. A non-loopback
/// address is refused unless `allow_remote` (then the `Host` check is off: put it behind a proxy
/// that checks who connects). The address actually bound (port 0 picks one) is logged as
/// `listening on http://ADDR/mcp`.
pub async fn serve_http(
    shared: Shared,
    addr: SocketAddr,
    allow_remote: bool,
) -> Result<(), ServeError> {
    if !addr.ip().is_loopback() && !allow_remote {
        return Err(ServeError::Remote(addr));
    }
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|error| ServeError::Bind(addr, error.to_string()))?;
    let bound = listener
        .local_addr()
        .map_err(|error| ServeError::Bind(addr, error.to_string()))?;
    let mut config = StreamableHttpServerConfig::default()
        .with_allowed_origins(LOOPBACK_ORIGINS)
        .enforce_origin_validation()
        .with_max_request_body_bytes(MAX_REQUEST_BODY_BYTES);
    if !addr.ip().is_loopback() {
        // Reached by other names than localhost: the proxy in front checks who connects.
        config = config.disable_allowed_hosts();
    }
    let factory = shared.clone();
    let sessions = Arc::new(crate::sessions::CappedSessions::default());
    let service = Arc::new(StreamableHttpService::new(
        move || Ok(SkilletServer::new(factory.clone())),
        Arc::clone(&sessions),
        config,
    ));
    // Said at every log level but off: a client needs the port `--http 0` picked.
    crate::log_at(
        crate::LogLevel::Error,
        &format!("listening on http://{bound}{MCP_PATH}"),
    );
    let loader = shared.clone();
    tokio::task::spawn_blocking(move || loader.load_model());
    let _watcher = crate::watch(&shared).await;
    let _following = AbortOnDrop(tokio::spawn(crate::remote::follow(shared.clone())));
    let connections = Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
    loop {
        let Ok(permit) = Arc::clone(&connections).acquire_owned().await else {
            return Ok(());
        };
        let (stream, _) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(error) => {
                // Out of file descriptors and the like: say so, and go on accepting.
                crate::log_at(
                    crate::LogLevel::Error,
                    &format!("cannot accept a connection: {error}"),
                );
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                continue;
            }
        };
        let service = Arc::clone(&service);
        let sessions = Arc::clone(&sessions);
        tokio::spawn(async move {
            // Told when an answer to a read was not taken in time: the connection is dropped.
            let stuck = Arc::new(tokio::sync::Notify::new());
            let told = Arc::clone(&stuck);
            let handler = hyper::service::service_fn(move |request: Request<Incoming>| {
                let service = Arc::clone(&service);
                let sessions = Arc::clone(&sessions);
                let stuck = Arc::clone(&stuck);
                async move {
                    if request.uri().path() != MCP_PATH {
                        return Ok::<_, Infallible>(plain(
                            StatusCode::NOT_FOUND,
                            "not found: the MCP endpoint is /mcp\n".to_string(),
                        ));
                    }
                    Ok(match checked(request, &sessions).await {
                        Ok((request, None)) => service.handle(request).await,
                        // The answer to a read holds its permit until it has been sent.
                        Ok((request, Some(permit))) => service.handle(request).await.map(|body| {
                            let sending = Arc::new(());
                            let still = Arc::downgrade(&sending);
                            tokio::spawn(async move {
                                tokio::time::sleep(READ_SEND_TIMEOUT).await;
                                if still.upgrade().is_some() {
                                    stuck.notify_one();
                                }
                            });
                            Holding {
                                body,
                                _permit: permit,
                                _sending: sending,
                            }
                            .boxed()
                        }),
                        Err(response) => response,
                    })
                }
            });
            let connection = hyper::server::conn::http1::Builder::new()
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(HEADER_READ_TIMEOUT)
                .serve_connection(TokioIo::new(stream), handler);
            // Dropping the connection closes it, and drops the answer it held with its permit.
            tokio::select! {
                _ = connection => {}
                () = told.notified() => {}
            }
            drop(permit);
        });
    }
}
