//! Pathological frontmatters, up to the size bound: deep brackets, long lines, thousands of
//! keys, anchors and aliases, the "billion laughs". Each is refused with the right diagnostic or
//! parsed as it should be, in time linear in its size (`benches/pathological.rs` measures that).
//!
//! Nothing here checks speed. Each case runs on a thread with a generous guard, so a regression
//! to quadratic or exponential work fails the test instead of hanging the suite.

#![allow(
    clippy::unwrap_used,
    clippy::panic,
    clippy::print_stderr,
    reason = "test helpers"
)]

use std::fmt::Write as _;
use std::fs;
use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

use pretty_assertions::assert_eq;
use skillet_skills::{
    FrontmatterStatus, MAX_FRONTMATTER_BYTES, Root, RootKind, Skill, discover, validate_text,
};

/// Far longer than any of these cases takes, even on a loaded machine: only a hang trips it.
const HANG_GUARD: Duration = Duration::from_secs(30);

/// The nesting limit of the frontmatter pre-scan (`frontmatter::MAX_YAML_DEPTH`).
const MAX_YAML_DEPTH: usize = 64;

const ALIASES: &str = "uses YAML aliases (`*name`), which skills never need";

/// How large the generated frontmatters are: just under the bound.
const SIZE: usize = MAX_FRONTMATTER_BYTES - 1024;

/// Runs `work` on its own thread; fails (instead of hanging) when it does not return in time.
fn guarded<T: Send + 'static>(what: &str, work: impl FnOnce() -> T + Send + 'static) -> T {
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = sender.send(work());
    });
    match receiver.recv_timeout(HANG_GUARD) {
        Ok(result) => result,
        Err(mpsc::RecvTimeoutError::Timeout) => {
            panic!("{what} did not return within {HANG_GUARD:?}: it hangs")
        }
        Err(mpsc::RecvTimeoutError::Disconnected) => panic!("{what} panicked"),
    }
}

/// A skill file around `yaml` (which follows `name` and `description`).
fn skill_file(yaml: &str) -> String {
    format!("---\nname: hostile\ndescription: A hostile frontmatter\n{yaml}---\n# Body line\n")
}

/// The frontmatter lines before `yaml` in [`skill_file`]: `---`, `name`, `description`.
const LINES_BEFORE: usize = 3;

/// The first error `validate_text` gives for `yaml`, with its (file) line.
fn first_error(yaml: String) -> Option<(String, Option<usize>)> {
    let what = format!("validating {} bytes", yaml.len());
    guarded(&what, move || {
        let text = skill_file(&yaml);
        let dir = Path::new("/skills/hostile");
        let validation = validate_text(&text, &dir.join("SKILL.md"), dir);
        validation
            .errors()
            .next()
            .map(|error| (error.message.clone(), error.line))
    })
}

/// The skill discovery makes of `yaml`, and the folder it lies in.
fn discovered_in(yaml: &str) -> (tempfile::TempDir, Skill) {
    let temp = tempfile::tempdir().unwrap();
    let root = temp.path().to_path_buf();
    let folder = root.join("hostile");
    fs::create_dir(&folder).unwrap();
    fs::write(folder.join("SKILL.md"), skill_file(yaml)).unwrap();
    let skill = guarded("discovery", move || {
        let library = discover(&[Root::new(&root, RootKind::Explicit)]);
        let skill = library.get("hostile").cloned();
        skill.unwrap_or_else(|| panic!("no skill: {:?}", library.diagnostics()))
    });
    (temp, skill)
}

fn discovered(yaml: &str) -> Skill {
    discovered_in(yaml).1
}

/// The error for a frontmatter refused on `line` (1-based, within the YAML after
/// [`skill_file`]'s `name` and `description`).
fn refused(reason: &str, line: usize) -> (String, Option<usize>) {
    (
        format!("Invalid YAML in frontmatter: {reason}"),
        Some(line + LINES_BEFORE),
    )
}

fn too_deep() -> String {
    format!("nests deeper than {MAX_YAML_DEPTH} levels")
}

