//! Which variables of skillet's environment commands never see: credentials by name
//! ([`is_secret`]) and by value ([`carries_secret`]), and the doors out of the sandbox
//! (agent and bus sockets). A command's output reaches the model, so what a command can read,
//! the model (and whoever wrote the prompt it follows) can too.

/// Variables never passed to commands: the provider keys by name, and any name that looks like
/// a credential ([`is_secret`]).
pub const SECRET_NAMES: [&str; 2] = ["ANTHROPIC_API_KEY", "OPENAI_API_KEY"];
/// Words of a variable's name (split at `_`, compared without case) that make it a credential:
/// `OPENROUTER_KEY`, `GH_PAT`, `DB_PASSWORD`, `AWS_SECRET_ACCESS_KEY`, `NPM_AUTH`, `MYSQL_PWD`,
/// `LDAP_BIND_PW`, `SENTRY_DSN`, `SLACK_WEBHOOK_URL`.
pub const SECRET_WORDS: [&str; 22] = [
    "PW",
    "PWD",
    "DSN",
    "WEBHOOK",
    "WEBHOOKS",
    "KEY",
    "KEYS",
    "APIKEY",
    "TOKEN",
    "TOKENS",
    "SECRET",
    "SECRETS",
    "PASSWORD",
    "PASSWD",
    "PASS",
    "PASSPHRASE",
    "CREDENTIAL",
    "CREDENTIALS",
    "CREDS",
    "PAT",
    "AUTH",
    "COOKIE",
];
/// Endings of a name's word that make it a credential too (`GHTOKEN`, `MYAPIKEY`, `PGPASSWORD`,
/// `SSHPASS`).
pub const SECRET_WORD_ENDINGS: [&str; 6] = ["KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASS"];
/// Names passed although a word of theirs is in [`SECRET_WORDS`]: the shell's working
/// directories.
pub const NOT_SECRET_NAMES: [&str; 2] = ["PWD", "OLDPWD"];
/// Name beginnings passed although a word of theirs looks like a credential: git's
/// environment config names its keys `GIT_CONFIG_KEY_n` (their values are judged by value).
pub const NOT_SECRET_PREFIXES: [&str; 1] = ["GIT_CONFIG_KEY_"];
/// Value beginnings (compared without case) of an HTTP credential: a header, or its scheme.
pub const SECRET_VALUE_WORDS: [&str; 4] = ["authorization:", "bearer ", "basic ", "token "];
/// Name beginnings of credentials: PostgreSQL's password and password file, 1Password's and
/// Bitwarden's session keys.
pub const SECRET_PREFIXES: [&str; 3] = ["PGPASS", "OP_SESSION_", "BW_SESSION"];
/// Beginnings of values that are well-known tokens, whatever the variable is called: GitHub,
/// GitLab, Slack, OpenAI and Anthropic, Stripe, Hugging Face, npm, PyPI, AWS access key ids,
/// Google API keys, private keys in PEM; AWS session key ids, Google OAuth access tokens,
/// GitLab runner and deploy tokens, DigitalOcean, SendGrid, Shopify, Groq, Vault.
pub const SECRET_VALUE_PREFIXES: [&str; 38] = [
    "squ_",
    "sqp_",
    "sqa_",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "glpat-",
    "xoxb-",
    "xoxp-",
    "xapp-",
    "sk-",
    "sk_live_",
    "rk_live_",
    "hf_",
    "npm_",
    "pypi-",
    "AKIA",
    "AIza",
    "-----BEGIN",
    "ASIA",
    "ya29.",
    "glrt-",
    "gldt-",
    "glptt-",
    "dop_v1_",
    "doo_v1_",
    "SG.",
    "shpat_",
    "shpss_",
    "dckr_pat_",
    "gsk_",
    "hvs.",
    "hvb.",
    "hvr.",
    "AGE-SECRET-KEY-1",
];
/// Keys of `key=value` pairs that carry a credential in a value: libpq's connection strings
/// (`host=db password=…`), URL queries (`?access_token=…`, Azure's `sig=`); also any key
/// ending in one of [`SECRET_KEY_ENDINGS`] (Azure's `AccountKey=`, `SharedAccessKey=`), and
/// the same keys quoted in JSON (`"password": "…"`).
pub const SECRET_VALUE_KEYS: [&str; 13] = [
    "password",
    "passwd",
    "pwd",
    "pass",
    "token",
    "access_token",
    "auth_token",
    "api_key",
    "apikey",
    "key",
    "secret",
    "client_secret",
    "sig",
];
/// Endings of a pair's key (compared without case) that make its value a credential.
pub const SECRET_KEY_ENDINGS: [&str; 5] = ["key", "password", "secret", "token", "signature"];
/// Parts of a value that mark it a credential wherever they stand: Terraform Cloud's tokens
/// (`….atlasv1.…`).
pub const SECRET_VALUE_INFIXES: [&str; 1] = [".atlasv1."];
/// URLs whose path is the credential: chat webhooks.
pub const SECRET_URL_PARTS: [&str; 3] = [
    "hooks.slack.com/services/",
    "discord.com/api/webhooks/",
    "discordapp.com/api/webhooks/",
];
/// A URL's user part this long, without a password, is taken for a token (Sentry's DSN,
/// `https://TOKEN@host/`).
const MIN_URL_TOKEN_CHARS: usize = 24;

