//! Each tool's edge cases, called directly.

#![allow(clippy::unwrap_used, clippy::panic, reason = "tests")]

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use skillet_agent::permission::{Gate, Permissions};
use skillet_agent::sandbox::SandboxPolicy;
use skillet_agent::tool::{CatalogPlacement, ToolContext, ToolError};
use skillet_agent::tools::ToolTable;
use skillet_skills::{Root, RootKind, discover};

struct Fixture {
    _temp: tempfile::TempDir,
    root: PathBuf,
    context: ToolContext,
    tools: ToolTable,
}

fn fixture() -> Fixture {
    let temp = tempfile::tempdir().unwrap();
    let root = temp.path().canonicalize().unwrap();
    let cwd = root.join("work");
    std::fs::create_dir_all(cwd.join("src")).unwrap();
    std::fs::write(cwd.join("src/lib.rs"), "fn a() {}\nfn b() {}\n// TODO: c\n").unwrap();
    std::fs::write(cwd.join(".gitignore"), "target/\n").unwrap();
    std::fs::create_dir_all(cwd.join("target")).unwrap();
    std::fs::write(cwd.join("target/gen.rs"), "fn generated() {}\n").unwrap();
    let skill = root.join("skills/tool-skill");
    std::fs::create_dir_all(skill.join("scripts")).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: tool-skill\ndescription: d\n---\nbody\n",
    )
    .unwrap();
    std::fs::write(skill.join("scripts/run.sh"), "echo from skill\n").unwrap();
    let with_arguments = root.join("skills/args-skill");
    std::fs::create_dir_all(&with_arguments).unwrap();
    std::fs::write(
        with_arguments.join("SKILL.md"),
        "---\nname: args-skill\ndescription: d\narguments: [file, mode]\n---\nfile=$file mode=$1 all=$ARGUMENTS dir=${SKILL_DIR} cost=\\$5\n",
    )
    .unwrap();
    std::fs::write(root.join("secret.txt"), "secret").unwrap();
    let library = Arc::new(discover(&[Root::new(root.join("skills"), RootKind::User)]));
    let context = ToolContext {
        cwd,
        skills: Arc::new(skillet_agent::tool::LiveSkills::new(library, None)),
        catalog: String::new(),
        placement: CatalogPlacement::System,
        todos: Mutex::new(Vec::new()),
        subagent: None,
        gate: Arc::new(Gate::new(Permissions::Allow)),
        protected: vec![root.join("work/.agents/skills")],
        sandbox: SandboxPolicy::default(),
        skill_trust: skillet_library::trust::SkillTrust::untrusted(),
        skill_shell: true,
        save_skills: None,
        source: None,
        fetched: Arc::default(),
        notices: skillet_agent::tool::Notices::default(),
        added_dirs: std::sync::Arc::default(),
        hooks: skillet_agent::hooks::Hooks::default(),
    };
    Fixture {
        _temp: temp,
        root,
        context,
        tools: ToolTable::standard(false),
    }
}

async fn call(fixture: &Fixture, tool: &str, input: Value) -> Result<String, ToolError> {
    fixture
        .tools
        .get(tool)
        .unwrap()
        .call(&input, &fixture.context)
        .await
}

#[tokio::test]
async fn edit_needs_exactly_one_match() {
    let f = fixture();
    let error = call(
        &f,
        "edit_file",
        json!({"path": "src/lib.rs", "old_text": "fn z", "new_text": "x"}),
    )
    .await
    .unwrap_err();
    assert!(
        error.0.contains("old_text does not occur in src/lib.rs"),
        "{error}"
    );
    let error = call(
        &f,
        "edit_file",
        json!({"path": "src/lib.rs", "old_text": "fn ", "new_text": "x"}),
    )
    .await
    .unwrap_err();
    assert!(
        error.0.contains("old_text occurs 2 times in src/lib.rs"),
        "{error}"
    );
    let done = call(
        &f,
        "edit_file",
        json!({"path": "src/lib.rs", "old_text": "fn b", "new_text": "fn bee"}),
    )
    .await
    .unwrap();
    assert_eq!(done, "edited src/lib.rs: replaced 1 occurrence");
    assert!(
        std::fs::read_to_string(f.context.cwd.join("src/lib.rs"))
            .unwrap()
            .contains("fn bee() {}")
    );
}

