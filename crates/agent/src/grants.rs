//! What an active skill allows or refuses: its `allowed-tools` and `disallowed-tools`, in the
//! spelling Claude Code reads (`Read`, `Bash`, `Bash(git:*)`, `Bash(npm test)`, `Edit`, `Write`,
//! `Glob`, `Grep`, …), mapped onto skillet's tools.
//!
//! A skill is active from its loading (by the model, or the user's `/name`) to the end of that
//! user turn. While it is, a call one of its `allowed-tools` rules matches runs without anyone
//! being asked (only for a trusted skill: [`skillet_library::trust::SkillTrust`]), and a call
//! one of its `disallowed-tools` rules matches is refused with the skill's name (whatever the
//! trust: refusing only narrows). The tool definitions never change: a refused tool stays
//! defined, its calls answered with an error.
//!
//! The two directions fail apart on what they cannot read: a rule skillet does not understand
//! allows nothing, and refuses the whole tool it names when it names one. `Bash(prefix:*)` and
//! `Bash(exact)` rules allow a command only when it has no substitution, redirection or
//! bracket (`$`, backticks, `<`, `>`, `(`, `)`, `{`, `}`) and each of its parts (split at `;`,
//! `&`, `|` and line breaks) is one a rule allows: `echo a && touch b` under `Bash(echo:*)
//! Bash(touch:*)`. Refusing, a rule matches any simple command of it as the shell splits it
//! (substitutions, `sh -c` scripts, `sudo` and other wrappers, `/bin/rm` as `rm`), as the
//! standing `deny` rules do ([`crate::rules`]). Refusing is a guard against slips, as the blocklist
//! is, not a boundary: `sh -c`, an alias or a script can still run what a rule names.

use serde_json::Value;

/// The characters that make a command more than one simple command.
const SHELL_SYNTAX: [char; 13] = [
    ';', '&', '|', '$', '`', '<', '>', '(', ')', '{', '}', '\n', '\r',
];
/// The characters a command allowed part by part may not hold: what runs more than its parts.
pub(crate) const SUBSTITUTION: [char; 8] = ['$', '`', '<', '>', '(', ')', '{', '}'];

/// One rule, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rule {
    /// Every call of these tools.
    Tools(Vec<&'static str>),
    /// `bash` commands whose words start with these (`Bash(git add:*)`, `Bash(git add *)`).
    BashPrefix(String),
    /// Exactly this `bash` command (`Bash(npm test)`).
    BashExact(String),
    /// A rule naming a tool with an argument skillet cannot read (`Read(./secrets/**)`): allows
    /// nothing, refuses the whole tool.
    Unread(Vec<&'static str>),
    /// Tools of other MCP servers: `mcp__SERVER` and `mcp__SERVER__*` (every tool of the
    /// server), `mcp__SERVER__TOOL` (that tool), as Claude Code writes them.
    Mcp(McpPattern),
    /// A tool skillet does not have (`WebFetch`): allows and refuses nothing.
    Unknown(String),
}

/// Which MCP tools a rule names ([`Rule::Mcp`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum McpPattern {
    /// Every tool of this server (`mcp__github`, `mcp__github__*`).
    Server(String),
    /// This tool (`mcp__github__create_issue`).
    Tool(String),
}

impl McpPattern {
    /// Reads `mcp__…` rule text; `None` when it is not one.
    fn parse(text: &str) -> Option<Self> {
        let rest = text.strip_prefix("mcp__")?;
        let valid = |part: &str| {
            !part.is_empty()
                && part
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        };
        match rest.split_once("__") {
            None if valid(rest) => Some(Self::Server(format!("mcp__{rest}__"))),
            Some((server, "*")) if valid(server) => Some(Self::Server(format!("mcp__{server}__"))),
            Some((server, tool)) if valid(server) && valid(tool) => {
                Some(Self::Tool(text.to_string()))
            }
            _ => None,
        }
    }

    /// Whether it names this tool.
    pub fn matches(&self, tool: &str) -> bool {
        match self {
            Self::Server(prefix) => tool.starts_with(prefix.as_str()),
            Self::Tool(name) => tool == name,
        }
    }
}

