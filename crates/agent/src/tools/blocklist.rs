//! The blocklist of the `bash` tool: commands refused outright because they destroy the
//! machine or its data whatever the intent (`rm -rf ~`, `mkfs`, `dd of=/dev/sda`, …). It reads
//! the command as the shell splits it into simple commands and words, so a quoted `rm -rf /` in
//! a commit message passes and `rm -rf "$HOME"` does not. It is a guard against slips, not a
//! boundary: a command can always be written so that no list recognises it (the tests name some
//! ways), and the sandbox ([`crate::sandbox`]) is what contains it.

use std::sync::LazyLock;

use regex::Regex;

/// Commands refused outright: they destroy the machine or its data, whatever the intent. A rule
/// looks at the programs the command runs (each simple command's program and arguments, as the
/// shell splits them: see [`simple_commands`]), at the files it redirects output to, or, for the
/// fork bomb (a function, not a program), at its text.
static RULES: [(Check, &str); 9] = [
    (
        Check::Program(&["rm"], deletes_system_folders),
        "deletes the root, home or system folders",
    ),
    (Check::Program(&["mkfs*"], any_arguments), "formats a disk"),
    (Check::Program(&["dd"], writes_to_disk), "overwrites a disk"),
    (Check::OutputTo(is_disk), "overwrites a disk"),
    (
        Check::Program(&["shutdown", "reboot", "halt", "poweroff"], any_arguments),
        "stops the machine",
    ),
    (
        Check::Program(&["systemctl"], stops_the_machine),
        "stops the machine",
    ),
    (Check::Text(&FORK_BOMB), "is a fork bomb"),
    (
        Check::Program(&["chmod"], recursive_on_root),
        "changes permissions of the whole system",
    ),
    (
        Check::Program(&["chown"], recursive_on_root),
        "changes owners of the whole system",
    ),
];

/// What a rule of [`RULES`] looks at.
enum Check {
    /// The command's raw text.
    Text(&'static LazyLock<Option<Regex>>),
    /// A program run, by file name (`name*`: any name starting so), and a test of its arguments.
    Program(&'static [&'static str], fn(&[String]) -> bool),
    /// The file an output redirection (`>`, `>>`, `&>`, …) writes to.
    OutputTo(fn(&str) -> bool),
}

/// `:(){ :|:& };:` and its spacings.
static FORK_BOMB: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r":\(\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:").ok());

/// What `rm -r` or `rm -f` must never be pointed at, once trailing `/` and `/*` are removed
/// (the root itself, `/`, `/*`, becomes empty).
const SYSTEM_FOLDERS: [&str; 13] = [
    "~", "$HOME", "${HOME}", "/home", "/usr", "/etc", "/bin", "/boot", "/lib", "/var", "/root",
    "/opt", "/sbin",
];

/// Names of disk devices under `/dev/`.
const DISKS: [&str; 7] = ["sd", "hd", "nvme", "vd", "xvd", "disk", "mmcblk"];

/// `rm`, recursive or forced, on the root, the home folder or a system folder; or told not to
/// spare the root.
fn deletes_system_folders(args: &[String]) -> bool {
    if args.iter().any(|arg| arg == "--no-preserve-root") {
        return true;
    }
    let (mut forced, mut system, mut operands) = (false, false, false);
    for arg in args {
        if operands || !arg.starts_with('-') || arg == "-" {
            system |= is_system_folder(arg);
        } else if arg == "--" {
            operands = true;
        } else if arg == "--recursive" || arg == "--force" {
            forced = true;
        } else if !arg.starts_with("--") {
            forced |= arg.contains(['r', 'R', 'f']);
        }
    }
    forced && system
}

/// `chmod -R` or `chown -R` on the root.
fn recursive_on_root(args: &[String]) -> bool {
    let recursive = args.iter().any(|arg| {
        arg == "--recursive"
            || (arg.starts_with('-') && !arg.starts_with("--") && arg.contains('R'))
    });
    recursive
        && args
            .iter()
            .any(|arg| !arg.is_empty() && trim_folder(arg).is_empty())
}

/// `dd` writing a disk (`of=/dev/sda`).
fn writes_to_disk(args: &[String]) -> bool {
    args.iter()
        .any(|arg| arg.strip_prefix("of=").is_some_and(is_disk))
}

/// `systemctl poweroff`, `reboot` or `halt`.
fn stops_the_machine(args: &[String]) -> bool {
    args.iter()
        .find(|arg| !arg.starts_with('-'))
        .is_some_and(|verb| matches!(verb.as_str(), "poweroff" | "reboot" | "halt"))
}

