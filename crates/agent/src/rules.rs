//! Standing permission rules, in Claude Code's spelling: `allow`, `ask` and `deny` lists of
//! `Tool` or `Tool(specifier)` from the user's config, a trusted project's, and Claude Code's
//! `permissions` in `.claude/settings.json` (see the session crate for where each comes from).
//!
//! - `Bash(git status:*)`, `Bash(git status *)`: commands whose words start so; `Bash(npm test)`:
//!   exactly that command; `Bash`: every command.
//! - `Read(PATH)` (`read_file`, `glob`, `grep`) and `Edit(PATH)` (`edit_file`, `write_file`;
//!   `Write(PATH)` too): gitignore-style globs, `**` across folders. `//abs` is absolute, `~/x`
//!   in the home folder, `/x` from the project's root, `./x` and `x/y` from the working
//!   directory; a name with no `/` (`.env`) matches at any depth.
//! - A tool name alone (`Edit`, `Grep`, `search_skills`): every call of it.
//! - Other MCP servers' tools: `mcp__github` or `mcp__github__*` (every tool of the server),
//!   `mcp__github__create_issue` (one tool).
//!
//! Deny wins over ask over allow, whatever the order or the specificity. A command is denied
//! (or asked about) when any simple command in it, as the shell splits it (chains, pipes,
//! substitutions, `sh -c` scripts, quotes removed, wrappers like `sudo` and `env` skipped, the
//! program by its file name), starts with a rule's words. A command is allowed by `allow`
//! rules only when every part is and nothing in it is substituted or redirected, as skills'
//! `allowed-tools` are read ([`crate::grants`]).
//!
//! A rule that can never match (a tool skillet does not have, a pattern it cannot read) is kept
//! and reported ([`Rules::dead`]), never silently dropped.

use std::path::{Component, PathBuf};

use serde_json::Value;

use crate::grants::Rule;
use crate::shell::{file_name, simple_commands, skip_options};

mod scope;
pub use scope::{Scope, scope_of};

/// What a rule decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Decision {
    /// The call is refused.
    Deny,
    /// The call is asked about each time ("always" does not cover it).
    Ask,
    /// The call runs without asking.
    Allow,
}

impl Decision {
    /// The list it is written in: `allow`, `ask` or `deny`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Deny => "deny",
            Self::Ask => "ask",
            Self::Allow => "allow",
        }
    }
}

/// What a rule matches, read.
#[derive(Debug, Clone)]
enum Matcher {
    /// A tool or a `bash` command pattern ([`Rule`]).
    Call(Rule),
    /// Paths of these tools.
    Path {
        tools: &'static [&'static str],
        glob: globset::GlobMatcher,
    },
    /// What "always" approved for a command ([`Scope`]): allows only.
    Approved(Scope),
    /// A rule skillet cannot read: why.
    Dead(String),
}

/// One standing rule.
#[derive(Debug, Clone)]
pub struct StandingRule {
    /// What it decides.
    pub decision: Decision,
    /// As written.
    pub text: String,
    /// Where it came from (a file, a flag), for `skillet config` and refusals.
    pub source: String,
    matcher: Matcher,
}

/// Folders a path rule is read against.
#[derive(Debug, Clone, Default)]
pub struct Places {
    /// The working directory (real path).
    pub cwd: PathBuf,
    /// The project's root (git root, else the working directory).
    pub project_root: PathBuf,
    /// The user's home folder.
    pub home: Option<PathBuf>,
    /// Skillet's own config folder (`~/.config/skillet`): never a folder added for a session.
    pub config_dir: Option<PathBuf>,
}

/// Tools that only read: always allowed unless denied, never asked about.
const READING_TOOLS: [&str; 5] = ["read_file", "glob", "grep", "load_skill", "search_skills"];

/// The tools a path rule's name stands for.
fn path_tools(name: &str) -> Option<&'static [&'static str]> {
    match name {
        "Read" => Some(&["read_file", "glob", "grep"]),
        "Edit" | "Write" | "MultiEdit" => Some(&["edit_file", "write_file"]),
        _ => None,
    }
}

