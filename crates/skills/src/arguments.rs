//! A skill invoked with arguments (chat's `/NAME ARGS`, an MCP prompt): one rule for every
//! entry point, so a skill reads the same wherever it is invoked.

/// `text` (a rendered skill) with `$ARGUMENTS` replaced by `arguments`; when the text has no
/// `$ARGUMENTS`, non-empty arguments are appended as `ARGUMENTS: …`. The arguments are the
/// user's text: they are inserted once and never scanned again.
pub fn with_arguments(text: &str, arguments: &str) -> String {
    if text.contains("$ARGUMENTS") {
        return text.replace("$ARGUMENTS", arguments);
    }
    if arguments.is_empty() {
        text.to_string()
    } else {
        format!("{text}\n\nARGUMENTS: {arguments}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaced_where_used_else_appended() {
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
}
