//! Problems found while loading or validating skills, each naming its file and, where known,
//! the line and field.

use std::fmt;
use std::path::{Path, PathBuf};

/// How serious a problem is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// Allowed by clients, but not by the specification (or worth the author's attention).
    Warning,
    /// Breaks the specification, or stops a file from loading.
    Error,
}

impl Severity {
    /// `error` or `warning`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Warning => "warning",
            Self::Error => "error",
        }
    }
}

/// One problem, attached to a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// Error or warning.
    pub severity: Severity,
    /// The file (or folder) concerned.
    pub path: PathBuf,
    /// 1-based line in that file, where known.
    pub line: Option<usize>,
    /// The frontmatter field concerned, where there is one.
    pub field: Option<String>,
    /// What is wrong, in the reference validator's words where it has them.
    pub message: String,
    /// What to do about it, where there is a next step.
    pub hint: Option<String>,
}

impl Diagnostic {
    /// An error about `path`.
    pub fn error(path: impl Into<PathBuf>, message: impl Into<String>) -> Self {
        Self::new(Severity::Error, path.into(), message.into())
    }

    /// A warning about `path`.
    pub fn warning(path: impl Into<PathBuf>, message: impl Into<String>) -> Self {
        Self::new(Severity::Warning, path.into(), message.into())
    }

    fn new(severity: Severity, path: PathBuf, message: String) -> Self {
        Self {
            severity,
            path,
            line: None,
            field: None,
            message,
            hint: None,
        }
    }

    /// Names the frontmatter field concerned.
    #[must_use]
    pub fn with_field(mut self, field: impl Into<String>) -> Self {
        self.field = Some(field.into());
        self
    }

    /// Names the line concerned.
    #[must_use]
    pub fn with_line(mut self, line: Option<usize>) -> Self {
        self.line = line;
        self
    }

    /// Adds a hint: the next step for the user.
    #[must_use]
    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// True for errors.
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// The path this diagnostic names.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// `path:line: error: message (field `name`)` and, on the next line, `  hint: …`.
impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.path.display())?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        write!(f, ": {}: {}", self.severity.as_str(), self.message)?;
        if let Some(field) = &self.field {
            write!(f, " (field `{field}`)")?;
        }
        if let Some(hint) = &self.hint {
            write!(f, "\n  hint: {hint}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_names_file_line_field_and_hint() {
        let diagnostic = Diagnostic::error("/s/a/SKILL.md", "Skill name 'A' must be lowercase")
            .with_line(Some(2))
            .with_field("name")
            .with_hint("use 'a'");
        assert_eq!(
            diagnostic.to_string(),
            "/s/a/SKILL.md:2: error: Skill name 'A' must be lowercase (field `name`)\n  hint: use 'a'"
        );
    }
}
