//! The skills engine: discovers Agent Skills (folders holding a `SKILL.md`), parses them
//! leniently, validates them strictly, and serves them in three layers.
//!
//! - [`discover`] walks [`Root`]s (see [`resolve_roots`] for the defaults) and returns a
//!   [`Library`]: every [`Skill`] with its frontmatter, and every problem as a [`Diagnostic`].
//!   One broken file never hides the others. Only the frontmatter is read at this point.
//! - Layer 1: [`render_catalog`] lists the skills the model may invoke, fitted to a character
//!   budget, with a [`BudgetReport`] of what was shortened or dropped.
//! - Layer 2: [`Library::load`] reads a skill's body from disk and wraps it for the model.
//! - Layer 3: [`read_in_skill`] reads a file inside a skill's folder, refusing escapes, through
//!   [`confine::Beneath`], the one confinement the agent's file tools use too.
//! - [`validate_path`] checks skills against the specification, in the reference validator's
//!   words; [`scaffold_skill`] writes a new skill that passes it.
//!
//! ```
//! use skillet_skills::{CatalogFormat, Invoker, Root, RootKind, discover, render_catalog};
//!
//! let dir = tempfile::tempdir()?;
//! let skill = dir.path().join("pdf");
//! std::fs::create_dir(&skill)?;
//! std::fs::write(skill.join("SKILL.md"), "---\nname: pdf\ndescription: Work with PDFs\n---\nUse pdftotext.\n")?;
//!
//! let library = discover(&[Root::new(dir.path(), RootKind::Explicit)]);
//! let catalog = render_catalog(library.skills(), CatalogFormat::List, 8_000);
//! assert_eq!(catalog.text, "  - pdf: Work with PDFs");
//! let loaded = library.load("pdf", Invoker::Model)?;
//! assert!(loaded.starts_with("<skill name=\"pdf\">\nUse pdftotext.\n"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The crate is pure: no async runtime, no network, no printing, no global state (the home
//! directory comes in through [`Environment`]).
//!
//! A repository cannot hang or slow it through the files it reads: only regular files are
//! opened (a FIFO, socket or device, or a link to one, is reported and never opened; opens do not
//! block), every read is capped ([`MAX_FRONTMATTER_BYTES`], [`MAX_BODY_BYTES`],
//! [`MAX_SKILL_FILE_BYTES`], [`MAX_VALIDATED_BYTES`]), walks and listings stop at their bounds
//! ([`MAX_DIRS_PER_ROOT`], [`MAX_ENTRIES_PER_FOLDER`], [`MAX_LISTING_ENTRIES`]) and never loop
//! through links, and "did you mean" compares at most [`MAX_SUGGESTION_NAME_CHARS`] characters.

mod arguments;
mod catalog;
mod clean;
pub mod confine;
mod diagnostic;
mod dir;
mod discover;
pub mod dynamic;
mod error;
mod fast_yaml;
mod fields;
mod files;
mod frontmatter;
mod load;
mod regular;
mod roots;
mod scaffold;
mod skill;
mod terminal;
mod validate;

pub use arguments::{
    ARGUMENT_VARIABLE_PREFIX, ARGUMENTS_VARIABLE, FilledCommand, SKILL_DIR_VARIABLE, expand,
    expand_running, expand_running_from, split as split_arguments,
};
pub use catalog::{
    BudgetReport, Catalog, CatalogFormat, DEFAULT_CATALOG_BUDGET, MIN_DESCRIPTION_CHARS,
    render_catalog, xml_escape,
};
pub use clean::{
    Hiding, RGI_SUBDIVISION_FLAGS, Removed, clean_description, clean_text, escape_invisible,
    hiding, neutralize_tags, neutralize_wrapper, subdivision_flag,
};
pub use diagnostic::{Diagnostic, Severity};
pub use discover::{
    ALWAYS_SKIPPED, Library, MAX_DEPTH, MAX_DIRS_PER_EXPLICIT_ROOT, MAX_DIRS_PER_ROOT,
    MAX_ENTRIES_PER_FOLDER, discover, locate,
};
pub use error::Error;
pub use fields::{CLIENT_FIELDS, Frontmatter, SPEC_FIELDS, fold_whitespace, parse_bool};
pub use files::{
    MAX_LISTED_FILES, MAX_LISTING_ENTRIES, MAX_SKILL_FILE_BYTES, SkillFiles, SkillFolder,
    list_skill_files, read_head_in_skill, read_in_skill, resolve_in_skill, skill_files,
    skill_files_up_to,
};
pub use frontmatter::{FrontmatterStatus, MAX_YAML_DEPTH, strict_frontmatter};
pub use load::{
    Invoker, LoadError, MAX_NAMES_IN_ERROR, MAX_SUGGESTION_NAME_CHARS, not_run, render_expanded,
    render_expanded_noting, render_invoked, render_skill, shown_dir,
};
pub use regular::{open_regular, read_capped};
pub use roots::{
    COMMANDS_DIR, Environment, Layout, PROJECT_ROOT_DIRS, PROJECT_TOP_DIR, Root, RootKind,
    USER_ROOT_DIRS, default_roots, find_git_root, resolve_roots,
};
pub use scaffold::{DESCRIPTION_PLACEHOLDER, name_segment, scaffold_skill};
pub use skill::{
    FRONTMATTER_PREFIX_BYTES, Form, MAX_BODY_BYTES, MAX_DIAGNOSTICS_PER_SKILL,
    MAX_FRONTMATTER_BYTES, SKILL_FILE_NAMES, Skill, SkillLocation, body_of, skill_from_text,
};
pub use terminal::terminal_safe;
pub use validate::{
    MAX_COMPATIBILITY_CHARS, MAX_DESCRIPTION_CHARS, MAX_NAME_CHARS, MAX_VALIDATED_BYTES,
    MIN_DESCRIPTION_WORDS, RECOMMENDED_MAX_BODY_LINES, Validation, find_skill_file,
    has_trigger_clause, name_problems, validate_file, validate_path, validate_text,
};
