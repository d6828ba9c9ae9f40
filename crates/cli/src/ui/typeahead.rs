//! Keys typed while a turn runs, kept for the next prompt instead of drawn over the spinner and
//! thrown away. While a turn runs (on a terminal), the terminal does not echo and a thread reads
//! what is typed; an approval question stops it (the question reads its own keys) and it goes
//! on after. At the next prompt, a line ended with Enter is sent as the next message and what
//! follows is already typed at the prompt.
//!
//! Ctrl-C still cancels the turn (the terminal keeps its signals). Backspace takes back the last
//! character; other control keys (Tab among them) and escape sequences (arrows) are dropped.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

/// The most bytes typed ahead that are kept.
pub const MAX_TYPE_AHEAD_BYTES: usize = 64 * 1024;
/// How often the reader looks at whether to stop.
const POLL_MILLIS: i32 = 50;

/// What is typed ahead, and the reader while one runs.
static STATE: Mutex<State> = Mutex::new(State {
    typed: Vec::new(),
    reader: None,
});

struct State {
    typed: Vec<u8>,
    reader: Option<Reader>,
}

struct Reader {
    stop: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<Vec<u8>>,
    #[cfg(unix)]
    saved: rustix::termios::Termios,
}

fn state() -> std::sync::MutexGuard<'static, State> {
    STATE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A turn begins: keys typed from now on are kept (on a terminal; elsewhere nothing happens).
pub fn begin() {
    let mut state = state();
    if state.reader.is_none() {
        state.reader = start();
    }
}

/// Keys kept for as long as it lives: [`begin`] when made, [`end`] when dropped, so the
/// terminal gets its echo back however the turn ends (an error, a panic unwinding).
pub struct Turn(());

impl Turn {
    /// Keys typed from now on are kept.
    pub fn begin() -> Self {
        begin();
        Self(())
    }
}

impl Drop for Turn {
    fn drop(&mut self) {
        end();
    }
}

/// An approval question is asked: the reader stops so the question gets its keys.
pub fn pause() {
    let mut state = state();
    if let Some(reader) = state.reader.take() {
        let typed = stop(reader);
        state.typed.extend(typed);
    }
}

/// After the question: keys are kept again, when they were before it (`was_running`).
pub fn resume(was_running: bool) {
    if was_running {
        begin();
    }
}

/// The turn ended: the terminal is given back; what was typed stays for [`take`].
pub fn end() {
    pause();
}

/// What was typed ahead, as text (empty when nothing); it is then forgotten.
pub fn take() -> String {
    let mut state = state();
    let typed = std::mem::take(&mut state.typed);
    edited(&String::from_utf8_lossy(&typed))
}

/// Whether a reader runs now (a turn under way on a terminal).
pub fn running() -> bool {
    state().reader.is_some()
}

/// What was typed, as the terminal would have shown it: backspace takes back a character,
/// escape sequences and other control characters are dropped, `\r` is a line's end.
fn edited(typed: &str) -> String {
    let mut out = String::new();
    let mut chars = typed.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{7f}' | '\u{8}' => {
                out.pop();
            }
            '\r' | '\n' => out.push('\n'),
            '\u{1b}' => {
                // `ESC [ … final` or `ESC O x`; a lone ESC is dropped.
                match chars.peek() {
                    Some('[') => {
                        chars.next();
                        for c in chars.by_ref() {
                            if ('@'..='~').contains(&c) {
                                break;
                            }
                        }
                    }
                    Some('O') => {
                        chars.next();
                        chars.next();
                    }
                    _ => {}
                }
            }
            // Tab too: typed ahead it asked for a completion, which only the prompt can give.
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(unix)]
fn start() -> Option<Reader> {
    use rustix::termios::{LocalModes, OptionalActions, SpecialCodeIndex, tcgetattr, tcsetattr};
    use std::io::IsTerminal as _;
    let stdin = std::io::stdin();
    if !stdin.is_terminal() || !std::io::stdout().is_terminal() {
        return None;
    }
    let saved = tcgetattr(&stdin).ok()?;
    let mut quiet = saved.clone();
    // No echo, no line editing; signals stay (Ctrl-C cancels the turn).
    quiet
        .local_modes
        .remove(LocalModes::ICANON | LocalModes::ECHO);
    quiet.special_codes[SpecialCodeIndex::VMIN] = 1;
    quiet.special_codes[SpecialCodeIndex::VTIME] = 0;
    tcsetattr(&stdin, OptionalActions::Now, &quiet).ok()?;
    let stop = Arc::new(AtomicBool::new(false));
    let stopping = Arc::clone(&stop);
    let thread = std::thread::spawn(move || read_until(&stopping));
    Some(Reader {
        stop,
        thread,
        saved,
    })
}

#[cfg(not(unix))]
fn start() -> Option<Reader> {
    None
}

/// Stops the reader and gives the terminal back as it was; what it read.
fn stop(reader: Reader) -> Vec<u8> {
    reader.stop.store(true, Ordering::SeqCst);
    let typed = reader.thread.join().unwrap_or_default();
    #[cfg(unix)]
    {
        let _ = rustix::termios::tcsetattr(
            std::io::stdin(),
            rustix::termios::OptionalActions::Now,
            &reader.saved,
        );
    }
    typed
}

/// Reads what is typed until `stop`, looking every [`POLL_MILLIS`].
#[cfg(unix)]
fn read_until(stop: &AtomicBool) -> Vec<u8> {
    let stdin = std::io::stdin();
    let mut typed = Vec::new();
    let mut buffer = [0u8; 1024];
    while !stop.load(Ordering::SeqCst) {
        let timeout = rustix::event::Timespec {
            tv_sec: 0,
            tv_nsec: i64::from(POLL_MILLIS) * 1_000_000,
        };
        let mut fds = [rustix::event::PollFd::new(
            &stdin,
            rustix::event::PollFlags::IN,
        )];
        match rustix::event::poll(&mut fds, Some(&timeout)) {
            Ok(0) | Err(_) => continue,
            Ok(_) => {}
        }
        // Straight from the descriptor: std's buffer would keep bytes the line editor never sees.
        match rustix::io::read(&stdin, &mut buffer) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let room = MAX_TYPE_AHEAD_BYTES.saturating_sub(typed.len());
                typed.extend_from_slice(&buffer[..n.min(room)]);
            }
        }
    }
    typed
}

#[cfg(not(unix))]
fn read_until(_: &AtomicBool) -> Vec<u8> {
    Vec::new()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typing_is_read_as_the_terminal_would_show_it() {
        assert_eq!(edited("helo\u{7f}lo there\r"), "hello there\n");
        assert_eq!(edited("a\u{1b}[Ab\u{1b}OBc\u{1b}"), "abc");
        assert_eq!(edited("x\u{3}y\tz"), "xyz");
    }
}
