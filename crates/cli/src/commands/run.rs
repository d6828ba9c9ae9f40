//! `skillet run "PROMPT"`: one task, no interaction.

use std::io::{IsTerminal as _, Read as _, Write as _};
use std::process::ExitCode;
use std::time::Duration;

use skillet_agent::permission::Permissions;

use super::Context;
use super::session::{TextView, event_json, find_resumed, library, runtime, settings, start};
use crate::args::RunArgs;
use crate::output::warn;
use crate::{EXIT_CANCELLED, EXIT_FAILURE, EXIT_USAGE, UsageError};

/// The largest prompt read from stdin.
pub const MAX_STDIN_PROMPT_BYTES: u64 = 4 * 1024 * 1024;

/// What the model is told when it may not write or run commands.
const DENIED: &str = "writes and commands are not allowed in `skillet run` without --yes \
                      (or `yes = true` in the user's ~/.config/skillet/skillet.toml); say what \
                      you would change instead";

pub fn run(context: &Context, args: &RunArgs) -> anyhow::Result<ExitCode> {
    let settings = match settings(context, &args.agent, args.yes) {
        Ok(settings) => settings,
        Err(message) => {
            warn(&format!("error: {message}"));
            return Ok(ExitCode::from(EXIT_USAGE));
        }
    };
    let (resume, prompt) = super::sessions::split_resume(
        args.agent.resume.as_deref(),
        args.agent.continue_latest,
        args.prompt.clone(),
        &settings.sessions_dir,
    );
    let prompt = read_prompt(prompt)?;
    let (resumed_context, resumed) = find_resumed(context, &settings, resume.as_deref())?;
    let context = resumed_context.as_ref().unwrap_or(context);
    let permissions = if settings.yes {
        Permissions::Allow
    } else {
        Permissions::Deny {
            reason: DENIED.to_string(),
        }
    };
    let runtime = runtime()?;
    let skills = library(context);
    let (prompt, invoked) = prompt.message(&skills)?;
    let mut agent = start(
        context,
        &settings,
        &skills,
        resumed,
        permissions,
        Some(&prompt),
    )?;
    // A skill invoked by hand is audited first, as in chat.
    if let Some(notice) = invoked.and_then(|skill| agent.audit_notice(skill)) {
        warn(&notice);
    }
    if let Some(text) = super::session::instructions_text(agent.instructions()) {
        crate::output::warn(&text);
    }
    // `--json` writes the events as they are, with no spinner; otherwise the answer goes to
    // stdout and the calls to stderr (a spinner and Markdown where those are terminals).
    let json = args.json;
    let mut view = (!json).then(TextView::new);
    let mut show = |event| {
        if let Some(view) = view.as_mut() {
            view.show(&event);
        } else {
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "{}", event_json(&event));
            let _ = out.flush();
        }
    };
    // Ctrl-C cancels the turn: the running command's process group is killed with it, and the
    // calls left open are answered in the transcript, so `--resume` continues from here.
    let result = runtime.block_on(async {
        tokio::select! {
            result = agent.run_turn(&prompt, &mut show) => Some(result),
            _ = tokio::signal::ctrl_c() => None,
        }
    });
    if let Some(view) = view.as_mut() {
        view.end_line();
    }
    let Some(result) = result else {
        agent.close_cancelled_turn();
        warn(&format!("(cancelled) · session {}", agent.header().id));
        if json {
            let cancelled = serde_json::json!({"type": "cancelled", "session": agent.header().id});
            let mut out = std::io::stdout().lock();
            writeln!(out, "{cancelled}")?;
        }
        return Ok(ExitCode::from(EXIT_CANCELLED));
    };
    let usage = agent.usage();
    let session = &agent.header().id;
    match result {
        Ok(outcome) => {
            if json {
                let done = serde_json::json!({"type": "done", "text": outcome.text, "steps": outcome.steps, "usage": usage, "session": session});
                let mut out = std::io::stdout().lock();
                writeln!(out, "{done}")?;
            } else {
                warn(&format!("usage: {} · session {session}", usage.summary()));
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(error) => {
            if json {
                let failed = serde_json::json!({"type": "error", "message": error.to_string(), "usage": usage, "session": session});
                let mut out = std::io::stdout().lock();
                writeln!(out, "{failed}")?;
            }
            warn(&format!("error: {error}"));
            warn(&format!("usage: {} · session {session}", usage.summary()));
            Ok(ExitCode::from(EXIT_FAILURE))
        }
    }
}

/// The prompt: the argument, else (when it is `-` or not given) stdin, read to its end. With
/// an argument, text piped in or redirected from a file is kept beside it, for
/// [`Prompt::message`] to append in a `<stdin>` block (`git diff | skillet run "review this"`);
/// a terminal or `/dev/null` on stdin adds nothing.
/// No prompt on a terminal, an empty or blank one, stdin over [`MAX_STDIN_PROMPT_BYTES`] or not
/// UTF-8 is a usage error, before any request is made.
fn read_prompt(given: Option<String>) -> Result<Prompt, UsageError> {
    let stdin = std::io::stdin();
    let empty = || {
        UsageError::new("the prompt is empty; nothing was sent")
            .with_hint("say what to do: `skillet run \"PROMPT\"`, or pipe it in on stdin")
    };
    match given {
        Some(typed) if typed != "-" => {
            if typed.trim().is_empty() {
                return Err(empty());
            }
            let piped = if stdin_is_piped(&stdin) {
                Some(read_stdin("the text")?).filter(|piped| !piped.trim().is_empty())
            } else {
                None
            };
            Ok(Prompt::Typed { typed, piped })
        }
        given => {
            if given.is_none() && stdin.is_terminal() {
                return Err(UsageError::new("no prompt given").with_hint(
                    "`skillet run \"PROMPT\"`, or pipe it in: `echo PROMPT | skillet run` (`-` reads stdin)",
                ));
            }
            let piped = read_stdin("the prompt")?;
            if piped.trim().is_empty() {
                return Err(empty());
            }
            Ok(Prompt::Piped(piped))
        }
    }
}

/// The prompt as given: typed on the command line (with what was piped in beside it), or read
/// whole from stdin.
enum Prompt {
    /// The argument, and stdin's text when it was piped or redirected.
    Typed {
        /// The argument.
        typed: String,
        /// Stdin's text, not blank.
        piped: Option<String>,
    },
    /// Stdin's text, when it was the prompt (none given, or `-`).
    Piped(String),
}

impl Prompt {
    /// The message to send: a typed `/NAME ARGS` invokes the skill (only the typed text: what
    /// was piped in is neither a skill's name nor its arguments), then the piped text follows
    /// in a `<stdin>` block. The skill invoked, when one was.
    fn message(
        self,
        skills: &skillet_skills::Library,
    ) -> Result<(String, Option<&skillet_skills::Skill>), UsageError> {
        match self {
            Prompt::Piped(text) => Ok((text, None)),
            Prompt::Typed { typed, piped } => {
                let (mut message, skill) = invoke_skill(skills, typed)?;
                if let Some(piped) = piped {
                    let newline = if piped.ends_with('\n') { "" } else { "\n" };
                    message = format!("{message}\n\n<stdin>\n{piped}{newline}</stdin>");
                }
                Ok((message, skill))
            }
        }
    }
}

/// A prompt `/NAME ARGS` naming a skill the user may invoke becomes that skill's body with its
/// arguments (the rule chat's `/NAME ARGS` follows); `//text` is `/text` sent as typed; any
/// other prompt (a path first, an unknown name) is sent as it is.
fn invoke_skill(
    skills: &skillet_skills::Library,
    prompt: String,
) -> Result<(String, Option<&skillet_skills::Skill>), UsageError> {
    if let Some(typed) = prompt.strip_prefix("//") {
        return Ok((format!("/{typed}"), None));
    }
    let Some(invocation) = prompt.strip_prefix('/') else {
        return Ok((prompt, None));
    };
    let (name, arguments) = invocation
        .split_once(char::is_whitespace)
        .map_or((invocation, ""), |(name, rest)| (name, rest.trim()));
    let Some(skill) = skills.get(name) else {
        return Ok((prompt, None));
    };
    if !skill.user_invocable() {
        return Err(UsageError::new(format!(
            "/{name} can only be used by the model (user-invocable: false)"
        ))
        .with_hint("say what to do in words, or `//` to send the text as typed"));
    }
    skillet_skills::render_invoked(skill, Some(arguments))
        .map(|text| (text, Some(skill)))
        .map_err(|error| UsageError::new(format!("cannot invoke /{name}: {error}")))
}

/// How long reading stdin may go without its end before skillet says it is waiting for it (a
/// pipe nobody closes would otherwise look like a hang).
const STDIN_NOTICE_AFTER: Duration = Duration::from_secs(1);

/// Whether stdin is a pipe, a socket or a file (not a terminal, `/dev/null` or nothing): what a
/// shell gives for `… | skillet run` and `skillet run < FILE`, and a parent process for a pipe.
fn stdin_is_piped(stdin: &std::io::Stdin) -> bool {
    use std::os::fd::AsFd as _;
    use std::os::unix::fs::FileTypeExt as _;
    let Ok(fd) = stdin.as_fd().try_clone_to_owned() else {
        return false;
    };
    std::fs::File::from(fd).metadata().is_ok_and(|metadata| {
        let kind = metadata.file_type();
        kind.is_fifo() || kind.is_socket() || kind.is_file()
    })
}

/// Stdin read to its end, at most [`MAX_STDIN_PROMPT_BYTES`], as UTF-8 text (`what`: the prompt
/// or the text appended to it, for the errors). When the end has not come within
/// [`STDIN_NOTICE_AFTER`], a note on stderr says what skillet waits for and how not to.
fn read_stdin(what: &str) -> Result<String, UsageError> {
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let read = std::io::stdin()
            .lock()
            .take(MAX_STDIN_PROMPT_BYTES + 1)
            .read_to_end(&mut bytes)
            .map(|_| bytes);
        let _ = sender.send(read);
    });
    let read = if let Ok(read) = receiver.recv_timeout(STDIN_NOTICE_AFTER) {
        read
    } else {
        warn(&format!(
            "reading {what} from stdin until it ends… (`< /dev/null` gives skillet none)"
        ));
        receiver
            .recv()
            .unwrap_or_else(|_| Err(std::io::Error::other("the reader stopped")))
    };
    let bytes =
        read.map_err(|error| UsageError::new(format!("cannot read {what} from stdin: {error}")))?;
    if bytes.len() as u64 > MAX_STDIN_PROMPT_BYTES {
        return Err(UsageError::new(format!(
            "{what} on stdin is over {MAX_STDIN_PROMPT_BYTES} bytes"
        ))
        .with_hint("put the material in a file and tell the agent to read it"));
    }
    String::from_utf8(bytes)
        .map_err(|_| UsageError::new(format!("{what} on stdin is not UTF-8 text")))
}
