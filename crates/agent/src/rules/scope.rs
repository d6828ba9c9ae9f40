//! What "always" covers: what was approved, written as a rule would say it, so the question
//! can show it (`always allow Bash(npm test:*)?`) and the session keeps exactly that. Never the
//! whole tool, and never more than what was seen:
//!
//! - A command whose program is known to take only data as operands (files, patterns, names:
//!   `ls`, `grep`, `cat`; `git status`, `git diff`, `cargo test`, `npm run build`, `make test`):
//!   its program and subcommand, for each part. A later part is covered only when the shell
//!   reads it as that program with those words, **no option the approved command did not have**
//!   (`npm test --script-shell=x`, `git grep --open-files-in-pager=…` ask again), and operands
//!   that are plain: inside the working directory (not `/…`, `~…` or `..`), no `=` (`make test
//!   SHELL=…`), no leading `@`, and nothing the shell would expand (`*`, `?`, `[`).
//! - Any other command — what runs whatever its operands say (shells, interpreters, wrappers,
//!   `rustup run`, `sqlite3`, installers, containers) and what is simply not known here — only
//!   exactly as written. That list is not kept: what is not known to be safe is exact. An exact
//!   approval never covers a part of a piped command (a script piped into a shell is not in its
//!   words).
//! - A command with a substitution or a redirection gets no "always": no rule could allow it
//!   part by part ([`crate::grants`]).
//! - A file: its folder below the working directory and what is below it (`Edit(src/**)`), or
//!   the file alone when it sits directly in the working directory or in a folder that holds
//!   it (`Edit(./README.md)`). Only for paths made of plain characters: a name a glob or a rule
//!   would read otherwise (`,`, `{`, `~`, spaces, `\`) gets no "always".

use std::path::Path;

use serde_json::Value;

use super::Places;
use crate::grants::{SUBSTITUTION, parts};
use crate::shell::simple_commands;

/// Programs whose operands are data (files, patterns, text), never commands to run: "always"
/// covers them by program. Test runners run the project's tests, as the project's files say.
const DATA_PROGRAMS: [&str; 52] = [
    "ls",
    "cat",
    "head",
    "tail",
    "wc",
    "grep",
    "egrep",
    "fgrep",
    "rg",
    "ag",
    "diff",
    "cmp",
    "comm",
    "stat",
    "file",
    "du",
    "df",
    "pwd",
    "echo",
    "printf",
    "which",
    "tree",
    "sort",
    "uniq",
    "cut",
    "nl",
    "tr",
    "realpath",
    "readlink",
    "basename",
    "dirname",
    "date",
    "true",
    "false",
    "mkdir",
    "touch",
    "cp",
    "mv",
    "rm",
    "rmdir",
    "ln",
    "jq",
    "md5sum",
    "sha256sum",
    "base64",
    "seq",
    "tac",
    "column",
    "pytest",
    "jest",
    "vitest",
    "mocha",
];

/// Programs whose first operand names what they do, and those of their subcommands whose
/// operands are data (`run` names a script of the project: `npm run build`). "always" covers
/// that subcommand only; any other is exact.
const DATA_SUBCOMMANDS: [(&str, &[&str]); 11] = [
    (
        "git",
        // Not `fetch`, `pull`, `push`, `clone`: a remote named as an operand (a URL, a
        // repository in the tree with its own hooks) sends code out or brings it in.
        &[
            "status",
            "diff",
            "log",
            "show",
            "add",
            "commit",
            "branch",
            "checkout",
            "switch",
            "restore",
            "stash",
            "merge",
            "rebase",
            "reset",
            "tag",
            "blame",
            "rev-parse",
            "ls-files",
            "grep",
            "mv",
            "rm",
            "describe",
            "shortlog",
            "cherry-pick",
            "revert",
        ],
    ),
    (
        "cargo",
        &[
            "build", "test", "check", "clippy", "fmt", "doc", "bench", "run", "tree", "nextest",
        ],
    ),
    ("npm", &["test", "run", "ci", "ls", "outdated"]),
    ("pnpm", &["test", "run", "ls"]),
    ("yarn", &["test", "run"]),
    ("bun", &["test", "run"]),
    ("go", &["test", "build", "vet", "fmt"]),
    ("make", &[]),
    ("just", &[]),
    ("uv", &["sync", "lock"]),
    ("terraform", &["plan", "validate", "fmt"]),
];

