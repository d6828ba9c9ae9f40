//! The chat commands: the one table ([`COMMANDS`]) that `/help`, Tab completion and "did you
//! mean" read, the text of `/help`, how a typed line is read ([`classify`]: a message, or a
//! command or skill by name), and what an unknown name gets.

use std::fmt::Write as _;

use skillet_skills::Library;

use super::closest::{MAX_COMPARED_NAME_CHARS, closest};
use super::cut;
use crate::output::terminal_safe;

/// What a chat command does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Action {
    Help,
    Skills,
    Model,
    Thinking,
    Cost,
    Compact,
    Init,
    Sessions,
    Clear,
    Mode,
    AddDir,
    Mcp,
    Exit,
}

/// A chat command: its name, its arguments and its line in `/help`. The one table `/help`,
/// Tab completion and "did you mean" read.
pub(super) struct ChatCommand {
    action: Action,
    pub(super) name: &'static str,
    args: &'static str,
    help: &'static str,
}

pub(super) const COMMANDS: &[ChatCommand] = &[
    ChatCommand {
        action: Action::Help,
        name: "help",
        args: "",
        help: "this text",
    },
    ChatCommand {
        action: Action::Skills,
        name: "skills",
        args: "",
        help: "the skills and where they come from",
    },
    ChatCommand {
        action: Action::Model,
        name: "model",
        args: "[NAME]",
        help: "the model in use; with NAME, use that model from the next turn on",
    },
    ChatCommand {
        action: Action::Thinking,
        name: "thinking",
        args: "[TOKENS|off]",
        help: "whether the model thinks before it answers (shown dimmed); with TOKENS (at least 1024) or off, from the next turn on",
    },
    ChatCommand {
        action: Action::Cost,
        name: "cost",
        args: "",
        help: "tokens used in this session, and their price where the model's is known",
    },
    ChatCommand {
        action: Action::Compact,
        name: "compact",
        args: "[INSTRUCTIONS]",
        help: "summarise the conversation so far, to free the context (INSTRUCTIONS: what to keep)",
    },
    ChatCommand {
        action: Action::Init,
        name: "init",
        args: "",
        help: "have the model draft an AGENTS.md for this project (or improve the one here)",
    },
    ChatCommand {
        action: Action::Sessions,
        name: "sessions",
        args: "",
        help: "this project's sessions; pick one to continue it",
    },
    ChatCommand {
        action: Action::Clear,
        name: "clear",
        args: "",
        help: "start a new session",
    },
    ChatCommand {
        action: Action::Mode,
        name: "mode",
        args: "[MODE]",
        help: "the permission mode and what \"always\" allowed; with MODE (default, accept-edits, plan), switch to it",
    },
    ChatCommand {
        action: Action::AddDir,
        name: "add-dir",
        args: "DIR",
        help: "let file tools read and write beneath DIR, and commands write there, for the session",
    },
    ChatCommand {
        action: Action::Mcp,
        name: "mcp",
        args: "",
        help: "the MCP servers whose tools the model has, where each stands, and their tools",
    },
    ChatCommand {
        action: Action::Exit,
        name: "exit",
        args: "",
        help: "leave (also /quit, Ctrl-D)",
    },
];

/// Other names of commands.
const ALIASES: &[(&str, Action)] = &[("quit", Action::Exit)];

/// The chat command called `name`.
pub(super) fn command(name: &str) -> Option<Action> {
    COMMANDS
        .iter()
        .find(|command| command.name == name)
        .map(|command| command.action)
        .or_else(|| {
            ALIASES
                .iter()
                .find(|(alias, _)| *alias == name)
                .map(|(_, action)| *action)
        })
}

/// `/help`: every command from [`COMMANDS`], then skills, messages and keys.
pub(super) fn help_text() -> String {
    let mut text = String::new();
    let usage = |command: &ChatCommand| {
        if command.args.is_empty() {
            format!("/{}", command.name)
        } else {
            format!("/{} {}", command.name, command.args)
        }
    };
    let width = COMMANDS
        .iter()
        .map(|command| usage(command).chars().count())
        .max()
        .unwrap_or(0)
        .max("/NAME [ARGS]".len());
    for command in COMMANDS {
        let _ = writeln!(text, "{:width$}  {}", usage(command), command.help);
    }
    let _ = writeln!(
        text,
        "{:width$}  invoke a skill by hand (ARGS fill $ARGUMENTS, $0, $1, …)",
        "/NAME [ARGS]"
    );
    text.push_str(
        "Anything else is a message. A line whose first word is a path is a message too\n\
         (`/etc/hosts looks wrong`: the word holds another /, or names an existing file and no\n\
         command or skill); start a line with // to send the rest as it is (`//help` sends\n\
         `/help`).\n\
         Tab completes commands and skill names. Ctrl-C cancels the answer being written; the\n\
         session goes on. Ctrl-D leaves.",
    );
    text
}

