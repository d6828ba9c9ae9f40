//! `bash {command, timeout?}`: runs a command in the working directory, in the sandbox
//! ([`crate::sandbox`]), with the secrets of skillet's environment removed, a timeout, an output
//! cap and a blocklist of plainly destructive commands (a guard against slips, not a boundary:
//! the sandbox is). The command runs in its own process group, which is killed whole when it
//! times out, when the turn is cancelled, and when it returns (nothing it started is left).

use std::collections::VecDeque;
use std::fmt::Write as _;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::AsyncReadExt as _;

use crate::permission::ApprovalRequest;
use crate::tool::{BoxFuture, Tool, ToolContext, ToolError, ToolKind, string_arg, usize_arg};
pub use crate::tools::blocklist::blocked;

/// The timeout when the model gives none.
pub const DEFAULT_TIMEOUT_SECS: u64 = 120;
/// The longest timeout the model may ask for.
pub const MAX_TIMEOUT_SECS: u64 = 600;
/// The most output characters returned; the middle of longer output is cut.
pub const MAX_OUTPUT_CHARS: usize = 50_000;

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
/// GitLab runner and deploy tokens, DigitalOcean, SendGrid, Shopify.
pub const SECRET_VALUE_PREFIXES: [&str; 35] = [
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
    "AGE-SECRET-KEY-1",
];
/// A value shorter than this is not taken for a token by its beginning (`sk-` alone is not one).
const MIN_TOKEN_CHARS: usize = 16;
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
/// (`postgres://user:pw@host/db`) or a token for its user, a well-known token or a JWT, a
/// `password=…` pair (libpq, a URL's query), a chat webhook.
pub fn carries_secret(value: &str) -> bool {
    // Quotes kept from an env file (`"postgres://…"`) are not part of the value, nor spaces
    // around a pair's `=` (libpq takes `password = pw`).
    let spaced = value.trim().trim_matches(['"', '\'']);
    let unspaced = without_spaces_around_equals(spaced);
    let value = unspaced.as_str();
    let token = |text: &str| {
        text.chars().count() >= MIN_TOKEN_CHARS
            && (SECRET_VALUE_PREFIXES
                .iter()
                .any(|prefix| text.starts_with(prefix))
                || text.starts_with("eyJ") && text.matches('.').count() == 2)
    };
    let lower = value.to_ascii_lowercase();
    let header = SECRET_VALUE_WORDS
        .iter()
        .any(|word| lower.starts_with(word))
        || lower.contains("authorization:");
    if header || token(value) || SECRET_URL_PARTS.iter().any(|part| value.contains(part)) {
        return true;
    }
    // Words of the value: a list, a connection string, JSON (its quotes and brackets).
    let parts = || {
        value
            .split([
                ' ', ',', ';', '\n', '\t', '"', '\'', '{', '}', '(', ')', '<', '>',
            ])
            .filter(|part| !part.is_empty())
    };
    // A key is a name (`AccountKey`, `X-Api-Key`), judged by its last dotted part
    // (`spring.datasource.password`, `-Djavax.net.ssl.keyStorePassword`), never a pattern
    // (`LS_COLORS`' `*.key`).
    let secret_key = |key: &str| {
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
    };
    // `key=value` pairs, alone or in a URL's query.
    let pair = parts()
        .flat_map(|part| part.split(['?', '&']))
        .filter_map(|pair| pair.split_once('='))
        .any(|(key, secret)| !secret.is_empty() && secret_key(key));
    // `password: …` as JSON, YAML, a Python dict or a header (`X-Api-Key: …`) write it.
    let json = value.split([',', ';', '\n', '{', '}']).any(|part| {
        part.split_once(':').is_some_and(|(key, secret)| {
            let secret = secret.trim().trim_matches(['"', '\'']);
            secret_key(key) && !secret.is_empty() && !secret.starts_with("//")
        })
    });
    // Any URL in the value (a list of them too) with a password, or a token, in its user part;
    // a proxy's `user:password@host` without a scheme too.
    pair || json
        || parts().any(|part| {
            let (scheme, rest) = part.split_once("://").unwrap_or(("", part));
            let scheme_ok = scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '.' | '-' | ':'));
            scheme_ok
                && rest
                    .split(['/', '?', '#'])
                    .next()
                    .and_then(|authority| authority.rsplit_once('@'))
                    .is_some_and(|(user, host)| match user.split_once(':') {
                        // Without a scheme, only `user:password@host[:port]`: an image's
                        // `name:tag@sha256:…` is no credential.
                        Some((_, password)) => {
                            !password.is_empty() && (!scheme.is_empty() || is_host(host))
                        }
                        // Without a scheme, `name@host` is an address, not a credential.
                        None => {
                            !scheme.is_empty()
                                && (token(user) || user.chars().count() >= MIN_URL_TOKEN_CHARS)
                        }
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

/// The environment of a sandboxed command (`bash`, a hook): skillet's, less every variable
/// [`withheld`] (`pass`: those the user passes on purpose), with git's settings for the launch
/// ([`crate::sandbox::Launch::git_settings`]).
pub(crate) fn command_env(
    shell: &mut tokio::process::Command,
    launch: &crate::sandbox::Launch,
    pass: &[String],
) {
    let mut git_config_withheld = false;
    for (name, value) in std::env::vars_os() {
        if withheld(&name, &value, pass) {
            shell.env_remove(&name);
            git_config_withheld |= name.to_string_lossy().starts_with("GIT_CONFIG_VALUE_");
        }
    }
    if git_config_withheld {
        // Git reads GIT_CONFIG_COUNT pairs of KEY_n and VALUE_n and stops at a missing one:
        // without the count it reads none, rather than failing every call.
        shell.env_remove("GIT_CONFIG_COUNT");
    }
    let name = crate::sandbox::GIT_CONFIG_PARAMETERS;
    let user = std::env::var_os(name).filter(|value| !withheld(name.as_ref(), value, pass));
    shell.envs(launch.git_settings(user));
}

/// Runs shell commands.
pub struct Bash;

impl Tool for Bash {
    fn name(&self) -> &'static str {
        "bash"
    }

    fn description(&self, _context: &ToolContext) -> String {
        format!(
            "Run a bash command in the working directory and return its output (stdout and \
             stderr together) and exit code. Timeout {DEFAULT_TIMEOUT_SECS} s unless `timeout` \
             (seconds, at most {MAX_TIMEOUT_SECS}) says otherwise; output over \
             {MAX_OUTPUT_CHARS} characters is cut in the middle. Plainly destructive commands \
             are refused."
        )
    }

    fn input_schema(&self, _context: &ToolContext) -> Value {
        json!({"type": "object", "properties": {
            "command": {"type": "string"},
            "timeout": {"type": "integer", "minimum": 1, "maximum": MAX_TIMEOUT_SECS, "description": "Seconds"}
        }, "required": ["command"]})
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Execute
    }

    fn call<'a>(
        &'a self,
        input: &'a Value,
        context: &'a ToolContext,
    ) -> BoxFuture<'a, Result<String, ToolError>> {
        Box::pin(async move {
            let command = string_arg(input, "command")?;
            if let Some(why) = blocked(command) {
                return Err(ToolError::new(format!(
                    "refused: this command {why}; it is on skillet's blocklist"
                )));
            }
            let timeout = usize_arg(input, "timeout")?
                .map_or(DEFAULT_TIMEOUT_SECS, |s| {
                    u64::try_from(s).unwrap_or(MAX_TIMEOUT_SECS)
                })
                .clamp(1, MAX_TIMEOUT_SECS);
            let request = ApprovalRequest::new(self.name(), ToolKind::Execute, command);
            // Decided before asking: a command the user approves now was reviewed; one the
            // policy or an active skill lets run was not.
            let unattended = context.gate.allows_unasked(&request, input);
            context.approve(&request, input)?;
            run_guarded(
                command,
                &[],
                context,
                Duration::from_secs(timeout),
                unattended,
            )
            .await
            .map(|ran| {
                if ran.text.trim().is_empty() {
                    "(no output)".to_string()
                } else {
                    ran.text
                }
            })
        })
    }
}

