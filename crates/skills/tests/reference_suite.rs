//! The reference validator's (`skills-ref`) test suite, case by case: its validator tests and
//! its parser tests, expressed against our `validate_path` and lenient loader. Where we differ
//! on purpose, the test says so and checks our behaviour.

#![allow(
    clippy::unwrap_used,
    clippy::panic,
    clippy::print_stderr,
    reason = "test helpers"
)]

use std::fs;
use std::path::{Path, PathBuf};

use skillet_skills::{
    FrontmatterStatus, Root, RootKind, Validation, discover, find_skill_file, validate_path,
};

/// Writes `tmp/dir/SKILL.md` and returns the folder.
fn skill(tmp: &Path, dir: &str, content: &str) -> PathBuf {
    let folder = tmp.join(dir);
    fs::create_dir_all(&folder).unwrap();
    fs::write(folder.join("SKILL.md"), content).unwrap();
    folder
}

fn errors(path: &Path) -> Vec<String> {
    validate_path(path)
        .iter()
        .flat_map(Validation::errors)
        .map(|d| d.message.clone())
        .collect()
}

fn warnings(path: &Path) -> Vec<String> {
    validate_path(path)
        .iter()
        .flat_map(Validation::warnings)
        .map(|d| d.message.clone())
        .collect()
}

fn any(errors: &[String], needle: &str) -> bool {
    errors.iter().any(|e| e.contains(needle))
}

// ------------------------------------------------------------ test_validator.py

#[test]
fn valid_skill() {
    let t = tempfile::tempdir().unwrap();
    let dir = skill(
        t.path(),
        "my-skill",
        "---\nname: my-skill\ndescription: A test skill\n---\n# My Skill\n",
    );
    assert_eq!(errors(&dir), Vec::<String>::new());
    // Ours: advice the reference does not give, on what a model can pick the skill by.
    assert_eq!(
        warnings(&dir),
        [
            "Field 'description' has 3 words; under 20, a model has little to match a request against",
            "Field 'description' does not say when to use the skill",
        ]
    );
    let dir = skill(
        t.path(),
        "findable",
        "---\nname: findable\ndescription: Fill in PDF forms, read their fields and flatten them into plain pages. Use when the user has a PDF form to complete or inspect.\n---\n# Forms\n",
    );
    assert_eq!(warnings(&dir), Vec::<String>::new());
}

#[test]
fn nonexistent_path() {
    let t = tempfile::tempdir().unwrap();
    let e = errors(&t.path().join("nonexistent"));
    assert_eq!(e.len(), 1);
    assert!(e[0].contains("does not exist"));
}

#[test]
fn not_a_directory_is_validated_as_a_skill_file() {
    // Ours: a file path is taken as the skill file itself (`validate SKILL.md` works), so a
    // non-skill text file fails on its missing frontmatter rather than "Not a directory".
    let t = tempfile::tempdir().unwrap();
    let file = t.path().join("file.txt");
    fs::write(&file, "test").unwrap();
    let e = errors(&file);
    assert_eq!(e.len(), 1);
    assert!(e[0].contains("must start with YAML frontmatter"));
}

#[test]
fn missing_skill_md() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("my-skill");
    fs::create_dir(&dir).unwrap();
    let e = errors(&dir);
    assert_eq!(e.len(), 1);
    assert!(e[0].contains("Missing required file: SKILL.md"));
}

#[test]
fn invalid_name_uppercase() {
    let t = tempfile::tempdir().unwrap();
    let dir = skill(
        t.path(),
        "MySkill",
        "---\nname: MySkill\ndescription: A test skill\n---\nBody\n",
    );
    assert!(any(&errors(&dir), "lowercase"));
}

#[test]
fn name_too_long() {
    let t = tempfile::tempdir().unwrap();
    let long = "a".repeat(70);
    let dir = skill(
        t.path(),
        &long,
        &format!("---\nname: {long}\ndescription: A test skill\n---\nBody\n"),
    );
    let e = errors(&dir);
    assert!(
        e.iter()
            .any(|e| e.contains("exceeds") && e.contains("character limit")),
        "{e:?}"
    );
}

#[test]
fn name_leading_hyphen() {
    let t = tempfile::tempdir().unwrap();
    let dir = skill(
        t.path(),
        "-my-skill",
        "---\nname: -my-skill\ndescription: A test skill\n---\nBody\n",
    );
    assert!(any(&errors(&dir), "cannot start or end with a hyphen"));
}

