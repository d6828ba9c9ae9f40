//! A skill invoked with arguments (chat's `/NAME ARGS`, `skillet run "/NAME ARGS"`, the model's
//! `load_skill {name, arguments}`, an MCP prompt): one rule for every entry point, so a skill
//! reads the same wherever it is invoked.
//!
//! In the body, in one pass from left to right (what is put in is never scanned again):
//! - `$ARGUMENTS` is the whole argument text; `$ARGUMENTS[N]` and `$N` the N-th argument,
//!   counting from 0 as Claude Code does, the arguments split as a shell would (quotes group
//!   words, a backslash escapes);
//! - `$name`, for a name the frontmatter's `arguments` list gives, is the argument at that
//!   name's position;
//! - `${SKILL_DIR}` (and `${CLAUDE_SKILL_DIR}`, for skills written for Claude Code) is the
//!   skill's folder;
//! - `\$` is a `$` that is none of these.
//!
//! A placeholder whose argument is missing is left as it is. When no placeholder took an
//! argument, non-empty arguments are appended as `ARGUMENTS: …` (so `$5` meaning five dollars
//! loses nothing). Without arguments (the
//! skill loaded, not invoked) only the folder placeholders are replaced: the body is otherwise
//! as written, `\$` included.
//!
//! In a command of the body's dynamic context ([`expand_running`]) a value is never written in:
//! its placeholder becomes a reference to a variable holding it, quoted for where it stands
//! ([`FilledCommand`]), so the shell never parses what a user or the model gave.

use std::path::Path;

/// The folder placeholders.
const SKILL_DIR_PLACEHOLDERS: [&str; 2] = ["${SKILL_DIR}", "${CLAUDE_SKILL_DIR}"];
/// The most bytes of values one expansion writes in place of placeholders (arguments and the
/// folder, over the whole body and its commands): past it, placeholders stay as written and a
/// line says so. A body of 66,000 `$0` and a 5 KB argument would otherwise build 330 MB.
pub const MAX_SUBSTITUTED_BYTES: usize = 1024 * 1024;
/// The line appended when [`MAX_SUBSTITUTED_BYTES`] was reached.
pub const CAPPED_NOTE: &str = "\n\n[skillet: placeholders past this point were left as written: their values would pass the limit on what one expansion writes in]";

/// A skill's body as invoked: see the module's documentation. `names` are the frontmatter's
/// `arguments`; `skill_dir` the skill's folder (`None`: folder placeholders stay).
pub fn expand(
    body: &str,
    arguments: Option<&str>,
    names: &[String],
    skill_dir: Option<&Path>,
) -> String {
    let mut expander = Expander::new(arguments, names, skill_dir);
    let mut out = String::with_capacity(body.len());
    expander.fill(body, &mut out, Mode::Text);
    expander.finish(&mut out);
    out
}

/// A command of a skill's dynamic context with its placeholders filled, two ways.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilledCommand {
    /// What runs: each argument and the folder as a reference to a variable of [`Self::env`]
    /// (`${SKILLET_ARG_0}`, `${SKILLET_ARGUMENTS}`, `${SKILLET_SKILL_DIR}`), so what was given
    /// stays data whatever quotes the command puts around it: the shell never parses a value.
    pub run: String,
    /// The same command with the values written in, single-quoted where they hold more than
    /// plain characters (letters, digits, `_ . / : = @ % + , -`): what is shown, and what
    /// permission rules are checked against.
    pub shown: String,
    /// The variables `run` refers to.
    pub env: Vec<(String, String)>,
}

/// The variable holding the whole argument text in a command.
pub const ARGUMENTS_VARIABLE: &str = "SKILLET_ARGUMENTS";
/// The prefix of the variables holding each argument in a command (`SKILLET_ARG_0`, …).
pub const ARGUMENT_VARIABLE_PREFIX: &str = "SKILLET_ARG_";
/// The variable holding the skill's folder in a command.
pub const SKILL_DIR_VARIABLE: &str = "SKILLET_SKILL_DIR";

/// [`expand`] for a body whose dynamic context runs ([`crate::dynamic`]): each command gets its
/// placeholders filled as a [`FilledCommand`]; `run` gets it and what it returns takes the
/// command's place, never scanned again. The first error `run` returns ends the expansion.
pub fn expand_running<E>(
    body: &str,
    arguments: Option<&str>,
    names: &[String],
    skill_dir: Option<&Path>,
    run: impl FnMut(&FilledCommand) -> Result<String, E>,
) -> Result<String, E> {
    expand_running_from(body, arguments, (names, skill_dir, 0), run)
}

