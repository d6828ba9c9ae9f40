//! What "always" covers: the rules an approval would add, written as a user would write them,
//! so the question can show them (`always allow Bash(npm test:*)?`) and the session keeps
//! exactly those. Never the whole tool:
//!
//! - a command: for each of its parts, the program with its subcommand when it has them
//!   (`git status`, `cargo test`, `npm run build`), else the program alone (`ls`); a part that
//!   runs whatever its arguments say (a shell, an interpreter, a wrapper: `sh -c …`, `python x.py`,
//!   `sudo …`) only exactly as written. A command with a substitution or a redirection gets no
//!   "always": no rule could allow it part by part ([`crate::grants`]).
//! - a file: its folder and what is below it (`Edit(src/**)`), or the file alone when it sits
//!   directly in the working directory (`Edit(./README.md)`): a folder's approval never spreads
//!   to the whole tree.

use std::path::Path;

use serde_json::Value;

use super::Places;
use crate::grants::{SUBSTITUTION, parts};
use crate::shell::simple_commands;

/// Programs whose first argument names what they do (`git status`, `cargo test`): "always"
/// covers that subcommand only.
const SUBCOMMANDS: [&str; 28] = [
    "git",
    "cargo",
    "npm",
    "pnpm",
    "yarn",
    "bun",
    "go",
    "docker",
    "podman",
    "kubectl",
    "make",
    "just",
    "uv",
    "pip",
    "pip3",
    "poetry",
    "gh",
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

/// Subcommands that name a script to run (`npm run build`): "always" covers that script only.
const RUNS_A_SCRIPT: [&str; 3] = ["run", "exec", "x"];

/// Programs that run whatever their arguments say (shells, interpreters, tools whose scripts
/// can run commands, remote shells): "always" covers such a part only exactly as written.
/// Wrappers (`sudo`, `env`, `timeout`, `nice`, …) need no listing: a part whose program, as
/// the shell reads it ([`crate::shell`]), is not its first word is covered exactly too.
const RUNS_ANYTHING: [&str; 36] = [
    "sh", "bash", "dash", "zsh", "ksh", "fish", "eval", "exec", "source", ".", "sudo", "doas",
    "env", "xargs", "nohup", "setsid", "timeout", "nice", "command", "builtin", "time", "python",
    "python3", "node", "perl", "ruby", "php", "lua", "npx", "bunx", "find", "awk", "gawk", "sed",
    "ssh", "watch",
];

/// The rules "always" would add for this call, as written in a rule list; empty when nothing
/// narrower than the whole tool could be said (then "always" is not offered).
pub fn scope_of(tool: &str, input: &Value, places: &Places) -> Vec<String> {
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
            .into_iter()
            .collect(),
        _ => Vec::new(),
    }
}

/// The `Bash(…)` rules covering each part of `command`, in order, each once.
fn command_scope(command: &str) -> Vec<String> {
    if command.contains(SUBSTITUTION) {
        return Vec::new();
    }
    let mut rules: Vec<String> = Vec::new();
    for part in parts(command) {
        let Some(rule) = part_scope(part) else {
            return Vec::new();
        };
        if !rules.contains(&rule) {
            rules.push(rule);
        }
    }
    rules
}

/// The rule for one simple command, as [`crate::grants::Rule::allows_part`] reads it: its
/// words split at blanks, as written.
fn part_scope(part: &str) -> Option<String> {
    let words: Vec<&str> = part.split([' ', '\t']).filter(|w| !w.is_empty()).collect();
    let program = *words.first()?;
    // A rule cannot hold a `*` in its words; a quote or an escape means a word is not what it
    // shows, and an assignment changes what runs.
    let plain = |word: &str| !word.contains(['*', '"', '\'', '\\', '=']);
    let name = program.rsplit('/').next().unwrap_or(program);
    let exact = || (!part.contains('*')).then(|| format!("Bash({part})"));
    // The program the shell really runs, past assignments and wrappers.
    let runs = simple_commands(part)
        .first()
        .and_then(|command| command.argv().first().cloned());
    if RUNS_ANYTHING.contains(&name) || !plain(program) || runs.as_deref() != Some(program) {
        return exact();
    }
    let subcommand = |index: usize| {
        words
            .get(index)
            .filter(|word| plain(word) && !word.starts_with(['-', '+']) && !word.contains('/'))
    };
    let mut prefix = vec![program];
    if SUBCOMMANDS.contains(&name) {
        // `git -C x status`, a bare `git`: what it does is not one word, so only this.
        let Some(sub) = subcommand(1) else {
            return exact();
        };
        prefix.push(sub);
        if RUNS_A_SCRIPT.contains(sub)
            && let Some(script) = subcommand(2)
        {
            prefix.push(script);
        }
    }
    Some(format!("Bash({}:*)", prefix.join(" ")))
}

