//! Tab completion of chat command and skill names, for the line editor ([`ChatHelper`]).

use rustyline::completion::{Completer, Pair};
use skillet_skills::Library;

use super::closest::MAX_COMPARED_NAME_CHARS;
use super::commands::COMMANDS;
use crate::output::terminal_safe;

/// Tab completion: `/` and the start of a command or skill name, at the start of the line; the
/// status line under the input; a line ending in `\` goes on on the next.
#[derive(Default)]
pub(super) struct ChatHelper {
    /// Command names, then the names of skills the user may invoke, sorted.
    names: Vec<String>,
    /// The status line shown under the input (model, context, cost), already safe and cut to
    /// the terminal's width; empty: none.
    status: String,
    /// Whether the status line is dimmed.
    colour: bool,
    /// The working directory, where `@path` completes.
    cwd: std::path::PathBuf,
}

/// The most paths `@` completion offers.
const MAX_PATH_CANDIDATES: usize = 200;

impl ChatHelper {
    /// The status line to show under the input from now on (made safe and cut to `width`
    /// here), dimmed when `colour`.
    pub(super) fn set_status(&mut self, status: &str, width: Option<usize>, colour: bool) {
        let safe = terminal_safe(status, false);
        // One column short of the width: a full row would wrap the cursor onto the next one.
        self.status = match width {
            Some(width) => super::cut(&safe, width.saturating_sub(2)).into_owned(),
            None => String::new(),
        };
        self.colour = colour;
    }

    /// Offers every command, and each skill the user may invoke whose name is safe to show;
    /// `@path` completes in `cwd`.
    pub(super) fn new(skills: &Library, cwd: &std::path::Path) -> Self {
        let mut names: Vec<String> = COMMANDS
            .iter()
            .map(|command| command.name.to_string())
            .collect();
        names.extend(
            skills
                .skills()
                .iter()
                .filter(|skill| skill.user_invocable() && completable(&skill.name))
                .map(|skill| skill.name.clone()),
        );
        names.sort_unstable();
        names.dedup();
        Self {
            names,
            cwd: cwd.to_path_buf(),
            ..Self::default()
        }
    }

    /// `@path` under the cursor: the files and folders of the working directory (or a folder
    /// in it) whose names start with what was typed, folders ending in `/`. Hidden ones only
    /// when a `.` was typed; names that would act on a terminal or hold spaces never.
    fn paths(&self, line: &str, pos: usize) -> Option<(usize, Vec<Pair>)> {
        let before = line.get(..pos)?;
        let start = before
            .rfind(char::is_whitespace)
            .map_or(0, |space| space + 1);
        let typed = before[start..].strip_prefix('@')?;
        let (folder, partial) = typed.rsplit_once('/').unwrap_or(("", typed));
        let dir = if folder.is_empty() && !typed.starts_with('/') {
            self.cwd.clone()
        } else {
            self.cwd.join(format!("{folder}/"))
        };
        let mut candidates: Vec<Pair> = std::fs::read_dir(dir)
            .ok()?
            .filter_map(Result::ok)
            .take(MAX_PATH_CANDIDATES * 10)
            .filter_map(|entry| {
                let name = entry.file_name().into_string().ok()?;
                if !name.starts_with(partial)
                    || (name.starts_with('.') && !partial.starts_with('.'))
                    || !completable(&name)
                {
                    return None;
                }
                let is_dir = entry.file_type().is_ok_and(|kind| kind.is_dir());
                let path = if typed.contains('/') {
                    format!("{folder}/{name}")
                } else {
                    name
                };
                Some(Pair {
                    display: if is_dir {
                        format!("@{path}/")
                    } else {
                        format!("@{path}")
                    },
                    replacement: if is_dir {
                        format!("@{path}/")
                    } else {
                        format!("@{path} ")
                    },
                })
            })
            .collect();
        candidates.sort_by(|a, b| a.display.cmp(&b.display));
        candidates.truncate(MAX_PATH_CANDIDATES);
        Some((start, candidates))
    }

    /// Keeps the status line of `other` (the helper it replaces, when the skills changed).
    pub(super) fn with_status_of(mut self, other: Option<&Self>) -> Self {
        if let Some(other) = other {
            self.status.clone_from(&other.status);
            self.colour = other.colour;
        }
        self
    }
}

/// Whether a skill's name can be offered as typed: one word, nothing that acts on a terminal.
fn completable(name: &str) -> bool {
    !name.is_empty()
        && name.chars().count() <= MAX_COMPARED_NAME_CHARS
        && !name.chars().any(|c| c.is_whitespace() || c == '/')
        && matches!(terminal_safe(name, false), std::borrow::Cow::Borrowed(_))
}

impl Completer for ChatHelper {
    type Candidate = Pair;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        _: &rustyline::Context<'_>,
    ) -> rustyline::Result<(usize, Vec<Pair>)> {
        if let Some(paths) = self.paths(line, pos) {
            return Ok(paths);
        }
        let partial = line
            .get(..pos)
            .and_then(|typed| typed.strip_prefix('/'))
            .filter(|partial| !partial.starts_with('/') && !partial.contains(char::is_whitespace));
        let Some(partial) = partial else {
            return Ok((0, Vec::new()));
        };
        let candidates = self
            .names
            .iter()
            .filter(|name| name.starts_with(partial))
            .map(|name| Pair {
                display: format!("/{name}"),
                replacement: format!("/{name} "),
            })
            .collect();
        Ok((0, candidates))
    }
}

/// The status line is drawn as the editor's hint: below the input, laid out and erased with
/// it (the editor clears it when the line is accepted), never left behind on the screen.
impl rustyline::hint::Hinter for ChatHelper {
    type Hint = StatusHint;