/// Variables naming a door out of the sandbox (an agent or bus socket on disk), not passed
/// to commands either.
pub const DOOR_NAMES: [&str; 4] = [
    "SSH_AUTH_SOCK",
    "DBUS_SESSION_BUS_ADDRESS",
    "GPG_AGENT_INFO",
    "DOCKER_HOST",
];

/// Whether an environment variable's name says it holds a secret (or a door out) that commands
/// must not see.
pub fn is_secret(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    if NOT_SECRET_NAMES.contains(&upper.as_str())
        || NOT_SECRET_PREFIXES
            .iter()
            .any(|prefix| upper.starts_with(prefix))
    {
        return false;
    }
    SECRET_NAMES.contains(&upper.as_str())
        || DOOR_NAMES.contains(&upper.as_str())
        || SECRET_PREFIXES
            .iter()
            .any(|prefix| upper.starts_with(prefix))
        || upper.split('_').any(|word| {
            SECRET_WORDS.contains(&word)
                || SECRET_WORD_ENDINGS
                    .iter()
                    .any(|ending| word.len() > ending.len() && word.ends_with(ending))
        })
}

/// Whether a variable's value carries a credential whatever its name: a URL with a password
/// (`postgres://user:pw@host/db`) or a token for its user, found anywhere in the value; a
/// well-known token or a JWT, anywhere (`--with ghp_…`); a `password=…` pair, quoted or not
/// (libpq, a URL's query, Kafka's JAAS line, an npmrc's `//host/:_authToken=…`); `password:
/// …` as JSON or YAML write it; an HTTP credential header; a chat webhook.
pub fn carries_secret(value: &str) -> bool {
    // Quotes kept from an env file (`"postgres://…"`) are not part of the value, nor spaces
    // around a pair's `=` (libpq takes `password = pw`).
    let spaced = value.trim().trim_matches(['"', '\'']);
    let unspaced = without_spaces_around_equals(spaced);
    let value = unspaced.as_str();
    let lower = value.to_ascii_lowercase();
    let header = SECRET_VALUE_WORDS
        .iter()
        .any(|word| lower.starts_with(word))
        || lower.contains("authorization:");
    header
        || is_token(value)
        || words(value).any(is_token)
        || SECRET_URL_PARTS.iter().any(|part| value.contains(part))
        || SECRET_VALUE_INFIXES.iter().any(|part| value.contains(part))
        || pairs(value).any(|(key, secret)| !secret.is_empty() && secret_key(key))
        || colon_pairs(value)
        || url_credentials(value)
        || proxy_credentials(value)
}