/// [`expand_running`] with `$N` counting from `first`: 0 for a skill (Claude Code's skills),
/// 1 for a command (Claude Code's commands: `$1` is the first argument, `$0` stays as written).
/// `$ARGUMENTS[N]` counts from 0 in both.
pub fn expand_running_from<E>(
    body: &str,
    arguments: Option<&str>,
    (names, skill_dir, first): (&[String], Option<&Path>, usize),
    mut run: impl FnMut(&FilledCommand) -> Result<String, E>,
) -> Result<String, E> {
    let mut expander = Expander::new(arguments, names, skill_dir);
    expander.first = first;
    let env = expander.env();
    let mut out = String::with_capacity(body.len());
    for piece in crate::dynamic::pieces(body) {
        match piece {
            crate::dynamic::Piece::Text(text) => expander.fill(text, &mut out, Mode::Text),
            crate::dynamic::Piece::Command { command, .. } => {
                let mut filled = FilledCommand {
                    run: String::with_capacity(command.len()),
                    shown: String::with_capacity(command.len()),
                    env: env.clone(),
                };
                let budget = expander.substituted;
                expander.fill(command, &mut filled.run, Mode::Variables);
                // The shown form spends the same budget again, from the same point.
                expander.substituted = budget;
                expander.fill(command, &mut filled.shown, Mode::Quoted);
                out.push_str(&run(&filled)?);
            }
        }
    }
    expander.finish(&mut out);
    Ok(out)
}

/// How a value is written where its placeholder was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// As it is (the body's text).
    Text,
    /// Single-quoted where needed ([`shell_word`]): a command as shown.
    Quoted,
    /// As a reference to its variable: a command as run.
    Variables,
}

/// Which value a placeholder stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Slot {
    /// The whole argument text.
    Whole,
    /// The argument at this position.
    Index(usize),
    /// The skill's folder.
    Folder,
}

impl Slot {
    fn variable(self) -> String {
        match self {
            Self::Whole => ARGUMENTS_VARIABLE.to_string(),
            Self::Index(n) => format!("{ARGUMENT_VARIABLE_PREFIX}{n}"),
            Self::Folder => SKILL_DIR_VARIABLE.to_string(),
        }
    }
}

/// One expansion, over one or more pieces of a body.
struct Expander<'a> {
    arguments: Option<&'a str>,
    words: Vec<String>,
    names: &'a [String],
    folder: Option<String>,
    /// Whether a placeholder took an argument.
    used: bool,
    /// Bytes of values written in so far ([`MAX_SUBSTITUTED_BYTES`]).
    substituted: usize,
    /// Whether a placeholder was left as written for the cap.
    capped: bool,
    /// The argument `$N` counts from ([`expand_running_from`]).
    first: usize,
}

impl<'a> Expander<'a> {
    fn new(arguments: Option<&'a str>, names: &'a [String], skill_dir: Option<&Path>) -> Self {
        Self {
            arguments,
            words: arguments.map(split).unwrap_or_default(),
            names,
            folder: skill_dir.map(|dir| dir.display().to_string()),
            used: false,
            substituted: 0,
            capped: false,
            first: 0,
        }
    }

    /// The variables a command's placeholders refer to ([`Mode::Variables`]).
    fn env(&self) -> Vec<(String, String)> {
        let mut env = Vec::new();
        if let Some(arguments) = self.arguments {
            env.push((Slot::Whole.variable(), arguments.to_string()));
            for (n, word) in self.words.iter().enumerate() {
                env.push((Slot::Index(n).variable(), word.clone()));
            }
        }
        if let Some(folder) = &self.folder {
            env.push((Slot::Folder.variable(), folder.clone()));
        }
        env
    }

