//! What can go wrong talking to a registry, in words a user can act on.

use crate::bundle::BundleError;

/// A registry operation that failed.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    /// The URL does not parse.
    #[error(
        "the registry URL is not a PostgreSQL URL: {0}\n  hint: postgresql://USER@HOST:PORT/DB (several hosts separated by commas; ?host=/socket/dir for a Unix socket)"
    )]
    BadUrl(String),
    /// No server answered.
    #[error(
        "cannot reach the registry at {at}: {cause}\n  hint: is PostgreSQL running there, and the URL (--registry, SKILLET_REGISTRY_URL or registry_url) right?"
    )]
    Unreachable {
        /// Where it was looked for (no password).
        at: String,
        /// The system's words.
        cause: String,
    },
    /// TLS could not be set up or the server's certificate was not accepted.
    #[error(
        "TLS with the registry at {at} failed: {cause}\n  hint: the server's certificate must chain to a root this system trusts; sslmode=disable in the URL turns TLS off (only on a network you trust)"
    )]
    Tls {
        /// Where (no password).
        at: String,
        /// What failed.
        cause: String,
    },
    /// The server refused the user.
    #[error(
        "the registry at {at} refused the credentials: {cause}\n  hint: check the user and the password in the URL (postgresql://USER:PASSWORD@HOST/DB, the password percent-encoded)"
    )]
    Credentials {
        /// Where (no password).
        at: String,
        /// The server's words.
        cause: String,
    },
    /// pgvector is not installed on the server, or too old.
    #[error(
        "the registry's server has no usable pgvector: {0}\n  hint: install pgvector (0.8.4 or later recommended; managed PostgreSQL offerings have it as the `vector` extension), then run `skillet registry init`"
    )]
    NoVector(String),
    /// The schema has not been created.
    #[error(
        "this database holds no skillet registry yet\n  hint: run `skillet registry init` once (with a user allowed to create tables)"
    )]
    NotInitialized,
    /// The schema is older than this skillet.
    #[error(
        "the registry's schema is version {found}, older than this skillet's ({wanted})\n  hint: run `skillet registry init` to migrate it"
    )]
    OldSchema {
        /// What the database has.
        found: i32,
        /// What this skillet writes.
        wanted: i32,
    },
    /// The schema is newer than this skillet.
    #[error(
        "the registry's schema is version {found}, newer than this skillet knows ({known})\n  hint: upgrade skillet"
    )]
    NewSchema {
        /// What the database has.
        found: i32,
        /// What this skillet knows.
        known: i32,
    },
    /// Someone published in between (`--expect-seq`).
    #[error(
        "{skill}: expected the latest version to be {expected}, but it is {head}\n  hint: someone published in between; look at `skillet registry list {skill}` and publish again"
    )]
    Conflict {
        /// owner/name.
        skill: String,
        /// What the caller expected.
        expected: i32,
        /// What the registry has.
        head: i32,
    },
    /// No such skill or version.
    #[error("{0} is not in the registry")]
    NotFound(String),
    /// The version is yanked.
    #[error("{0} is yanked\n  hint: `skillet registry list` shows the versions that are not")]
    Yanked(String),
    /// An owner or name the registry does not accept.
    #[error("{0}")]
    BadName(String),
    /// A skill that breaks the specification.
    #[error(
        "{dir}: the skill breaks the specification, so it is not published:\n{problems}\n  hint: `skillet skills validate {dir}` shows every problem"
    )]
    Invalid {
        /// The skill's folder.
        dir: String,
        /// The errors, one per line.
        problems: String,
    },
    /// The folder cannot be read as a skill.
    #[error(transparent)]
    Bundle(#[from] BundleError),
    /// What the registry returned does not match its hashes.
    #[error(
        "{skill}: {what}; nothing was written\n  hint: the registry's data was changed outside skillet; tell its operators"
    )]
    Tampered {
        /// owner/name@seq.
        skill: String,
        /// What does not match.
        what: String,
    },
    /// A file could not be written.
    #[error("cannot write {path}: {source}")]
    Write {
        /// The path.
        path: String,
        /// The system's words.
        source: std::io::Error,
    },
    /// Refused to overwrite something (another owner's skill, a local one, edited files).
    #[error("{0}")]
    Refused(String),
    /// A statement ran past its time or waited too long for a lock.
    #[error("{doing} at {at} {cause}; nothing was changed\n  hint: {hint}")]
    TimedOut {
        /// What was being done ("searching", "publishing acme/pdf-forms").
        doing: String,
        /// Where (no password).
        at: String,
        /// What ran out: "waited more than 30s for a lock another session holds".
        cause: String,
        /// What to do.
        hint: &'static str,
    },
    /// Anything else the server said.
    #[error("the registry failed: {0}")]
    Database(String),
}