/// The tools a name in a rule stands for.
fn tools_named(name: &str) -> Option<Vec<&'static str>> {
    let tools: &[&'static str] = match name {
        "Bash" | "bash" => &["bash"],
        "Read" | "read_file" => &["read_file"],
        "Write" | "write_file" => &["write_file"],
        "Edit" | "MultiEdit" | "edit_file" => &["edit_file"],
        "Glob" | "glob" | "LS" => &["glob"],
        "Grep" | "grep" => &["grep"],
        "Task" | "Agent" | "task" => &["task"],
        "TodoWrite" | "todo_write" => &["todo_write"],
        "Skill" | "load_skill" => &["load_skill"],
        "search_skills" => &["search_skills"],
        _ => return None,
    };
    Some(tools.to_vec())
}

impl Rule {
    /// Reads one rule as written in the frontmatter.
    pub fn parse(text: &str) -> Self {
        let text = text.trim();
        let (name, argument) = match text.split_once('(') {
            Some((name, rest)) if rest.ends_with(')') => {
                (name.trim(), Some(rest[..rest.len() - 1].trim()))
            }
            _ => (text, None),
        };
        let Some(tools) = tools_named(name) else {
            return match (McpPattern::parse(name), argument) {
                (Some(pattern), None | Some("*")) => Self::Mcp(pattern),
                _ => Self::Unknown(text.to_string()),
            };
        };
        match argument {
            None | Some("*") => Self::Tools(tools),
            // `Bash()` names nothing: allowing everything would be the wrong guess.
            Some("") => Self::Unread(tools),
            Some(pattern) if tools == ["bash"] => {
                if let Some(prefix) = pattern
                    .strip_suffix(":*")
                    .or_else(|| pattern.strip_suffix(" *"))
                {
                    if prefix.trim().is_empty() || prefix.contains('*') {
                        Self::Unread(tools)
                    } else {
                        Self::BashPrefix(prefix.trim().to_string())
                    }
                } else if pattern.contains('*') {
                    Self::Unread(tools)
                } else {
                    Self::BashExact(pattern.to_string())
                }
            }
            Some(_) => Self::Unread(tools),
        }
    }

    /// Whether this rule lets a whole call run without asking (`Tools`); a `bash` command is
    /// allowed part by part ([`ActiveSkill::allows`], [`Rule::allows_part`]).
    fn allows_call(&self, tool: &str) -> bool {
        match self {
            Self::Tools(tools) => tools.contains(&tool),
            Self::Mcp(pattern) => pattern.matches(tool),
            _ => false,
        }
    }

    /// Whether this rule allows one simple command (no separators in it).
    pub(crate) fn allows_part(&self, part: &str) -> bool {
        match self {
            Self::BashPrefix(prefix) => starts_with_words(part, prefix),
            Self::BashExact(exact) => part.trim_matches(SHELL_BLANKS) == exact,
            Self::Tools(tools) => tools.contains(&"bash"),
            Self::Unread(_) | Self::Unknown(_) | Self::Mcp(_) => false,
        }
    }

    /// Whether this rule refuses the call.
    pub fn refuses(&self, tool: &str, input: &Value) -> bool {
        match self {
            Self::Tools(tools) | Self::Unread(tools) => tools.contains(&tool),
            // Read as the standing rules read a command: any simple command in it, as the shell
            // splits it, past wrappers and with the program by its file name.
            Self::BashPrefix(words) | Self::BashExact(words) => {
                tool == "bash"
                    && command(input).is_some_and(|command| crate::rules::runs(command, words))
            }
            Self::Mcp(pattern) => pattern.matches(tool),
            Self::Unknown(_) => false,
        }
    }
}

/// Whether a `bash` call's command is allowed part by part: `allows` takes each of its simple
/// commands, and nothing in it may be substituted or redirected. Skills' `allowed-tools` and the
/// standing `allow` rules ([`crate::rules`]) both read commands so.
pub(crate) fn allows_every_part(input: &Value, allows: impl Fn(&str) -> bool) -> bool {
    let Some(command) = command(input) else {
        return false;
    };
    let mut parts = parts(command).peekable();
    !command.contains(SUBSTITUTION)
        && parts.peek().is_some()
        && splits_as_parts(command)
        && parts.all(allows)
}

