//! MIME types for a skill's files, by extension (what clients show and pick a viewer by), and a
//! binary file's kind by its first bytes.

/// The MIME type of a file, by its extension; `application/octet-stream` when unknown.
pub fn by_extension(path: &str) -> &'static str {
    let extension = path
        .rsplit('/')
        .next()
        .and_then(|name| name.rsplit_once('.'))
        .map(|(_, extension)| extension.to_ascii_lowercase());
    match extension.as_deref() {
        Some("md" | "markdown") => "text/markdown",
        Some("txt" | "text" | "log") => "text/plain",
        Some("py") => "text/x-python",
        Some("sh" | "bash") => "text/x-shellscript",
        Some("js" | "mjs" | "cjs") => "text/javascript",
        Some("ts") => "text/x-typescript",
        Some("rs") => "text/x-rust",
        Some("html" | "htm") => "text/html",
        Some("css") => "text/css",
        Some("csv") => "text/csv",
        Some("xml") => "application/xml",
        Some("json") => "application/json",
        Some("yaml" | "yml") => "application/yaml",
        Some("toml") => "application/toml",
        Some("pdf") => "application/pdf",
        Some("zip") => "application/zip",
        Some("gz" | "tgz") => "application/gzip",
        Some("png") => "image/png",
        Some("jpg" | "jpeg") => "image/jpeg",
        Some("gif") => "image/gif",
        Some("svg") => "image/svg+xml",
        Some("webp") => "image/webp",
        _ => "application/octet-stream",
    }
}

/// What a binary file is, for a description: by its first bytes, else by its extension.
pub fn describe(path: &str, bytes: &[u8]) -> &'static str {
    const MAGIC: &[(&[u8], &str)] = &[
        (b"\x89PNG", "a PNG image"),
        (b"\xff\xd8\xff", "a JPEG image"),
        (b"GIF8", "a GIF image"),
        (b"%PDF", "a PDF document"),
        (
            b"PK\x03\x04",
            "a ZIP archive (or a document in one: docx, xlsx, jar)",
        ),
        (b"\x1f\x8b", "a gzip archive"),
        (b"\x7fELF", "an ELF executable"),
        (b"RIFF", "a RIFF file (WAV, AVI or WebP)"),
    ];
    MAGIC
        .iter()
        .find(|(magic, _)| bytes.starts_with(magic))
        .map_or_else(|| by_extension(path), |(_, kind)| kind)
}

/// Whether a file of this type is served as text (`resources/read` gives it as text, not base64)
/// when its bytes are UTF-8.
pub fn is_text(mime: &str) -> bool {
    mime.starts_with("text/")
        || matches!(
            mime,
            "application/json" | "application/xml" | "application/yaml" | "application/toml"
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_by_extension_and_content() {
        assert_eq!(by_extension("references/forms.MD"), "text/markdown");
        assert_eq!(by_extension("scripts/fill.py"), "text/x-python");
        assert_eq!(by_extension("Makefile"), "application/octet-stream");
        assert_eq!(describe("x.bin", b"%PDF-1.7"), "a PDF document");
        assert_eq!(describe("logo.png", b"\0\0"), "image/png");
        assert!(is_text("text/markdown") && !is_text("image/png"));
    }
}
