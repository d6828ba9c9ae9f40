//! What "always" covers: what was approved, written as a rule would say it, so the question
//! can show it (`always allow Bash(npm test:*)?`) and the session keeps exactly that. Never the
//! whole tool, and never more than what was seen:
//!
//! - A command: for each of its parts, the program (as written) with its subcommand when it
//!   has one (`git status`, `cargo test`, `npm run build`), else the program alone (`ls`). A
//!   later part is covered only when the shell reads it as that program with those words and
//!   **no option the approved command did not have** (`npm test --script-shell=x`,
//!   `git grep --open-files-in-pager=…`, `tar --checkpoint-action=…` are asked about again).
//!   What runs whatever its arguments say — shells, interpreters (`python3.11` too), wrappers
//!   (`sudo`, `strace`), package installers (`pip install`), containers, `export`, `cd` — is
//!   covered only exactly as written; a command that pipes into one of those gets no "always".
//!   A command with a substitution or a redirection gets none either: no rule could allow it
//!   part by part ([`crate::grants`]).
//! - A file: its folder below the working directory and what is below it (`Edit(src/**)`), or
//!   the file alone when it sits directly in the working directory or in a folder that holds
//!   it (`Edit(./README.md)`). Only for paths made of plain characters: a name a glob or a rule
//!   would read otherwise (`,`, `{`, `~`, spaces, `\`) gets no "always".

use std::path::Path;

use serde_json::Value;

use super::Places;
use crate::grants::{SUBSTITUTION, parts};
use crate::shell::{file_name, simple_commands};

/// Programs whose first argument names what they do (`git status`, `cargo test`): "always"
/// covers that subcommand only.
const SUBCOMMANDS: [&str; 23] = [
    "git",
    "cargo",
    "npm",
    "pnpm",
    "yarn",
    "bun",
    "go",
    "make",
    "just",
    "uv",
    "pip",
    "poetry",
    "rustup",
    "dotnet",
    "mvn",
    "gradle",
    "bundle",
    "rails",
    "mix",
    "deno",
    "terraform",
    "helm",
    "systemctl",
];

/// Subcommands that name a script of the project to run (`npm run build`): "always" covers
/// that script only.
const RUNS_A_SCRIPT: [&str; 1] = ["run"];

/// Subcommands that run or install whatever their arguments name: covered only exactly.
const RUNS_ANYTHING_BY_SUBCOMMAND: [(&str, &str); 24] = [
    ("git", "submodule"),
    ("git", "bisect"),
    ("git", "filter-branch"),
    ("npm", "exec"),
    ("npm", "x"),
    ("npm", "install"),
    ("npm", "i"),
    ("npm", "add"),
    ("pnpm", "exec"),
    ("pnpm", "dlx"),
    ("pnpm", "add"),
    ("yarn", "exec"),
    ("yarn", "dlx"),
    ("yarn", "add"),
    ("bun", "x"),
    ("bun", "add"),
    ("uv", "run"),
    ("uv", "tool"),
    ("uv", "pip"),
    ("pip", "install"),
    ("poetry", "run"),
    ("bundle", "exec"),
    ("cargo", "install"),
    ("go", "install"),
];

/// Programs that run whatever their arguments say (shells, interpreters, wrappers, tools whose
/// options or scripts run commands, remote shells, containers) or that change what later parts
/// run (`export`, `cd`): "always" covers such a part only exactly as written. A versioned name
/// counts as its program (`python3.11` is `python`).
const RUNS_ANYTHING: [&str; 64] = [
    "sh", "bash", "dash", "zsh", "ksh", "fish", "eval", "exec", "source", ".", "sudo", "doas",
    "su", "runuser", "pkexec", "env", "xargs", "parallel", "nohup", "setsid", "timeout", "nice",
    "ionice", "chrt", "taskset", "stdbuf", "unbuffer", "strace", "ltrace", "valgrind", "gdb",
    "chroot", "unshare", "nsenter", "flock", "script", "command", "builtin", "time", "watch",
    "python", "node", "perl", "ruby", "php", "lua", "npx", "bunx", "uvx", "pipx", "find", "awk",
    "gawk", "sed", "tar", "rsync", "ssh", "docker", "podman", "kubectl", "gh", "export", "cd",
    "alias",
];

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
                let Some(argv) = plain_argv(part) else {
                    return false;
                };
                argv.len() >= prefix.len()
                    && argv[..prefix.len()] == prefix[..]
                    && argv[prefix.len()..]
                        .iter()
                        .filter(|word| is_option(word))
                        .all(|option| options.contains(option))
            }
            Self::Rule(_) => false,
        }
    }
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
        _ => Vec::new(),
    }
}

/// The scopes covering each part of `command`, in order, each once.
fn command_scope(command: &str) -> Vec<Scope> {
    if command.contains(SUBSTITUTION) {
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

/// The program a name stands for: `python3.11` is `python`, `/usr/bin/sed` is `sed`.
fn program_of(word: &str) -> &str {
    file_name(word)
        .trim_end_matches(|letter: char| letter.is_ascii_digit() || letter == '.' || letter == '-')
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
    let name = program_of(program);
    if RUNS_ANYTHING.contains(&name) || program_of(program).is_empty() {
        return exact();
    }
    let word = |index: usize| {
        argv.get(index)
            .filter(|word| !is_option(word) && !word.contains(['/', '=', '\'', '"', '\\']))
    };
    let mut prefix = vec![program.clone()];
    let mut used = 1;
    if SUBCOMMANDS.contains(&name) {
        // `git -C x status`, a bare `git`: what it does is not one word, so only this.
        let Some(sub) = word(1) else {
            return exact();
        };
        if RUNS_ANYTHING_BY_SUBCOMMAND.contains(&(name, sub.as_str())) {
            return exact();
        }
        prefix.push(sub.clone());
        used = 2;
        if RUNS_A_SCRIPT.contains(&sub.as_str()) {
            // `npm run --silent test`: the script is not the next word, so only this.
            let Some(script) = word(2) else {
                return exact();
            };
            prefix.push(script.clone());
            used = 3;
        }
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