    /// `text` with its placeholders filled as `mode` says, onto `out`.
    fn fill(&mut self, text: &str, out: &mut String, mode: Mode) {
        if mode == Mode::Text && self.arguments.is_none() && self.folder.is_none() {
            out.push_str(text);
            return;
        }
        // In a command, where each value lands (outside quotes, in "…", in '…') decides how it
        // is written, so the command run and the command shown stay the same command.
        let mut quotes = Quotes::default();
        let arguments = self.arguments.unwrap_or_default();
        let mut rest = text;
        while let Some(at) = rest.find(['$', '\\']) {
            let before = &rest[..at];
            out.push_str(before);
            quotes.feed(before);
            let tail = &rest[at..];
            if let Some(after) = tail.strip_prefix("\\$") {
                // An escaped `$`, when invoked; loaded without arguments the body is as written.
                out.push_str(if self.arguments.is_some() { "$" } else { "\\$" });
                quotes.feed("\\$");
                rest = after;
                continue;
            }
            if let Some(after) = tail.strip_prefix('\\') {
                out.push('\\');
                quotes.feed("\\");
                rest = after;
                continue;
            }
            let (replacement, length, is_argument) = placeholder(
                tail,
                arguments,
                (&self.words, self.first),
                self.names,
                self.folder.as_deref(),
            );
            // Without arguments only the folder is filled in.
            let mut replacement =
                replacement.filter(|(slot, _)| self.arguments.is_some() || *slot == Slot::Folder);
            // Each value counts as written whatever the mode, so a command run and the same
            // command shown make the same choices.
            if let Some((_, value)) = &replacement {
                if self.substituted + value.len() > MAX_SUBSTITUTED_BYTES {
                    self.capped = true;
                    replacement = None;
                } else {
                    self.substituted += value.len();
                }
            }
            if let Some((slot, value)) = &replacement {
                out.push_str(&write(mode, quotes.state, *slot, value));
            } else {
                out.push_str(&tail[..length]);
                quotes.feed(&tail[..length]);
            }
            // A placeholder left as written (its argument missing, or `$5` meaning five
            // dollars) used nothing: the arguments are then appended rather than lost.
            self.used |= is_argument && replacement.is_some();
            rest = &tail[length..];
        }
        out.push_str(rest);
    }

    /// Appends the arguments when no placeholder took them, and says when the cap was reached.
    fn finish(&self, out: &mut String) {
        if self.capped {
            out.push_str(CAPPED_NOTE);
        }
        if let Some(arguments) = self.arguments
            && !self.used
            && !arguments.trim().is_empty()
        {
            out.push_str("\n\nARGUMENTS: ");
            out.push_str(arguments);
        }
    }
}

/// Where a command's text stands, quoting-wise, as the shell reads it (roughly: `$'…'`, here
/// documents and comments are not followed; a trusted author writing those gets a shown form
/// that may differ from what runs, never a value that becomes shell).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum QuoteState {
    /// Outside quotes.
    #[default]
    Bare,
    /// Inside `"…"`.
    Double,
    /// Inside `'…'`.
    Single,
}

/// Follows a command's quotes as its text goes by.
#[derive(Debug, Default)]
struct Quotes {
    state: QuoteState,
    /// The last character was an unquoted or double-quoted backslash.
    escaped: bool,
}

impl Quotes {
    fn feed(&mut self, text: &str) {
        for c in text.chars() {
            if self.escaped {
                self.escaped = false;
                continue;
            }
            self.state = match (self.state, c) {
                (QuoteState::Bare | QuoteState::Double, '\\') => {
                    self.escaped = true;
                    self.state
                }
                (QuoteState::Bare, '\'') => QuoteState::Single,
                (QuoteState::Bare, '"') => QuoteState::Double,
                (QuoteState::Single, '\'') | (QuoteState::Double, '"') => QuoteState::Bare,
                (state, _) => state,
            };
        }
    }
}

/// A value written where its placeholder was, in `mode`, the command's quotes standing at
/// `state` there. Run: a reference to its variable, quoted so it stays one word and is never
/// globbed (`"${V}"` bare, `${V}` in double quotes, `'"${V}"'` in single quotes). Shown: the
/// value itself, quoted to the same effect.
fn write(mode: Mode, state: QuoteState, slot: Slot, value: &str) -> String {
    let variable = slot.variable();
    match (mode, state) {
        (Mode::Text, _) => value.to_string(),
        (Mode::Variables, QuoteState::Bare) => format!("\"${{{variable}}}\""),
        (Mode::Variables, QuoteState::Double) => format!("${{{variable}}}"),
        (Mode::Variables, QuoteState::Single) => format!("'\"${{{variable}}}\"'"),
        (Mode::Quoted, QuoteState::Bare) => shell_word(value),
        (Mode::Quoted, QuoteState::Double) => {
            let mut escaped = String::with_capacity(value.len());
            for c in value.chars() {
                if matches!(c, '\\' | '"' | '$' | '`') {
                    escaped.push('\\');
                }
                escaped.push(c);
            }
            escaped
        }
        (Mode::Quoted, QuoteState::Single) => value.replace('\'', "'\\''"),
    }
}

