//! `skillet run "PROMPT"`: one task, no interaction.

use std::io::{IsTerminal as _, Read as _, Write as _};
use std::process::ExitCode;
use std::time::Duration;

use skillet_agent::permission::Permissions;

use super::Context;
use super::session::{
    TextView, event_json, find_resumed, library, runtime, settings, skills_at, start,
};
use crate::args::RunArgs;
use crate::output::warn;
use crate::{EXIT_CANCELLED, EXIT_FAILURE, EXIT_USAGE, UsageError};

/// What the user reads before the turn: what a skill invoked by hand hides and what its audit
/// found (as in chat), and the instructions read.
fn tell_before_the_turn(agent: &skillet_agent::Agent, invoked: Option<&skillet_skills::Skill>) {
    if let Some(note) = invoked.and_then(skillet_skills::Skill::shadow_note) {
        warn(&note);
    }
    if let Some(notice) = invoked.and_then(|skill| agent.audit_notice(skill)) {
        warn(&notice);
    }
    if let Some(text) = super::session::instructions_text(agent.instructions()) {
        warn(&text);
    }
}

/// The files the typed prompt mentions (`@path`; not a skill's text, not what was piped), each
/// said, then the images given with `--image`.
fn attached(
    agent: &skillet_agent::Agent,
    typed: Option<&str>,
    images: Vec<skillet_llm::ContentBlock>,
) -> Vec<skillet_llm::ContentBlock> {
    let mut attached = Vec::new();
    if let Some(typed) = typed.filter(|typed| *typed != "-") {
        let attachments = agent.attachments(typed);
        for note in &attachments.notes {
            warn(note);
        }
        attached = attachments.blocks;
    }
    attached.extend(images);
    attached
}

/// Each `--image FILE` (relative to `cwd`) as an image block; a file that cannot be read, is not
/// a PNG, JPEG, GIF or WebP, or is too large is a usage error naming it (nothing is sent).
fn read_images(
    cwd: &std::path::Path,
    files: &[std::path::PathBuf],
) -> Result<Vec<skillet_llm::ContentBlock>, UsageError> {
    let limit = u64::try_from(skillet_llm::MAX_IMAGE_BYTES).unwrap_or(u64::MAX);
    files
        .iter()
        .map(|file| {
            let path = cwd.join(file);
            let shown = file.display();
            let mut opened = skillet_skills::open_regular(&path)
                .map_err(|error| UsageError::new(format!("--image {shown}: {error}")))?;
            let mut bytes = Vec::new();
            let too_large = skillet_skills::read_capped(&mut opened, &mut bytes, limit)
                .map_err(|error| UsageError::new(format!("--image {shown}: {error}")))?;
            if too_large {
                return Err(UsageError::new(format!(
                    "--image {shown}: over the {limit}-byte limit for an image"
                ))
                .with_hint("send a smaller or scaled-down copy"));
            }
            skillet_llm::ContentBlock::image(&bytes).ok_or_else(|| {
                UsageError::new(format!(
                    "--image {shown}: not a PNG, JPEG, GIF or WebP image"
                ))
            })
        })
        .collect()
}

/// The largest prompt read from stdin.
pub const MAX_STDIN_PROMPT_BYTES: u64 = 4 * 1024 * 1024;

/// What the model is told when it may not write or run commands.
const DENIED: &str = "writes and commands are not allowed in `skillet run` without --yes \
                      (or `yes = true` in the user's ~/.config/skillet/skillet.toml); say what \
                      you would change instead";