/// A command's output, and whether it exited with 0.
pub(crate) struct Ran {
    /// What it printed (stdout and stderr together, capped), with its exit code when not 0.
    pub(crate) text: String,
    /// It exited with 0.
    pub(crate) success: bool,
}

/// Runs a command as `bash` does, once allowed. Where nobody was asked (`unattended`), the
/// files that run code later are read-only for it (namespaces), or, where the sandbox cannot do
/// that, put back after the command, also when it is cancelled, and what was put back is told.
pub(crate) async fn run_guarded(
    command: &str,
    env: &[(String, String)],
    context: &ToolContext,
    timeout: Duration,
    unattended: bool,
) -> Result<Ran, ToolError> {
    let prepare = |policy: &crate::sandbox::SandboxPolicy| {
        crate::sandbox::Launch::prepare(
            policy,
            &context.cwd,
            unattended.then_some(context.protected.as_slice()),
        )
        .map_err(|error| ToolError::new(format!("cannot start bash: {error}")))
    };
    let mut policy = context.sandbox_policy();
    let mut launch = prepare(&policy)?;
    // Without namespaces what runs code later is put back afterwards, in the working directory
    // only: a command nobody reviewed then gets no added folder to write in.
    if unattended && launch.needs_put_back() && policy.writable != context.sandbox.writable {
        policy = context.sandbox.clone();
        launch = prepare(&policy)?;
    }
    for incomplete in launch.incomplete() {
        told_once(context, incomplete);
    }
    let mut put_back = (unattended && launch.needs_put_back())
        .then(|| PutBack(crate::guard::Guard::watch(&context.cwd, &context.protected)));
    #[cfg(unix)]
    let aftermath = unattended.then(|| {
        crate::sandbox::aftermath::Aftermath::before(
            &context.cwd,
            launch.links().to_vec(),
            &crate::sandbox::host::untrusted_roots(&context.cwd, &policy.writable),
        )
    });
    let mut output = run(command, env, context, timeout, &launch).await;
    #[cfg(unix)]
    if let Some(aftermath) = aftermath {
        let findings = aftermath.after();
        if !findings.is_empty() {
            for finding in &findings {
                context.notices.push(format!("careful: {finding}"));
            }
            output = with_note(
                output,
                &format!(
                    "\n[skillet: {}. Commands nobody reviews may not leave what runs code later: tell the user]",
                    findings.join("; ")
                ),
            );
        }
    }
    if let Some(guard) = put_back.as_mut().and_then(|put_back| put_back.0.take()) {
        let changed = guard.restore();
        if !changed.is_empty() {
            let list: Vec<String> = changed
                .iter()
                .map(|change| {
                    format!(
                        "{}{}",
                        change.path.display(),
                        if change.restored {
                            ""
                        } else {
                            " (could not be put back: tell the user)"
                        }
                    )
                })
                .collect();
            let note = format!(
                "\n[refused: the command changed {}; skillet put them back. Commands nobody reviews may not change git's config and hooks, .envrc, skillet.toml or skill folders (they run code or steer the model later): tell the user what to change instead]",
                list.join(", ")
            );
            output = with_note(output, &note);
        }
    }
    output
}