/// `value` as one shell word: as it is when it holds only plain characters (so it reads the
/// same inside or outside the command's own quotes), else in single quotes.
fn shell_word(value: &str) -> String {
    let plain = !value.is_empty()
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_./:=@%+,-".contains(c));
    if plain {
        value.to_string()
    } else {
        format!("'{}'", value.replace('\'', "'\\''"))
    }
}

/// The placeholder at the start of `tail` (which starts with `$`): what it stands for (`None`:
/// left as it is), how many bytes it spans, and whether it is an argument placeholder.
fn placeholder(
    tail: &str,
    arguments: &str,
    (words, first): (&[String], usize),
    names: &[String],
    folder: Option<&str>,
) -> (Option<(Slot, String)>, usize, bool) {
    let at = |n: usize| words.get(n).map(|word| (Slot::Index(n), word.clone()));
    for dir in SKILL_DIR_PLACEHOLDERS {
        if tail.starts_with(dir) {
            return (
                folder.map(|folder| (Slot::Folder, folder.to_string())),
                dir.len(),
                false,
            );
        }
    }
    let after = &tail[1..];
    if let Some(indexed) = after.strip_prefix("ARGUMENTS[") {
        let digits: String = indexed.chars().take_while(char::is_ascii_digit).collect();
        if !digits.is_empty() && indexed[digits.len()..].starts_with(']') {
            let length = 1 + "ARGUMENTS[".len() + digits.len() + 1;
            return (digits.parse::<usize>().ok().and_then(at), length, true);
        }
    }
    if after.starts_with("ARGUMENTS") && !continues_name(&after["ARGUMENTS".len()..]) {
        return (
            Some((Slot::Whole, arguments.to_string())),
            1 + "ARGUMENTS".len(),
            true,
        );
    }
    let digits: String = after.chars().take_while(char::is_ascii_digit).collect();
    if !digits.is_empty() {
        return (
            digits
                .parse::<usize>()
                .ok()
                .and_then(|n| n.checked_sub(first))
                .and_then(at),
            1 + digits.len(),
            true,
        );
    }
    let name: String = after
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-')
        .collect();
    // The longest declared name that the text starts with (`$file` is not `$filename`).
    let mut declared: Vec<&String> = names
        .iter()
        .filter(|declared| !declared.is_empty() && name.starts_with(declared.as_str()))
        .filter(|declared| !continues_name(&after[declared.len()..]))
        .collect();
    declared.sort_by_key(|declared| std::cmp::Reverse(declared.len()));
    if let Some(declared) = declared.first() {
        let position = names.iter().position(|n| n == *declared);
        return (position.and_then(at), 1 + declared.len(), true);
    }
    (None, 1, false)
}

