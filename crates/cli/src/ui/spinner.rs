//! The spinner: one line on stderr while the model or a tool is being waited for,
//!
//! ```text
//! ⠹ thinking… 3s · ↓ 1.2k tokens
//! ```
//!
//! the frame (it turns every [`SPINNER_INTERVAL`]), what is waited for (`thinking`, `writing`,
//! `running bash`), the time since the turn began, and the turn's output tokens (shown once
//! there are any): the provider's count after each response, plus the characters streamed
//! since the last count / 4 ([`CHARS_PER_TOKEN`]) while an answer streams.
//!
//! `indicatif` draws it from its own thread (the async runtime is never blocked) and erases
//! it (`\r` + erase line) before anything else is written ([`Spinner::suspend`]) and when it
//! stops, so it never mixes with text and leaves no half line. It is only created when stderr
//! is a terminal that understands escape sequences.

use std::fmt::Write as _;
use std::io;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle, TermLike};

use super::style::{Attrs, Style};

/// How often the frame turns.
pub const SPINNER_INTERVAL: Duration = Duration::from_millis(80);
/// The frames, in order.
pub const FRAMES: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
/// Characters per token in the estimate of streamed text.
pub const CHARS_PER_TOKEN: usize = 4;
/// Seconds in a minute, minutes in an hour.
const SIXTY: u64 = 60;
/// Tokens from which the count is shown in thousands (`1.2k`), and in millions.
const THOUSAND: u64 = 1_000;
const MILLION: u64 = 1_000_000;
/// Below this many thousands, one decimal is shown (`1.2k`, then `12k`).
const DECIMALS_BELOW: u64 = 10;

/// The frame shown `elapsed` after the spinner started.
pub fn frame(elapsed: Duration) -> &'static str {
    let turns = elapsed.as_millis() / SPINNER_INTERVAL.as_millis();
    let index = usize::try_from(turns % FRAMES.len() as u128).unwrap_or(0);
    FRAMES[index]
}

/// `3s`, `1m 05s`, `2h 03m`.
pub fn format_elapsed(elapsed: Duration) -> String {
    let seconds = elapsed.as_secs();
    if seconds < SIXTY {
        format!("{seconds}s")
    } else if seconds < SIXTY * SIXTY {
        format!("{}m {:02}s", seconds / SIXTY, seconds % SIXTY)
    } else {
        format!(
            "{}h {:02}m",
            seconds / (SIXTY * SIXTY),
            seconds / SIXTY % SIXTY
        )
    }
}

/// `312`, `1.2k`, `12k`, `1.2M`.
pub fn format_tokens(tokens: u64) -> String {
    let scaled = |unit: u64, suffix: &str| {
        let whole = tokens / unit;
        if whole < DECIMALS_BELOW {
            format!("{whole}.{}{suffix}", tokens % unit * 10 / unit)
        } else {
            format!("{whole}{suffix}")
        }
    };
    if tokens < THOUSAND {
        tokens.to_string()
    } else if tokens < MILLION {
        scaled(THOUSAND, "k")
    } else {
        scaled(MILLION, "M")
    }
}

/// What follows the label: ` 3s` and, with tokens, ` · ↓ 1.2k tokens`.
pub fn status_tail(elapsed: Duration, tokens: u64) -> String {
    let mut tail = format!(" {}", format_elapsed(elapsed));
    if tokens > 0 {
        let _ = write!(tail, " · ↓ {} tokens", format_tokens(tokens));
    }
    tail
}

/// The whole line without colour: `⠹ thinking… 3s · ↓ 1.2k tokens`.
#[cfg(test)]
pub fn status_line(elapsed: Duration, label: &str, tokens: u64) -> String {
    format!(
        "{} {label}…{}",
        frame(elapsed),
        status_tail(elapsed, tokens)
    )
}

/// Makes the place the spinner is drawn (stderr; a fake terminal in tests).
pub type TargetFactory = Box<dyn Fn() -> ProgressDrawTarget + Send>;

/// The spinner of a turn, shown and hidden as the turn goes (no spinner at all when
/// [`Spinner::disabled`]).
pub struct Spinner {
    target: Option<TargetFactory>,
    /// How often its own thread redraws it (`None`: only when told, for tests).
    tick: Option<Duration>,
    style: Style,
    bar: Option<ProgressBar>,
    started: Instant,
    /// The time since `started` (frozen in tests).
    clock: fn(Instant) -> Duration,
}

