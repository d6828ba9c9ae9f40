//! TOML's errors put in the file's words: where, the line quoted, what was expected as a user
//! would say it, and "did you mean" for an unknown key.

/// The keys `skillet.toml` knows, for "did you mean".
const FILE_KEYS: &[&str] = &[
    "provider",
    "model",
    "base_url",
    "max_tokens",
    "thinking_budget",
    "max_steps",
    "catalog",
    "catalog_budget",
    "yes",
    "stream",
    "skill_shell",
    "save_skills",
    "skill_match",
    "sandbox",
    "network",
    "writable",
    "enabled",
    "pass_env",
    "unix_sockets",
    "registry_url",
    "permissions",
    "allow",
    "ask",
    "deny",
    "default_mode",
    "additional_directories",
    "mcp_servers",
    "command",
    "args",
    "env",
    "cwd",
    "url",
    "headers",
    "startup_timeout_sec",
    "tool_timeout_sec",
    "trust_read_only",
    "mcp",
    "tool_search",
    "inline_tokens",
];
/// A key this close to a known one (in edits) is suggested as a typo of it.
const MAX_TYPO_EDITS: usize = 2;

/// A TOML error as the user reads it after the file's name: `line LINE, column COLUMN: what`,
/// the line quoted, and what was expected in TOML's words rather than Rust's (`a whole number`,
/// not `usize`).
pub(super) fn toml_message(error: &toml::de::Error, text: &str) -> String {
    let mut message = error.message().trim().to_string();
    for (rust, plain) in [
        ("expected usize", "expected a whole number"),
        ("expected u32", "expected a whole number up to 4294967295"),
        ("expected u64", "expected a whole number"),
        (
            "expected struct SandboxFile",
            "expected a table ([sandbox])",
        ),
        (
            "expected struct PermissionsFile",
            "expected a table ([permissions])",
        ),
        ("expected struct FileConfig", "expected a table"),
        (
            "expected struct ServerFile",
            "expected a table ([mcp_servers.NAME])",
        ),
        ("expected struct McpFile", "expected a table ([mcp])"),
        (
            "expected a sequence",
            "expected a list in brackets, such as [\"/home/me/.cargo\"] or [\"Bash(git status:*)\"]",
        ),
        ("expected a boolean", "expected true or false"),
        ("expected a string", "expected a quoted string"),
    ] {
        message = message.replace(rust, plain);
    }
    if let Some(unknown) = message
        .strip_prefix("unknown field `")
        .and_then(|rest| rest.split('`').next())
        .map(str::to_string)
    {
        message = match closest_key(&unknown) {
            Some(known) => format!("unknown key `{unknown}`; did you mean `{known}`?"),
            None => format!(
                "unknown key `{unknown}`; skillet.toml knows {}",
                FILE_KEYS[..11].join(", ")
            ),
        };
    }
    let Some(span) = error.span() else {
        return message;
    };
    let before = &text[..span.start.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    let quoted = text.lines().nth(line - 1).unwrap_or_default().trim_end();
    // `[[sandbox]]` is a list of tables, which serde reads field by field ("invalid type: map,
    // expected true or false"): say what it is instead.
    if let Some(name) = quoted
        .trim_start()
        .strip_prefix("[[")
        .and_then(|rest| rest.split("]]").next())
    {
        let name = name.trim();
        message = format!(
            "`[[{name}]]` makes a list of tables, and `{name}` is one table: write `[{name}]`"
        );
    }
    format!("line {line}, column {column}: {message}\n    {line} | {quoted}")
}

/// The known key a typo is closest to, if one is within [`MAX_TYPO_EDITS`].
fn closest_key(unknown: &str) -> Option<&'static str> {
    FILE_KEYS
        .iter()
        .map(|known| (edit_distance(unknown, known), *known))
        .filter(|(distance, _)| *distance <= MAX_TYPO_EDITS)
        .min()
        .map(|(_, known)| known)
}

/// Levenshtein distance, by characters (keys are short).
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (above + 1)
                .min(row[j] + 1)
                .min(diagonal + usize::from(ca != *cb));
            diagonal = above;
        }
    }
    row[b.len()]
}
