//! A command line read as the shell splits it, as far as a guard needs: its simple commands
//! (with those in command substitutions and in the `-c` scripts of the shells it runs), each
//! one's words with quotes removed, the program it really runs (past assignments, reserved
//! words and wrappers such as `sudo`, `env`, `nice`, `xargs`), and its redirections. The
//! blocklist ([`crate::tools::blocklist`]) and the standing permission rules
//! ([`crate::rules`]) read commands through it.

/// Shells whose `-c` script is read as a command line too.
const SHELLS: [&str; 8] = ["sh", "bash", "dash", "zsh", "ksh", "rbash", "mksh", "yash"];

/// Reserved words that can start a simple command's words here (compound commands are not
/// parsed): the command follows them.
const RESERVED: [&str; 9] = [
    "!", "if", "then", "else", "elif", "do", "while", "until", "coproc",
];

/// How deeply command substitutions are read; deeper ones are skipped unread.
const MAX_DEPTH: usize = 32;

/// The simple commands of a command line, with those in its command substitutions (`$(…)`,
/// `` `…` ``, `<(…)`), in the `-c` scripts of the shells it runs, in what `eval` runs and in
/// the commands `find -exec` runs. Heredoc bodies and comments are not commands.
pub(crate) fn simple_commands(line: &str) -> Vec<SimpleCommand> {
    let mut commands = Lexer::parse(line, 0);
    let mut next = 0;
    // Each script is shorter than the line it is in, so this ends.
    while let Some(command) = commands.get(next) {
        let argv = command.argv();
        if let Some(script) = shell_script(argv).map(str::to_owned) {
            commands.extend(Lexer::parse(&script, 0));
        } else if let Some(script) = eval_script(argv).or_else(|| {
            // `env -S STRING`: the wrapper's own word holds the command line.
            let words = &command.words;
            let first = words.iter().position(|word| !is_assignment(word))?;
            eval_script(&words[first..])
        }) {
            commands.extend(Lexer::parse(&script, 0));
        } else {
            let executed = find_exec(argv);
            commands.extend(executed.into_iter().map(|words| SimpleCommand {
                words,
                redirects: Vec::new(),
            }));
        }
        next += 1;
    }
    commands
}

/// What `eval` runs (its arguments joined by spaces), `env -S`'s string and `sg GROUP`'s
/// command, read again as a command line.
fn eval_script(words: &[String]) -> Option<String> {
    let (first, rest) = words.split_first()?;
    match file_name(first) {
        "eval" if !rest.is_empty() => Some(rest.join(" ")),
        "env" => rest.iter().enumerate().find_map(|(index, word)| {
            if word == "-S" || word == "--split-string" {
                rest.get(index + 1).cloned()
            } else {
                word.strip_prefix("--split-string=")
                    .or_else(|| word.strip_prefix("-S").filter(|s| !s.is_empty()))
                    .map(str::to_string)
            }
        }),
        "sg" => rest.get(1).cloned(),
        _ => None,
    }
}

/// The commands `find` runs: the words after each `-exec`, `-execdir`, `-ok` or `-okdir`, up
/// to its `;` or `+`.
fn find_exec(words: &[String]) -> Vec<Vec<String>> {
    let Some((first, rest)) = words.split_first() else {
        return Vec::new();
    };
    if file_name(first) != "find" {
        return Vec::new();
    }
    let mut found = Vec::new();
    let mut args = rest.iter();
    while let Some(arg) = args.next() {
        if matches!(arg.as_str(), "-exec" | "-execdir" | "-ok" | "-okdir") {
            let command: Vec<String> = args
                .by_ref()
                .take_while(|word| !matches!(word.as_str(), ";" | "+"))
                .cloned()
                .collect();
            if !command.is_empty() {
                found.push(command);
            }
        }
    }
    found
}

/// One simple command: its words, quotes removed (`$VAR` and `$(…)` kept as written), and its
/// redirections (operator and target).
#[derive(Default)]
pub(crate) struct SimpleCommand {
    words: Vec<String>,
    pub(crate) redirects: Vec<(String, String)>,
}

impl SimpleCommand {
    /// The program run and its arguments: see [`program`].
    pub(crate) fn argv(&self) -> &[String] {
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
            "nohup" | "setsid" | "builtin" | "unbuffer" | "catchsegv" => {
                skip_options(rest, "", &[])
            }
            "stdbuf" => skip_options(rest, "ioe", &["input", "output", "error"]),
            "ionice" => skip_options(rest, "cnp", &["class", "classdata", "pid"]),
            // `taskset MASK command`, `chrt [options] PRIORITY command`.
            "taskset" | "chrt" => skip_options(rest, "", &[]).get(1..).unwrap_or_default(),
            // `timeout [options] DURATION command`, `flock [options] FILE command`.
            "timeout" => skip_options(rest, "ks", &["kill-after", "signal"])
                .get(1..)
                .unwrap_or_default(),
            "flock" => skip_options(rest, "Ew", &["conflict-exit-code", "timeout", "wait"])
                .get(1..)
                .unwrap_or_default(),
            "time" => skip_options(rest, "fo", &["format", "output"]),
            // Tracers run what follows.
            "strace" => skip_options(
                rest,
                "abeEIoOpPsSuUX",
                &[
                    "signal",
                    "output",
                    "attach",
                    "user",
                    "string-limit",
                    "trace",
                    "env",
                ],
            ),
            "ltrace" => skip_options(rest, "aAeEnopsuUX", &["output", "user"]),
            "fakeroot" | "setpriv" | "valgrind" => skip_options(rest, "is", &[]),
            "prlimit" => skip_options(rest, "p", &["pid"]),
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
pub(crate) fn skip_options<'a>(args: &'a [String], short: &str, long: &[&str]) -> &'a [String] {
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
pub(crate) fn file_name(program: &str) -> &str {
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
                // `(( … ))`: arithmetic, where `<<` is a shift, never a heredoc.
                '(' if self.peek_at(1) == Some('(') => {
                    self.end(&mut command);
                    self.pos += 2;
                    self.arithmetic(depth);
                }
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
            Some('(') if self.peek_at(1) == Some('(') => {
                self.pos += 2;
                self.arithmetic(depth);
                text.push_str(&self.text_since(start));
            }
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

    /// Reads arithmetic after its `((` through the `))` that closes it: `<<` and `>>` are shifts
    /// there, never heredocs that would hide the lines after it. Bash reads `((cmd) …)` as
    /// subshells when it is no arithmetic, so what lies between is read as a command line of its
    /// own too (its words harmless where it is arithmetic): nothing in it goes unread.
    fn arithmetic(&mut self, depth: usize) {
        let start = self.pos;
        let mut parens = 2_usize;
        let mut end = None;
        while let Some(next) = self.bump() {
            match next {
                '(' => parens += 1,
                ')' => {
                    parens -= 1;
                    if parens == 0 {
                        end = Some(self.pos - 1);
                        break;
                    }
                }
                '\\' => {
                    self.bump();
                }
                _ => {}
            }
        }
        let inner: String = self.chars[start..end.unwrap_or(self.pos)].iter().collect();
        if depth < MAX_DEPTH {
            self.commands.extend(Self::parse(&inner, depth + 1));
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