#[test]
fn name_consecutive_hyphens() {
    let t = tempfile::tempdir().unwrap();
    let dir = skill(
        t.path(),
        "my--skill",
        "---\nname: my--skill\ndescription: A test skill\n---\nBody\n",
    );
    assert!(any(&errors(&dir), "consecutive hyphens"));
}

#[test]
fn name_invalid_characters() {
    let t = tempfile::tempdir().unwrap();
    let dir = skill(
        t.path(),
        "my_skill",
        "---\nname: my_skill\ndescription: A test skill\n---\nBody\n",
    );
    assert!(any(&errors(&dir), "invalid characters"));
}

#[test]
fn name_directory_mismatch() {
    let t = tempfile::tempdir().unwrap();
    let dir = skill(
        t.path(),
        "wrong-name",
        "---\nname: correct-name\ndescription: A test skill\n---\nBody\n",
    );
    let e = errors(&dir);
    assert_eq!(
        e,
        ["Directory name 'wrong-name' must match skill name 'correct-name'"]
    );
}

#[test]
fn unexpected_fields() {
    let t = tempfile::tempdir().unwrap();
    let dir = skill(
        t.path(),
        "my-skill",
        "---\nname: my-skill\ndescription: A test skill\nunknown_field: should not be here\n---\nBody\n",
    );
    let e = errors(&dir);
    assert_eq!(
        e,
        [
            "Unexpected fields in frontmatter: unknown_field. Only ['allowed-tools', 'compatibility', 'description', 'license', 'metadata', 'name'] are allowed."
        ]
    );
}

#[test]
fn client_fields_are_warnings_not_errors() {
    // Ours: fields that Claude Code and other clients define are warnings.
    let t = tempfile::tempdir().unwrap();
    let dir = skill(
        t.path(),
        "my-skill",
        "---\nname: my-skill\ndescription: d\nuser-invocable: false\ndisable-model-invocation: true\n---\n",
    );
    assert!(errors(&dir).is_empty());
    assert!(any(
        &warnings(&dir),
        "Unexpected fields in frontmatter: disable-model-invocation, user-invocable"
    ));
}

#[test]
fn valid_with_all_fields() {
    let t = tempfile::tempdir().unwrap();
    let dir = skill(
        t.path(),
        "my-skill",
        "---\nname: my-skill\ndescription: A test skill\nlicense: MIT\nmetadata:\n  author: Test\n---\nBody\n",
    );
    assert!(errors(&dir).is_empty());
}

#[test]
fn allowed_tools_accepted() {
    let t = tempfile::tempdir().unwrap();
    let dir = skill(
        t.path(),
        "my-skill",
        "---\nname: my-skill\ndescription: A test skill\nallowed-tools: Bash(jq:*) Bash(git:*)\n---\nBody\n",
    );
    assert!(errors(&dir).is_empty());
}

#[test]
fn allowed_tools_inline_list_accepted() {
    let t = tempfile::tempdir().unwrap();
    let dir = skill(
        t.path(),
        "my-skill",
        "---\nname: my-skill\ndescription: A test skill\nallowed-tools: [Read, Write, Edit, Bash]\n---\nBody\n",
    );
    assert!(errors(&dir).is_empty());
}

#[test]
fn allowed_tools_block_list_accepted() {
    let t = tempfile::tempdir().unwrap();
    let dir = skill(
        t.path(),
        "my-skill",
        "---\nname: my-skill\ndescription: A test skill\nallowed-tools:\n  - Read\n  - Bash\n  - Grep\n---\nBody\n",
    );
    assert!(errors(&dir).is_empty());
}

#[test]
fn allowed_tools_list_items_must_be_strings() {
    // YAML `123` is a number; a list item that is a map is the case no scalar coercion saves.
    let t = tempfile::tempdir().unwrap();
    let dir = skill(
        t.path(),
        "my-skill",
        "---\nname: my-skill\ndescription: A test skill\nallowed-tools:\n  - Read\n  - {tool: x}\n---\nBody\n",
    );
    assert!(any(&errors(&dir), "list items must all be strings"));
}

#[test]
fn allowed_tools_invalid_scalar_type_rejected() {
    let t = tempfile::tempdir().unwrap();
    let dir = skill(
        t.path(),
        "my-skill",
        "---\nname: my-skill\ndescription: A test skill\nallowed-tools: 123\n---\nBody\n",
    );
    assert!(any(
        &errors(&dir),
        "must be either a string or a list of strings"
    ));
}

#[test]
fn i18n_chinese_name() {
    let t = tempfile::tempdir().unwrap();
    let dir = skill(
        t.path(),
        "技能",
        "---\nname: 技能\ndescription: A skill with Chinese name\n---\nBody\n",
    );
    assert!(errors(&dir).is_empty());
}