impl StandingRule {
    /// Reads `text` from `source` as a rule deciding `decision`, paths read against `places`.
    pub fn parse(decision: Decision, text: &str, source: &str, places: &Places) -> Self {
        let trimmed = text.trim();
        let path_rule = trimmed
            .split_once('(')
            .filter(|(_, rest)| rest.ends_with(')'))
            .and_then(|(name, rest)| {
                Some((path_tools(name.trim())?, rest[..rest.len() - 1].trim()))
            });
        let matcher = match path_rule {
            Some((tools, "*" | "**")) => Matcher::Call(Rule::Tools(tools.to_vec())),
            Some((tools, pattern)) if !pattern.is_empty() => {
                match path_glob(pattern, places) {
                    Ok(glob) => Matcher::Path { tools, glob },
                    Err(why) => Matcher::Dead(why),
                }
            }
            _ => match Rule::parse(trimmed) {
                Rule::Unknown(name) => Matcher::Dead(format!(
                    "skillet has no tool `{name}`: it matches nothing"
                )),
                Rule::Unread(_) => Matcher::Dead(
                    "skillet cannot read this pattern (a `*` inside a command, or an empty one): it matches nothing".to_string(),
                ),
                rule => Matcher::Call(rule),
            },
        };
        // Reading tools are never asked about: an `ask` on them would do nothing, so it is said.
        let reads_only = |tools: &[&str]| tools.iter().all(|tool| READING_TOOLS.contains(tool));
        let only_reads = match &matcher {
            Matcher::Path { tools, .. } => reads_only(tools),
            Matcher::Call(Rule::Tools(tools)) => reads_only(tools),
            _ => false,
        };
        let matcher = match matcher {
            _ if decision == Decision::Ask && only_reads => {
                Matcher::Dead(
                    "skillet never asks before reading: this rule does nothing (`deny` keeps a file from being read)".to_string(),
                )
            }
            other => other,
        };
        Self {
            decision,
            text: trimmed.to_string(),
            source: source.to_string(),
            matcher,
        }
    }

    /// Why this rule can never match, if it cannot.
    pub fn dead(&self) -> Option<&str> {
        match &self.matcher {
            Matcher::Dead(why) => Some(why),
            _ => None,
        }
    }

    /// Whether this rule matches the call anywhere in it: a tool or path rule, or a command
    /// pattern any simple command of the command starts with (deny and ask read it so). A path
    /// rule denying or asking matches the path as named or the file it leads to; allowing, only
    /// the file it leads to (a link in `src/` to a file elsewhere is not in `Edit(src/**)`).
    fn touches(&self, tool: &str, input: &Value, places: &Places) -> bool {
        match &self.matcher {
            Matcher::Path { tools, glob } => {
                let path = input_path(input, places);
                tools.contains(&tool)
                    && if self.decision == Decision::Allow {
                        glob.is_match(crate::paths::real_path(&path))
                    } else {
                        matches_path(glob, &path)
                    }
            }
            Matcher::Call(Rule::Tools(tools)) => tools.contains(&tool),
            Matcher::Call(Rule::Mcp(pattern)) => pattern.matches(tool),
            Matcher::Call(Rule::BashPrefix(words) | Rule::BashExact(words)) => {
                tool == "bash"
                    && input
                        .get("command")
                        .and_then(Value::as_str)
                        .is_some_and(|command| runs(command, words))
            }
            Matcher::Dead(_) | Matcher::Call(_) | Matcher::Approved(_) => false,
        }
    }
}