/// Tells the user `notice` (a `careful:` one) the first time this process meets it.
fn told_once(context: &ToolContext, notice: &str) {
    static TOLD: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
    let mut told = TOLD
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if !told.iter().any(|known| known == notice) {
        told.push(notice.to_string());
        context.notices.push(format!("careful: {notice}"));
    }
}

/// A command's result with `note` added, as a failure: the model is to tell the user.
fn with_note(output: Result<Ran, ToolError>, note: &str) -> Result<Ran, ToolError> {
    match output {
        Ok(ran) => Ok(Ran {
            text: ran.text + note,
            success: false,
        }),
        Err(error) => Err(ToolError::new(error.0 + note)),
    }
}

async fn run(
    command: &str,
    env: &[(String, String)],
    context: &ToolContext,
    timeout: Duration,
    launch: &crate::sandbox::Launch,
) -> Result<Ran, ToolError> {
    let mut shell = launch.command("bash");
    shell
        .arg("-c")
        // One pipe for both streams keeps their order.
        .arg(format!("exec 2>&1\n{command}"))
        .current_dir(&context.cwd)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true);
    command_env(&mut shell, launch, &context.sandbox.pass_env);
    shell.envs(env.iter().map(|(name, value)| (name, value)));
    // Its own process group, so a timeout or a cancelled turn stops everything it started.
    #[cfg(unix)]
    shell.process_group(0);
    let mut child = launch
        .spawn(shell)
        .await
        .map_err(|error| ToolError::new(format!("cannot start bash: {error}")))?;
    let _group = GroupGuard(child.id());
    let mut stdout = child
        .stdout
        .take()
        .ok_or_else(|| ToolError::new("cannot read the command's output"))?;
    let mut output = CappedOutput::default();
    let reading = async {
        let mut buffer = [0_u8; 8192];
        loop {
            match stdout.read(&mut buffer).await {
                Ok(0) | Err(_) => break,
                Ok(n) => output.push(&buffer[..n]),
            }
        }
        child.wait().await
    };
    let Ok(exit) = tokio::time::timeout(timeout, reading).await else {
        let partial = output.finish();
        return Err(ToolError::new(format!(
            "the command timed out after {} s and was stopped; output so far:\n{}",
            timeout.as_secs(),
            if partial.is_empty() {
                "(none)".to_string()
            } else {
                partial
            }
        )));
    };
    let mut text = output.finish();
    let success = exit.as_ref().is_ok_and(std::process::ExitStatus::success);
    match exit {
        Ok(status) if status.success() => {}
        Ok(status) => {
            let code = status.code().map_or_else(
                || "killed by a signal".to_string(),
                |c| format!("exit code {c}"),
            );
            let _ = write!(text, "\n[{code}]");
        }
        Err(error) => {
            let _ = write!(text, "\n[cannot wait for the command: {error}]");
        }
    }
    Ok(Ran { text, success })
}