/// The `Edit(…)` rule for a file written at `path` (absolute): its folder below the working
/// directory, or the file alone.
fn file_scope(path: &Path, places: &Places) -> Option<String> {
    let text = |path: &Path| path.to_str().map(globset::escape);
    if let Ok(relative) = path.strip_prefix(&places.cwd) {
        return match relative.parent() {
            Some(folder) if !folder.as_os_str().is_empty() => {
                Some(format!("Edit({}/**)", text(folder)?))
            }
            _ => Some(format!("Edit(./{})", text(relative)?)),
        };
    }
    // Outside the working directory (an added folder): that folder and below, absolute.
    Some(format!("Edit(/{}/**)", text(path.parent()?)?))
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use serde_json::json;

    use super::*;

    fn places() -> Places {
        Places {
            cwd: PathBuf::from("/work/p"),
            project_root: PathBuf::from("/work/p"),
            home: None,
        }
    }

    fn bash(command: &str) -> Vec<String> {
        scope_of("bash", &json!({ "command": command }), &places())
    }

    #[test]
    fn a_command_is_covered_by_its_program_and_subcommand_never_the_tool() {
        assert_eq!(bash("npm test"), ["Bash(npm test:*)"]);
        assert_eq!(bash("npm run build -- --prod"), ["Bash(npm run build:*)"]);
        // Options before the subcommand: exactly as written, not all of git.
        assert_eq!(bash("git -C x status"), ["Bash(git -C x status)"]);
        assert_eq!(bash("git"), ["Bash(git)"]);
        assert_eq!(bash("echo one"), ["Bash(echo:*)"]);
        assert_eq!(
            bash("ls -la && cargo test --all"),
            ["Bash(ls:*)", "Bash(cargo test:*)"]
        );
        assert_eq!(bash("ls; ls -a"), ["Bash(ls:*)"]);
        // What runs anything is covered exactly as written.
        assert_eq!(bash("python3 x.py"), ["Bash(python3 x.py)"]);
        assert_eq!(bash("sudo apt update"), ["Bash(sudo apt update)"]);
        assert_eq!(bash("FOO=1 make"), ["Bash(FOO=1 make)"]);
        // A wrapper nobody listed here is still seen: the shell's reading says what runs.
        assert_eq!(bash("stdbuf -oL grep x f"), ["Bash(stdbuf -oL grep x f)"]);
        assert_eq!(bash("sed -n 1p f"), ["Bash(sed -n 1p f)"]);
        // Nothing a rule could allow part by part.
        for command in ["ls > x", "echo $(id)", "cat <x", "", "ls *"] {
            assert!(bash(command).is_empty() || command == "ls *", "{command}");
        }
        assert_eq!(bash("ls *"), ["Bash(ls:*)"]);
        assert!(bash("find . -name '*.rs'").is_empty());
    }

    #[test]
    fn a_file_is_covered_by_its_folder_or_alone() {
        let file = |path: &str| scope_of("write_file", &json!({ "path": path }), &places());
        assert_eq!(file("/work/p/src/main.rs"), ["Edit(src/**)"]);
        assert_eq!(file("/work/p/README.md"), ["Edit(./README.md)"]);
        // A name with glob characters is escaped: the rule matches that folder only.
        let odd = file("/work/p/a[1]/x");
        assert_eq!(odd, ["Edit(a[[]1[]]/**)"]);
        let rules = super::super::Rules::new(
            [(
                super::super::Decision::Allow,
                odd[0].clone(),
                "t".to_string(),
            )],
            places(),
        );
        let decided = |path: &str| {
            rules
                .decide("edit_file", &json!({ "path": path }))
                .is_some()
        };
        assert!(decided("/work/p/a[1]/y") && !decided("/work/p/a1/y"));
        assert_eq!(file("/other/dir/x"), ["Edit(//other/dir/**)"]);
        assert!(scope_of("save_skill", &json!({}), &places()).is_empty());
    }
}