/// A value shorter than this is not taken for a token by its beginning (`sk-` alone is not one).
const MIN_TOKEN_CHARS: usize = 16;

/// Whether `text` is a well-known token ([`SECRET_VALUE_PREFIXES`]) or a JWT.
fn is_token(text: &str) -> bool {
    text.chars().count() >= MIN_TOKEN_CHARS
        && (SECRET_VALUE_PREFIXES
            .iter()
            .any(|prefix| text.starts_with(prefix))
            || text.starts_with("eyJ") && text.matches('.').count() == 2)
}

/// The words of a value a token could be: split at spaces, quotes, brackets and the marks
/// that separate a list's or a flag's parts (`-Dgithub.oauth=ghp_…`).
fn words(value: &str) -> impl Iterator<Item = &str> {
    value
        .split(|c: char| {
            c.is_whitespace()
                || matches!(
                    c,
                    '"' | '\''
                        | '='
                        | ':'
                        | ','
                        | ';'
                        | '('
                        | ')'
                        | '['
                        | ']'
                        | '{'
                        | '}'
                        | '<'
                        | '>'
                )
        })
        .filter(|word| !word.is_empty())
}

/// Whether a character can be part of a pair's key: a name, a dotted or slashed path
/// (`spring.datasource.password`, `//registry.npmjs.org/:_authToken`), a flag's dashes, a
/// pattern's `*` (judged, then refused, by [`secret_key`]).
fn key_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | '/' | ':' | '*')
}

/// Every `key=value` pair in a value, wherever it stands: the key the run of key characters
/// before the `=`, the value what follows it, to the end of its quotes when quoted
/// (`password="a b"`), else to the next space or separator.
fn pairs(value: &str) -> impl Iterator<Item = (&str, &str)> {
    value.match_indices('=').map(move |(at, _)| {
        let before = &value[..at];
        let start = before
            .char_indices()
            .rev()
            .find(|(_, c)| !key_char(*c))
            .map_or(0, |(index, c)| index + c.len_utf8());
        let after = &value[at + 1..];
        let secret = match after.chars().next() {
            Some(quote @ ('"' | '\'')) => after[1..].split(quote).next().unwrap_or(""),
            _ => after
                .split(|c: char| {
                    c.is_whitespace() || matches!(c, ';' | '&' | ',' | '"' | '\'' | ')' | '}')
                })
                .next()
                .unwrap_or(""),
        };
        // An npmrc's key is scoped by a registry (`//registry.npmjs.org/:_authToken`).
        let key = &before[start..];
        let key = key.rsplit_once("/:").map_or(key, |(_, key)| key);
        (key, secret)
    })
}

/// Whether a pair's key names a credential: a name judged by its last dotted part
/// (`spring.datasource.password`, `-Djavax.net.ssl.keyStorePassword`), never a path
/// (`/opt/monkey` in a `PATH`), a scoped name (`oauth2::token` in `RUST_LOG`) or a pattern
/// (`LS_COLORS`' `*.key`).
fn secret_key(key: &str) -> bool {
    let key = key.split_whitespace().last().unwrap_or_default();
    let key = key.trim_matches(['"', '\'']).to_ascii_lowercase();
    if key.contains('*') {
        return false;
    }
    let key = key.rsplit('.').next().unwrap_or_default();
    !key.is_empty()
        && key
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'-')
        && (SECRET_VALUE_KEYS.contains(&key)
            || SECRET_KEY_ENDINGS
                .iter()
                .any(|ending| key.ends_with(ending)))
}

/// `password: …` as JSON, YAML, a Python dict or a header (`X-Api-Key: …`) write it.
fn colon_pairs(value: &str) -> bool {
    value.split([',', ';', '\n', '{', '}']).any(|part| {
        part.split_once(':').is_some_and(|(key, secret)| {
            let secret = secret.trim().trim_matches(['"', '\'']);
            secret_key(key) && !secret.is_empty() && !secret.starts_with("//")
        })
    })
}

