//! What a file's bytes are before any rule reads them: an executable, an archive, a known binary
//! format, text (UTF-8, or UTF-16 with its byte order mark), or unknown.

use std::borrow::Cow;

/// What the bytes of a file are.
pub(super) enum Content<'a> {
    Executable(&'static str),
    Archive(String),
    Known,
    Unknown,
    Text(Cow<'a, str>),
}

/// How many leading bytes are looked at for NUL bytes.
pub(super) const SNIFF_BYTES: usize = 8192;

pub(super) fn classify(bytes: &[u8]) -> Content<'_> {
    if let Some(name) = executable_format(bytes) {
        return Content::Executable(name);
    }
    if let Some(text) = utf16_text(bytes) {
        return Content::Text(Cow::Owned(text));
    }
    if let Some(content) = zip_content(bytes) {
        return content;
    }
    if let Some(name) = archive_format(bytes) {
        return Content::Archive(name.to_string());
    }
    let head = &bytes[..bytes.len().min(SNIFF_BYTES)];
    if !head.contains(&0) {
        return Content::Text(String::from_utf8_lossy(bytes));
    }
    // Weaker magic numbers, trusted only in binary data.
    if bytes.get(257..262) == Some(b"ustar") {
        return Content::Archive("tar archive".to_string());
    }
    if bytes.starts_with(b"!<arch>\n") {
        return Content::Archive("ar archive (a .deb package or a static library)".to_string());
    }
    if known_format(bytes) {
        Content::Known
    } else {
        Content::Unknown
    }
}

/// The executable format the magic number names, if any.
pub(super) fn executable_format(bytes: &[u8]) -> Option<&'static str> {
    let magic = |prefix: &[u8]| bytes.starts_with(prefix);
    if magic(b"\x7fELF") {
        return Some("ELF executable or object");
    }
    if magic(&[0xfe, 0xed, 0xfa, 0xce])
        || magic(&[0xfe, 0xed, 0xfa, 0xcf])
        || magic(&[0xce, 0xfa, 0xed, 0xfe])
        || magic(&[0xcf, 0xfa, 0xed, 0xfe])
    {
        return Some("Mach-O executable or object");
    }
    if magic(&[0xca, 0xfe, 0xba, 0xbe]) {
        return Some("universal Mach-O binary or Java class file");
    }
    if magic(b"MZ") && bytes.len() >= 0x40 {
        let offset = u32::from_le_bytes([bytes[0x3c], bytes[0x3d], bytes[0x3e], bytes[0x3f]]);
        let offset = usize::try_from(offset).unwrap_or(usize::MAX);
        if bytes.get(offset..offset.saturating_add(4)) == Some(b"PE\0\0") {
            return Some("Windows PE executable or DLL");
        }
    }
    None
}

/// Compressed data and archives by their magic numbers (distinctive enough to trust in any
/// file); ZIP files are told apart by [`zip_content`].
pub(super) fn archive_format(bytes: &[u8]) -> Option<&'static str> {
    const MAGIC: &[(&[u8], &str)] = &[
        (b"\x1f\x8b", "gzip-compressed data (a .tar.gz?)"),
        (b"\xfd7zXZ\x00", "xz-compressed data"),
        (b"7z\xbc\xaf\x27\x1c", "7-Zip archive"),
        (b"\x28\xb5\x2f\xfd", "Zstandard-compressed data"),
        (b"Rar!\x1a\x07", "RAR archive"),
        (b"MSCF\x00\x00\x00\x00", "Microsoft Cabinet archive"),
        (b"\x04\x22\x4d\x18", "LZ4-compressed data"),
    ];
    if let Some((_, name)) = MAGIC.iter().find(|(magic, _)| bytes.starts_with(magic)) {
        return Some(name);
    }
    let bzip2 = bytes.starts_with(b"BZh")
        && bytes.get(3).is_some_and(u8::is_ascii_digit)
        && bytes.get(4..10) == Some(b"1AY&SY");
    bzip2.then_some("bzip2-compressed data")
}

/// A ZIP file: a document (Office Open XML, OpenDocument, EPUB: known by their first entry)
/// or an archive, said to be encrypted when its first entry is.
pub(super) fn zip_content(bytes: &[u8]) -> Option<Content<'static>> {
    if bytes.starts_with(b"PK\x05\x06") {
        return Some(Content::Archive("ZIP archive (empty)".to_string()));
    }
    if !(bytes.starts_with(b"PK\x03\x04") || bytes.starts_with(b"PK\x07\x08")) {
        return None;
    }
    let field = |at: usize| {
        bytes
            .get(at..at + 2)
            .map(|b| u16::from_le_bytes([b[0], b[1]]))
    };
    let flags = field(6).unwrap_or(0);
    let name_len = usize::from(field(26).unwrap_or(0));
    let name = bytes.get(30..30 + name_len).unwrap_or_default();
    let document = name == b"[Content_Types].xml"
        || [&b"_rels/"[..], b"docProps/", b"word/", b"xl/", b"ppt/"]
            .iter()
            .any(|prefix| name.starts_with(prefix))
        || (name == b"mimetype"
            && bytes
                .get(30 + name_len..)
                .is_some_and(|rest| rest.starts_with(b"application/")));
    if document && flags & 1 == 0 {
        return Some(Content::Known);
    }
    let kind = if name.starts_with(b"META-INF/") {
        "Java archive (JAR) or ZIP"
    } else {
        "ZIP archive"
    };
    Some(Content::Archive(if flags & 1 == 1 {
        format!("{kind}, encrypted (password-protected): its contents cannot be inspected")
    } else {
        kind.to_string()
    }))
}

/// Images, fonts, audio, video, PDFs and databases: binary on purpose, never flagged.
pub(super) fn known_format(bytes: &[u8]) -> bool {
    const PREFIXES: &[&[u8]] = &[
        b"\x89PNG",
        b"\xff\xd8\xff",
        b"GIF8",
        b"BM",
        b"\x00\x00\x01\x00",
        b"II*\x00",
        b"MM\x00*",
        b"%PDF",
        b"\x00\x01\x00\x00",
        b"OTTO",
        b"wOFF",
        b"wOF2",
        b"ttcf",
        b"ID3",
        b"OggS",
        b"fLaC",
        b"\x1a\x45\xdf\xa3",
        b"SQLite format 3\x00",
        b"\x00asm",
    ];
    PREFIXES.iter().any(|prefix| bytes.starts_with(prefix))
        || (bytes.starts_with(b"RIFF") && bytes.len() >= 12)
        || bytes.get(4..8) == Some(b"ftyp")
}

/// UTF-16 text with a byte-order mark, decoded (scanned like any text; a scanner that reads
/// bytes would miss it).
pub(super) fn utf16_text(bytes: &[u8]) -> Option<String> {
    let little = bytes.starts_with(&[0xff, 0xfe]);
    let big = bytes.starts_with(&[0xfe, 0xff]);
    if !(little || big) || !bytes.len().is_multiple_of(2) {
        return None;
    }
    let units: Vec<u16> = bytes[2..]
        .chunks_exact(2)
        .map(|pair| {
            if little {
                u16::from_le_bytes([pair[0], pair[1]])
            } else {
                u16::from_be_bytes([pair[0], pair[1]])
            }
        })
        .collect();
    Some(String::from_utf16_lossy(&units))
}