/// Subcommands that name a script of the project to run (`npm run build`): "always" covers
/// that script only.
const RUNS_A_SCRIPT: [&str; 1] = ["run"];

/// The option words of a simple command's arguments (`-la`, `--all`, `+nightly`, `--`).
fn is_option(word: &str) -> bool {
    word.starts_with(['-', '+'])
}

/// What one approval lets run, for the rest of the session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// Command parts the shell reads as these words (the program as written, then its
    /// subcommand words) followed by anything, with no option outside `options`.
    Command {
        /// The program and its subcommand words.
        prefix: Vec<String>,
        /// The options the approved command had.
        options: Vec<String>,
    },
    /// Exactly this command part.
    Exact(String),
    /// A path rule, as written (`Edit(src/**)`).
    Rule(String),
}

impl Scope {
    /// As a rule would say it, for the question.
    pub fn text(&self) -> String {
        match self {
            Self::Command { prefix, .. } => format!("Bash({}:*)", prefix.join(" ")),
            Self::Exact(part) => format!("Bash({part})"),
            Self::Rule(rule) => rule.clone(),
        }
    }

    /// Whether this scope lets one part of a command run (a part as [`parts`] splits it).
    pub(crate) fn allows_part(&self, part: &str) -> bool {
        match self {
            Self::Exact(exact) => part.trim_matches([' ', '\t']) == exact,
            Self::Command { prefix, options } => {
                // Nothing the shell would expand: a pattern can become any word, an option too.
                if part.contains(['*', '?', '[']) {
                    return false;
                }
                let Some(argv) = plain_argv(part) else {
                    return false;
                };
                argv.len() >= prefix.len()
                    && argv[..prefix.len()] == prefix[..]
                    && argv[prefix.len()..].iter().all(|word| {
                        if is_option(word) {
                            options.contains(word)
                        } else {
                            plain_operand(word)
                        }
                    })
            }
            Self::Rule(_) => false,
        }
    }
}

/// An operand a covered command may take: inside the working directory and read as itself
/// (not `/…`, `~…`, `..`, no `=`, no `:` as in a URL or `host:path`, no leading `@`).
fn plain_operand(word: &str) -> bool {
    !word.starts_with(['/', '~', '@'])
        && !word.contains(['=', ':'])
        && !word.split('/').any(|component| component == "..")
}

/// A part's words as the shell reads them, when it is one simple command that runs its first
/// word as written (no assignment, wrapper or quote before the program); else `None`.
fn plain_argv(part: &str) -> Option<Vec<String>> {
    let commands = simple_commands(part);
    let [command] = commands.as_slice() else {
        return None;
    };
    let argv = command.argv();
    let first = part.split([' ', '\t']).find(|word| !word.is_empty())?;
    (argv.first().map(String::as_str) == Some(first)).then(|| argv.to_vec())
}

/// What "always" would keep for this call; empty when nothing narrower than the whole tool
/// could be said (then "always" is not offered).
pub fn scope_of(tool: &str, input: &Value, places: &Places) -> Vec<Scope> {
    match tool {
        "bash" => input
            .get("command")
            .and_then(Value::as_str)
            .map(command_scope)
            .unwrap_or_default(),
        "edit_file" | "write_file" => input
            .get("path")
            .and_then(Value::as_str)
            .and_then(|path| file_scope(Path::new(path), places))
            .map(Scope::Rule)
            .into_iter()
            .collect(),
        // Another server's tool: that tool, whatever its arguments (the rule it would take).
        mcp if mcp.starts_with("mcp__") && mcp.len() <= 128 => vec![Scope::Rule(mcp.to_string())],
        _ => Vec::new(),
    }
}