pub fn run(context: &Context, args: &RunArgs) -> anyhow::Result<ExitCode> {
    // Trust is settled first: the project's skillet.toml grants only in a trusted project.
    let skills_here = library(context);
    let decided = super::trust::decide(
        context,
        &skills_here,
        if args.trust_project {
            super::trust::Asking::TrustThisRun
        } else {
            super::trust::Asking::Never
        },
        &mut super::session::stderr_report(),
    );
    let settings = match settings(context, &args.agent, args.yes, decided.project_trusted) {
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
    let images = read_images(&context.env.cwd, &args.image)?;
    let started_in = context.env.cwd.clone();
    let (resumed_context, resumed) = find_resumed(context, &settings, resume.as_deref())?;
    let context = resumed_context.as_ref().unwrap_or(context);
    // Where the session works decides its trust and settings (a resumed one may work elsewhere).
    let found = std::sync::Arc::clone(&skills_here);
    let (skills, skill_trust, settings) = skills_at(
        context,
        &started_in,
        (skills_here, decided, settings),
        &args.agent,
        args.yes,
    )?;
    let permissions = permissions(settings.yes);
    let runtime = runtime()?;
    let message = prompt.message(&skills, &found)?;
    let invoked = message.skill.as_ref().map(|(skill, _)| *skill);
    let mut agent = start(
        context,
        &settings,
        &skills,
        resumed,
        permissions,
        Some(&message.text),
        &skill_trust,
    )?;
    tell_before_the_turn(&agent, invoked);
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
    let Some(prompt) = message.render(
        &mut agent,
        &runtime,
        &skill_trust,
        settings.skill_shell,
        &mut show,
    )?
    else {
        warn("(cancelled) while the skill's commands ran; nothing was sent");
        return Ok(ExitCode::from(EXIT_CANCELLED));
    };
    let typed = args.prompt.as_deref().filter(|_| invoked.is_none());
    let attached = attached(&agent, typed, images);
    // Ctrl-C cancels the turn: the running command's process group is killed with it, and the
    // calls left open are answered in the transcript, so `--resume` continues from here.
    let result = runtime.block_on(async {
        tokio::select! {
            result = agent.run_turn_with(&prompt, attached, &mut show) => Some(result),
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
    outcome(&mut agent, result, json)
}

/// Who may write and run commands in `run`: everyone with `yes`, else nobody, the model told
/// why.
fn permissions(yes: bool) -> Permissions {
    if yes {
        Permissions::Allow
    } else {
        Permissions::Deny {
            reason: DENIED.to_string(),
        }
    }
}

/// Says how the turn ended (a `done` or `error` event with `--json`, the usage on stderr);
/// the exit code.
fn outcome(
    agent: &mut skillet_agent::Agent,
    result: Result<skillet_agent::TurnOutcome, skillet_agent::AgentError>,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let usage = agent.usage();
    let session = agent.header().id.clone();
    let session = &session;
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
            // Nothing answered: no session to list or continue, no usage to tell.
            let kept = !agent.discard_if_unanswered();
            if json {
                let failed = serde_json::json!({"type": "error", "message": error.to_string(), "usage": usage, "session": kept.then_some(session)});
                let mut out = std::io::stdout().lock();
                writeln!(out, "{failed}")?;
            }
            warn(&format!("error: {error}"));
            if kept {
                warn(&format!("usage: {} · session {session}", usage.summary()));
            }
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

/// The message the prompt makes, before a skill it invokes is rendered.
struct Message<'a> {
    /// The text as it is sent (no skill), or as typed (a skill: it orders the catalog).
    text: String,
    /// The skill a typed `/NAME ARGS` invokes, and the arguments.
    skill: Option<(&'a skillet_skills::Skill, String)>,
    /// Stdin's text, sent after in a `<stdin>` block.
    piped: Option<String>,
    /// A typed `/mcp__SERVER__PROMPT ARGS`: an MCP server's prompt, if the session has it.
    prompt: Option<(String, String)>,
}

impl Prompt {
    /// The message to send: a typed `/NAME ARGS` invokes the skill (only the typed text: what
    /// was piped in is neither a skill's name nor its arguments), then the piped text follows
    /// in a `<stdin>` block.
    /// `found` is every skill found, those the project's trust withholds included (a typed
    /// `/NAME` of one is refused, not sent as text).
    fn message<'a>(
        self,
        skills: &'a skillet_skills::Library,
        found: &skillet_skills::Library,
    ) -> Result<Message<'a>, UsageError> {
        match self {
            Prompt::Piped(text) => Ok(Message {
                text,
                skill: None,
                piped: None,
                prompt: None,
            }),
            Prompt::Typed { typed, piped } => {
                if let Some(command) = withheld_command(&typed, skills, found) {
                    return Err(UsageError::new(format!(
                        "/{} is a custom command of this project ({}), which is not trusted; nothing was sent",
                        skillet_skills::terminal_safe(&command.name, false),
                        skillet_skills::terminal_safe(&command.file.display().to_string(), false)
                    ))
                    .with_hint("`skillet trust` trusts the project after showing what that unlocks; `--trust-project` trusts it for this run"));
                }
                invoked_skill(skills, typed, piped)
            }
        }
    }
}

impl Message<'_> {
    /// The text to send (`None`: Ctrl-C stopped the skill's commands): the skill rendered by the
    /// agent (its dynamic context run where it may), then stdin's text. A skill whose commands the project's trust holds back is refused here
    /// rather than sent without them: nobody is there to notice the notes.
    fn render(
        self,
        agent: &mut skillet_agent::Agent,
        runtime: &tokio::runtime::Runtime,
        skill_trust: &skillet_library::trust::SkillTrust,
        skill_shell: bool,
        events: &mut (dyn FnMut(skillet_agent::AgentEvent) + Send),
    ) -> Result<Option<String>, UsageError> {
        let mut text = match self.skill {
            None => match &self.prompt {
                Some((name, arguments)) => {
                    match runtime.block_on(agent.expand_tool_source_command(name, arguments)) {
                        Some(Ok(text)) => text,
                        Some(Err(why)) => return Err(UsageError::new(format!("/{name}: {why}"))),
                        None => self.text,
                    }
                }
                None => self.text,
            },
            Some((skill, arguments)) => {
                let name = &skill.name;
                // The cheap check first: trusting a project skill hashes its folder, and the
                // invocation does that again.
                if skill_shell
                    && skill
                        .read_body()
                        .is_ok_and(|body| skillet_skills::dynamic::has_commands(&body))
                    && !skill_trust.trusts(skill)
                {
                    return Err(UsageError::new(format!(
                        "/{name} runs commands before it is sent (its !`…` lines), and this project is not trusted; nothing was sent"
                    ))
                    .with_hint("`skillet trust` trusts the project after showing what that unlocks; `--trust-project` trusts it for this run; `--no-skill-shell` sends the skill without running them"));
                }
                let outcome = runtime.block_on(async {
                    tokio::select! {
                        result = agent.invoke_skill(skill, &arguments, events) => Some(result),
                        _ = tokio::signal::ctrl_c() => None,
                    }
                });
                match outcome {
                    Some(result) => result.map_err(|error| {
                        UsageError::new(format!("cannot invoke /{name}: {}", error.0))
                    })?,
                    None => return Ok(None),
                }
            }
        };
        if let Some(piped) = self.piped {
            let newline = if piped.ends_with('\n') { "" } else { "\n" };
            text = format!("{text}\n\n<stdin>\n{piped}{newline}</stdin>");
        }
        Ok(Some(text))
    }
}

/// The command a typed `/NAME …` names when `found` has it but the session's `skills` do not
/// (a project's command in a project not trusted).
fn withheld_command<'a>(
    typed: &str,
    skills: &skillet_skills::Library,
    found: &'a skillet_skills::Library,
) -> Option<&'a skillet_skills::Skill> {
    let name = typed
        .strip_prefix('/')
        .filter(|rest| !rest.starts_with('/'))?
        .split(char::is_whitespace)
        .next()?;
    found
        .get(name)
        .filter(|skill| skill.is_command() && skills.get(name).is_none())
}