/// For programs refused whatever their arguments.
fn any_arguments(_args: &[String]) -> bool {
    true
}

/// Whether a path is a disk device (`/dev/sda`, `/dev/nvme0n1`, …).
fn is_disk(path: &str) -> bool {
    path.strip_prefix("/dev/")
        .is_some_and(|device| DISKS.iter().any(|disk| device.starts_with(disk)))
}

/// Whether a path names the root or one of [`SYSTEM_FOLDERS`].
fn is_system_folder(path: &str) -> bool {
    let folder = trim_folder(path);
    if folder.is_empty() {
        return !path.is_empty();
    }
    SYSTEM_FOLDERS.contains(&folder)
}

/// A path without its trailing `/` and `/*`: `~/` is `~`, `/usr/*` is `/usr`, `/` is empty.
fn trim_folder(path: &str) -> &str {
    let mut folder = path;
    while let Some(shorter) = folder
        .strip_suffix("/*")
        .or_else(|| folder.strip_suffix('/'))
    {
        folder = shorter;
    }
    folder
}

/// Why a command is refused, if it is.
pub fn blocked(command: &str) -> Option<&'static str> {
    let commands = simple_commands(command);
    RULES
        .iter()
        .find(|(check, _)| match check {
            Check::Text(regex) => regex.iter().any(|regex| regex.is_match(command)),
            Check::Program(names, test) => commands.iter().any(|simple| {
                simple.argv().split_first().is_some_and(|(program, args)| {
                    let program = file_name(program);
                    names.iter().any(|name| {
                        name.strip_suffix('*')
                            .map_or(*name == program, |prefix| program.starts_with(prefix))
                    }) && test(args)
                })
            }),
            Check::OutputTo(test) => commands.iter().any(|simple| {
                simple
                    .redirects
                    .iter()
                    .any(|(operator, target)| operator.contains('>') && test(target))
            }),
        })
        .map(|(_, why)| *why)
}

/// Shells whose `-c` script is read as a command line too.
const SHELLS: [&str; 5] = ["sh", "bash", "dash", "zsh", "ksh"];

/// Reserved words that can start a simple command's words here (compound commands are not
/// parsed): the command follows them.
const RESERVED: [&str; 8] = ["!", "if", "then", "else", "elif", "do", "while", "until"];

/// How deeply command substitutions are read; deeper ones are skipped unread.
const MAX_DEPTH: usize = 32;

/// The simple commands of a command line, with those in its command substitutions (`$(…)`,
/// `` `…` ``, `<(…)`) and in the `-c` scripts of the shells it runs. Heredoc bodies and comments
/// are not commands.
fn simple_commands(line: &str) -> Vec<SimpleCommand> {
    let mut commands = Lexer::parse(line, 0);
    let mut next = 0;
    // Each script is shorter than the line it is in, so this ends.
    while let Some(command) = commands.get(next) {
        if let Some(script) = shell_script(command.argv()).map(str::to_owned) {
            commands.extend(Lexer::parse(&script, 0));
        }
        next += 1;
    }
    commands
}

/// One simple command: its words, quotes removed (`$VAR` and `$(…)` kept as written), and its
/// redirections (operator and target).
#[derive(Default)]
struct SimpleCommand {
    words: Vec<String>,
    redirects: Vec<(String, String)>,
}

impl SimpleCommand {
    /// The program run and its arguments: see [`program`].
    fn argv(&self) -> &[String] {
        program(&self.words)
    }
}

/// The program a simple command runs and its arguments: its words without the leading
/// assignments (`FOO=bar`), reserved words (`then`, `do`, …) and wrappers (`sudo -u root`,
/// `env X=1`, `nice -n 5`, `xargs -0`, …) before the command they run.
fn program(words: &[String]) -> &[String] {
    let mut argv = words;
    while let Some((first, rest)) = argv.split_first() {
        if is_assignment(first) || RESERVED.contains(&first.as_str()) {
            argv = rest;
            continue;
        }
        argv = match file_name(first) {
            "sudo" => skip_options(
                rest,
                "CDRTUcgprtu",
                &[
                    "chdir",
                    "chroot",
                    "close-from",
                    "command-timeout",
                    "group",
                    "host",
                    "login-class",
                    "other-user",
                    "prompt",
                    "role",
                    "type",
                    "user",
                ],
            ),
            "doas" => skip_options(rest, "Cau", &[]),
            "env" => skip_options(rest, "CSu", &["chdir", "split-string", "unset"]),
            "exec" => skip_options(rest, "a", &[]),
            "nice" => skip_options(rest, "n", &["adjustment"]),
            "nohup" => skip_options(rest, "", &[]),
            "time" => skip_options(rest, "fo", &["format", "output"]),
            "xargs" => skip_options(
                rest,
                "EILPadns",
                &[
                    "arg-file",
                    "delimiter",
                    "eof",
                    "max-args",
                    "max-chars",
                    "max-procs",
                    "process-slot-var",
                ],
            ),
            "command" => {
                let command = skip_options(rest, "", &[]);
                let options = rest.get(..rest.len() - command.len()).unwrap_or_default();
                // `command -v name` only says what `name` is.
                if options.iter().any(|option| option.contains(['v', 'V'])) {
                    return &[];
                }
                command
            }
            _ => return argv,
        };
    }
    argv
}