#[test]
fn i18n_russian_name_with_hyphens() {
    let t = tempfile::tempdir().unwrap();
    let dir = skill(
        t.path(),
        "мой-навык",
        "---\nname: мой-навык\ndescription: A skill with Russian name\n---\nBody\n",
    );
    assert!(errors(&dir).is_empty());
}

#[test]
fn i18n_russian_lowercase_valid() {
    let t = tempfile::tempdir().unwrap();
    let dir = skill(
        t.path(),
        "навык",
        "---\nname: навык\ndescription: A skill with Russian lowercase name\n---\nBody\n",
    );
    assert!(errors(&dir).is_empty());
}

#[test]
fn i18n_russian_uppercase_rejected() {
    let t = tempfile::tempdir().unwrap();
    let dir = skill(
        t.path(),
        "НАВЫК",
        "---\nname: НАВЫК\ndescription: A skill with Russian uppercase name\n---\nBody\n",
    );
    assert!(any(&errors(&dir), "lowercase"));
}

#[test]
fn description_too_long() {
    let t = tempfile::tempdir().unwrap();
    let long = "x".repeat(1100);
    let dir = skill(
        t.path(),
        "my-skill",
        &format!("---\nname: my-skill\ndescription: {long}\n---\nBody\n"),
    );
    assert_eq!(
        errors(&dir),
        ["Description exceeds 1024 character limit (1100 chars)"]
    );
}

#[test]
fn valid_compatibility() {
    let t = tempfile::tempdir().unwrap();
    let dir = skill(
        t.path(),
        "my-skill",
        "---\nname: my-skill\ndescription: A test skill\ncompatibility: Requires Python 3.11+\n---\nBody\n",
    );
    assert!(errors(&dir).is_empty());
}

#[test]
fn compatibility_too_long() {
    let t = tempfile::tempdir().unwrap();
    let long = "x".repeat(550);
    let dir = skill(
        t.path(),
        "my-skill",
        &format!(
            "---\nname: my-skill\ndescription: A test skill\ncompatibility: {long}\n---\nBody\n"
        ),
    );
    assert_eq!(
        errors(&dir),
        ["Compatibility exceeds 500 character limit (550 chars)"]
    );
}

#[test]
fn nfkc_normalization() {
    let t = tempfile::tempdir().unwrap();
    let dir = skill(
        t.path(),
        "café",
        "---\nname: cafe\u{301}\ndescription: A test skill\n---\nBody\n",
    );
    assert_eq!(errors(&dir), Vec::<String>::new());
}

// ------------------------------------------------------------ test_parser.py

/// The lenient loader's view of one file: (status, name, description).
fn load(content: &str) -> (FrontmatterStatus, String, String) {
    let t = tempfile::tempdir().unwrap();
    skill(t.path(), "my-skill", content);
    let library = discover(&[Root::new(t.path(), RootKind::Explicit)]);
    let s = library.skills()[0].clone();
    (s.status, s.name, s.description)
}

#[test]
fn parser_valid_frontmatter() {
    let (status, name, description) = load(
        "---\nname: my-skill\ndescription: A test skill\n---\n# My Skill\n\nInstructions here.\n",
    );
    assert_eq!(status, FrontmatterStatus::Parsed);
    assert_eq!(
        (name.as_str(), description.as_str()),
        ("my-skill", "A test skill")
    );
}

#[test]
fn parser_missing_frontmatter() {
    let t = tempfile::tempdir().unwrap();
    let dir = skill(t.path(), "s", "# No frontmatter here");
    assert!(any(&errors(&dir), "must start with YAML frontmatter"));
    assert_eq!(load("# No frontmatter here").2, "No frontmatter here");
}

#[test]
fn parser_unclosed_frontmatter() {
    let t = tempfile::tempdir().unwrap();
    let dir = skill(
        t.path(),
        "s",
        "---\nname: my-skill\ndescription: A test skill\n",
    );
    assert!(any(&errors(&dir), "not properly closed"));
    assert_eq!(load("---\nname: my-skill\n").0, FrontmatterStatus::Unclosed);
}

#[test]
fn parser_invalid_yaml() {
    let t = tempfile::tempdir().unwrap();
    let dir = skill(
        t.path(),
        "s",
        "---\nname: [invalid\ndescription: broken\n---\nBody here\n",
    );
    assert!(any(&errors(&dir), "Invalid YAML"));
    let (status, name, description) =
        load("---\nname: [invalid\ndescription: broken\n---\nBody here\n");
    assert!(matches!(status, FrontmatterStatus::InvalidYaml { .. }));
    assert_eq!(
        (name.as_str(), description.as_str()),
        ("my-skill", "Body here")
    );
}

