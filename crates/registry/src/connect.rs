//! Connecting: a pool for reads (any host of a multi-host URL, replicas included) and one for
//! writes (the primary: `target_session_attrs=read-write`), TLS with rustls and the system's
//! roots when the URL asks for it (`sslmode=require`; `prefer`, the default, tries it first).

use std::sync::Arc;
use std::time::Duration;

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod, Runtime};
use tokio_postgres::config::{Host, TargetSessionAttrs};

use crate::error::RegistryError;

/// How long a connection attempt may take before the registry counts as unreachable.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a command waits for a pooled connection.
pub const POOL_WAIT: Duration = Duration::from_secs(30);
/// Connections per pool.
pub const POOL_SIZE: usize = 4;
/// The longest one statement may run on a registry connection (unless the URL's `options` say):
/// a search or a fetch that takes longer fails, saying so, rather than hang a session. Publishes
/// and yanks set their own (`publish::WRITE_STATEMENT_TIMEOUT`).
pub const STATEMENT_TIMEOUT: &str = "60s";
/// The longest a statement waits for a lock someone else holds (a table locked by an
/// administrator, say) before it fails, naming what it waited for.
pub const LOCK_TIMEOUT: &str = "10s";

/// The pools of one registry.
#[derive(Clone)]
pub struct Pools {
    pub(crate) reads: Pool,
    pub(crate) writes: Pool,
    /// The primary's configuration, for a listener's own connection (never pooled: LISTEN is
    /// session state, which a transaction pooler would lose and a hot standby refuses).
    pub(crate) primary: tokio_postgres::Config,
    pub(crate) tls: tokio_postgres_rustls::MakeRustlsConnect,
    /// Where it is, as shown to the user (hosts, port, database; never the password).
    pub at: String,
    /// Whether the schema was found to be this skillet's once already (checked once per
    /// process, not per call: a search stays one round trip).
    pub(crate) schema_checked: std::sync::Arc<std::sync::atomic::AtomicBool>,
    /// The newest event this process has followed (0: none). A read served by a replica that
    /// has not replayed it yet is served by the primary instead, so a follower never acts on
    /// an older state than the events it was told of (a yank it learnt of is never undone by a
    /// lagging replica).
    pub(crate) seen_event: std::sync::Arc<std::sync::atomic::AtomicI64>,
}

impl std::fmt::Debug for Pools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The pools hold the configuration, password included: only the address is shown.
        f.debug_struct("Pools")
            .field("at", &self.at)
            .finish_non_exhaustive()
    }
}

/// How long a connection is idle before TCP keepalives probe it (unless the URL says).
pub const KEEPALIVES_IDLE: std::time::Duration = std::time::Duration::from_mins(1);
/// The default of `keepalives_idle`, which skillet lowers to [`KEEPALIVES_IDLE`].
const LIBPQ_KEEPALIVES_IDLE: std::time::Duration = std::time::Duration::from_hours(2);