/// Whether any simple command of `command`, as the shell splits it, starts with `words`: the
/// program by its file name (`/usr/bin/curl` is `curl`), past wrappers (`sudo`, `env`, …).
pub(crate) fn runs(command: &str, words: &str) -> bool {
    let wanted: Vec<&str> = words.split_whitespace().collect();
    simple_commands(command).iter().any(|simple| {
        let full = simple.argv();
        // `git -C dir --no-pager push` is `git push`: git's own options come out.
        let stripped: Vec<String>;
        let argv = match full.split_first() {
            Some((program, rest)) if file_name(program) == "git" => {
                let rest = skip_options(
                    rest,
                    "Cc",
                    &[
                        "git-dir",
                        "work-tree",
                        "namespace",
                        "exec-path",
                        "config-env",
                        "attr-source",
                    ],
                );
                stripped = std::iter::once(program.clone())
                    .chain(rest.iter().cloned())
                    .collect();
                stripped.as_slice()
            }
            _ => full,
        };
        argv.len() >= wanted.len()
            && argv
                .iter()
                .zip(&wanted)
                .enumerate()
                .all(|(index, (word, want))| {
                    if index == 0 {
                        file_name(word) == *want || word == want
                    } else {
                        word == want
                    }
                })
    })
}

/// Whether `path` or, through links, the file it really is matches.
fn matches_path(glob: &globset::GlobMatcher, path: &std::path::Path) -> bool {
    glob.is_match(path) || std::fs::canonicalize(path).is_ok_and(|real| glob.is_match(real))
}

/// The absolute path a file tool's call names (`path`, else the working directory for a
/// search), lexically normalised.
fn input_path(input: &Value, places: &Places) -> PathBuf {
    let named = input.get("path").and_then(Value::as_str).unwrap_or(".");
    let joined = places.cwd.join(named);
    let mut normal = PathBuf::new();
    for component in joined.components() {
        match component {
            Component::ParentDir => {
                normal.pop();
            }
            Component::CurDir => {}
            other => normal.push(other),
        }
    }
    normal
}

/// A path rule's pattern as an absolute glob.
fn path_glob(pattern: &str, places: &Places) -> Result<globset::GlobMatcher, String> {
    let absolute = if let Some(rest) = pattern.strip_prefix("//") {
        format!("/{rest}")
    } else if let Some(rest) = pattern.strip_prefix("~/") {
        let Some(home) = &places.home else {
            return Err("`~/` names the home folder, and HOME is not set".to_string());
        };
        format!("{}/{rest}", home.display())
    } else if let Some(rest) = pattern.strip_prefix('/') {
        format!("{}/{rest}", places.project_root.display())
    } else {
        let rest = pattern.strip_prefix("./").unwrap_or(pattern);
        // gitignore: a name with no `/` (but a trailing one) matches at any depth.
        if rest.trim_end_matches('/').contains('/') || pattern.starts_with("./") {
            format!("{}/{rest}", places.cwd.display())
        } else {
            format!("{}/**/{rest}", places.cwd.display())
        }
    };
    // A folder matches what is inside it too, and `x/**` the folder `x` itself.
    let absolute = match absolute.strip_suffix('/') {
        Some(folder) => format!("{folder}/**"),
        None => absolute,
    };
    let absolute = match absolute.strip_suffix("/**") {
        Some(folder) => format!("{{{folder},{folder}/**}}"),
        None => absolute,
    };
    globset::GlobBuilder::new(&absolute)
        .literal_separator(true)
        .build()
        .map(|glob| glob.compile_matcher())
        .map_err(|error| format!("not a valid pattern: {error}"))
}

/// Every standing rule of a session, and the folders its paths are read against.
#[derive(Debug, Clone, Default)]
pub struct Rules {
    rules: Vec<StandingRule>,
    places: Places,
}

impl Rules {
    /// The rules `(decision, text, source)`, read against `places`.
    pub fn new(
        rules: impl IntoIterator<Item = (Decision, String, String)>,
        places: Places,
    ) -> Self {
        let rules = rules
            .into_iter()
            .map(|(decision, text, source)| StandingRule::parse(decision, &text, &source, &places))
            .collect();
        Self { rules, places }
    }