/// A prompt `/NAME ARGS` naming a skill the user may invoke invokes it with those arguments
/// (the rule chat's `/NAME ARGS` follows); `//text` is `/text` sent as typed; any other prompt
/// (a path first, an unknown name) is sent as it is.
fn invoked_skill(
    skills: &skillet_skills::Library,
    prompt: String,
    piped: Option<String>,
) -> Result<Message<'_>, UsageError> {
    let plain = |text| Message {
        text,
        skill: None,
        piped: piped.clone(),
        prompt: None,
    };
    if let Some(typed) = prompt.strip_prefix("//") {
        return Ok(plain(format!("/{typed}")));
    }
    let Some(invocation) = prompt.strip_prefix('/') else {
        return Ok(plain(prompt));
    };
    let (name, arguments) = invocation
        .split_once(char::is_whitespace)
        .map_or((invocation, ""), |(name, rest)| (name, rest.trim()));
    let Some(skill) = skills.get(name) else {
        let mut message = plain(prompt.clone());
        if name.starts_with("mcp__") {
            message.prompt = Some((name.to_string(), arguments.to_string()));
        }
        return Ok(message);
    };
    if !skill.user_invocable() {
        return Err(UsageError::new(format!(
            "/{name} can only be used by the model (user-invocable: false)"
        ))
        .with_hint("say what to do in words, or `//` to send the text as typed"));
    }
    let skill = Some((skill, arguments.to_string()));
    Ok(Message {
        text: prompt,
        skill,
        piped,
        prompt: None,
    })
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