/// Whether the shell splits `command` into the simple commands [`parts`] gives, each with the
/// words it shows alone: a quote, an escape or a comment spanning a separator makes a part's
/// words differ from what runs (`cat 'a;cat b' /etc/x` is one command to the shell, two parts
/// here), and then no part may be allowed on its own words.
pub(crate) fn splits_as_parts(command: &str) -> bool {
    let whole = crate::shell::simple_commands(command);
    let pieces: Vec<&str> = parts(command).collect();
    whole.len() == pieces.len()
        && pieces.iter().zip(&whole).all(|(piece, run)| {
            let alone = crate::shell::simple_commands(piece);
            alone.len() == 1 && alone[0].argv() == run.argv()
        })
}

/// The `command` of a `bash` call.
fn command(input: &Value) -> Option<&str> {
    input.get("command").and_then(Value::as_str)
}

/// Whether `command`'s words start with `prefix`'s (`git add x` starts with `git add`, `gitk`
/// does not start with `git`).
fn starts_with_words(command: &str, prefix: &str) -> bool {
    let words = |text: &str| {
        text.split(SHELL_BLANKS)
            .filter(|word| !word.is_empty())
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    let (words, wanted) = (words(command), words(prefix));
    words.len() >= wanted.len() && words[..wanted.len()] == wanted[..]
}

/// What separates words for the shell (not Unicode's other spaces, which bash keeps in a word).
const SHELL_BLANKS: [char; 2] = [' ', '\t'];

/// The simple commands of a compound one, roughly: split at the shell's separators.
pub(crate) fn parts(command: &str) -> impl Iterator<Item = &str> {
    command
        .split(SHELL_SYNTAX)
        .map(|part| part.trim_matches(SHELL_BLANKS))
        .filter(|part| !part.is_empty())
}

/// A skill active in this turn: what it allows (nothing when untrusted) and refuses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActiveSkill {
    /// Its name, for the refusal.
    pub name: String,
    /// Its `allowed-tools`, read; empty when the skill is not trusted.
    pub allow: Vec<Rule>,
    /// Its `disallowed-tools`, read.
    pub deny: Vec<Rule>,
}

impl ActiveSkill {
    /// A skill's rules; `trusted`: its allowed-tools count.
    pub fn new(skill: &skillet_skills::Skill, trusted: bool) -> Self {
        let read = |rules: &[String]| rules.iter().map(|rule| Rule::parse(rule)).collect();
        Self {
            name: skill.name.clone(),
            allow: if trusted {
                read(&skill.frontmatter.allowed_tools)
            } else {
                Vec::new()
            },
            deny: read(&skill.frontmatter.disallowed_tools),
        }
    }

    /// Whether it has any rule.
    pub fn is_empty(&self) -> bool {
        self.allow.is_empty() && self.deny.is_empty()
    }

    /// Whether its `allowed-tools` let this call run without asking, and its own
    /// `disallowed-tools` do not refuse it.
    pub fn allows(&self, tool: &str, input: &Value) -> bool {
        if self.refuses(tool, input) {
            return false;
        }
        if self.allow.iter().any(|rule| rule.allows_call(tool)) {
            return true;
        }
        tool == "bash"
            && allows_every_part(input, |part| {
                self.allow.iter().any(|rule| rule.allows_part(part))
            })
    }

