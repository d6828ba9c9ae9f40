//! Following the registry's changes: `LISTEN` on a connection of its own to the primary, and
//! after every (re)connect and every notification, the events after the last one seen read
//! from `skillet_events` (NOTIFY has no replay: a notification sent while the connection was
//! down is never delivered, but its event row is there). Events are numbered in commit order
//! (every publish and yank locks the statistics row from its event to its commit), so reading "after N" never skips one.

use std::time::Duration;

use futures_util::StreamExt as _;
use tokio::sync::mpsc;
use tokio_postgres::AsyncMessage;

use crate::connect::Pools;
use crate::error::RegistryError;
use crate::publish::CHANNEL;

/// The first wait before reconnecting; it doubles up to [`MAX_RECONNECT_WAIT`].
pub const FIRST_RECONNECT_WAIT: Duration = Duration::from_millis(200);
/// The longest wait between reconnects.
pub const MAX_RECONNECT_WAIT: Duration = Duration::from_secs(30);
/// Events read per catch-up query.
const CATCH_UP_BATCH: i64 = 1000;

/// One change in the registry.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Event {
    /// Its number (increasing in commit order).
    pub id: i64,
    /// `publish` or `yank`.
    pub kind: String,
    /// The owner.
    pub owner: String,
    /// The name.
    pub name: String,
    /// The version published or yanked.
    pub seq: i32,
}

/// What a listener reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// An event, in order, each once.
    Event(Event),
    /// The connection was lost (or could not be made); it is tried again.
    Lost(String),
    /// Connected again; what was missed follows.
    Back,
}

/// The newest event's number (0 when there is none): where a listener that wants only what
/// comes next starts.
/// Read on the primary, where the listener listens (a lagging replica would give an older one,
/// and events already reflected would be told again).
pub async fn latest_event(pools: &Pools) -> Result<i64, RegistryError> {
    let client = pools.write().await?;
    crate::schema::check(pools, &client).await?;
    client
        .query_one("SELECT coalesce(max(id), 0) FROM skillet_events", &[])
        .await
        .map(|row| row.get(0))
        .map_err(|error| RegistryError::from_db(&pools.at, &error).doing("following changes"))
}

/// Sends every event after `after` to `changes`, then each new one as it commits, for as long
/// as `changes` is open; a lost connection is reported, retried with a growing wait, and
/// caught up on when back.
pub async fn listen(pools: &Pools, mut after: i64, changes: mpsc::Sender<Change>) {
    pools
        .seen_event
        .fetch_max(after, std::sync::atomic::Ordering::AcqRel);
    let mut wait = FIRST_RECONNECT_WAIT;
    let mut was_lost = false;
    loop {
        let error = match session(pools, &mut after, &changes, was_lost).await {
            Ok(()) => return,
            Err(error) => error,
        };
        if changes.send(Change::Lost(error.to_string())).await.is_err() {
            return;
        }
        was_lost = true;
        tokio::time::sleep(wait).await;
        wait = (wait * 2).min(MAX_RECONNECT_WAIT);
    }
}

/// One connection's life: `Ok` when `changes` closed, `Err` when the connection failed.
async fn session(
    pools: &Pools,
    after: &mut i64,
    changes: &mpsc::Sender<Change>,
    was_lost: bool,
) -> Result<(), RegistryError> {
    let db = |error: tokio_postgres::Error| RegistryError::from_db(&pools.at, &error);
    let (client, mut connection) = pools.primary.connect(pools.tls.clone()).await.map_err(db)?;
    // The connection's messages: notifications forwarded, the end of it said.
    let (notified, mut notifications) = mpsc::unbounded_channel::<Result<(), String>>();
    let driver = tokio::spawn(async move {
        let mut messages = futures_util::stream::poll_fn(move |cx| connection.poll_message(cx));
        while let Some(message) = messages.next().await {
            match message {
                Ok(AsyncMessage::Notification(_)) => {
                    if notified.send(Ok(())).is_err() {
                        return;
                    }
                }
                Ok(_) => {}
                Err(error) => {
                    let cause = error
                        .as_db_error()
                        .map_or_else(|| error.to_string(), |db| db.message().to_string());
                    let _ = notified.send(Err(cause));
                    return;
                }
            }
        }
        let _ = notified.send(Err("the server closed the connection".into()));
    });
    let result = async {
        client
            .batch_execute(&format!("LISTEN {CHANNEL}"))
            .await
            .map_err(db)?;
        if was_lost && changes.send(Change::Back).await.is_err() {
            return Ok(());
        }
        // Listening first, then reading: nothing committed in between is missed.
        if !catch_up(&client, after, changes, &pools.seen_event)
            .await
            .map_err(db)?
        {
            return Ok(());
        }
        loop {
            match notifications.recv().await {
                Some(Ok(())) => {
                    if !catch_up(&client, after, changes, &pools.seen_event)
                        .await
                        .map_err(db)?
                    {
                        return Ok(());
                    }
                }
                Some(Err(cause)) => {
                    return Err(RegistryError::Unreachable {
                        at: pools.at.clone(),
                        cause,
                    });
                }
                None => {
                    return Err(RegistryError::Unreachable {
                        at: pools.at.clone(),
                        cause: "the connection ended".into(),
                    });
                }
            }
        }
    }
    .await;
    driver.abort();
    result
}

/// Sends the events after `after`, moving it on; false when `changes` is closed.
async fn catch_up(
    client: &tokio_postgres::Client,
    after: &mut i64,
    changes: &mpsc::Sender<Change>,
    seen: &std::sync::atomic::AtomicI64,
) -> Result<bool, tokio_postgres::Error> {
    loop {
        let rows = client
            .query(
                "SELECT id, kind, owner, name, seq FROM skillet_events WHERE id > $1 \
                 ORDER BY id LIMIT $2",
                &[&*after, &CATCH_UP_BATCH],
            )
            .await?;
        let full = i64::try_from(rows.len()).unwrap_or(i64::MAX) == CATCH_UP_BATCH;
        for row in rows {
            let event = Event {
                id: row.get(0),
                kind: row.get(1),
                owner: row.get(2),
                name: row.get(3),
                seq: row.get(4),
            };
            *after = event.id;
            // Reads from now on come from a server that has this event.
            seen.fetch_max(event.id, std::sync::atomic::Ordering::AcqRel);
            if changes.send(Change::Event(event)).await.is_err() {
                return Ok(false);
            }
        }
        if !full {
            return Ok(true);
        }
    }
}
