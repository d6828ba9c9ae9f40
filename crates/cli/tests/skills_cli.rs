//! End-to-end tests of `skillet skills …`: the real binary, its exit codes, stdout and stderr.

#![allow(clippy::unwrap_used, clippy::panic, reason = "tests")]

mod common;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command as StdCommand, Stdio};

use assert_cmd::Command;
use common::{run, write_skill};
use pretty_assertions::assert_eq;
use serde_json::Value;

use skillet_test_support::fixture_library as fixtures;

/// `skillet` with an empty home and working directory, so no real skills leak in.
fn skillet(sandbox: &Path) -> Command {
    let mut command = Command::cargo_bin("skillet").unwrap();
    command
        .current_dir(sandbox)
        .env("HOME", sandbox)
        .env_remove("XDG_CONFIG_HOME");
    command
}

#[test]
fn list_json_has_the_documented_fields_and_never_the_body() {
    let sandbox = tempfile::tempdir().unwrap();
    let out = run(skillet(sandbox.path())
        .args(["skills", "list", "--json", "--skills-dir"])
        .arg(fixtures()));
    assert_eq!(out.code, 0);
    let skills: Vec<Value> = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(skills.len(), 11);
    let pdf = skills.iter().find(|s| s["name"] == "pdf").unwrap();
    let root = fixtures();
    assert_eq!(pdf["path"], root.join("pdf/SKILL.md").display().to_string());
    assert_eq!(pdf["dir"], root.join("pdf").display().to_string());
    assert_eq!(pdf["root"], root.display().to_string());
    assert_eq!(pdf["model_invocable"], true);
    assert_eq!(pdf["user_invocable"], true);
    assert_eq!(pdf["diagnostics"], serde_json::json!([]));
    assert_eq!(pdf["shadowed"], serde_json::json!([]));
    assert_eq!(
        pdf["allowed_tools"],
        serde_json::json!(["Bash(pdftotext:*)", "Read"])
    );
    let manual = skills.iter().find(|s| s["name"] == "manual-only").unwrap();
    assert_eq!(manual["model_invocable"], false);
    let broken = skills.iter().find(|s| s["name"] == "broken-yaml").unwrap();
    assert!(
        broken["diagnostics"][0]
            .as_str()
            .unwrap()
            .contains("Invalid YAML")
    );
    assert!(!out.stdout.contains("Run `scripts/extract.py"));
}

#[test]
fn list_table_is_aligned_and_diagnostics_go_to_stderr() {
    let sandbox = tempfile::tempdir().unwrap();
    let out = run(skillet(sandbox.path())
        .args(["skills", "list", "--skills-dir"])
        .arg(fixtures()));
    assert_eq!(out.code, 0);
    insta::assert_snapshot!("list_table", out.stdout);
    let root = fixtures().display().to_string();
    insta::assert_snapshot!("list_stderr", out.stderr.replace(&root, "[FIXTURES]"));
}

#[test]
fn show_prints_layer2_and_unknown_names_fail() {
    let sandbox = tempfile::tempdir().unwrap();
    let out = run(skillet(sandbox.path())
        .args(["skills", "show", "tagged", "--skills-dir"])
        .arg(fixtures()));
    assert_eq!(out.code, 0);
    assert!(
        out.stdout
            .starts_with("<skill name=\"tagged\">\nTagged body.\n")
    );
    assert!(out.stdout.ends_with("</skill>\n"));

    let out = run(skillet(sandbox.path())
        .args(["skills", "show", "tagd", "--skills-dir"])
        .arg(fixtures()));
    assert_eq!(out.code, 1);
    assert_eq!(out.stdout, "");
    // The close names only, not every skill.
    assert_eq!(
        out.stderr,
        "error: unknown skill 'tagd'; did you mean 'tagged'?\n  hint: `skillet skills list` shows every skill\n"
    );
}

#[test]
fn show_works_for_user_only_skills() {
    let sandbox = tempfile::tempdir().unwrap();
    let out = run(skillet(sandbox.path())
        .args(["skills", "show", "manual-only", "--skills-dir"])
        .arg(fixtures()));
    assert_eq!(out.code, 0);
    assert!(out.stdout.contains("Deploy to $ARGUMENTS."));
}