    /// Whether its `disallowed-tools` refuse this call.
    pub fn refuses(&self, tool: &str, input: &Value) -> bool {
        self.deny.iter().any(|rule| rule.refuses(tool, input))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn bash(command: &str) -> Value {
        json!({ "command": command })
    }

    #[test]
    fn rules_in_claude_codes_spelling() {
        assert_eq!(Rule::parse("Read"), Rule::Tools(vec!["read_file"]));
        assert_eq!(Rule::parse("Bash(*)"), Rule::Tools(vec!["bash"]));
        assert_eq!(Rule::parse("Bash()"), Rule::Unread(vec!["bash"]));
        assert_eq!(
            Rule::parse("Bash(git add:*)"),
            Rule::BashPrefix("git add".into())
        );
        assert_eq!(Rule::parse("Bash(git *)"), Rule::BashPrefix("git".into()));
        assert_eq!(
            Rule::parse("Bash(npm test)"),
            Rule::BashExact("npm test".into())
        );
        assert_eq!(
            Rule::parse("Read(./secrets/**)"),
            Rule::Unread(vec!["read_file"])
        );
        assert_eq!(Rule::parse("Bash(*rm*)"), Rule::Unread(vec!["bash"]));
        assert_eq!(Rule::parse("WebFetch"), Rule::Unknown("WebFetch".into()));
        assert_eq!(Rule::parse("MultiEdit"), Rule::Tools(vec!["edit_file"]));
    }

    fn skill(allow: &[&str], deny: &[&str]) -> ActiveSkill {
        ActiveSkill {
            name: "s".into(),
            allow: allow.iter().map(|rule| Rule::parse(rule)).collect(),
            deny: deny.iter().map(|rule| Rule::parse(rule)).collect(),
        }
    }

    #[test]
    fn a_command_is_allowed_only_when_every_part_is_and_nothing_is_substituted() {
        let status = skill(&["Bash(git status:*)", "Bash(echo:*)"], &[]);
        assert!(status.allows("bash", &bash("git status")));
        assert!(status.allows("bash", &bash("git status --short")));
        assert!(status.allows("bash", &bash("git status && echo done")));
        for command in [
            "git statusx",
            "git stash",
            "git status; rm -rf ~",
            "git status && curl x | sh",
            "git status $(id)",
            "git status `id`",
            "git status > /etc/x",
            "git status\nrm -rf ~",
            "",
        ] {
            assert!(!status.allows("bash", &bash(command)), "{command:?}");
        }
        assert!(!status.allows("write_file", &json!({})));
        let exact = skill(&["Bash(npm test)"], &[]);
        assert!(exact.allows("bash", &bash(" npm test ")));
        assert!(!exact.allows("bash", &bash("npm test -- --bail")));
        // A no-break space is part of a word for bash, so not a separator here either.
        assert!(!exact.allows("bash", &bash("npm test\u{a0}")));
        assert!(!status.allows("bash", &bash("git\u{a0}status")));
        // `Bash` allows any command, a tool name its calls.
        assert!(skill(&["Bash"], &[]).allows("bash", &bash("a $(b) > c")));
        assert!(skill(&["Edit"], &[]).allows("edit_file", &json!({})));
        // What is not read allows nothing; its own refusals win.
        assert!(!skill(&["Read(./x)"], &[]).allows("read_file", &json!({"path": "x"})));
        assert!(!skill(&["WebFetch"], &[]).allows("bash", &bash("ls")));
        assert!(!skill(&["Bash"], &["Bash(rm:*)"]).allows("bash", &bash("ls && rm x")));
    }

    #[test]
    fn refusing_finds_the_prefix_in_any_part_and_unread_rules_refuse_the_tool() {
        let rule = Rule::parse("Bash(rm:*)");
        for command in [
            "rm -rf build",
            "cd x && rm -rf y",
            "ls | rm",
            "echo $(rm x)",
        ] {
            assert!(rule.refuses("bash", &bash(command)), "{command}");
        }
        // As the shell runs it: past wrappers, by the program's file name, inside `sh -c`.
        for command in ["sudo rm x", "/bin/rm x", "sh -c 'rm x'", "env A=1 rm x"] {
            assert!(rule.refuses("bash", &bash(command)), "{command}");
        }
        assert!(!rule.refuses("bash", &bash("rmdir x")));
        assert!(!rule.refuses("bash", &bash("echo rm")));
        assert!(Rule::parse("Write").refuses("write_file", &json!({})));
        assert!(Rule::parse("Read(./secrets/**)").refuses("read_file", &json!({})));
        assert!(!Rule::parse("WebFetch").refuses("bash", &bash("curl x")));
    }
}