impl RegistryError {
    /// The error of a failed database call, worded by its kind.
    pub(crate) fn from_db(at: &str, error: &tokio_postgres::Error) -> Self {
        if let Some(db) = error.as_db_error() {
            let code = db.code().code();
            let message = db.message().to_string();
            return match code {
                // invalid_password, invalid_authorization_specification
                "28P01" | "28000" => Self::Credentials {
                    at: at.to_string(),
                    cause: message,
                },
                // The registry's own functions and guards (owners, names, immutable versions).
                _ if message.starts_with("skillet: ") => {
                    let message = message.trim_start_matches("skillet: ");
                    let hint = if message.contains("belongs to the database role") {
                        "\n  hint: the members of that role publish under the owner: one of them \
                         (or an administrator) runs GRANT <that role> TO <you>"
                    } else {
                        ""
                    };
                    Self::Refused(format!("{message}{hint}"))
                }
                "42501" => Self::Database(format!(
                    "{message} (SQLSTATE {code})\n  hint: this database role may not do that: \
                     readers are members of skillet_reader, publishers of skillet_publisher \
                     (an administrator runs GRANT skillet_publisher TO <you>); nobody is granted \
                     rights on the tables themselves"
                )),
                // query_canceled (statement_timeout), lock_not_available (lock_timeout)
                "57014" | "55P03" => Self::TimedOut {
                    doing: "a call".into(),
                    at: at.to_string(),
                    cause: if code == "55P03" {
                        "waited too long for a lock another session holds (a publish or a yank \
                         in progress, or an administrator's)"
                            .into()
                    } else {
                        format!("ran past its time limit ({message})")
                    },
                    hint: "nothing is wrong with your data; run it again, and if it keeps \
                           timing out ask the registry's operators what holds it \
                           (pg_stat_activity, pg_locks)",
                },
                // deadlock_detected, serialization_failure
                "40P01" | "40001" => Self::Database(format!(
                    "{message} (SQLSTATE {code})\n  hint: another writer held the registry; \
                     nothing was changed: run the command again"
                )),
                // undefined_table: a command ran before `init`.
                "42P01" if message.contains("skillet_") => Self::NotInitialized,
                _ => Self::Database(format!("{message} (SQLSTATE {code})")),
            };
        }
        if error.to_string().contains("password missing") {
            return Self::Credentials {
                at: at.to_string(),
                cause: "the server asks for a password and the URL gives none".into(),
            };
        }
        let chain = cause_chain(error);
        if chain.contains("TLS") || chain.contains("certificate") {
            return Self::Tls {
                at: at.to_string(),
                cause: chain,
            };
        }
        if error.is_closed() || is_connect_error(error) {
            return Self::Unreachable {
                at: at.to_string(),
                cause: cause_chain(error),
            };
        }
        Self::Database(cause_chain(error))
    }

    /// Names what was being done in a time-out ("publishing acme/pdf-forms").
    #[must_use]
    pub(crate) fn doing(self, what: &str) -> Self {
        match self {
            Self::TimedOut {
                at, cause, hint, ..
            } => Self::TimedOut {
                doing: what.to_string(),
                at,
                cause,
                hint,
            },
            other => other,
        }
    }

    /// The error of a pool that could not hand out a connection.
    pub(crate) fn from_pool(at: &str, error: deadpool_postgres::PoolError) -> Self {
        match error {
            deadpool_postgres::PoolError::Backend(error) => Self::from_db(at, &error),
            deadpool_postgres::PoolError::Timeout(_) => Self::Unreachable {
                at: at.to_string(),
                cause: "timed out waiting for a connection".into(),
            },
            other => Self::Unreachable {
                at: at.to_string(),
                cause: other.to_string(),
            },
        }
    }
}

fn is_connect_error(error: &tokio_postgres::Error) -> bool {
    // tokio-postgres says "error connecting to server" for every connect failure.
    error.to_string().starts_with("error connecting")
        || std::error::Error::source(error)
            .is_some_and(<dyn std::error::Error>::is::<std::io::Error>)
}

/// An error and its causes on one line.
fn cause_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let words = cause.to_string();
        if !text.contains(&words) {
            text.push_str(": ");
            text.push_str(&words);
        }
        source = cause.source();
    }
    text
}
