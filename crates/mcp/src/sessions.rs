//! HTTP sessions, at most [`MAX_SESSIONS`] at once. The SDK's session manager keeps every
//! session it made until the client deletes it (a session whose worker ended stays in its map),
//! and makes as many as asked: 10,000 `initialize` calls held 1.1 GB. Here a session leaves the
//! map as soon as its worker ends (idle for [`IDLE_TIMEOUT`], or its client gone), and a new
//! session past the cap is refused, so the sessions held are bounded whatever clients do.

use std::sync::Arc;
use std::time::Duration;

use futures_util::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::WorkerTransport;
use rmcp::transport::common::server_side_http::{ServerSseMessage, SessionId};
use rmcp::transport::streamable_http_server::session::SessionManager;
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError, LocalSessionWorker,
};

/// The most HTTP sessions held at once.
pub const MAX_SESSIONS: usize = 128;
/// How long a session may be idle before it ends.
pub const IDLE_TIMEOUT: Duration = Duration::from_mins(5);

/// Why a session could not be had.
#[derive(Debug, thiserror::Error)]
pub enum SessionsError {
    /// [`MAX_SESSIONS`] are open.
    #[error(
        "too many sessions: {MAX_SESSIONS} are open; end one (HTTP DELETE with its Mcp-Session-Id) or wait for an idle one to time out"
    )]
    Full,
    /// The SDK's session manager refused.
    #[error(transparent)]
    Local(#[from] LocalSessionManagerError),
}

/// The SDK's session manager, capped and pruned.
pub struct CappedSessions {
    inner: Arc<LocalSessionManager>,
}

impl Default for CappedSessions {
    /// No sessions yet.
    fn default() -> Self {
        let mut inner = LocalSessionManager::default();
        inner.session_config.keep_alive = Some(IDLE_TIMEOUT);
        Self {
            inner: Arc::new(inner),
        }
    }
}

impl CappedSessions {
    /// Whether [`MAX_SESSIONS`] are open.
    pub async fn is_full(&self) -> bool {
        self.inner.sessions.read().await.len() >= MAX_SESSIONS
    }
}

impl SessionManager for CappedSessions {
    type Error = SessionsError;
    type Transport = WorkerTransport<LocalSessionWorker>;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        // Counted and made under one write lock would need the SDK's internals: a burst may go
        // a few over while sessions are being made, never without bound.
        if self.is_full().await {
            return Err(SessionsError::Full);
        }
        let (id, transport) = self.inner.create_session().await?;
        // The transport's token is cancelled when it is dropped: the session's service ended.
        let ended = transport.cancel_token();
        let inner = Arc::clone(&self.inner);
        let gone = id.clone();
        tokio::spawn(async move {
            ended.cancelled().await;
            inner.sessions.write().await.remove(&gone);
        });
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        Ok(self.inner.initialize_session(id, message).await?)
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        Ok(self.inner.has_session(id).await?)
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        Ok(self.inner.close_session(id).await?)
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(self.inner.create_stream(id, message).await?)
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        Ok(self.inner.accept_message(id, message).await?)
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(self.inner.create_standalone_stream(id).await?)
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(self.inner.resume(id, last_event_id).await?)
    }
}