#[test]
fn parser_non_dict_frontmatter() {
    let t = tempfile::tempdir().unwrap();
    let dir = skill(t.path(), "s", "---\n- just\n- a\n- list\n---\nBody\n");
    assert!(any(&errors(&dir), "must be a YAML mapping"));
    assert_eq!(
        load("---\n- just\n- a\n---\nBody\n").0,
        FrontmatterStatus::NotMapping
    );
}

#[test]
fn parser_read_valid_skill_with_license() {
    let t = tempfile::tempdir().unwrap();
    skill(
        t.path(),
        "my-skill",
        "---\nname: my-skill\ndescription: A test skill\nlicense: MIT\n---\n# My Skill\n",
    );
    let library = discover(&[Root::new(t.path(), RootKind::Explicit)]);
    assert_eq!(
        library
            .get("my-skill")
            .unwrap()
            .frontmatter
            .license
            .as_deref(),
        Some("MIT")
    );
}

#[test]
fn parser_read_with_metadata_coerced_to_strings() {
    let t = tempfile::tempdir().unwrap();
    let dir = skill(
        t.path(),
        "my-skill",
        "---\nname: my-skill\ndescription: A test skill\nmetadata:\n  author: Test Author\n  version: 1.0\n---\nBody\n",
    );
    let library = discover(&[Root::new(t.path(), RootKind::Explicit)]);
    assert_eq!(
        library.get("my-skill").unwrap().frontmatter.metadata,
        [
            ("author".to_string(), "Test Author".to_string()),
            ("version".to_string(), "1.0".to_string())
        ]
    );
    assert!(errors(&dir).is_empty());
}

#[test]
fn parser_missing_name() {
    let t = tempfile::tempdir().unwrap();
    let dir = skill(
        t.path(),
        "my-skill",
        "---\ndescription: A test skill\n---\nBody\n",
    );
    assert!(any(
        &errors(&dir),
        "Missing required field in frontmatter: name"
    ));
}

#[test]
fn parser_missing_description() {
    let t = tempfile::tempdir().unwrap();
    let dir = skill(t.path(), "my-skill", "---\nname: my-skill\n---\nBody\n");
    assert!(any(
        &errors(&dir),
        "Missing required field in frontmatter: description"
    ));
}

#[test]
fn find_skill_md_prefers_uppercase() {
    let t = tempfile::tempdir().unwrap();
    let dir = skill(t.path(), "my-skill", "uppercase");
    fs::write(dir.join("skill.md"), "lowercase").unwrap();
    assert!(find_skill_file(&dir).unwrap().ends_with("SKILL.md"));
}

#[test]
fn find_skill_md_accepts_lowercase() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("my-skill");
    fs::create_dir(&dir).unwrap();
    fs::write(
        dir.join("skill.md"),
        "---\nname: my-skill\ndescription: A test skill\n---\n# My Skill\n",
    )
    .unwrap();
    assert!(find_skill_file(&dir).unwrap().ends_with("skill.md"));
    assert!(errors(&dir).is_empty());
}

#[test]
fn find_skill_md_returns_none_when_missing() {
    let t = tempfile::tempdir().unwrap();
    assert!(find_skill_file(t.path()).is_none());
}

#[test]
fn parser_allowed_tools_forms() {
    let t = tempfile::tempdir().unwrap();
    skill(
        t.path(),
        "a",
        "---\nname: a\ndescription: d\nallowed-tools: Bash(jq:*) Bash(git:*)\n---\n",
    );
    skill(
        t.path(),
        "b",
        "---\nname: b\ndescription: d\nallowed-tools: [Read, Write, Bash]\n---\n",
    );
    skill(
        t.path(),
        "c",
        "---\nname: c\ndescription: d\nallowed-tools:\n  - Read\n  - Bash\n  - Grep\n---\n",
    );
    let library = discover(&[Root::new(t.path(), RootKind::Explicit)]);
    let tools = |name: &str| {
        library
            .get(name)
            .unwrap()
            .frontmatter
            .allowed_tools
            .join(" ")
    };
    assert_eq!(tools("a"), "Bash(jq:*) Bash(git:*)");
    assert_eq!(tools("b"), "Read Write Bash");
    assert_eq!(tools("c"), "Read Bash Grep");
}

#[test]
fn parser_allowed_tools_invalid_type() {
    let t = tempfile::tempdir().unwrap();
    skill(
        t.path(),
        "a",
        "---\nname: a\ndescription: d\nallowed-tools: 123\n---\n",
    );
    let library = discover(&[Root::new(t.path(), RootKind::Explicit)]);
    let skill = library.get("a").unwrap();
    assert!(skill.frontmatter.allowed_tools.is_empty());
    assert!(
        skill.diagnostics[0]
            .message
            .contains("must be either a string or a list of strings")
    );
}