/// Whether any URL in the value, wherever it starts (`--url=https://…`, a list of them), has
/// a password, or a token, in its user part.
fn url_credentials(value: &str) -> bool {
    value.match_indices("://").any(|(at, _)| {
        let authority = value[at + 3..]
            .split(|c: char| {
                c.is_whitespace()
                    || matches!(
                        c,
                        '/' | '?' | '#' | '"' | '\'' | ',' | ';' | ')' | '<' | '>'
                    )
            })
            .next()
            .unwrap_or("");
        authority
            .rsplit_once('@')
            .is_some_and(|(user, _)| match user.split_once(':') {
                Some((_, password)) => !password.is_empty(),
                None => is_token(user) || user.chars().count() >= MIN_URL_TOKEN_CHARS,
            })
    })
}

/// A proxy's `user:password@host[:port]` without a scheme (an image's `name:tag@sha256:…` is
/// no credential, nor `name@host`, an address).
fn proxy_credentials(value: &str) -> bool {
    value
        .split(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | ',' | ';' | '=' | '(' | ')'))
        .filter(|part| !part.contains("://"))
        .any(|part| {
            part.rsplit_once('@').is_some_and(|(user, host)| {
                user.split_once(':')
                    .is_some_and(|(_, password)| !password.is_empty() && is_host(host))
            })
        })
}

/// `text` without the spaces around each `=`.
fn without_spaces_around_equals(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut after_equals = false;
    for c in text.chars() {
        if c == '=' {
            while out.ends_with(' ') {
                out.pop();
            }
            after_equals = true;
            out.push(c);
        } else if !(c == ' ' && after_equals) {
            after_equals = false;
            out.push(c);
        }
    }
    out
}

/// Whether `text` is a host name, with a port or not (`proxy`, `db.example.com:5432`).
fn is_host(text: &str) -> bool {
    // An IPv6 literal: `[fd00::1]:3128`.
    if let Some(rest) = text.strip_prefix('[') {
        return rest.split_once(']').is_some_and(|(address, port)| {
            address
                .bytes()
                .all(|byte| byte.is_ascii_hexdigit() || byte == b':')
                && port
                    .trim_start_matches(':')
                    .bytes()
                    .all(|byte| byte.is_ascii_digit())
        });
    }
    let (name, port) = text.split_once(':').unwrap_or((text, ""));
    !name.is_empty()
        && name
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'.' | b'-' | b'_'))
        && port.bytes().all(|byte| byte.is_ascii_digit())
}

