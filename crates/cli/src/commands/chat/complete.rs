//! Tab completion of chat command and skill names, for the line editor ([`ChatHelper`]).

use rustyline::completion::{Completer, Pair};
use skillet_skills::Library;

use super::closest::MAX_COMPARED_NAME_CHARS;
use super::commands::COMMANDS;
use crate::output::terminal_safe;

/// Tab completion: `/` and the start of a command or skill name, at the start of the line.
#[derive(Default)]
pub(super) struct ChatHelper {
    /// Command names, then the names of skills the user may invoke, sorted.
    names: Vec<String>,
}

impl ChatHelper {
    /// Offers every command, and each skill the user may invoke whose name is safe to show.
    pub(super) fn new(skills: &Library) -> Self {
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
        Self { names }
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

impl rustyline::hint::Hinter for ChatHelper {
    type Hint = String;
}

impl rustyline::highlight::Highlighter for ChatHelper {}

impl rustyline::validate::Validator for ChatHelper {}

impl rustyline::Helper for ChatHelper {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tab_offers_commands_and_skill_names_at_the_start_only() {
        let helper = ChatHelper {
            names: vec!["clear".into(), "cost".into(), "model".into(), "pdf".into()],
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