/// `key: ` and brackets nested as deep as the size allows.
fn nested(open: &str, close: &str) -> String {
    let depth = (SIZE - 16) / (open.len() + close.len());
    format!("key: {}x{}\n", open.repeat(depth), close.repeat(depth))
}

// ---------------------------------------------------------------- nesting

#[test]
fn nested_brackets_are_refused_at_the_depth_limit() {
    assert_eq!(first_error(nested("[", "]")), Some(refused(&too_deep(), 1)));
    assert_eq!(
        first_error(nested("{a: ", "}")),
        Some(refused(&too_deep(), 1))
    );
    assert_eq!(
        first_error(nested("[{a: ", "}]")),
        Some(refused(&too_deep(), 1))
    );
}

#[test]
fn unclosed_brackets_are_refused_at_the_depth_limit() {
    let yaml = format!("key: {}\n", "[".repeat(SIZE));
    assert_eq!(first_error(yaml), Some(refused(&too_deep(), 1)));
}

#[test]
fn brackets_one_per_line_are_refused_on_the_line_that_goes_too_deep() {
    let lines = SIZE / 4;
    let yaml = format!("key:\n  {}x\n{}", "[\n".repeat(lines), "]\n".repeat(lines));
    // `key:` opens one level, so the bracket on the line after MAX_YAML_DEPTH goes too deep.
    assert_eq!(
        first_error(yaml),
        Some(refused(&too_deep(), MAX_YAML_DEPTH + 1))
    );
}

#[test]
fn deep_block_nesting_is_refused() {
    let compact = format!("nest:\n  {}x\n", "- ".repeat(SIZE / 2));
    assert_eq!(first_error(compact), Some(refused(&too_deep(), 2)));
    let mut indented = String::new();
    for level in 0..200 {
        let _ = writeln!(indented, "{}k:", " ".repeat(level));
    }
    assert_eq!(
        first_error(indented),
        Some(refused(&too_deep(), MAX_YAML_DEPTH + 1))
    );
}

#[test]
fn nesting_up_to_the_limit_parses() {
    let depth = MAX_YAML_DEPTH - 1; // below the top-level mapping
    let yaml = format!("metadata: {}x{}\n", "[".repeat(depth), "]".repeat(depth));
    let skill = discovered(&yaml);
    assert_eq!(skill.status, FrontmatterStatus::Parsed);
    assert_eq!(skill.description, "A hostile frontmatter");
}

// ---------------------------------------------------------------- size

#[test]
fn one_long_line_parses() {
    let yaml = format!("license: {}\n", "a".repeat(SIZE));
    let skill = discovered(&yaml);
    assert_eq!(skill.status, FrontmatterStatus::Parsed);
    assert_eq!(skill.frontmatter.license.map(|l| l.len()), Some(SIZE));

    let mut tags = String::from("tags: [");
    let mut count = 0;
    while tags.len() < SIZE {
        let _ = write!(tags, "tag{count}, ");
        count += 1;
    }
    tags.push_str("last]\n");
    let skill = discovered(&tags);
    assert_eq!(skill.status, FrontmatterStatus::Parsed);
    assert_eq!(skill.frontmatter.tags.len(), count + 1);
}

#[test]
fn one_long_line_of_colons_is_recovered_by_quoting() {
    let yaml = format!("compatibility: {}end\n", "a: ".repeat(SIZE / 3));
    let skill = discovered(&yaml);
    assert_eq!(
        skill.status,
        FrontmatterStatus::RecoveredByQuoting {
            lines: vec![LINES_BEFORE + 1]
        }
    );
    assert!(skill.frontmatter.compatibility.unwrap().ends_with("a: end"));
}

#[test]
fn thousands_of_keys_parse() {
    let mut yaml = String::new();
    for key in 0..5_000 {
        let _ = writeln!(yaml, "k{key}: v");
    }
    let skill = discovered(&yaml);
    assert_eq!(skill.status, FrontmatterStatus::Parsed);
    assert_eq!(skill.frontmatter.unknown_fields.len(), 5_000);

    // The same, each value needing quotes: the lenient retry mends them all.
    let mut yaml = String::new();
    for key in 0..5_000 {
        let _ = writeln!(yaml, "k{key}: a: b");
    }
    assert!(yaml.len() < SIZE);
    let skill = discovered(&yaml);
    match &skill.status {
        FrontmatterStatus::RecoveredByQuoting { lines } => assert_eq!(lines.len(), 5_000),
        other => panic!("not recovered: {other:?}"),
    }
}

