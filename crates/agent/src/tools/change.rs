//! What `write_file` and `edit_file` share: reading the old text, showing the change as a
//! diff for approval, refusing or asking for protected paths, and the atomic write. File work
//! runs on the blocking pool, so cancelling a turn never waits for the disk.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::Arc;

use similar::TextDiff;
use skillet_skills::confine::Beneath;

use crate::paths::{Resolved, confine_error, protection};
use crate::permission::ApprovalRequest;
use crate::tool::{ToolContext, ToolError, ToolKind};

/// The largest file the write tools read or write.
pub const MAX_WRITE_BYTES: u64 = 20 * 1024 * 1024;
/// The most diff lines shown for approval; the rest is counted.
pub const MAX_DIFF_LINES: usize = 400;
/// Lines of context around each change in the diff.
pub const DIFF_CONTEXT: usize = 3;

/// Runs blocking file work off the async thread.
pub async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, ToolError> + Send + 'static,
) -> Result<T, ToolError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|error| ToolError::new(format!("the file work stopped: {error}")))?
}

/// The file a write lands on (a link inside the root is followed) and its current bytes, if any.
pub async fn current(resolved: &Resolved) -> Result<(PathBuf, Option<Vec<u8>>), ToolError> {
    let beneath = Arc::clone(&resolved.beneath);
    let (relative, shown) = (resolved.relative.clone(), resolved.shown.clone());
    blocking(move || {
        let target = beneath
            .write_target(&relative, &shown)
            .map_err(confine_error)?;
        let old = beneath
            .read_if_exists(&target, &shown, MAX_WRITE_BYTES)
            .map_err(confine_error)?;
        Ok((target, old))
    })
    .await
}

/// Asks for the change (showing its diff), then writes `new` atomically to `target`. Returns
/// whether the file was created.
pub async fn apply(
    context: &ToolContext,
    tool: &str,
    resolved: &Resolved,
    target: PathBuf,
    old: Option<&[u8]>,
    new: String,
) -> Result<bool, ToolError> {
    let absolute = resolved.beneath.root().join(&target);
    let protected =
        protection(context, &resolved.absolute()).or_else(|| protection(context, &absolute));
    // The file really written is what is asked about: through a link, where it leads.
    let written = crate::paths::display(context, &absolute);
    let summary = if target == resolved.relative {
        resolved.shown.clone()
    } else {
        format!("{written} (through the link {})", resolved.shown)
    };
    context.approve(
        &ApprovalRequest {
            tool: tool.to_string(),
            kind: ToolKind::Write,
            summary,
            detail: Some(diff(&written, old, &new)),
            protected,
            always: Vec::new(),
        },
        // The file really written, for the standing rules' paths (`Edit(src/**)`).
        &serde_json::json!({ "path": absolute }),
    )?;
    let beneath: Arc<Beneath> = Arc::clone(&resolved.beneath);
    let shown = resolved.shown.clone();
    blocking(move || {
        beneath
            .replace(&target, &shown, new.as_bytes())
            .map(|written| written.created)
            .map_err(confine_error)
    })
    .await
}

/// A unified diff of the change, capped at [`MAX_DIFF_LINES`].
pub fn diff(shown: &str, old: Option<&[u8]>, new: &str) -> String {
    let (old_text, note) = match old.map(std::str::from_utf8) {
        None => ("", String::new()),
        Some(Ok(text)) => (text, String::new()),
        // The new text is shown whole, as if the file were new.
        Some(Err(_)) => (
            "",
            format!(
                "(the old {shown} is a binary file of {} bytes; all of it is replaced)\n",
                old.map_or(0, <[u8]>::len)
            ),
        ),
    };
    let diff = TextDiff::from_lines(old_text, new);
    let from = if old.is_some() {
        format!("a/{shown}")
    } else {
        "/dev/null".to_string()
    };
    let text = note
        + &diff
            .unified_diff()
            .context_radius(DIFF_CONTEXT)
            .header(&from, &format!("b/{shown}"))
            .to_string();
    let total = text.lines().count();
    if total <= MAX_DIFF_LINES {
        return if text.is_empty() {
            format!("{shown}: no change")
        } else {
            text
        };
    }
    let mut shown_text: String = text
        .lines()
        .take(MAX_DIFF_LINES)
        .collect::<Vec<_>>()
        .join("\n");
    let _ = write!(
        shown_text,
        "\n[… {} more diff lines not shown: the change is longer than the approval can show; refuse it unless you trust it whole]",
        total - MAX_DIFF_LINES
    );
    shown_text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_diff_shows_the_hunk_with_context() {
        let old = "a\nb\nc\nd\ne\nf\ng\nh\n";
        let new = "a\nb\nc\nd\nE\nf\ng\nh\n";
        let text = diff("x.txt", Some(old.as_bytes()), new);
        assert!(
            text.starts_with("--- a/x.txt\n+++ b/x.txt\n@@ -2,7 +2,7 @@"),
            "{text}"
        );
        assert!(text.contains("-e\n+E\n"), "{text}");
        let created = diff("new.txt", None, "hello\n");
        assert!(
            created.starts_with("--- /dev/null\n+++ b/new.txt"),
            "{created}"
        );
        let binary = diff("b.bin", Some(&[0xff, 0xfe]), "payload\n");
        assert!(binary.contains("binary file of 2 bytes"), "{binary}");
        assert!(binary.contains("+payload"), "{binary}");
        let long = "line\n".repeat(1000);
        let text = diff("l", None, &long);
        assert!(
            text.ends_with("refuse it unless you trust it whole]"),
            "{text}"
        );
    }
}
