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
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
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

/// Origins a browser may send: pages served from this machine.
const LOOPBACK_ORIGINS: [&str; 3] = ["http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*"];

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
    let service = Arc::new(StreamableHttpService::new(
        move || Ok(SkilletServer::new(factory.clone())),
        Arc::new(LocalSessionManager::default()),
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
    loop {
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
        tokio::spawn(async move {
            let handler = hyper::service::service_fn(move |request: Request<Incoming>| {
                let service = Arc::clone(&service);
                async move {
                    if request.uri().path() != MCP_PATH {
                        let body =
                            Full::new(Bytes::from_static(b"not found: the MCP endpoint is /mcp\n"))
                                .map_err(|never: Infallible| match never {})
                                .boxed();
                        let mut response = Response::new(body);
                        *response.status_mut() = StatusCode::NOT_FOUND;
                        return Ok::<_, Infallible>(response);
                    }
                    Ok(service.handle(request).await)
                }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), handler)
                .await;
        });
    }
}