    fn hint(&self, _: &str, _: usize, _: &rustyline::Context<'_>) -> Option<StatusHint> {
        (!self.status.is_empty()).then(|| StatusHint(format!("\n{}", self.status)))
    }
}

/// The status line as a hint that completes nothing: → at the end of the line must not type it.
pub(super) struct StatusHint(String);

impl rustyline::hint::Hint for StatusHint {
    fn display(&self) -> &str {
        &self.0
    }

    fn completion(&self) -> Option<&str> {
        None
    }
}

impl rustyline::highlight::Highlighter for ChatHelper {
    fn highlight_hint<'h>(&self, hint: &'h str) -> std::borrow::Cow<'h, str> {
        if self.colour {
            std::borrow::Cow::Owned(format!("\u{1b}[2m{hint}\u{1b}[0m"))
        } else {
            std::borrow::Cow::Borrowed(hint)
        }
    }
}

/// A line ending in `\` is not done: Enter goes on to the next line (as in a shell), and the
/// `\` is dropped when it is sent ([`joined_lines`]). Alt-Enter adds a line break anywhere.
impl rustyline::validate::Validator for ChatHelper {
    fn validate(
        &self,
        context: &mut rustyline::validate::ValidationContext<'_>,
    ) -> rustyline::Result<rustyline::validate::ValidationResult> {
        Ok(if context.input().ends_with('\\') {
            rustyline::validate::ValidationResult::Incomplete
        } else {
            rustyline::validate::ValidationResult::Valid(None)
        })
    }
}

/// The text typed over several lines, as sent: each line's continuing `\` dropped, the line
/// breaks kept.
pub(super) fn joined_lines(input: &str) -> String {
    input
        .split('\n')
        .map(|line| line.strip_suffix('\\').unwrap_or(line))
        .collect::<Vec<_>>()
        .join("\n")
}

impl rustyline::Helper for ChatHelper {}

#[cfg(test)]
mod tests {
    use rustyline::highlight::Highlighter as _;
    use rustyline::hint::{Hint as _, Hinter as _};

    use super::*;

    #[test]
    fn at_completes_paths_in_the_working_directory() {
        let temp = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(temp.path().join("src/ui")).unwrap();
        std::fs::write(temp.path().join("src/main.rs"), "").unwrap();
        std::fs::write(temp.path().join("README.md"), "").unwrap();
        std::fs::write(temp.path().join(".env"), "").unwrap();
        let helper = ChatHelper::new(&Library::default(), temp.path());
        let history = rustyline::history::DefaultHistory::new();
        let context = rustyline::Context::new(&history);
        let offered = |line: &str| -> (usize, Vec<String>) {
            let (start, pairs) = helper.complete(line, line.len(), &context).unwrap();
            (
                start,
                pairs.into_iter().map(|pair| pair.replacement).collect(),
            )
        };
        assert_eq!(offered("look at @s"), (8, vec!["@src/".to_string()]));
        assert_eq!(
            offered("look at @src/"),
            (8, vec!["@src/main.rs ".to_string(), "@src/ui/".to_string()])
        );
        assert_eq!(offered("@R").1, ["@README.md "]);
        // Hidden files only when a `.` is typed.
        assert!(!offered("@").1.contains(&"@.env ".to_string()));
        assert_eq!(offered("@.e").1, ["@.env "]);
        // Not a mention: commands as before.
        assert!(offered("mail me@R").1.is_empty());
    }

    #[test]
    fn continued_lines_are_joined_without_their_backslashes() {
        assert_eq!(
            joined_lines("first \\\nsecond\\\nthird"),
            "first \nsecond\nthird"
        );
        assert_eq!(joined_lines("a\nb"), "a\nb");
    }

    #[test]
    fn the_status_line_is_cut_to_the_width_and_dimmed() {
        let mut helper = ChatHelper::default();
        helper.set_status("model · 12% of 200k context · $0.04", Some(20), true);
        let history = rustyline::history::DefaultHistory::new();
        let context = rustyline::Context::new(&history);
        let hint = helper.hint("", 0, &context).unwrap();
        assert_eq!(hint.display(), "\nmodel · 12% of 200…");
        assert_eq!(hint.completion(), None);
        assert!(
            helper
                .highlight_hint(hint.display())
                .starts_with("\u{1b}[2m")
        );
        helper.set_status("x\u{1b}[2J", None, false);
        assert!(helper.hint("", 0, &context).is_none());
    }

    #[test]
    fn tab_offers_commands_and_skill_names_at_the_start_only() {
        let helper = ChatHelper {
            names: vec!["clear".into(), "cost".into(), "model".into(), "pdf".into()],
            ..ChatHelper::default()
        };
        let history = rustyline::history::DefaultHistory::new();
        let context = rustyline::Context::new(&history);
        let offered = |line: &str| -> Vec<String> {
            let (start, pairs) = helper.complete(line, line.len(), &context).unwrap();
            assert_eq!(start, 0);
            pairs.into_iter().map(|pair| pair.replacement).collect()
        };
        assert_eq!(offered("/mo"), ["/model "]);
        assert_eq!(offered("/c"), ["/clear ", "/cost "]);
        assert_eq!(offered("/p"), ["/pdf "]);
        assert!(offered("/model x").is_empty());
        assert!(offered("mo").is_empty());
        assert!(offered("//mo").is_empty());
        assert_eq!(offered("/").len(), 4);
        // A skill name that would act on the terminal is not offered.
        assert!(!completable("evil\u{1b}[2J"));
        assert!(completable("pdf-forms"));
    }
}