// ------------------------------------------------------------ skills_ref_edge_cases.txt

#[test]
fn edge_cases_where_we_differ_on_purpose() {
    let t = tempfile::tempdir().unwrap();
    // A BOM is accepted (the reference rejects it).
    let bom = skill(
        t.path(),
        "bom",
        "\u{feff}---\nname: bom\ndescription: d\n---\n",
    );
    assert!(errors(&bom).is_empty());
    // A `---` inside a value does not end the frontmatter (the reference truncates).
    let dashes = skill(
        t.path(),
        "dashes-in-desc",
        "---\nname: dashes-in-desc\ndescription: a --- b\n---\n",
    );
    assert!(errors(&dashes).is_empty());
    // Flow lists are accepted (the reference rejects them).
    let flow = skill(
        t.path(),
        "flow-list-tools",
        "---\nname: flow-list-tools\ndescription: d\nallowed-tools: [Read, Grep]\n---\n",
    );
    assert!(errors(&flow).is_empty());
    // An unquoted `: ` loads with a warning (the reference rejects it as invalid YAML).
    let colon = skill(
        t.path(),
        "colon-desc",
        "---\nname: colon-desc\ndescription: Use when: x\n---\n",
    );
    assert!(errors(&colon).is_empty());
    assert!(any(&warnings(&colon), "Unquoted ': '"));
    // An empty compatibility and a list metadata are errors (the reference lets them pass).
    let compat = skill(
        t.path(),
        "empty-compat",
        "---\nname: empty-compat\ndescription: d\ncompatibility: ''\n---\n",
    );
    assert!(any(
        &errors(&compat),
        "Field 'compatibility' must be a non-empty string"
    ));
    let meta = skill(
        t.path(),
        "meta-list",
        "---\nname: meta-list\ndescription: d\nmetadata: [a]\n---\n",
    );
    assert!(any(
        &errors(&meta),
        "Field 'metadata' must be a map of strings"
    ));
}

#[test]
fn edge_cases_where_we_agree() {
    let t = tempfile::tempdir().unwrap();
    let numeric = skill(
        t.path(),
        "numeric-name",
        "---\nname: 123\ndescription: d\n---\n",
    );
    assert_eq!(
        errors(&numeric),
        ["Directory name 'numeric-name' must match skill name '123'"]
    );
    let dup = skill(
        t.path(),
        "dupkey",
        "---\nname: dupkey\nname: again\ndescription: d\n---\n",
    );
    assert!(any(&errors(&dup), "Invalid YAML in frontmatter"));
    let quoted_bool = skill(
        t.path(),
        "quoted-bool",
        "---\nname: quoted-bool\ndescription: 'yes'\n---\n",
    );
    assert!(errors(&quoted_bool).is_empty());
    let trailing = skill(
        t.path(),
        "trailing-space-name",
        "---\nname: trailing-space-name   \ndescription: d\n---\n",
    );
    assert!(errors(&trailing).is_empty());
    let empty = skill(t.path(), "empty-fm", "---\n---\nbody\n");
    assert_eq!(
        errors(&empty),
        ["SKILL.md frontmatter must be a YAML mapping"]
    );
    let crlf = skill(
        t.path(),
        "crlf",
        "---\r\nname: crlf\r\ndescription: d\r\n---\r\n",
    );
    assert!(errors(&crlf).is_empty());
}

#[test]
fn diagnostics_name_file_line_and_field() {
    let t = tempfile::tempdir().unwrap();
    let dir = skill(t.path(), "x", "---\nname: Bad_Name\ndescription: d\n---\n");
    let validation = &validate_path(&dir)[0];
    let first = validation.errors().next().unwrap();
    assert_eq!(first.path, dir.join("SKILL.md"));
    assert_eq!(first.line, Some(2));
    assert_eq!(first.field.as_deref(), Some("name"));
}

#[test]
fn a_root_is_walked_and_duplicate_names_are_warned() {
    let t = tempfile::tempdir().unwrap();
    skill(t.path(), "a/dup", "---\nname: dup\ndescription: d\n---\n");
    skill(t.path(), "b/dup", "---\nname: dup\ndescription: d\n---\n");
    let validations = validate_path(t.path());
    assert_eq!(validations.len(), 2);
    assert!(
        validations[1]
            .warnings()
            .any(|w| w.message.contains("is also used by"))
    );
}
