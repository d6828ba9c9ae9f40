//! Text shown on a terminal: what would act on it (move the cursor, rewrite a line, recolour
//! the screen, reorder what is read) shown as visible escapes instead.

/// Untrusted text (model output, tool previews, commands and diffs shown for approval, skill
/// names and descriptions) made safe to print: control characters and escape sequences, which
/// could move the cursor, rewrite a line or recolour the screen, are shown as visible escapes
/// (`\e`, `\r`, `\u{202e}`) instead of acting. Newlines and tabs stay when `multiline` (a
/// `\r\n` is a newline); otherwise a newline shows as `\n` too, so one line stays one line.
pub fn terminal_safe(text: &str, multiline: bool) -> std::borrow::Cow<'_, str> {
    let acts = |c: char| {
        (c.is_control() && !(multiline && (c == '\n' || c == '\t'))) || is_invisible_format(c)
    };
    if !text.chars().any(acts) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if multiline && c == '\r' && chars.peek() == Some(&'\n') {
            continue;
        }
        if !acts(c) {
            out.push(c);
            continue;
        }
        match c {
            '\u{1b}' => out.push_str("\\e"),
            '\r' => out.push_str("\\r"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            other => {
                use std::fmt::Write as _;
                let _ = write!(out, "\\u{{{:x}}}", u32::from(other));
            }
        }
    }
    std::borrow::Cow::Owned(out)
}

/// Format characters that change how text reads without showing: bidi overrides and isolates,
/// zero-width characters, the byte-order mark, and tag characters.
fn is_invisible_format(c: char) -> bool {
    matches!(c,
        '\u{061c}'
        | '\u{200b}'..='\u{200f}'
        | '\u{2028}'..='\u{202e}'
        | '\u{2060}'..='\u{2064}'
        | '\u{2066}'..='\u{2069}'
        | '\u{feff}'
        | '\u{e0000}'..='\u{e007f}')
}

#[cfg(test)]
mod tests {
    use super::terminal_safe;

    #[test]
    fn escapes_cannot_act_on_the_terminal() {
        assert_eq!(terminal_safe("ls -la", false), "ls -la");
        assert_eq!(
            terminal_safe("echo safe\rrm -rf ~", false),
            "echo safe\\rrm -rf ~"
        );
        assert_eq!(
            terminal_safe("\u{1b}[2K\u{1b}[1Aok", false),
            "\\e[2K\\e[1Aok"
        );
        assert_eq!(terminal_safe("a\nb", false), "a\\nb");
        assert_eq!(terminal_safe("a\r\nb\tc", true), "a\nb\tc");
        assert_eq!(terminal_safe("x\u{202e}gpj.exe", true), "x\\u{202e}gpj.exe");
        assert_eq!(terminal_safe("\u{9b}31m", true), "\\u{9b}31m");
        assert_eq!(terminal_safe("é ünïcode 👍", true), "é ünïcode 👍");
    }
}