#[tokio::test]
async fn paths_cannot_escape_the_working_directory() {
    let f = fixture();
    let secret = f.root.join("secret.txt").display().to_string();
    for path in ["../secret.txt", "src/../../secret.txt", secret.as_str()] {
        let error = call(&f, "read_file", json!({"path": path}))
            .await
            .unwrap_err();
        assert!(
            error
                .0
                .contains("is outside the working directory, the folders added with --add-dir and those of discovered skills"),
            "{path}: {error}"
        );
    }
    std::os::unix::fs::symlink(f.root.join("secret.txt"), f.context.cwd.join("link.txt")).unwrap();
    let error = call(&f, "read_file", json!({"path": "link.txt"}))
        .await
        .unwrap_err();
    assert!(error.0.contains("outside"), "{error}");
    let error = call(
        &f,
        "write_file",
        json!({"path": "../evil.txt", "content": "x"}),
    )
    .await
    .unwrap_err();
    assert!(
        error.0.contains("is outside the working directory"),
        "{error}"
    );
    assert!(!f.root.join("evil.txt").exists());
}

#[tokio::test]
async fn skill_folders_are_readable_but_not_writable() {
    let f = fixture();
    let script = f
        .root
        .join("skills/tool-skill/scripts/run.sh")
        .display()
        .to_string();
    let text = call(&f, "read_file", json!({"path": script}))
        .await
        .unwrap();
    assert_eq!(text, "     1\techo from skill\n");
    let error = call(&f, "write_file", json!({"path": script, "content": "rm"}))
        .await
        .unwrap_err();
    assert!(error.0.contains("cannot be written"), "{error}");
    let found = call(
        &f,
        "grep",
        json!({"pattern": "from", "path": f.root.join("skills/tool-skill").display().to_string()}),
    )
    .await
    .unwrap();
    assert!(found.contains("run.sh:1: echo from skill"), "{found}");
}

#[tokio::test]
async fn read_file_pages_with_offset_and_limit() {
    let f = fixture();
    let text = call(
        &f,
        "read_file",
        json!({"path": "src/lib.rs", "offset": 2, "limit": 1}),
    )
    .await
    .unwrap();
    assert_eq!(
        text,
        "     2\tfn b() {}\n[src/lib.rs has 3 lines; showing 2-2; read on with offset 3]"
    );
    let error = call(&f, "read_file", json!({"path": "src"}))
        .await
        .unwrap_err();
    assert!(error.0.contains("is a folder"));
    let error = call(&f, "read_file", json!({"path": "missing.rs"}))
        .await
        .unwrap_err();
    assert!(error.0.starts_with("cannot read missing.rs"), "{error}");
    let error = call(&f, "read_file", json!({})).await.unwrap_err();
    assert_eq!(error.0, "missing required string argument 'path'");
}

#[tokio::test]
async fn glob_and_grep_respect_gitignore() {
    let f = fixture();
    assert_eq!(
        call(&f, "glob", json!({"pattern": "**/*.rs"}))
            .await
            .unwrap(),
        "src/lib.rs"
    );
    let found = call(&f, "grep", json!({"pattern": "^fn \\w+", "glob": "*.rs"}))
        .await
        .unwrap();
    assert_eq!(found, "src/lib.rs:1: fn a() {}\nsrc/lib.rs:2: fn b() {}\n");
    assert_eq!(
        call(&f, "grep", json!({"pattern": "nothing here"}))
            .await
            .unwrap(),
        "no lines match nothing here"
    );
    assert!(
        call(&f, "grep", json!({"pattern": "("}))
            .await
            .unwrap_err()
            .0
            .starts_with("bad regular expression")
    );
}