#[test]
fn catalog_formats_and_budget_report() {
    let sandbox = tempfile::tempdir().unwrap();
    let out = run(skillet(sandbox.path())
        .args(["skills", "catalog", "--skills-dir"])
        .arg(fixtures()));
    assert_eq!(out.code, 0);
    assert!(out.stdout.starts_with("  - hidden-skill: Found only"));
    assert_eq!(out.stderr, "");

    let out = run(skillet(sandbox.path())
        .args(["skills", "catalog", "--format", "xml", "--skills-dir"])
        .arg(fixtures()));
    assert!(
        out.stdout
            .starts_with("<available_skills>\n<skill><name>hidden-skill</name>")
    );

    let out = run(skillet(sandbox.path())
        .args(["skills", "catalog", "--budget", "400", "--skills-dir"])
        .arg(fixtures()));
    assert_eq!(out.code, 0);
    assert!(out.stdout.chars().count() <= 401);
    assert!(
        out.stderr.starts_with("warning: the skill catalog needs"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("skills left out"), "{}", out.stderr);
}

#[test]
fn empty_catalog_prints_nothing() {
    let sandbox = tempfile::tempdir().unwrap();
    let out = run(skillet(sandbox.path()).args(["skills", "catalog"]));
    assert_eq!(
        (out.code, out.stdout.as_str(), out.stderr.as_str()),
        (0, "", "")
    );
}

#[test]
fn default_roots_come_from_the_project_and_home() {
    let sandbox = tempfile::tempdir().unwrap();
    std::fs::create_dir(sandbox.path().join(".git")).unwrap();
    write_skill(
        &sandbox.path().join(".claude/skills"),
        "mine",
        "---\nname: mine\ndescription: From the project\n---\n",
    );
    write_skill(
        &sandbox.path().join("sub/.agents/skills"),
        "near",
        "---\nname: near\ndescription: Nearer\n---\n",
    );
    let out = run(skillet(sandbox.path()).args(["--cwd", "sub", "skills", "catalog"]));
    assert_eq!(out.stdout, "  - near: Nearer\n  - mine: From the project\n");
}

/// A description `validate` gives no advice on: long enough, saying when to use the skill.
const FINDABLE: &str = "Checks that the project builds and its tests pass, and says what failed. Use when the user asks whether the change is ready.";

#[test]
fn validate_reports_file_line_and_field_and_sets_the_exit_code() {
    let sandbox = tempfile::tempdir().unwrap();
    write_skill(
        sandbox.path(),
        "good",
        &format!("---\nname: good\ndescription: {FINDABLE}\n---\n"),
    );
    write_skill(
        sandbox.path(),
        "bad",
        "---\nname: Bad\ndescription: Draws railway maps from timetable files, one line a colour, stations to scale. Use when the user has a GTFS feed.\n---\n",
    );
    let out = run(skillet(sandbox.path()).args(["skills", "validate", "good"]));
    assert_eq!(out.code, 0, "{}", out.stdout);
    assert_eq!(
        out.stdout,
        "1 skill checked: 0 with errors; 0 errors, 0 warnings\n"
    );

    let out = run(skillet(sandbox.path()).args(["skills", "validate", "bad/SKILL.md", "good"]));
    assert_eq!(out.code, 1);
    let file = sandbox.path().join("bad/SKILL.md").display().to_string();
    assert!(
        out.stdout.contains(&format!(
            "{file}:2: error: Skill name 'Bad' must be lowercase (field `name`)"
        )),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .ends_with("2 skills checked: 1 with errors; 2 errors, 0 warnings\n"),
        "{}",
        out.stdout
    );

    let out = run(skillet(sandbox.path()).args(["skills", "validate", "--json", "."]));
    assert_eq!(out.code, 1);
    let items: Vec<Value> = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(items.len(), 2);
    assert_eq!(items[0]["name"], "Bad");
    assert_eq!(items[0]["valid"], false);
    assert_eq!(items[0]["errors"][0]["field"], "name");
    assert_eq!(items[0]["errors"][0]["line"], 2);
    assert_eq!(items[1]["valid"], true);
}

#[test]
fn validate_without_paths_checks_every_discovered_skill() {
    let sandbox = tempfile::tempdir().unwrap();
    let out = run(skillet(sandbox.path())
        .args(["skills", "validate", "--skills-dir"])
        .arg(fixtures()));
    assert_eq!(out.code, 1);
    assert!(
        out.stdout
            .contains("broken-yaml/SKILL.md:3: error: Invalid YAML in frontmatter"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("11 skills checked"), "{}", out.stdout);
}

#[test]
fn new_scaffolds_a_skill_that_validates() {
    let sandbox = tempfile::tempdir().unwrap();
    let out = run(skillet(sandbox.path()).args(["skills", "new", "release-notes"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let file = sandbox.path().join(".agents/skills/release-notes/SKILL.md");
    assert!(file.is_file());
    assert!(out.stdout.contains("created "));
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.contains("when to use it"));
    assert!(text.contains("# Release Notes"));

    let out =
        run(skillet(sandbox.path()).args(["skills", "validate", ".agents/skills/release-notes"]));
    assert_eq!(out.code, 0, "{}", out.stdout);
    // It passes, with a warning until its placeholder description is replaced.
    assert!(
        out.stdout.contains("0 errors, 1 warning\n")
            && out
                .stdout
                .contains("still holds the template's placeholder"),
        "{}",
        out.stdout
    );

    // The new skill is discovered from the project.
    let out = run(skillet(sandbox.path()).args(["skills", "list"]));
    assert!(
        out.stdout.contains("release-notes  project"),
        "{}",
        out.stdout
    );

    // Never overwrites; bad names are refused with the rule they break.
    let out = run(skillet(sandbox.path()).args(["skills", "new", "release-notes"]));
    assert_eq!(out.code, 1);
    assert!(out.stderr.contains("already exists"), "{}", out.stderr);
    let out =
        run(skillet(sandbox.path()).args(["skills", "new", "Bad_Name", "--dir", "elsewhere"]));
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("invalid skill name 'Bad_Name'"),
        "{}",
        out.stderr
    );
    assert!(!sandbox.path().join("elsewhere").exists());
}

#[test]
fn a_closed_pipe_is_not_an_error() {
    let sandbox = tempfile::tempdir().unwrap();
    let root = sandbox.path().join("many");
    for index in 0..1_500 {
        let name = format!("skill-{index:04}");
        write_skill(
            &root,
            &name,
            &format!(
                "---\nname: {name}\ndescription: {}\n---\n",
                "words ".repeat(12)
            ),
        );
    }
    let mut child = StdCommand::new(assert_cmd::cargo::cargo_bin("skillet"))
        .args(["skills", "list", "--json", "--skills-dir"])
        .arg(&root)
        .env("HOME", sandbox.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert_eq!(first, "[\n");
    // The reader is dropped here: the pipe closes while skillet still writes.
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "{output:?}");
    assert_eq!(String::from_utf8_lossy(&output.stderr), "");
}

#[test]
fn usage_errors_exit_2() {
    let sandbox = tempfile::tempdir().unwrap();
    let out = run(skillet(sandbox.path()).args(["skills", "catalog", "--format", "yaml"]));
    assert_eq!(out.code, 2);
    let out = run(skillet(sandbox.path()).args(["--cwd", "no-such-dir", "skills", "list"]));
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("--cwd no-such-dir"), "{}", out.stderr);
}

#[test]
fn an_empty_list_says_where_it_looked() {
    let sandbox = tempfile::tempdir().unwrap();
    let out = run(skillet(sandbox.path()).args(["skills", "list"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout, "");
    assert!(
        out.stderr.starts_with("no skills found; looked in:\n"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains(".agents/skills (project) (absent)"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains(".claude/skills (user) (absent)"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("skillet skills new NAME"),
        "{}",
        out.stderr
    );
}

#[test]
#[cfg(target_os = "linux")]
fn a_folder_name_that_is_not_utf8_does_not_stop_json_output() {
    use std::os::unix::ffi::OsStrExt as _;
    let sandbox = common::Sandbox::empty();
    let root = sandbox.project.join(".agents/skills");
    let folder = root.join(std::ffi::OsStr::from_bytes(b"\xffbad"));
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(
        folder.join("SKILL.md"),
        "---\nname: bad\ndescription: Extracts tables from PDF files.\n---\nbody\n",
    )
    .unwrap();
    for args in [
        &["skills", "list", "--json"][..],
        &["skills", "validate", "--json"],
        &["skills", "match", "--json", "extract tables from a pdf"],
    ] {
        let out = run(common::skillet(&sandbox, None).args(args));
        assert_ne!(out.code, 101, "{args:?} panicked: {}", out.stderr);
        let value: serde_json::Value = serde_json::from_str(&out.stdout)
            .unwrap_or_else(|error| panic!("{args:?}: {error}: {}", out.stdout));
        assert!(
            value.to_string().contains("\u{fffd}bad"),
            "{args:?}: {value}"
        );
    }
}