/// Whether a variable is kept from commands: by its name or its value, unless the user's config
/// passes it by name on purpose (`pass`).
pub fn withheld(name: &std::ffi::OsStr, value: &std::ffi::OsStr, pass: &[String]) -> bool {
    if name
        .to_str()
        .is_some_and(|name| pass.iter().any(|p| p == name))
    {
        return false;
    }
    name.to_str().is_none_or(is_secret) || value.to_str().is_some_and(carries_secret)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_under_other_names_are_found() {
        for name in [
            "BW_SESSION",
            "OP_SESSION_my",
            "MYSQL_PWD",
            "SSHPASS",
            "LDAP_BIND_PW",
            "SENTRY_DSN",
            "SLACK_WEBHOOK_URL",
        ] {
            assert!(is_secret(name), "{name}");
        }
        for name in [
            "PWD",
            "OLDPWD",
            "PATH",
            "LANG",
            "XDG_SESSION_TYPE",
            "GIT_CONFIG_KEY_0",
        ] {
            assert!(!is_secret(name), "{name}");
        }
    }

    #[test]
    fn credentials_in_values_are_found_and_ordinary_values_pass() {
        for value in [
            "postgres://app:hunter2@db/app",
            "host=db user=app password=hunter2 dbname=app",
            "https://api.example.com/v1?user=a&access_token=abcdef",
            "mysql://db/app?password=hunter2",
            "https://hooks.slack.com/services/T000/B000/XXXXXXXX",
            "https://0123456789abcdef0123456789abcdef@o1.ingest.sentry.io/1",
            "https://ghp_abcdefghijklmnopqrstuvwxyz@github.com/o/r",
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl",
            "AUTHORIZATION: basic dXNlcjpwYXNz",
            "Authorization: Bearer abc",
            "Bearer abc.def",
            "squ_0123456789abcdef0123",
            // Found by the fourth review.
            "DefaultEndpointsProtocol=https;AccountName=a;AccountKey=c2VjcmV0;EndpointSuffix=x",
            "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=k;SharedAccessKey=c2Vj",
            "\"postgres://app:hunter2@db/prod\"",
            "jdbc:mysql://app:hunter3@db/prod",
            r#"{"db":[{"credentials":{"uri":"postgres://u:hunter4@h/db","password":"hunter4"}}]}"#,
            r#"{"password" : "hunter4"}"#,
            "user:hunter5@proxy:3128",
            "ASIAABCDEFGHIJKLMNOP",
            "ya29.a0AfH6SMBabcdefghijklmnop",
            "glrt-abcdefghijklmnopqrst",
            "dop_v1_0123456789abcdef0123",
            "SG.abcdefghijklmnopqrstuv.wxyz",
            // Found by the review of those.
            "host=db password = hunter2",
            "{'password': 'hunter2'}",
            "password: hunter2",
            "X-Api-Key: abcdef",
            "dckr_pat_abcdefghijklmnop",
            // And the review of those.
            "-Dspring.datasource.password=hunter2",
            "-Djavax.net.ssl.keyStorePassword=hunter2 -Xmx2g",
            r#"{"spring.datasource.password":"hunter2"}"#,
            "--set auth.password=hunter2",
            "admin:s3cret@squid_proxy:3128",
            "admin:s3cret@[fd00::1]:3128",
            "db.password: hunter2",
            "-H X-Api-Key:abcdef12345",
            // And the fifth review: quoted pairs, URLs after `key=`, tokens not at the start,
            // an npmrc's line, Vault's and Terraform's tokens.
            "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"u\" password=\"hunter10\";",
            "password='hunter41'",
            "user=u password=\"hunter46 with space\"",
            "token = \"hunter27\"",
            "--url=https://u:hunter42@host/x",
            "url=https://u:hunter43@host",
            "--with ghp_abcdefghijklmnopqrstuvwxyz0123",
            "-Dgithub.oauth=ghp_abcdefghijklmnopqrstuvwxyz0123",
            "//registry.npmjs.org/:_authToken=hunter26",
            "hvs.CAESIabcdefghijklmnopqrstuvwxyz",
            "abcdefghijklmn.atlasv1.opqrstuvwxyz0123456789",
            // And the review of those.
            "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----",
            "myuser:ghp_abcdefghijklmnopqrstuvwxyz0123456789",
            "claudette:glpat-abcdefghijklmnopqrst",
        ] {
            assert!(carries_secret(value), "{value}");
        }
        for value in [
            "postgres://app@db/app",
            "/usr/bin:/bin",
            "https://example.com/?page=2",
            "en_US.UTF-8",
            "-R",
            "git@github.com:org/repo.git",
            "me@example.com",
            r#"{"user": "me", "keyboard": "us"}"#,
            "http://proxy:3128",
            "LESS=-R",
            "rs=0:di=01;34:*.key=38;5;166:*.signature=38;5;100",
            "python:3.12-slim@sha256:0123456789abcdef0123456789abcdef",
            "a = b",
            "/home/me:/opt/bin",
            "-C target-cpu=native",
            "--max-old-space-size=4096",
            "git@github.com:org/repo.git https://github.com/org/repo",
            "ssh://git@github.com/org/repo.git",
            "user.name=me",
            "/opt/monkey:/usr/local/bin:/usr/bin:/bin",
            "info,oauth2::token=debug",
        ] {
            assert!(!carries_secret(value), "{value}");
        }
    }
}
