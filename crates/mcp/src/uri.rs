//! Skill URIs: `skill://NAME/SKILL.md` for a skill's file and `skill://NAME/PATH` for each of
//! its files (the MCP Skills extension's form, one path segment for the skill), and
//! `skill://diagnostics` for what went wrong while loading.
//!
//! A name becomes a segment only through [`skillet_skills::name_segment`] (the spec's rules, one
//! folder name): a skill whose name cannot be one has no URI and is reported, never served under
//! a mangled one. Path segments are percent-encoded; a URI is decoded segment by segment and a
//! segment that decodes to `/`, `.` or `..` is refused, so no URI names a file outside its skill.

use percent_encoding::{AsciiSet, CONTROLS, percent_decode_str, utf8_percent_encode};

/// The scheme of every resource the server serves.
pub const SCHEME: &str = "skill://";
/// The skill file's name in URIs, whatever the file is called on disk (`SKILL.md`, `skill.md`).
pub const SKILL_MD: &str = "SKILL.md";
/// The resource holding what went wrong while loading the library.
pub const DIAGNOSTICS_URI: &str = "skill://diagnostics";

/// Characters a path segment may not hold as they are (RFC 3986 `pchar` minus what is safe):
/// controls, space, delimiters, `%` itself, and `/` (a separator, never part of a segment).
const SEGMENT: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'%')
    .add(b'/')
    .add(b'<')
    .add(b'>')
    .add(b'?')
    .add(b'[')
    .add(b'\\')
    .add(b']')
    .add(b'^')
    .add(b'`')
    .add(b'{')
    .add(b'|')
    .add(b'}');

/// The URI of a skill's `SKILL.md`, when its name can be a segment.
pub fn skill_md_uri(name: &str) -> Option<String> {
    file_uri(name, SKILL_MD)
}

/// The URI of a file of a skill (`relative`: `/`-separated, inside the skill's folder).
pub fn file_uri(name: &str, relative: &str) -> Option<String> {
    let segment = skillet_skills::name_segment(name).ok()?;
    let mut uri = format!("{SCHEME}{}", utf8_percent_encode(segment, SEGMENT));
    for part in relative.split('/') {
        uri.push('/');
        uri.extend(utf8_percent_encode(part, SEGMENT));
    }
    Some(uri)
}

/// Whether a path inside a skill goes through a hidden file or folder (`.git/config`, `.env`):
/// those are not the skill's, and are never served.
pub fn is_hidden(relative: &str) -> bool {
    relative
        .split(['/', '\\'])
        .any(|segment| segment.starts_with('.') && segment != "." && segment != "..")
}

/// `Err` (what to say) when a file asked for inside a skill is hidden: by the path asked for,
/// taken relative to the skill's folder however it was written (an absolute path through a
/// `.claude/skills` root is not hidden for that), or by where it really is (a link inside the
/// skill to `.git` is `.git`). Whether the path stays inside the skill is checked when it is
/// read.
pub fn refuse_hidden(skill_dir: &std::path::Path, requested: &str) -> Result<(), String> {
    use std::path::Path;
    let asked = Path::new(requested);
    let real_dir = std::fs::canonicalize(skill_dir).ok();
    let relative = if asked.is_absolute() {
        asked.strip_prefix(skill_dir).ok().or_else(|| {
            real_dir
                .as_deref()
                .and_then(|real| asked.strip_prefix(real).ok())
        })
    } else {
        Some(asked)
    };
    let hidden = |path: &Path| is_hidden(&path.to_string_lossy());
    let really = real_dir.as_deref().and_then(|real_dir| {
        let real = std::fs::canonicalize(skill_dir.join(asked)).ok()?;
        real.strip_prefix(real_dir).ok().map(Path::to_path_buf)
    });
    if relative.is_some_and(hidden) || really.as_deref().is_some_and(hidden) {
        return Err("a hidden file (or a link to one); only a skill's own files are served".into());
    }
    Ok(())
}

/// What a `skill://` URI names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A skill's `SKILL.md`.
    SkillMd {
        /// The skill's name.
        name: String,
    },
    /// Another file of a skill.
    File {
        /// The skill's name.
        name: String,
        /// The file, relative to the skill's folder, `/`-separated.
        path: String,
    },
    /// [`DIAGNOSTICS_URI`].
    Diagnostics,
}

/// Parses a URI this server could have given; `None` for anything else (another scheme, a
/// query or fragment, an empty, `.` or `..` segment, a segment holding `/` once decoded, text
/// that is not UTF-8 once decoded).
pub fn parse(uri: &str) -> Option<Target> {
    if uri == DIAGNOSTICS_URI {
        return Some(Target::Diagnostics);
    }
    let rest = uri.strip_prefix(SCHEME)?;
    if rest.contains(['?', '#']) {
        return None;
    }
    let mut segments = rest.split('/').map(decode);
    let name = segments.next()??;
    let path: Vec<String> = segments.collect::<Option<_>>()?;
    match path.as_slice() {
        [] => None,
        [only] if only == SKILL_MD => Some(Target::SkillMd { name }),
        _ => Some(Target::File {
            name,
            path: path.join("/"),
        }),
    }
}

/// One segment decoded; `None` when it is empty, `.`, `..`, holds a `/` or a NUL, or is not
/// UTF-8.
fn decode(segment: &str) -> Option<String> {
    let decoded = percent_decode_str(segment).decode_utf8().ok()?;
    if decoded.is_empty() || decoded == "." || decoded == ".." || decoded.contains(['/', '\0']) {
        return None;
    }
    Some(decoded.into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_round_trip_and_never_leave_the_skill() {
        assert_eq!(
            skill_md_uri("pdf-forms").as_deref(),
            Some("skill://pdf-forms/SKILL.md")
        );
        let uri = file_uri("pdf-forms", "references/a b#1.md").unwrap();
        assert_eq!(uri, "skill://pdf-forms/references/a%20b%231.md");
        assert_eq!(
            parse(&uri),
            Some(Target::File {
                name: "pdf-forms".into(),
                path: "references/a b#1.md".into()
            })
        );
        assert_eq!(
            parse("skill://pdf-forms/SKILL.md"),
            Some(Target::SkillMd {
                name: "pdf-forms".into()
            })
        );
        assert_eq!(parse(DIAGNOSTICS_URI), Some(Target::Diagnostics));
        for bad in [
            "skill://pdf-forms/../other/SKILL.md",
            "skill://pdf-forms/%2e%2e/x",
            "skill://pdf-forms/a%2fb",
            "skill://pdf-forms//x",
            "skill://pdf-forms",
            "skill://pdf-forms/x?y",
            "skill://pdf-forms/%ff",
            "file:///etc/passwd",
            "skill://",
        ] {
            assert_eq!(parse(bad), None, "{bad}");
        }
        // A name that cannot be a segment has no URI.
        assert_eq!(skill_md_uri("../etc"), None);
        assert_eq!(skill_md_uri("Has Spaces"), None);
    }
}