/// The words after a wrapper's options. `short` lists its one-letter options that take an
/// argument, `long` its long ones (`--user root`; `--user=root` needs no listing).
fn skip_options<'a>(args: &'a [String], short: &str, long: &[&str]) -> &'a [String] {
    let mut next = 0;
    while let Some(arg) = args.get(next) {
        if arg == "--" {
            next += 1;
            break;
        }
        let Some(option) = arg.strip_prefix('-') else {
            break;
        };
        next += 1;
        if let Some(name) = option.strip_prefix('-') {
            next += usize::from(long.contains(&name));
        } else if option
            .find(|letter| short.contains(letter))
            // In `-Eu root` the argument is the next word; in `-uroot` it is attached.
            .is_some_and(|at| at + 1 == option.len())
        {
            next += 1;
        }
    }
    args.get(next..).unwrap_or_default()
}

/// Whether a word assigns a variable (`FOO=bar`, `PATH+=:x`, `a[1]=x`) rather than name the
/// command.
fn is_assignment(word: &str) -> bool {
    let Some((name, _)) = word.split_once('=') else {
        return false;
    };
    let name = name.strip_suffix('+').unwrap_or(name);
    let name = name.split_once('[').map_or(name, |(name, _)| name);
    name.starts_with(|first: char| first.is_ascii_alphabetic() || first == '_')
        && name
            .chars()
            .all(|letter| letter.is_ascii_alphanumeric() || letter == '_')
}

/// The script a shell runs with `-c` (`bash -c 'script'`, `sh -ec 'script'`).
fn shell_script(words: &[String]) -> Option<&str> {
    let (shell, options) = words.split_first()?;
    if !SHELLS.contains(&file_name(shell)) {
        return None;
    }
    let mut script = false;
    let mut options = options.iter();
    while let Some(arg) = options.next() {
        if arg == "--" {
            return options.next().filter(|_| script).map(String::as_str);
        }
        if arg.starts_with("--") {
            continue;
        }
        let Some(flags) = arg.strip_prefix(['-', '+']) else {
            return script.then_some(arg.as_str());
        };
        script |= arg.starts_with('-') && flags.contains('c');
        // `-o option`.
        if flags.ends_with(['o', 'O']) {
            options.next();
        }
    }
    None
}

/// A program's file name: `/usr/bin/rm` is `rm`.
fn file_name(program: &str) -> &str {
    program.rsplit('/').next().unwrap_or(program)
}

/// Splits a command line into simple commands as the shell does, as far as a guard needs:
/// operators, quotes, escapes, command substitutions, redirections, heredocs and comments. It
/// takes any text: an unterminated quote or substitution runs to the end.
struct Lexer {
    chars: Vec<char>,
    pos: usize,
    /// Heredocs whose bodies start at the next line: delimiter, and whether `<<-` strips tabs.
    heredocs: Vec<(String, bool)>,
    commands: Vec<SimpleCommand>,
}

impl Lexer {
    /// The simple commands of `text`, a command line read `depth` substitutions deep.
    fn parse(text: &str, depth: usize) -> Vec<SimpleCommand> {
        let mut lexer = Self {
            chars: text.chars().collect(),
            pos: 0,
            heredocs: Vec::new(),
            commands: Vec::new(),
        };
        lexer.command_line(depth, false);
        lexer.commands
    }

    fn peek(&self) -> Option<char> {
        self.peek_at(0)
    }