/// What a line asks for.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Input<'a> {
    /// A message for the model, as it is to be sent.
    Message(&'a str),
    /// A chat command or a skill, by name (without the `/`), and its arguments.
    Command { name: &'a str, arguments: &'a str },
}

/// Reads a trimmed, non-empty line. `//` sends the rest of the line (one `/` stripped); a line
/// whose first word is a path is a message: the word holds another `/` (`/etc/hosts`, `/tmp/x`),
/// or names an existing file or folder and no command or skill (`known`). Any other `/word` is
/// a command, known or not.
pub(super) fn classify(line: &str, known: impl Fn(&str) -> bool) -> Input<'_> {
    let Some(command) = line.strip_prefix('/') else {
        return Input::Message(line);
    };
    if command.starts_with('/') {
        return Input::Message(command);
    }
    let (name, arguments) = command
        .split_once(char::is_whitespace)
        .unwrap_or((command, ""));
    if name.contains('/') {
        return Input::Message(line);
    }
    if !name.is_empty() && !known(name) && std::fs::symlink_metadata(format!("/{name}")).is_ok() {
        return Input::Message(line);
    }
    Input::Command {
        name,
        arguments: arguments.trim(),
    }
}

/// What an unknown `/name` gets: the closest commands and skills, never the whole list.
pub(super) fn unknown_command(name: &str, skills: &Library) -> String {
    let candidates = COMMANDS
        .iter()
        .map(|command| command.name)
        .chain(ALIASES.iter().map(|(alias, _)| *alias))
        .chain(
            skills
                .skills()
                .iter()
                .filter(|skill| skill.user_invocable())
                .map(|skill| skill.name.as_str()),
        );
    let closest = closest(name, candidates);
    let mut text = format!(
        "unknown command or skill /{}",
        terminal_safe(&cut(name, MAX_COMPARED_NAME_CHARS), false)
    );
    if !closest.is_empty() {
        let names: Vec<String> = closest
            .iter()
            .map(|name| format!("/{}", terminal_safe(name, false)))
            .collect();
        let _ = write!(text, "; did you mean {}?", names.join(", "));
    }
    text.push_str(
        "\n  /help lists the commands; start with // to send a line beginning with / as a message",
    );
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn known(name: &str) -> bool {
        command(name).is_some() || name == "pdf"
    }

    #[test]
    fn a_path_first_line_or_double_slash_is_a_message() {
        assert_eq!(
            classify("/etc/hosts looks wrong", known),
            Input::Message("/etc/hosts looks wrong")
        );
        assert_eq!(classify("/tmp/x", known), Input::Message("/tmp/x"));
        // An existing folder that is no command or skill.
        assert_eq!(
            classify("/tmp is full", known),
            Input::Message("/tmp is full")
        );
        assert_eq!(classify("//help me", known), Input::Message("/help me"));
        assert_eq!(classify("///x", known), Input::Message("//x"));
        assert_eq!(classify("hello /etc", known), Input::Message("hello /etc"));
        // Commands and skills win over a path of the same name.
        assert_eq!(
            classify("/model  gpt-4o ", known),
            Input::Command {
                name: "model",
                arguments: "gpt-4o"
            }
        );
        assert_eq!(
            classify("/pdf form.pdf", known),
            Input::Command {
                name: "pdf",
                arguments: "form.pdf"
            }
        );
        // An unknown word naming nothing is an unknown command, not a message.
        assert_eq!(
            classify("/no-such-thing-here x", known),
            Input::Command {
                name: "no-such-thing-here",
                arguments: "x"
            }
        );
        assert_eq!(
            classify("/", known),
            Input::Command {
                name: "",
                arguments: ""
            }
        );
    }

    #[test]
    fn help_lists_every_command_of_the_table() {
        let help = help_text();
        for command in COMMANDS {
            assert!(help.contains(&format!("/{}", command.name)), "{help}");
            assert!(help.contains(command.help), "{help}");
        }
        assert!(help.contains("start a line with //"), "{help}");
    }
}
