//! Dynamic context: the commands a skill's body asks to run before it is sent, their output put
//! in their place (the form Claude Code reads, so skills written for it work here too).
//!
//! - Inline: `` !`command` `` at the start of a line or after whitespace, the command running to
//!   the next backtick on that line.
//! - Fenced: a line starting (after indentation) with ```` ```! ````, the command being every
//!   line up to the next line that is ```` ``` ````; the whole block is replaced.
//!
//! Markdown is not parsed (as in Claude Code): a `!` line inside an ordinary code block is a
//! command too, so what a skill runs never depends on how a renderer reads it. An inline form
//! without its closing backtick, or a fence never closed, is text. This module only finds the
//! commands; whether and how they run is the caller's (trust, permissions, the sandbox), and one
//! parser serves both the trust listing and the run, so what is shown is what runs.

/// A piece of a body: text as written, or a command to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Piece<'a> {
    /// Text, as written.
    Text(&'a str),
    /// A command, as written (without the `` !` `` and `` ` `` or the fence lines).
    Command {
        /// The command.
        command: &'a str,
        /// Whether it came from a ```` ```! ```` block.
        fenced: bool,
    },
}

/// The body cut into text and commands, in order; the pieces joined give the body back (the
/// command pieces standing for their markup).
pub fn pieces(body: &str) -> Vec<Piece<'_>> {
    // Every closing fence line, found once: an opening fence looks its closer up here, so a body
    // of many unclosed fences costs one pass, not one pass each.
    let closers = closing_fences(body);
    let mut pieces = Vec::new();
    let mut text_start = 0;
    let mut line_start = 0;
    while line_start < body.len() {
        let line_end = body[line_start..]
            .find('\n')
            .map_or(body.len(), |at| line_start + at + 1);
        let line = &body[line_start..line_end];
        if line.trim_start().starts_with("```!")
            && let Some((command, block_end)) = fenced(body, &closers, line_end)
        {
            push_text(&mut pieces, &body[text_start..line_start]);
            pieces.push(Piece::Command {
                command,
                fenced: true,
            });
            text_start = block_end;
            line_start = block_end;
            continue;
        }
        let mut at = line_start;
        while let Some(found) = body[at..line_end].find("!`") {
            let bang = at + found;
            let after_space = bang == line_start
                || body[..bang]
                    .chars()
                    .next_back()
                    .is_some_and(char::is_whitespace);
            let open = bang + 2;
            let close = body[open..line_end].find('`').map(|at| open + at);
            match close {
                Some(close) if after_space && !body[open..close].trim().is_empty() => {
                    push_text(&mut pieces, &body[text_start..bang]);
                    pieces.push(Piece::Command {
                        command: &body[open..close],
                        fenced: false,
                    });
                    text_start = close + 1;
                    at = close + 1;
                }
                _ => at = bang + 1,
            }
        }
        line_start = line_end;
    }
    push_text(&mut pieces, &body[text_start..]);
    pieces
}

/// The commands of a body, in order.
pub fn commands(body: &str) -> Vec<&str> {
    pieces(body)
        .into_iter()
        .filter_map(|piece| match piece {
            Piece::Command { command, .. } => Some(command),
            Piece::Text(_) => None,
        })
        .collect()
}

/// Whether the body asks for any command.
pub fn has_commands(body: &str) -> bool {
    pieces(body)
        .iter()
        .any(|piece| matches!(piece, Piece::Command { .. }))
}

/// The lines that are a closing fence (```` ``` ````), as (start, end) byte ranges in order.
fn closing_fences(body: &str) -> Vec<(usize, usize)> {
    let mut closers = Vec::new();
    let mut at = 0;
    while at < body.len() {
        let line_end = body[at..].find('\n').map_or(body.len(), |i| at + i + 1);
        if body[at..line_end].trim() == "```" {
            closers.push((at, line_end));
        }
        at = line_end;
    }
    closers
}

/// A ```` ```! ```` block whose opening line ends at `end`: its command and where the block
/// (closing fence line included) ends; `None` when it is never closed.
fn fenced<'a>(body: &'a str, closers: &[(usize, usize)], end: usize) -> Option<(&'a str, usize)> {
    let next = closers.partition_point(|(start, _)| *start < end);
    let (start, line_end) = *closers.get(next)?;
    let command = body[end..start].trim_end_matches(['\n', '\r']);
    (!command.trim().is_empty()).then_some((command, line_end))
}

fn push_text<'a>(pieces: &mut Vec<Piece<'a>>, text: &'a str) {
    if !text.is_empty() {
        pieces.push(Piece::Text(text));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn command(command: &str) -> Piece<'_> {
        Piece::Command {
            command,
            fenced: false,
        }
    }

    #[test]
    fn inline_at_a_line_start_or_after_whitespace() {
        assert_eq!(
            pieces("Branch: !`git branch --show-current`\n!`date`\n"),
            vec![
                Piece::Text("Branch: "),
                command("git branch --show-current"),
                Piece::Text("\n"),
                command("date"),
                Piece::Text("\n"),
            ]
        );
        // Not after a word, not without its closing backtick on the line, not empty.
        for text in ["wow!`date`", "!`date\n`", "!``", "!` `", "say `!`date``"] {
            assert!(!has_commands(text), "{text:?}");
        }
        // Indented, and inside an ordinary code block (as Claude Code reads it).
        assert_eq!(commands("  !`ls`\n```sh\n!`pwd`\n```\n"), vec!["ls", "pwd"]);
        // Two on a line.
        assert_eq!(commands("!`a` and !`b`"), vec!["a", "b"]);
    }

    #[test]
    fn fenced_blocks_are_replaced_whole_and_unclosed_ones_are_text() {
        let body = "Before\n```!\ngit status\ngit diff --stat\n```\nAfter\n";
        assert_eq!(
            pieces(body),
            vec![
                Piece::Text("Before\n"),
                Piece::Command {
                    command: "git status\ngit diff --stat",
                    fenced: true
                },
                Piece::Text("After\n"),
            ]
        );
        assert!(!has_commands("```!\nrm -rf /\n"));
        assert!(!has_commands("```!\n```\n"), "an empty block runs nothing");
        // The pieces give the body back.
        let joined: String = pieces(body)
            .iter()
            .map(|piece| match piece {
                Piece::Text(text) => (*text).to_string(),
                Piece::Command { .. } => "<run>".into(),
            })
            .collect();
        assert_eq!(joined, "Before\n<run>After\n");
    }

    #[test]
    fn many_unclosed_fences_cost_one_pass() {
        // 20,000 unclosed openings over 100,000 lines: scanned to the end from each opening,
        // this takes minutes (the suite would show it); found once, it is immediate. A closer
        // after them all closes the first opening: the others are its command's lines.
        let body = "```!\n".repeat(20_000) + &"\n".repeat(100_000);
        assert!(!has_commands(&body));
        let closed = format!("{body}x\n```\n");
        assert_eq!(commands(&closed).len(), 1);
    }

    #[test]
    fn multibyte_text_around_commands() {
        assert_eq!(commands("é !`echo ü` — !`x`\n"), vec!["echo ü", "x"]);
        assert!(!has_commands("é!`x`"));
    }
}
