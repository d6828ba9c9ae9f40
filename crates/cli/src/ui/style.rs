//! Colour, decided once per stream, and the few SGR attributes the terminal output uses.
//!
//! Colour is off when `NO_COLOR` is set to anything but the empty string (no-color.org), when the
//! stream is not a terminal, or when `TERM=dumb`. `CLICOLOR_FORCE` or `FORCE_COLOR` set to
//! anything but `0`/`false` turn it on for a pipe too (for `less -R` and terminal tests);
//! `NO_COLOR` still wins over them, as anstream decides. With colour off nothing here writes an
//! escape sequence: the structure (bullets, borders, `⎿`) stays, the attributes go.

/// Set (not empty): no colour at all.
pub const NO_COLOR: &str = "NO_COLOR";
/// Set (not `0`): colour even when the stream is not a terminal.
pub const CLICOLOR_FORCE: &str = "CLICOLOR_FORCE";
/// Set (not `0`/`false`): colour even when the stream is not a terminal.
pub const FORCE_COLOR: &str = "FORCE_COLOR";
/// `dumb`: a terminal that understands no escape sequences.
pub const TERM: &str = "TERM";

/// Whether a stream gets colour. `var` reads a variable (`None` when unset or empty).
pub fn colour_wanted(is_terminal: bool, var: &dyn Fn(&str) -> Option<String>) -> bool {
    if var(NO_COLOR).is_some() {
        return false;
    }
    let forced = |name: &str| {
        var(name).is_some_and(|value| value != "0" && !value.eq_ignore_ascii_case("false"))
    };
    if forced(CLICOLOR_FORCE) || forced(FORCE_COLOR) {
        return true;
    }
    is_terminal && var(TERM).as_deref() != Some("dumb")
}

/// A set of text attributes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Attrs(u16);

impl Attrs {
    /// None.
    pub const NONE: Self = Self(0);
    /// Bold.
    pub const BOLD: Self = Self(1);
    /// Dim (faint).
    pub const DIM: Self = Self(1 << 1);
    /// Italic.
    pub const ITALIC: Self = Self(1 << 2);
    /// Underlined.
    pub const UNDERLINE: Self = Self(1 << 3);
    /// Struck through.
    pub const STRIKE: Self = Self(1 << 4);
    /// Red text.
    pub const RED: Self = Self(1 << 5);
    /// Green text.
    pub const GREEN: Self = Self(1 << 6);
    /// Yellow text.
    pub const YELLOW: Self = Self(1 << 7);
    /// Cyan text.
    pub const CYAN: Self = Self(1 << 8);

    /// Both sets.
    #[must_use]
    pub const fn with(self, other: Self) -> Self {
        Self(self.0 | other.0)
    }

    /// Whether no attribute is set.
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The SGR parameters, in a fixed order (`1;4`).
    fn codes(self) -> String {
        const CODES: [(Attrs, &str); 9] = [
            (Attrs::BOLD, "1"),
            (Attrs::DIM, "2"),
            (Attrs::ITALIC, "3"),
            (Attrs::UNDERLINE, "4"),
            (Attrs::STRIKE, "9"),
            (Attrs::RED, "31"),
            (Attrs::GREEN, "32"),
            (Attrs::YELLOW, "33"),
            (Attrs::CYAN, "36"),
        ];
        CODES
            .iter()
            .filter(|(attr, _)| self.0 & attr.0 != 0)
            .map(|(_, code)| *code)
            .collect::<Vec<_>>()
            .join(";")
    }
}

impl std::ops::BitOr for Attrs {
    type Output = Self;

    fn bitor(self, other: Self) -> Self {
        self.with(other)
    }
}

/// How one stream is styled: with colour or without.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Style {
    colour: bool,
}

impl Style {
    /// Colour on or off.
    pub const fn new(colour: bool) -> Self {
        Self { colour }
    }

    /// No colour.
    pub const fn plain() -> Self {
        Self::new(false)
    }

    /// Whether escape sequences are written.
    pub const fn colour(self) -> bool {
        self.colour
    }

    /// `text` with `attrs`, each piece reset at its end (`ESC[0m`), so styles never leak into
    /// what follows. `text` must already be safe ([`skillet_skills::terminal_safe`]): the only
    /// escape sequences in the result are the ones added here.
    pub fn paint(self, attrs: Attrs, text: &str) -> String {
        if !self.colour || attrs.is_empty() || text.is_empty() {
            return text.to_string();
        }
        format!("\u{1b}[{}m{text}\u{1b}[0m", attrs.codes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| {
            pairs
                .iter()
                .find(|(key, value)| *key == name && !value.is_empty())
                .map(|(_, value)| (*value).to_string())
        }
    }

    #[test]
    fn colour_follows_no_color_the_terminal_and_term() {
        assert!(colour_wanted(true, &vars(&[("TERM", "xterm-256color")])));
        assert!(colour_wanted(true, &vars(&[])));
        // Not a terminal: a pipe or a file gets no escape sequences.
        assert!(!colour_wanted(false, &vars(&[("TERM", "xterm")])));
        // NO_COLOR, whatever its value, but not when empty.
        assert!(!colour_wanted(true, &vars(&[("NO_COLOR", "1")])));
        assert!(!colour_wanted(true, &vars(&[("NO_COLOR", "0")])));
        assert!(colour_wanted(true, &vars(&[("NO_COLOR", "")])));
        assert!(!colour_wanted(true, &vars(&[("TERM", "dumb")])));
        // Forced on for a pipe, but NO_COLOR wins.
        assert!(colour_wanted(false, &vars(&[("CLICOLOR_FORCE", "1")])));
        assert!(colour_wanted(false, &vars(&[("FORCE_COLOR", "3")])));
        assert!(!colour_wanted(false, &vars(&[("FORCE_COLOR", "0")])));
        assert!(!colour_wanted(false, &vars(&[("CLICOLOR_FORCE", "false")])));
        assert!(!colour_wanted(
            false,
            &vars(&[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")])
        ));
    }

    #[test]
    fn paint_writes_sequences_only_with_colour() {
        let bold_cyan = Attrs::BOLD | Attrs::CYAN;
        assert_eq!(
            Style::new(true).paint(bold_cyan, "x"),
            "\u{1b}[1;36mx\u{1b}[0m"
        );
        assert_eq!(Style::plain().paint(bold_cyan, "x"), "x");
        assert_eq!(Style::new(true).paint(Attrs::NONE, "x"), "x");
        assert_eq!(Style::new(true).paint(Attrs::BOLD, ""), "");
    }
}
