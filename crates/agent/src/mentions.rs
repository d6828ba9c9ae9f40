//! `@path` in what the user types (chat, `skillet run`): each file mentioned is attached to the
//! message, as Claude Code does. A text file comes as a delimited block after the message, an
//! image (PNG, JPEG, GIF, WebP, told by its bytes) as an image block, a folder as its listing.
//!
//! A mention is placed and read exactly as the file tools read ([`crate::paths::resolve`]):
//! beneath the working directory, the folders added for the session or a discovered skill's
//! folder, through the kernel, so a link cannot lead out. A file's text is the repository's,
//! not the user's: hidden characters are shown as escapes and it cannot close its block.
//!
//! `@` counts only at the start of a word (`me@example.com` is no mention); a mention ends at
//! white space, and trailing `,;:!?)` (and a final `.`) are not part of it. A word that names
//! nothing is left as typed, without a word, unless it looks like a path (a `/` or a `.` in it).

use skillet_llm::ContentBlock;
use skillet_skills::confine::ConfineError;
use skillet_skills::{clean_text, neutralize_tags};

use crate::paths::{Access, resolve};
use crate::tool::ToolContext;

/// The most files one message attaches; later mentions are left as typed, with a note.
pub const MAX_MENTIONS: usize = 20;
/// The largest text file attached; a larger one is not attached (the model can read a part).
pub const MAX_MENTION_BYTES: u64 = 256 * 1024;
/// The most bytes of text all the mentions of one message attach together.
pub const MAX_MENTIONS_TOTAL_BYTES: usize = 1024 * 1024;
/// The most entries of a folder listed.
pub const MAX_LISTED_ENTRIES: usize = 200;
/// The tag around an attached file's text.
pub const FILE_TAG: &str = "file";

/// What a message's mentions attach, and what the user is told.
#[derive(Debug, Default)]
pub struct Attachments {
    /// The blocks to send after the message's text.
    pub blocks: Vec<ContentBlock>,
    /// One line for each mention: attached (`attached src/main.rs (12 lines)`) or why not.
    pub notes: Vec<String>,
}

/// The paths `text` mentions (`@path`), in order, each once.
pub fn mentioned(text: &str) -> Vec<&str> {
    let mut found: Vec<&str> = Vec::new();
    let mut previous = ' ';
    for (at, c) in text.char_indices() {
        if c == '@' && previous.is_whitespace() {
            let rest = &text[at + 1..];
            let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
            let mut path = rest[..end].trim_end_matches([',', ';', ':', '!', '?', ')', '"', '\'']);
            path = path.strip_suffix('.').unwrap_or(path);
            if !path.is_empty() && !found.contains(&path) {
                found.push(path);
            }
        }
        previous = c;
    }
    found
}

/// Attaches every file `text` mentions, read as the file tools read.
pub fn attach(context: &ToolContext, text: &str) -> Attachments {
    let mut attachments = Attachments::default();
    let mut room = MAX_MENTIONS_TOTAL_BYTES;
    let mentions = mentioned(text);
    for (index, path) in mentions.iter().enumerate() {
        if index == MAX_MENTIONS {
            attachments.notes.push(format!(
                "not attached: {} more mentions past the {MAX_MENTIONS} one message attaches",
                mentions.len() - MAX_MENTIONS
            ));
            break;
        }
        match attach_one(context, path, &mut room) {
            Ok(Some((block, note))) => {
                attachments.blocks.push(block);
                attachments.notes.push(note);
            }
            Ok(None) => {}
            Err(why) => attachments
                .notes
                .push(format!("not attached: @{path}: {why}")),
        }
    }
    attachments
}