/// Whether `rest` goes on with a character of a name (so what came before is not a whole name).
fn continues_name(rest: &str) -> bool {
    rest.chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Arguments split as a shell would: by whitespace, with `'…'` and `"…"` grouping words and a
/// backslash escaping the next character (outside single quotes). An unclosed quote runs to the
/// end.
pub fn split(arguments: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    let mut chars = arguments.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some('\''), '\'') | (Some('"'), '"') => quote = None,
            (Some('\''), _) => word.push(c),
            (_, '\\') => {
                if let Some(next) = chars.next() {
                    word.push(next);
                }
                in_word = true;
            }
            (Some(_), _) => word.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                in_word = true;
            }
            (None, c) if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            (None, _) => {
                word.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        words.push(word);
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|name| (*name).to_string()).collect()
    }

    #[test]
    fn replaced_where_used_else_appended() {
        let with_arguments = |text: &str, arguments: &str| expand(text, Some(arguments), &[], None);
        assert_eq!(
            with_arguments("fill $ARGUMENTS now", "a.pdf"),
            "fill a.pdf now"
        );
        assert_eq!(
            with_arguments("steps", "a.pdf"),
            "steps\n\nARGUMENTS: a.pdf"
        );
        assert_eq!(with_arguments("steps", ""), "steps");
        // Inserted once: an argument holding the placeholder is not expanded again.
        assert_eq!(with_arguments("$ARGUMENTS", "$ARGUMENTS x"), "$ARGUMENTS x");
    }

    #[test]
    fn a_commands_positions_count_from_one() {
        let filled = |body: &str, first: usize| {
            expand_running_from(body, Some("a 'b c'"), (&[], None, first), |command| {
                Ok::<_, ()>(command.shown.clone())
            })
            .unwrap()
        };
        assert_eq!(filled("$0 $1 $2 $3 $ARGUMENTS[0]", 1), "$0 a b c $3 a");
        assert_eq!(filled("$0 $1", 0), "a b c");
        // In a command of the body, `$1` is the first argument too, as data.
        assert_eq!(filled("!`echo $1`", 1), "echo a");
    }

    #[test]
    fn every_form_of_placeholder() {
        let dir = Path::new("/skills/pdf");
        let expanded = expand(
            "all=$ARGUMENTS first=$0 second=$ARGUMENTS[1] file=$file mode=$mode dir=${SKILL_DIR} cc=${CLAUDE_SKILL_DIR} cost=\\$5",
            Some("'my form.pdf' fast"),
            &names(&["file", "mode"]),
            Some(dir),
        );
        assert_eq!(
            expanded,
            "all='my form.pdf' fast first=my form.pdf second=fast file=my form.pdf mode=fast dir=/skills/pdf cc=/skills/pdf cost=$5"
        );
        // Missing indices and names are left alone; when nothing took the arguments they are
        // appended, not lost (`$5` may mean five dollars).
        assert_eq!(
            expand("under $5, for $0", Some("groceries"), &[], None),
            "under $5, for groceries"
        );
        assert_eq!(
            expand(
                "a=$2 b=$ARGUMENTS[5] c=$mode",
                Some("one"),
                &names(&["file", "mode"]),
                None
            ),
            "a=$2 b=$ARGUMENTS[5] c=$mode\n\nARGUMENTS: one"
        );
        // `$filename` is not `$file`; other dollars stay.
        assert_eq!(
            expand(
                "$filename $HOME $ cost $",
                Some("x"),
                &names(&["file"]),
                None
            ),
            "$filename $HOME $ cost $\n\nARGUMENTS: x"
        );
        // Without arguments: the folder only, `\$` and the rest as written.
        assert_eq!(
            expand("run ${SKILL_DIR}/x.sh \\$HOME $0", None, &[], Some(dir)),
            "run /skills/pdf/x.sh \\$HOME $0"
        );
        // A skill invoked with no arguments still has its placeholders filled (empty).
        assert_eq!(expand("[$ARGUMENTS]", Some(""), &[], None), "[]");
    }

    #[test]
    fn arguments_split_as_a_shell_would() {
        assert_eq!(
            split("a  'b c' \"d \\\" e\" f\\ g"),
            ["a", "b c", "d \" e", "f g"]
        );
        assert_eq!(split(""), Vec::<String>::new());
        assert_eq!(split("'' x"), ["", "x"]);
        assert_eq!(split("'unclosed quote"), ["unclosed quote"]);
    }

    #[test]
    fn commands_get_values_as_variables_and_their_output_is_not_scanned_again() {
        let body =
            "Diff of $0:\n!`git diff \"$0\" -- ${SKILL_DIR}/x`\n```!\nls $ARGUMENTS\n```\nend $1";
        let mut ran = Vec::new();
        let text = expand_running(
            body,
            Some("main 'a b; rm -rf ~'"),
            &[],
            Some(Path::new("/skills/my skill")),
            |command: &FilledCommand| {
                ran.push(command.clone());
                Ok::<_, ()>("$1 !`date` ${SKILL_DIR}".to_string())
            },
        )
        .unwrap();
        // Run: values as variables, which the shell never parses; shown: values quoted.
        assert_eq!(
            ran[0].run,
            "git diff \"${SKILLET_ARG_0}\" -- \"${SKILLET_SKILL_DIR}\"/x"
        );
        assert_eq!(ran[0].shown, "git diff \"main\" -- '/skills/my skill'/x");
        assert_eq!(ran[1].run, "ls \"${SKILLET_ARGUMENTS}\"");
        assert_eq!(ran[1].shown, r"ls 'main '\''a b; rm -rf ~'\'''");
        let env: Vec<(&str, &str)> = ran[0]
            .env
            .iter()
            .map(|(name, value)| (name.as_str(), value.as_str()))
            .collect();
        assert_eq!(
            env,
            [
                ("SKILLET_ARGUMENTS", "main 'a b; rm -rf ~'"),
                ("SKILLET_ARG_0", "main"),
                ("SKILLET_ARG_1", "a b; rm -rf ~"),
                ("SKILLET_SKILL_DIR", "/skills/my skill"),
            ]
        );
        // The output stays as it came; the text around it is filled as usual.
        assert_eq!(
            text,
            "Diff of main:\n$1 !`date` ${SKILL_DIR}\n$1 !`date` ${SKILL_DIR}end a b; rm -rf ~"
        );
        // Loaded, not invoked: the folder still filled.
        let text = expand_running(
            "!`cat ${CLAUDE_SKILL_DIR}/a`",
            None,
            &[],
            Some(Path::new("/s/plain")),
            |command: &FilledCommand| Ok::<_, ()>(format!("[{}|{}]", command.run, command.shown)),
        )
        .unwrap();
        assert_eq!(text, "[cat \"${SKILLET_SKILL_DIR}\"/a|cat /s/plain/a]");
        // In each kind of quotes, run and shown stay one command with the value as one word.
        let mut ran = Vec::new();
        expand_running(
            "!`echo '$0' \"$1\" $1 \\\"$0`",
            Some(r#""it's" 'a"$b`c'"#),
            &[],
            None,
            |command: &FilledCommand| {
                ran.push(command.clone());
                Ok::<_, ()>(String::new())
            },
        )
        .unwrap();
        assert_eq!(
            ran[0].run,
            r#"echo ''"${SKILLET_ARG_0}"'' "${SKILLET_ARG_1}" "${SKILLET_ARG_1}" \""${SKILLET_ARG_0}""#
        );
        assert_eq!(
            ran[0].shown,
            r#"echo 'it'\''s' "a\"\$b\`c" 'a"$b`c' \"'it'\''s'"#
        );
        // The first failure ends it.
        let mut calls = 0;
        let error = expand_running("!`a`\n!`b`", None, &[], None, |_: &FilledCommand| {
            calls += 1;
            Err("failed")
        });
        assert_eq!((error, calls), (Err("failed"), 1));
    }

    #[test]
    fn a_body_multiplying_an_argument_is_capped() {
        let body = "$0 ".repeat(66_000);
        let argument = "x".repeat(5_000);
        let out = expand(&body, Some(&argument), &[], None);
        assert!(out.len() <= body.len() + MAX_SUBSTITUTED_BYTES + CAPPED_NOTE.len());
        assert!(out.ends_with(CAPPED_NOTE), "{}", &out[out.len() - 200..]);
        // Under the cap, nothing changes.
        assert_eq!(expand("$0 $0", Some("ab"), &[], None), "ab ab");
    }

    #[test]
    fn a_capped_command_is_shown_as_it_runs() {
        let argument = "y".repeat(MAX_SUBSTITUTED_BYTES / 2 + 1);
        let mut seen = Vec::new();
        let out = expand_running(
            "!`echo $0 $0`",
            Some(&argument),
            &[],
            None,
            |filled: &FilledCommand| -> Result<String, ()> {
                seen.push(filled.clone());
                Ok(String::new())
            },
        )
        .unwrap();
        assert_eq!(seen.len(), 1);
        // The second `$0` passes the cap in both forms: shown and run stay one command.
        assert!(seen[0].run.ends_with(" $0"), "{}", seen[0].run);
        assert!(
            seen[0].shown.ends_with(" $0"),
            "{}",
            &seen[0].shown[seen[0].shown.len() - 10..]
        );
        assert!(out.ends_with(CAPPED_NOTE));
    }

    proptest::proptest! {
        #[test]
        fn expansion_is_bounded_for_any_body_and_argument(
            unit in "(\\$0|\\$ARGUMENTS|\\$1|\\$\\{SKILL_DIR\\}|text| )",
            repeat in 0usize..40_000,
            argument in "[a-z ]{0,400}",
        ) {
            let body = unit.repeat(repeat);
            let out = expand(&body, Some(&argument), &[], Some(Path::new("/skills/s")));
            let bound = body.len() + MAX_SUBSTITUTED_BYTES + CAPPED_NOTE.len() + argument.len() + 16;
            proptest::prop_assert!(out.len() <= bound, "{} > {}", out.len(), bound);
        }
    }
}