#[tokio::test]
async fn bash_runs_in_the_working_directory_with_exit_codes() {
    let f = fixture();
    let out = call(&f, "bash", json!({"command": "pwd; echo err >&2; exit 3"}))
        .await
        .unwrap();
    assert_eq!(
        out,
        format!("{}\nerr\n\n[exit code 3]", f.context.cwd.display())
    );
    assert_eq!(
        call(&f, "bash", json!({"command": "true"})).await.unwrap(),
        "(no output)"
    );
}

#[tokio::test]
async fn bash_times_out_and_stops_the_command() {
    let f = fixture();
    let started = std::time::Instant::now();
    let error = call(
        &f,
        "bash",
        json!({"command": "echo started; sleep 30", "timeout": 1}),
    )
    .await
    .unwrap_err();
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    assert!(
        error.0.starts_with(
            "the command timed out after 1 s and was stopped; output so far:\nstarted"
        ),
        "{error}"
    );
}

#[tokio::test]
async fn bash_output_is_capped_with_a_note() {
    let f = fixture();
    let out = call(
        &f,
        "bash",
        json!({"command": "head -c 200000 /dev/zero | tr '\\0' 'x'; echo; echo END"}),
    )
    .await
    .unwrap();
    assert!(out.chars().count() < 51_000, "{}", out.len());
    assert!(
        out.contains("bytes of output cut here; the output was 200005 bytes"),
        "{}",
        &out[24_000..26_000]
    );
    assert!(out.ends_with("END\n"));
}

#[tokio::test]
async fn bash_refuses_blocklisted_commands() {
    let f = fixture();
    let error = call(
        &f,
        "bash",
        json!({"command": "rm -rf / --no-preserve-root"}),
    )
    .await
    .unwrap_err();
    assert_eq!(
        error.0,
        "refused: this command deletes the root, home or system folders; it is on skillet's blocklist"
    );
}

#[tokio::test]
async fn todo_write_keeps_the_plan() {
    let f = fixture();
    let out = call(
        &f,
        "todo_write",
        json!({"items": [
            {"content": "read", "status": "done"},
            {"content": "write", "status": "in_progress"},
            {"content": "test", "status": "pending"}
        ]}),
    )
    .await
    .unwrap();
    assert_eq!(out, "[x] read\n[>] write\n[ ] test");
    assert_eq!(f.context.todos.lock().unwrap().len(), 3);
    let error = call(
        &f,
        "todo_write",
        json!({"items": [{"content": "x", "status": "later"}]}),
    )
    .await
    .unwrap_err();
    assert!(error.0.contains("status 'later'"));
}

#[tokio::test]
async fn load_skill_errors_list_the_skills() {
    let f = fixture();
    let error = call(&f, "load_skill", json!({"name": "tool-skil"}))
        .await
        .unwrap_err();
    assert_eq!(
        error.0,
        "Unknown skill 'tool-skil'. Available: args-skill, tool-skill. Did you mean 'tool-skill'?"
    );
    let loaded = call(&f, "load_skill", json!({"name": "tool-skill"}))
        .await
        .unwrap();
    assert!(loaded.starts_with("<skill name=\"tool-skill\">\nbody\n"));
}

#[tokio::test]
async fn load_skill_fills_the_arguments_the_model_gives() {
    let f = fixture();
    let dir = f.root.join("skills/args-skill");
    let invoked = call(
        &f,
        "load_skill",
        json!({"name": "args-skill", "arguments": "'a b.pdf' fast"}),
    )
    .await
    .unwrap();
    assert!(
        invoked.contains(&format!(
            "file=a b.pdf mode=fast all='a b.pdf' fast dir={} cost=$5\n",
            dir.display()
        )),
        "{invoked}"
    );
    // Loaded without arguments: only the folder is filled in.
    let loaded = call(&f, "load_skill", json!({"name": "args-skill"}))
        .await
        .unwrap();
    assert!(
        loaded.contains(&format!(
            "file=$file mode=$1 all=$ARGUMENTS dir={} cost=\\$5\n",
            dir.display()
        )),
        "{loaded}"
    );
    let bad = call(
        &f,
        "load_skill",
        json!({"name": "args-skill", "arguments": 3}),
    )
    .await
    .unwrap_err();
    assert!(bad.0.contains("'arguments' must be a string"), "{bad}");
}
