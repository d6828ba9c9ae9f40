//! Code blocks coloured by language as they stream, line by line (syntect, with its bundled
//! syntaxes and themes; the `highlight` feature). The syntaxes load on the first code block,
//! never at start-up. A language syntect does not know, or a build without the feature, shows
//! the code as it is.
//!
//! The line given is already safe for the terminal; only the colours' own escapes are added.

/// The theme: readable on dark and light backgrounds alike.
#[cfg(feature = "highlight")]
const THEME: &str = "base16-ocean.dark";

/// One code block's highlighting state.
#[cfg(feature = "highlight")]
pub struct CodeColours {
    lines: syntect::easy::HighlightLines<'static>,
}

/// Without the feature there is none to have.
#[cfg(not(feature = "highlight"))]
pub enum CodeColours {}

impl std::fmt::Debug for CodeColours {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CodeColours")
    }
}

#[cfg(feature = "highlight")]
fn syntaxes() -> &'static syntect::parsing::SyntaxSet {
    static SYNTAXES: std::sync::OnceLock<syntect::parsing::SyntaxSet> = std::sync::OnceLock::new();
    SYNTAXES.get_or_init(syntect::parsing::SyntaxSet::load_defaults_newlines)
}

#[cfg(feature = "highlight")]
fn theme() -> &'static syntect::highlighting::Theme {
    static THEMES: std::sync::OnceLock<syntect::highlighting::ThemeSet> =
        std::sync::OnceLock::new();
    let themes = THEMES.get_or_init(syntect::highlighting::ThemeSet::load_defaults);
    &themes.themes[THEME]
}

impl CodeColours {
    /// The state for a block in `language` (a fence's info word: `rust`, `py`, `sh`); `None`
    /// when it is not known (or the feature is off).
    #[cfg(feature = "highlight")]
    pub fn for_language(language: &str) -> Option<Self> {
        if language.is_empty() {
            return None;
        }
        let set = syntaxes();
        let syntax = set
            .find_syntax_by_token(language)
            .or_else(|| set.find_syntax_by_extension(&language.to_ascii_lowercase()))?;
        Some(Self {
            lines: syntect::easy::HighlightLines::new(syntax, theme()),
        })
    }

    /// Without the feature, no language is known.
    #[cfg(not(feature = "highlight"))]
    pub fn for_language(_: &str) -> Option<Self> {
        None
    }

    /// `line` (one line of code, without its newline) coloured, its state carried to the next;
    /// as it is when it cannot be.
    #[cfg(feature = "highlight")]
    pub fn line(&mut self, line: &str) -> String {
        let with_newline = format!("{line}\n");
        match self.lines.highlight_line(&with_newline, syntaxes()) {
            Ok(ranges) => {
                let mut out = syntect::util::as_24_bit_terminal_escaped(&ranges, false);
                if out.ends_with('\n') {
                    out.pop();
                }
                out.push_str("\u{1b}[0m");
                out
            }
            Err(_) => line.to_string(),
        }
    }

    /// Without the feature there is no state to colour with.
    #[cfg(not(feature = "highlight"))]
    pub fn line(&mut self, _: &str) -> String {
        match *self {}
    }
}

#[cfg(all(test, feature = "highlight"))]
mod tests {
    use super::*;

    #[test]
    fn known_languages_are_coloured_and_keep_their_text() {
        let mut rust = CodeColours::for_language("rust").unwrap();
        let line = rust.line("fn main() { let x = \"hi\"; }");
        assert!(line.contains("\u{1b}[38;2;"), "{line:?}");
        let plain: String = strip(&line);
        assert_eq!(plain, "fn main() { let x = \"hi\"; }");
        assert!(CodeColours::for_language("py").is_some());
        assert!(CodeColours::for_language("no-such-language").is_none());
        assert!(CodeColours::for_language("").is_none());
    }

    fn strip(text: &str) -> String {
        let mut out = String::new();
        let mut chars = text.chars();
        while let Some(c) = chars.next() {
            if c == '\u{1b}' {
                for c in chars.by_ref() {
                    if c.is_ascii_alphabetic() {
                        break;
                    }
                }
            } else {
                out.push(c);
            }
        }
        out
    }
}