impl Spinner {
    /// A spinner drawn where `target` says, in `style`.
    pub fn new(target: TargetFactory, tick: Option<Duration>, style: Style) -> Self {
        Self {
            target: Some(target),
            tick,
            style,
            bar: None,
            started: Instant::now(),
            clock: |started| started.elapsed(),
        }
    }

    /// The same spinner with another clock (tests freeze time with it).
    #[cfg(test)]
    #[must_use]
    pub fn with_clock(mut self, clock: fn(Instant) -> Duration) -> Self {
        self.clock = clock;
        self
    }

    /// No spinner (stderr is not a terminal).
    pub fn disabled() -> Self {
        Self {
            target: None,
            tick: None,
            style: Style::plain(),
            bar: None,
            started: Instant::now(),
            clock: |started| started.elapsed(),
        }
    }

    /// Whether it is drawn at all.
    #[cfg(test)]
    pub fn enabled(&self) -> bool {
        self.target.is_some()
    }

    /// Counts elapsed time from now (a turn begins).
    pub fn restart_clock(&mut self) {
        self.started = Instant::now();
    }

    /// Shows the spinner with this label (`thinking`) and token count, or updates it.
    pub fn show(&mut self, label: &str, tokens: u64) {
        if let Some(bar) = &self.bar {
            bar.set_message(format!("{label}…"));
            bar.set_position(tokens);
            if self.tick.is_none() {
                bar.force_draw();
            }
            return;
        }
        let Some(target) = &self.target else {
            return;
        };
        let bar = ProgressBar::with_draw_target(None, target())
            .with_style(self.bar_style())
            .with_message(format!("{label}…"))
            .with_position(tokens);
        match self.tick {
            Some(interval) => bar.enable_steady_tick(interval),
            None => bar.force_draw(),
        }
        self.bar = Some(bar);
    }

    /// Erases the spinner and stops it (until the next [`Spinner::show`]).
    pub fn hide(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }

    /// Whether it is on the screen.
    #[cfg(test)]
    pub fn visible(&self) -> bool {
        self.bar.is_some()
    }

    /// Runs `write` with the spinner erased, then draws it again below what was written.
    pub fn suspend<R>(&self, write: impl FnOnce() -> R) -> R {
        match &self.bar {
            Some(bar) => bar.suspend(write),
            None => write(),
        }
    }

    /// Draws it now (tests; the steady tick does it otherwise).
    #[cfg(test)]
    pub fn draw(&self) {
        if let Some(bar) = &self.bar {
            bar.force_draw();
        }
    }

    /// Frame and tail are computed from the turn's start, so a spinner hidden for a prompt and
    /// shown again goes on counting; the token count is the bar's position.
    fn bar_style(&self) -> ProgressStyle {
        let (started, clock, style) = (self.started, self.clock, self.style);
        let template = ProgressStyle::with_template("{frame} {msg}{tail}")
            .unwrap_or_else(|_| ProgressStyle::default_spinner());
        template
            .with_key(
                "frame",
                move |_: &ProgressState, out: &mut dyn std::fmt::Write| {
                    let _ = out.write_str(&style.paint(Attrs::CYAN, frame(clock(started))));
                },
            )
            .with_key(
                "tail",
                move |state: &ProgressState, out: &mut dyn std::fmt::Write| {
                    let tail = status_tail(clock(started), state.pos());
                    let _ = out.write_str(&style.paint(Attrs::DIM, &tail));
                },
            )
    }
}

/// A terminal without indicatif's padding. indicatif fills the spinner's line with spaces to the
/// terminal's width, which leaves the cursor in the last column: what the terminal echoes then
/// (`^C` on Ctrl-C, keys typed ahead) wraps to the next line, and erasing "the spinner's line"
/// erases that one instead, leaving the spinner behind. Without the padding the cursor stays
/// after the text, an echo lands on the spinner's own line, and erasing clears it too. Lines
/// are erased before each draw, so nothing longer is left showing.
#[derive(Debug)]
pub struct NoPadding<T>(pub T);

impl<T: TermLike> TermLike for NoPadding<T> {
    fn width(&self) -> u16 {
        self.0.width()
    }

