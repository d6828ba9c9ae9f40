//! How a turn is shown in the terminal: the answer (Markdown rendered when stdout is a
//! terminal), each tool call and its result, notices, a spinner, colour, the approval prompt.
//!
//! A turn on a terminal (what end-to-end tests read with `tmux capture-pane`; colour aside):
//!
//! ```text
//! ⠹ thinking… 1s                         <- spinner on stderr while the model is awaited
//! Let me look.                           <- the answer on stdout, wrapped at words; the line
//!                                           still coming shown as it comes, laid out again
//!                                           when it ends
//! > bash(git status)                     <- the call as the model made it (stderr)
//! ⠼ running bash… 2s · ↓ 12 tokens       <- spinner while the tool runs
//!   ⎿ On branch main                     <- its result: up to 3 lines, cut to the width,
//!     nothing to commit                     then `… +N lines`; `(no output)` when empty
//! > task(look around)
//!     > read_file(notes.txt)             <- a subagent's calls, four columns in
//!       ⎿      1  one
//!   ⎿ The notes say one.
//! ## Result                              <- rendered Markdown (see `markdown`)
//! ```
//!
//! - The spinner is on stderr only when stderr is a terminal (and `TERM` is not `dumb`); it is
//!   erased before anything else is written and at the end of the turn, on Ctrl-C and before
//!   the approval prompt, and never leaves a line behind (see `spinner` for its line). Its
//!   frames turn every 80 ms, from the turn's start; the seconds and tokens are the turn's.
//! - The answer is rendered only when stdout is a terminal; to a pipe or a file it is written
//!   as it streams, raw Markdown (`skillet run > answer.md`), made safe the same way.
//! - Colour follows `NO_COLOR`, `CLICOLOR_FORCE`/`FORCE_COLOR` and `TERM=dumb`, for each stream
//!   on its own (see `style`); without colour the shapes stay (`>`, `⎿`, bullets, borders).
//! - The approval prompt (`bash wants to run:` … `allow? [y]es / [n]o / [a]lways this
//!   session: `) always starts on a line of its own.
//!
//! Everything shown that comes from the model, a tool, a skill or a server passes
//! [`skillet_skills::terminal_safe`] before any styling is added.

mod approve;
mod calls;
#[cfg(test)]
mod fake_term;
mod highlight;
mod markdown;
mod screen;
mod spinner;
mod style;
mod thinking;
pub(crate) mod typeahead;
pub(crate) mod wrap;

pub use approve::{TerminalApprover, drop_early_keys};
pub use screen::{Screen, screen};
pub use style::Attrs;