/// The scopes covering each part of `command`, in order, each once.
fn command_scope(command: &str) -> Vec<Scope> {
    // What no rule could cover later is not offered: a substitution, a redirection, or a quote,
    // escape or comment spanning a separator.
    if command.contains(SUBSTITUTION) || !crate::grants::splits_as_parts(command) {
        return Vec::new();
    }
    let mut scopes: Vec<Scope> = Vec::new();
    for part in parts(command) {
        let Some(scope) = part_scope(part) else {
            return Vec::new();
        };
        // The same program and subcommand twice: one scope, with the options of both.
        if let Scope::Command { prefix, options } = &scope
            && let Some(Scope::Command { options: seen, .. }) = scopes
                .iter_mut()
                .find(|other| matches!(other, Scope::Command { prefix: p, .. } if p == prefix))
        {
            for option in options {
                if !seen.contains(option) {
                    seen.push(option.clone());
                }
            }
        } else if !scopes.contains(&scope) {
            scopes.push(scope);
        }
    }
    // A script piped into a shell or an interpreter is not in its words: what is approved
    // exactly would run any other script piped in the same way.
    let piped_into_anything =
        command.contains('|') && scopes.iter().any(|scope| matches!(scope, Scope::Exact(_)));
    if piped_into_anything {
        return Vec::new();
    }
    scopes
}

/// The scope for one simple command.
fn part_scope(part: &str) -> Option<Scope> {
    let part = part.trim_matches([' ', '\t']);
    if part.is_empty() || part.contains('*') {
        return None;
    }
    let exact = || Some(Scope::Exact(part.to_string()));
    // Quotes, escapes or an assignment before the program: its words are not what they show.
    let Some(argv) = plain_argv(part) else {
        return exact();
    };
    let program = argv.first()?;
    // A program named by a path (`./ls`, `bin/test`) is whatever that file is: only this.
    if program.contains('/') {
        return exact();
    }
    let name = program.as_str();
    let word = |index: usize| {
        argv.get(index).filter(|word| {
            !is_option(word) && plain_operand(word) && !word.contains(['\'', '"', '\\'])
        })
    };
    let mut prefix = vec![program.clone()];
    let mut used = 1;
    if let Some((_, subcommands)) = DATA_SUBCOMMANDS.iter().find(|(known, _)| *known == name) {
        // `git -C x status`, a bare `git`: what it does is not one word, so only this.
        let Some(sub) = word(1) else {
            return exact();
        };
        // `make` and `just` take a target of the project's file.
        if !subcommands.is_empty() && !subcommands.contains(&sub.as_str()) {
            return exact();
        }
        prefix.push(sub.clone());
        used = 2;
        if RUNS_A_SCRIPT.contains(&sub.as_str()) && name != "cargo" {
            // `npm run --silent test`: the script is not the next word, so only this.
            let Some(script) = word(2) else {
                return exact();
            };
            prefix.push(script.clone());
            used = 3;
        }
    } else if !DATA_PROGRAMS.contains(&name) {
        return exact();
    }
    let options = argv[used..]
        .iter()
        .filter(|word| is_option(word))
        .cloned()
        .collect();
    Some(Scope::Command { prefix, options })
}

/// A path made only of characters no glob or rule reads otherwise, as text.
fn plain_path(path: &Path) -> Option<&str> {
    let text = path.to_str()?;
    let plain = text.split('/').all(|name| {
        !name.starts_with('~')
            && name
                .chars()
                .all(|letter| letter.is_alphanumeric() || "._-+@%:".contains(letter))
    });
    plain.then_some(text)
}

/// The `Edit(…)` rule for a file written at `path` (absolute): its folder below the working
/// directory, or the file alone.
fn file_scope(path: &Path, places: &Places) -> Option<String> {
    if let Ok(relative) = path.strip_prefix(&places.cwd) {
        return match relative.parent() {
            Some(folder) if !folder.as_os_str().is_empty() => {
                Some(format!("Edit({}/**)", plain_path(folder)?))
            }
            _ => Some(format!("Edit(./{})", plain_path(relative)?)),
        };
    }
    // Outside the working directory (an added folder): that folder and below, unless it holds
    // the working directory (`--add-dir ..`): then the file alone.
    let folder = path.parent()?;
    if places.cwd.starts_with(folder) {
        Some(format!("Edit(/{})", plain_path(path)?))
    } else {
        Some(format!("Edit(/{}/**)", plain_path(folder)?))
    }
}

#[cfg(test)]
mod tests;