impl Pools {
    /// Pools for the registry at `url` (nothing is connected yet).
    pub fn new(url: &str) -> Result<Self, RegistryError> {
        let mut config: tokio_postgres::Config = url
            .parse()
            .map_err(|error: tokio_postgres::Error| RegistryError::BadUrl(error.to_string()))?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_TIMEOUT);
        }
        if config.get_application_name().is_none() {
            config.application_name("skillet");
        }
        // libpq's default idle time before TCP keepalives is two hours: a follower whose
        // connection a NAT dropped would not notice for that long.
        if config.get_keepalives_idle() == LIBPQ_KEEPALIVES_IDLE {
            config.keepalives_idle(KEEPALIVES_IDLE);
        }
        // Every statement under a time limit and a lock time limit, from the connection's start
        // (the schema check included); settings the URL gives win.
        let options = config.get_options().unwrap_or_default().to_string();
        let mut limited = options.clone();
        for (setting, value) in [
            ("statement_timeout", STATEMENT_TIMEOUT),
            ("lock_timeout", LOCK_TIMEOUT),
        ] {
            if !options.contains(setting) {
                limited = format!("{limited} -c {setting}={value}").trim().to_string();
            }
        }
        config.options(&limited);
        let at = describe(&config);
        let tls = tls(&at)?;
        let mut primary = config.clone();
        primary.target_session_attrs(TargetSessionAttrs::ReadWrite);
        let pool = |config: tokio_postgres::Config| {
            let manager = Manager::from_config(
                config,
                tls.clone(),
                ManagerConfig {
                    recycling_method: RecyclingMethod::Fast,
                },
            );
            Pool::builder(manager)
                .max_size(POOL_SIZE)
                .runtime(Runtime::Tokio1)
                .wait_timeout(Some(POOL_WAIT))
                .create_timeout(Some(CONNECT_TIMEOUT))
                .build()
                .map_err(|error| RegistryError::BadUrl(error.to_string()))
        };
        Ok(Self {
            reads: pool(config)?,
            writes: pool(primary.clone())?,
            primary,
            tls,
            at,
            schema_checked: std::sync::Arc::default(),
            seen_event: std::sync::Arc::default(),
        })
    }

    /// A pooled connection for reading: any host of the URL (a replica first when it lists
    /// one first), unless this process has followed an event that host has not replayed yet, in
    /// which case the primary's.
    pub(crate) async fn read(&self) -> Result<deadpool_postgres::Object, RegistryError> {
        let client = self
            .reads
            .get()
            .await
            .map_err(|error| RegistryError::from_pool(&self.at, error))?;
        let seen = self.seen_event.load(std::sync::atomic::Ordering::Acquire);
        if seen == 0 {
            return Ok(client);
        }
        // An index-only look at the events' primary key: one short round trip.
        let replayed = client
            .query_one(
                "SELECT EXISTS (SELECT 1 FROM skillet_events WHERE id >= $1)",
                &[&seen],
            )
            .await
            .is_ok_and(|row| row.get::<_, bool>(0));
        if replayed {
            Ok(client)
        } else {
            self.write().await
        }
    }

    /// A pooled connection to the primary.
    pub(crate) async fn write(&self) -> Result<deadpool_postgres::Object, RegistryError> {
        self.writes
            .get()
            .await
            .map_err(|error| RegistryError::from_pool(&self.at, error))
    }
}

/// rustls with the platform's certificate verifier (the system's roots).
fn tls(at: &str) -> Result<tokio_postgres_rustls::MakeRustlsConnect, RegistryError> {
    use rustls_platform_verifier::BuilderVerifierExt as _;
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|error| RegistryError::Tls {
            at: at.to_string(),
            cause: error.to_string(),
        })?
        .with_platform_verifier()
        .map_err(|error| RegistryError::Tls {
            at: at.to_string(),
            cause: error.to_string(),
        })?
        .with_no_client_auth();
    Ok(tokio_postgres_rustls::MakeRustlsConnect::new(config))
}

/// `user@host:port,host2/db` without the password.
fn describe(config: &tokio_postgres::Config) -> String {
    let hosts: Vec<String> = config
        .get_hosts()
        .iter()
        .enumerate()
        .map(|(at, host)| {
            let port = config
                .get_ports()
                .get(at)
                .or_else(|| config.get_ports().first())
                .copied()
                .unwrap_or(5432);
            match host {
                Host::Tcp(name) => format!("{name}:{port}"),
                #[cfg(unix)]
                Host::Unix(path) => format!("{}:{port}", path.display()),
            }
        })
        .collect();
    let hosts = if hosts.is_empty() {
        "localhost:5432".to_string()
    } else {
        hosts.join(",")
    };
    let user = config
        .get_user()
        .map(|u| format!("{u}@"))
        .unwrap_or_default();
    let db = config.get_dbname().unwrap_or("");
    format!("postgresql://{user}{hosts}/{db}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shown_address_never_has_the_password() {
        let pools = Pools::new("postgresql://alice:s3cret@db1:5433,db2/skills").unwrap();
        assert_eq!(pools.at, "postgresql://alice@db1:5433,db2:5432/skills");
        assert!(!format!("{pools:?}").contains("s3cret"));
        let error = Pools::new("mysql://x").unwrap_err();
        assert!(
            error.to_string().contains("not a PostgreSQL URL"),
            "{error}"
        );
    }
}