/// Puts protected files back when dropped (a cancelled command), unless the normal path did.
pub(crate) struct PutBack(pub(crate) Option<crate::guard::Guard>);

impl Drop for PutBack {
    fn drop(&mut self) {
        if let Some(guard) = &self.0 {
            guard.restore();
        }
    }
}

/// Kills the command's process group when dropped: after it returns, when it times out, and
/// when the turn is cancelled (the future holding it is dropped).
pub(crate) struct GroupGuard(pub(crate) Option<u32>);

impl Drop for GroupGuard {
    fn drop(&mut self) {
        crate::sandbox::kill_group(self.0);
    }
}

/// Keeps the head and the tail of a long output, counting what falls between.
#[derive(Default)]
struct CappedOutput {
    head: Vec<u8>,
    tail: VecDeque<u8>,
    dropped: usize,
}

impl CappedOutput {
    const HALF: usize = MAX_OUTPUT_CHARS / 2;

    fn push(&mut self, bytes: &[u8]) {
        let room = Self::HALF.saturating_sub(self.head.len());
        let (to_head, rest) = bytes.split_at(room.min(bytes.len()));
        self.head.extend_from_slice(to_head);
        self.tail.extend(rest);
        while self.tail.len() > Self::HALF {
            self.tail.pop_front();
            self.dropped += 1;
        }
    }

    fn finish(&mut self) -> String {
        let head = String::from_utf8_lossy(&self.head).into_owned();
        let tail: Vec<u8> = self.tail.iter().copied().collect();
        let tail = String::from_utf8_lossy(&tail);
        if self.dropped == 0 {
            return head + &tail;
        }
        format!(
            "{head}\n[… {} bytes of output cut here; the output was {} bytes …]\n{tail}",
            self.dropped,
            self.head.len() + self.dropped + self.tail.len()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_keeps_head_and_tail() {
        let mut output = CappedOutput::default();
        output.push(&vec![b'a'; CappedOutput::HALF]);
        output.push(&[b'b'; 100]);
        output.push(&vec![b'c'; CappedOutput::HALF]);
        let text = output.finish();
        assert!(text.starts_with(&"a".repeat(CappedOutput::HALF)));
        assert!(text.ends_with(&"c".repeat(CappedOutput::HALF)));
        assert!(text.contains("[… 100 bytes of output cut here; the output was 50100 bytes …]"));
    }

    #[test]
    fn credentials_under_other_names_and_in_values_are_found() {
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
        ] {
            assert!(!carries_secret(value), "{value}");
        }
    }
}