/// One mention: its block and note; `None` for a word that names nothing and does not look
/// like a path; `Err` for why a path was not attached.
fn attach_one(
    context: &ToolContext,
    path: &str,
    room: &mut usize,
) -> Result<Option<(ContentBlock, String)>, String> {
    let looks_like_path = path.contains('/') || path.contains('.');
    let resolved = match resolve(context, path, Access::Read) {
        Ok(resolved) => resolved,
        Err(error) if looks_like_path => return Err(error.0),
        Err(_) => return Ok(None),
    };
    let shown = resolved.shown.clone();
    let metadata = match resolved.beneath.metadata(&resolved.relative, &shown) {
        Ok(metadata) => metadata,
        Err(ConfineError::Io { source, .. })
            if source.kind() == std::io::ErrorKind::NotFound && !looks_like_path =>
        {
            return Ok(None);
        }
        Err(error) => return Err(error.to_string()),
    };
    if metadata.is_dir() {
        let entries = resolved
            .beneath
            .list(&resolved.relative, &shown, MAX_LISTED_ENTRIES + 1)
            .map_err(|error| error.to_string())?;
        let more = entries.len() > MAX_LISTED_ENTRIES;
        let mut listing: Vec<String> = entries
            .into_iter()
            .take(MAX_LISTED_ENTRIES)
            // A name is the repository's text: one line, nothing hidden.
            .map(|(name, is_dir)| {
                let name = skillet_skills::escape_invisible(&name).into_owned();
                if is_dir { format!("{name}/") } else { name }
            })
            .collect();
        listing.sort();
        if more {
            listing.push(format!("… (more than {MAX_LISTED_ENTRIES} entries)"));
        }
        let body = listing.join("\n");
        let note = format!("attached {shown}/ (a listing of {} entries)", listing.len());
        return Ok(Some((wrapped("folder", &shown, &body), note)));
    }
    let limit = MAX_MENTION_BYTES.max(u64::try_from(skillet_llm::MAX_IMAGE_BYTES).unwrap_or(0));
    let bytes = resolved
        .beneath
        .read(&resolved.relative, &shown, limit)
        .map_err(|error| match error {
            ConfineError::TooLarge { size, .. } => format!(
                "{size} bytes, over the {MAX_MENTION_BYTES}-byte limit for a file attached (the model can read a part of it)"
            ),
            other => other.to_string(),
        })?;
    if skillet_llm::image_type(&bytes).is_some() {
        let size = bytes.len();
        let block = ContentBlock::image(&bytes).ok_or_else(|| {
            format!(
                "an image of {size} bytes, over the {}-byte limit",
                skillet_llm::MAX_IMAGE_BYTES
            )
        })?;
        return Ok(Some((
            block,
            format!("attached {shown} (an image, {size} bytes)"),
        )));
    }
    if bytes.len() as u64 > MAX_MENTION_BYTES {
        return Err(format!(
            "{} bytes, over the {MAX_MENTION_BYTES}-byte limit for a file attached (the model can read a part of it)",
            bytes.len()
        ));
    }
    let text = String::from_utf8(bytes)
        .map_err(|_| "not a UTF-8 text file, nor a PNG, JPEG, GIF or WebP image".to_string())?;
    if text.len() > *room {
        return Err(format!(
            "the files attached to one message are limited to {MAX_MENTIONS_TOTAL_BYTES} bytes together"
        ));
    }
    *room -= text.len();
    let lines = text.lines().count();
    let note = format!(
        "attached {shown} ({lines} {})",
        if lines == 1 { "line" } else { "lines" }
    );
    Ok(Some((wrapped(FILE_TAG, &shown, &text), note)))
}

/// `<tag path="…">` text `</tag>`: the text cleaned of what hides text and unable to close the
/// block, the path escaped.
fn wrapped(tag: &str, path: &str, text: &str) -> ContentBlock {
    let cleaned = clean_text(text);
    let body = neutralize_tags(&cleaned, &[FILE_TAG, "folder", "system-reminder"]);
    let path = skillet_skills::xml_escape(&skillet_skills::escape_invisible(path));
    ContentBlock::text(format!(
        "<{tag} path=\"{path}\">\n{}\n</{tag}>",
        body.trim_end_matches('\n')
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mentions_start_a_word_and_lose_trailing_punctuation() {
        assert_eq!(
            mentioned("look at @src/main.rs, then @README.md. and me@example.com (@a.txt)"),
            ["src/main.rs", "README.md"]
        );
        assert_eq!(mentioned("@x @x\n@y"), ["x", "y"]);
        assert!(mentioned("@ alone").is_empty());
    }
}