    fn height(&self) -> u16 {
        self.0.height()
    }

    fn move_cursor_up(&self, n: usize) -> io::Result<()> {
        self.0.move_cursor_up(n)
    }

    fn move_cursor_down(&self, n: usize) -> io::Result<()> {
        self.0.move_cursor_down(n)
    }

    fn move_cursor_right(&self, n: usize) -> io::Result<()> {
        self.0.move_cursor_right(n)
    }

    fn move_cursor_left(&self, n: usize) -> io::Result<()> {
        self.0.move_cursor_left(n)
    }

    fn write_line(&self, s: &str) -> io::Result<()> {
        self.0.write_line(s)
    }

    fn write_str(&self, s: &str) -> io::Result<()> {
        if !s.is_empty() && s.bytes().all(|b| b == b' ') {
            return Ok(());
        }
        self.0.write_str(s)
    }

    fn clear_line(&self) -> io::Result<()> {
        self.0.clear_line()
    }

    fn flush(&self) -> io::Result<()> {
        self.0.flush()
    }
}

/// Where the spinner is drawn: stderr, unpadded.
pub fn stderr_target() -> ProgressDrawTarget {
    ProgressDrawTarget::term_like(Box::new(NoPadding(console::Term::stderr())))
}

impl Drop for Spinner {
    fn drop(&mut self) {
        self.hide();
    }
}

#[cfg(test)]
mod tests {
    use super::super::fake_term::FakeTerm;
    use super::*;

    #[test]
    fn the_line_says_what_is_waited_for_how_long_and_how_many_tokens() {
        assert_eq!(status_line(Duration::ZERO, "thinking", 0), "⠋ thinking… 0s");
        assert_eq!(
            status_line(Duration::from_millis(3_170), "running bash", 1_234),
            "⠏ running bash… 3s · ↓ 1.2k tokens"
        );
        assert_eq!(frame(Duration::from_millis(79)), "⠋");
        assert_eq!(frame(Duration::from_millis(80)), "⠙");
        assert_eq!(frame(SPINNER_INTERVAL * 10), "⠋");
        assert_eq!(format_elapsed(Duration::from_secs(65)), "1m 05s");
        assert_eq!(format_elapsed(Duration::from_secs(3_725)), "1h 02m");
        assert_eq!(format_tokens(999), "999");
        assert_eq!(format_tokens(1_000), "1.0k");
        assert_eq!(format_tokens(12_345), "12k");
        assert_eq!(format_tokens(2_500_000), "2.5M");
    }

    #[test]
    fn writing_erases_the_spinner_first_and_stopping_leaves_nothing() {
        let term = FakeTerm::new(60);
        let target = term.clone();
        let mut spinner = Spinner::new(
            Box::new(move || ProgressDrawTarget::term_like(Box::new(NoPadding(target.clone())))),
            None,
            Style::plain(),
        )
        .with_clock(|_| Duration::from_millis(1_234));
        spinner.show("thinking", 0);
        spinner.draw();
        assert_eq!(term.lines(), ["⠴ thinking… 1s"]);
        // Text written while it spins goes where the spinner was; the spinner goes below.
        let mut out = term.clone();
        spinner.suspend(|| {
            use std::io::Write as _;
            let _ = out.write_all("first line\nsecond line\n".as_bytes());
        });
        spinner.show("writing", 40);
        spinner.draw();
        assert_eq!(
            term.lines(),
            ["first line", "second line", "⠴ writing… 1s · ↓ 40 tokens"]
        );
        spinner.hide();
        assert_eq!(term.lines(), ["first line", "second line"]);
        // The cursor is at the start of an empty line: no half line is left behind.
        assert_eq!(term.cursor(), (2, 0));
        assert!(!spinner.visible());
        // Hidden, suspend just writes.
        spinner.suspend(|| {
            use std::io::Write as _;
            let _ = out.write_all(b"after\n");
        });
        assert_eq!(term.lines(), ["first line", "second line", "after"]);
    }

    #[test]
    fn a_disabled_spinner_never_draws() {
        let mut spinner = Spinner::disabled();
        spinner.show("thinking", 3);
        assert!(!spinner.visible() && !spinner.enabled());
        assert_eq!(spinner.suspend(|| 7), 7);
    }
}