#[test]
fn thousands_of_nested_keys_parse() {
    let mut yaml = String::from("metadata:\n");
    for key in 0..5_000 {
        let _ = writeln!(yaml, "  k{key}: \"v\"");
    }
    let skill = discovered(&yaml);
    assert_eq!(skill.status, FrontmatterStatus::Parsed);
    assert_eq!(skill.frontmatter.metadata.len(), 5_000);
}

// ---------------------------------------------------------------- anchors and aliases

/// The "billion laughs": each level names the one before it ten times.
fn billion_laughs(levels: usize) -> String {
    let mut yaml = String::from("l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
    for level in 1..=levels {
        let previous = format!("*l{}", level - 1);
        let items = [previous.as_str(); 10].join(", ");
        let _ = writeln!(yaml, "l{level}: &l{level} [{items}]");
    }
    yaml
}

#[test]
fn the_billion_laughs_is_refused_at_its_first_alias() {
    assert_eq!(first_error(billion_laughs(9)), Some(refused(ALIASES, 2)));
    // Ten times the levels is no slower to refuse.
    assert_eq!(first_error(billion_laughs(90)), Some(refused(ALIASES, 2)));
}

#[test]
fn anchors_and_aliases_filling_the_bound_are_refused() {
    let mut yaml = String::new();
    let mut index = 0;
    while yaml.len() < SIZE / 2 {
        let _ = writeln!(yaml, "a{index}: &a{index} value {index}");
        index += 1;
    }
    let first_alias = index + 1;
    while yaml.len() < SIZE {
        let _ = writeln!(yaml, "b{index}: [*a0, *a1, *a2, *a3]");
        index += 1;
    }
    assert_eq!(first_error(yaml), Some(refused(ALIASES, first_alias)));
}

#[test]
fn a_merge_key_is_refused() {
    let yaml = "base: &base {a: 1}\nmetadata:\n  <<: *base\n".to_string();
    assert_eq!(first_error(yaml), Some(refused(ALIASES, 3)));
}

#[test]
fn anchors_without_aliases_parse() {
    let skill = discovered("license: &l MIT\nmetadata: &m {a: b}\n");
    assert_eq!(skill.status, FrontmatterStatus::Parsed);
    assert_eq!(skill.frontmatter.license.as_deref(), Some("MIT"));
}

#[test]
fn stars_that_are_not_aliases_parse() {
    let yaml = "license: use *bold* text\n\
                compatibility: \"*.md\"\n\
                tags:\n  - '*'\n  - a*b\n\
                metadata:\n  note: |\n    *starts* a block line\n    *x\n\
                allowed-tools: Bash(git add:*) Read\n";
    let skill = discovered(yaml);
    assert_eq!(skill.status, FrontmatterStatus::Parsed);
    assert_eq!(skill.frontmatter.tags, ["*", "a*b"]);
    assert_eq!(
        skill.frontmatter.metadata,
        [(
            "note".to_string(),
            "*starts* a block line\n*x\n".to_string()
        )]
    );
    assert_eq!(skill.frontmatter.allowed_tools, ["Bash(git add:*)", "Read"]);
}

// ---------------------------------------------------------------- the body

#[test]
fn a_refused_frontmatter_still_gives_its_body() {
    let (_temp, skill) = discovered_in(&billion_laughs(9));
    assert!(matches!(
        &skill.status,
        FrontmatterStatus::InvalidYaml { message, .. } if message == ALIASES
    ));
    assert_eq!(skill.description, "Body line");
    assert!(
        skill
            .diagnostics
            .iter()
            .any(|d| d.message.contains(ALIASES))
    );
    let body = guarded("reading the body", move || skill.read_body().unwrap());
    assert_eq!(body, "# Body line");
}