    fn peek_at(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.pos + ahead).copied()
    }

    fn bump(&mut self) -> Option<char> {
        let next = self.peek();
        if next.is_some() {
            self.pos += 1;
        }
        next
    }

    /// The text read since `start`, as written.
    fn text_since(&self, start: usize) -> String {
        self.chars
            .get(start..self.pos)
            .unwrap_or_default()
            .iter()
            .collect()
    }

    /// Reads simple commands to the end of the text or, when `nested` (in `$(…)`), through the
    /// `)` that closes it.
    fn command_line(&mut self, depth: usize, nested: bool) {
        let mut command = SimpleCommand::default();
        let mut parens = 0_usize;
        while let Some(next) = self.peek() {
            match next {
                ' ' | '\t' | '\r' => self.pos += 1,
                '\\' if self.peek_at(1) == Some('\n') => self.pos += 2,
                '\n' => {
                    self.pos += 1;
                    self.end(&mut command);
                    self.skip_heredoc_bodies();
                }
                // Only at a word's start: a comment.
                '#' => {
                    while self.peek().is_some_and(|next| next != '\n') {
                        self.pos += 1;
                    }
                }
                '&' if self.peek_at(1) == Some('>') => self.redirect(&mut command, depth),
                '<' | '>' if self.peek_at(1) != Some('(') => self.redirect(&mut command, depth),
                ';' | '&' | '|' | '(' | ')' => {
                    self.pos += 1;
                    self.end(&mut command);
                    if next == '(' {
                        parens += 1;
                    } else if next == ')' {
                        if nested && parens == 0 {
                            return;
                        }
                        parens = parens.saturating_sub(1);
                    }
                }
                _ => {
                    let start = self.pos;
                    let (word, quoted) = self.word(depth);
                    if self.pos == start {
                        self.pos += 1;
                    }
                    let file_descriptor = !word.is_empty()
                        && word.bytes().all(|byte| byte.is_ascii_digit())
                        && matches!(self.peek(), Some('<' | '>'));
                    if !quoted && matches!(word.as_str(), "{" | "}") {
                        self.end(&mut command);
                    } else if quoted || !file_descriptor {
                        command.words.push(word);
                    }
                }
            }
        }
        self.end(&mut command);
    }

    /// Ends the simple command being read.
    fn end(&mut self, command: &mut SimpleCommand) {
        if !command.words.is_empty() || !command.redirects.is_empty() {
            self.commands.push(std::mem::take(command));
        }
    }

    /// Reads a word: its text with quotes and escapes removed, and whether it had any.
    fn word(&mut self, depth: usize) -> (String, bool) {
        let mut text = String::new();
        let mut quoted = false;
        while let Some(next) = self.peek() {
            match next {
                // Process substitution: `<(command)`.
                '<' | '>' if self.peek_at(1) == Some('(') && text.is_empty() && !quoted => {
                    let start = self.pos;
                    self.pos += 2;
                    self.substitution(depth);
                    text.push_str(&self.text_since(start));
                }
                ' ' | '\t' | '\r' | '\n' | ';' | '&' | '|' | '(' | ')' | '<' | '>' => break,
                '\\' => {
                    self.pos += 1;
                    quoted = true;
                    if let Some(escaped) = self.bump()
                        && escaped != '\n'
                    {
                        text.push(escaped);
                    }
                }
                '\'' => {
                    self.pos += 1;
                    quoted = true;
                    while let Some(literal) = self.bump()
                        && literal != '\''
                    {
                        text.push(literal);
                    }
                }
                '"' => {
                    self.pos += 1;
                    quoted = true;
                    self.double_quoted(&mut text, depth);
                }
                '$' => {
                    quoted |= matches!(self.peek_at(1), Some('\'' | '"'));
                    self.dollar(&mut text, depth, false);
                }
                '`' => self.backticks(&mut text, depth),
                _ => {
                    self.pos += 1;
                    text.push(next);
                }
            }
        }
        (text, quoted)
    }

    /// Reads the rest of a double-quoted string, after its `"`, into `text`.
    fn double_quoted(&mut self, text: &mut String, depth: usize) {
        while let Some(next) = self.peek() {
            match next {
                '"' => {
                    self.pos += 1;
                    return;
                }
                '\\' => {
                    self.pos += 1;
                    match self.bump() {
                        Some('\n') | None => {}
                        Some(escaped @ ('$' | '`' | '"' | '\\')) => text.push(escaped),
                        Some(other) => {
                            text.push('\\');
                            text.push(other);
                        }
                    }
                }
                '$' => self.dollar(text, depth, true),
                '`' => self.backticks(text, depth),
                _ => {
                    self.pos += 1;
                    text.push(next);
                }
            }
        }
    }

    /// Reads a `$` expansion into `text`. `$(…)` is read as a command line of its own and kept
    /// as written, like `${…}`; outside double quotes `$'…'` and `$"…"` are quoted strings.
    fn dollar(&mut self, text: &mut String, depth: usize, in_double_quotes: bool) {
        let start = self.pos;
        self.pos += 1;
        match self.peek() {
            Some('(') => {
                self.pos += 1;
                self.substitution(depth);
                text.push_str(&self.text_since(start));
            }
            Some('{') => {
                let mut braces = 0_usize;
                while let Some(next) = self.bump() {
                    match next {
                        '{' => braces += 1,
                        '}' => {
                            braces = braces.saturating_sub(1);
                            if braces == 0 {
                                break;
                            }
                        }
                        '\\' => {
                            self.bump();
                        }
                        _ => {}
                    }
                }
                text.push_str(&self.text_since(start));
            }
            Some('\'') if !in_double_quotes => {
                self.pos += 1;
                while let Some(next) = self.bump()
                    && next != '\''
                {
                    if next != '\\' {
                        text.push(next);
                        continue;
                    }
                    match self.bump() {
                        Some('n') => text.push('\n'),
                        Some('t') => text.push('\t'),
                        Some(escaped @ ('\\' | '\'' | '"' | '?')) => text.push(escaped),
                        Some(other) => {
                            text.push('\\');
                            text.push(other);
                        }
                        None => {}
                    }
                }
            }
            Some('"') if !in_double_quotes => {
                self.pos += 1;
                self.double_quoted(text, depth);
            }
            _ => text.push('$'),
        }
    }

    /// Reads a command substitution's command line, after its `$(` or `<(`, through its `)`.
    /// Past [`MAX_DEPTH`] it is skipped unread, to the matching parenthesis.
    fn substitution(&mut self, depth: usize) {
        if depth < MAX_DEPTH {
            self.command_line(depth + 1, true);
            return;
        }
        let mut parens = 1_usize;
        while let Some(next) = self.bump() {
            match next {
                '(' => parens += 1,
                ')' => {
                    parens -= 1;
                    if parens == 0 {
                        return;
                    }
                }
                '\\' => {
                    self.bump();
                }
                _ => {}
            }
        }
    }

    /// Reads a `` `…` `` command substitution into `text` as written; its command line, with
    /// the backslashes that escape `` ` ``, `\` and `$` removed, is read as one of its own.
    fn backticks(&mut self, text: &mut String, depth: usize) {
        let start = self.pos;
        self.pos += 1;
        let mut inner = String::new();
        while let Some(next) = self.bump()
            && next != '`'
        {
            if next == '\\'
                && let Some(escaped @ ('`' | '\\' | '$')) = self.peek()
            {
                self.pos += 1;
                inner.push(escaped);
            } else {
                inner.push(next);
            }
        }
        text.push_str(&self.text_since(start));
        if depth < MAX_DEPTH {
            self.commands.extend(Self::parse(&inner, depth + 1));
        }
    }

    /// Reads a redirection, its operator (`>`, `2>>`'s `>>`, `&>`, `<<-`, …) and its target.
    /// A heredoc's body is skipped when its line ends.
    fn redirect(&mut self, command: &mut SimpleCommand, depth: usize) {
        let start = self.pos;
        while self.pos - start < 3 && matches!(self.peek(), Some('<' | '>' | '&')) {
            self.pos += 1;
        }
        let mut operator = self.text_since(start);
        if (operator.ends_with('>') && self.peek() == Some('|'))
            || (operator == "<<" && self.peek() == Some('-'))
        {
            self.pos += 1;
            operator = self.text_since(start);
        }
        while matches!(self.peek(), Some(' ' | '\t')) {
            self.pos += 1;
        }
        let target = match self.peek() {
            Some('\n' | ';' | '&' | '|' | '(' | ')' | '<' | '>') | None => String::new(),
            Some(_) => self.word(depth).0,
        };
        if operator.starts_with("<<") && operator != "<<<" {
            self.heredocs.push((target.clone(), operator == "<<-"));
        }
        command.redirects.push((operator, target));
    }

    /// Skips the bodies of the heredocs started on the line just ended: they are text.
    fn skip_heredoc_bodies(&mut self) {
        for (delimiter, strip_tabs) in std::mem::take(&mut self.heredocs) {
            while self.peek().is_some() {
                let start = self.pos;
                while self.peek().is_some_and(|next| next != '\n') {
                    self.pos += 1;
                }
                let line = self.text_since(start);
                if self.peek() == Some('\n') {
                    self.pos += 1;
                }
                let line = if strip_tabs {
                    line.trim_start_matches('\t')
                } else {
                    &line
                };
                if line == delimiter {
                    break;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests;