    /// Whether a `deny` rule keeps `path` (absolute) from being read: what a folder-wide search
    /// (`grep`, `glob`) leaves out.
    pub fn denies_read(&self, path: &std::path::Path) -> bool {
        self.rules.iter().any(|rule| {
            rule.decision == Decision::Deny
                && matches!(&rule.matcher, Matcher::Path { tools, glob }
                    if tools.contains(&"read_file") && matches_path(glob, path))
        })
    }

    /// Adds what an approval's "always" covers, as an allow rule from `source`.
    pub fn push_approved(&mut self, scope: &Scope, source: &str) {
        let rule = match scope {
            Scope::Rule(text) => StandingRule::parse(Decision::Allow, text, source, &self.places),
            other => StandingRule {
                decision: Decision::Allow,
                text: other.text(),
                source: source.to_string(),
                matcher: Matcher::Approved(other.clone()),
            },
        };
        self.rules.push(rule);
    }

    /// The folders the rules' paths are read against.
    pub fn places(&self) -> &Places {
        &self.places
    }

    /// Every rule, in the order given.
    pub fn all(&self) -> &[StandingRule] {
        &self.rules
    }

    /// Rules that can never match, and why.
    pub fn dead(&self) -> impl Iterator<Item = (&StandingRule, &str)> {
        self.rules
            .iter()
            .filter_map(|rule| rule.dead().map(|why| (rule, why)))
    }

    /// What the rules decide for this call, and the rule that decides it: deny over ask over
    /// allow; none when no rule speaks.
    pub fn decide(&self, tool: &str, input: &Value) -> Option<(Decision, &StandingRule)> {
        let first = |decision: Decision| {
            self.rules
                .iter()
                .filter(|rule| rule.decision == decision)
                .find(|rule| rule.touches(tool, input, &self.places))
        };
        if let Some(rule) = first(Decision::Deny) {
            return Some((Decision::Deny, rule));
        }
        if let Some(rule) = first(Decision::Ask) {
            return Some((Decision::Ask, rule));
        }
        self.allowed_by(tool, input)
            .map(|rule| (Decision::Allow, rule))
    }

    /// The allow rule that lets this call run: a tool or path rule, or for a command, `allow`
    /// command patterns that together allow every part of it, nothing substituted (named by the
    /// first).
    fn allowed_by(&self, tool: &str, input: &Value) -> Option<&StandingRule> {
        let allow = self
            .rules
            .iter()
            .filter(|rule| rule.decision == Decision::Allow);
        if let Some(rule) = allow.clone().find(|rule| {
            matches!(
                rule.matcher,
                Matcher::Path { .. } | Matcher::Call(Rule::Tools(_) | Rule::Mcp(_))
            ) && rule.touches(tool, input, &self.places)
        }) {
            return Some(rule);
        }
        if tool != "bash" {
            return None;
        }
        // Every part allowed by some rule; the call is named by the one that allows its first.
        // What "always" approved exactly never covers a part of a pipe: what runs anything may
        // read its script from the pipe.
        let command = input
            .get("command")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let piped = command.contains('|');
        // A prefix approval's plain operands are read from the working directory: not after a
        // part that moves elsewhere (`cd /x && cat secret`).
        let moves = crate::grants::parts(command).any(|part| {
            part.split([' ', '\t'])
                .find(|word| !word.is_empty())
                .is_some_and(|first| matches!(first, "cd" | "pushd" | "popd"))
        });
        let named = std::cell::Cell::new(None);
        let allowed = crate::grants::allows_every_part(input, |part| {
            let rule = allow.clone().find(|rule| match &rule.matcher {
                Matcher::Call(call) => call.allows_part(part),
                Matcher::Approved(Scope::Exact(_)) if piped => false,
                Matcher::Approved(Scope::Command { .. }) if moves => false,
                Matcher::Approved(scope) => scope.allows_part(part),
                _ => false,
            });
            if named.get().is_none() {
                named.set(rule);
            }
            rule.is_some()
        });
        allowed.then(|| named.get()).flatten()
    }
}

#[cfg(test)]
mod tests;
