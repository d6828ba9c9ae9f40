//! Tests of [`super`].

use serde_json::json;

use super::*;

fn places() -> Places {
    Places {
        cwd: PathBuf::from("/work/project/sub"),
        project_root: PathBuf::from("/work/project"),
        home: Some(PathBuf::from("/home/me")),
        config_dir: None,
    }
}

fn rules(list: &[(Decision, &str)]) -> Rules {
    Rules::new(
        list.iter()
            .map(|(decision, text)| (*decision, (*text).to_string(), "test".to_string())),
        places(),
    )
}

fn bash(command: &str) -> Value {
    json!({ "command": command })
}

fn decided(rules: &Rules, tool: &str, input: &Value) -> Option<Decision> {
    rules.decide(tool, input).map(|(decision, _)| decision)
}

#[test]
fn deny_wins_over_ask_over_allow_whatever_the_order() {
    let rules = rules(&[
        (Decision::Allow, "Bash(git:*)"),
        (Decision::Ask, "Bash(git push:*)"),
        (Decision::Deny, "Bash(git push --force:*)"),
    ]);
    assert_eq!(
        decided(&rules, "bash", &bash("git status")),
        Some(Decision::Allow)
    );
    assert_eq!(
        decided(&rules, "bash", &bash("git push origin main")),
        Some(Decision::Ask)
    );
    assert_eq!(
        decided(&rules, "bash", &bash("git push --force")),
        Some(Decision::Deny)
    );
    assert_eq!(decided(&rules, "bash", &bash("ls")), None);
    // git's own options do not hide the subcommand.
    for command in [
        "git -C . push",
        "git --no-pager push",
        "git -c a.b=c push origin",
    ] {
        assert_eq!(
            decided(&rules, "bash", &bash(command)),
            Some(Decision::Ask),
            "{command}"
        );
    }
    // The deciding rule is named, with where it came from.
    let (_, rule) = rules.decide("bash", &bash("git push --force")).unwrap();
    assert_eq!(
        (rule.text.as_str(), rule.source.as_str()),
        ("Bash(git push --force:*)", "test")
    );
}

#[test]
fn a_denied_command_is_found_in_any_part_quoted_or_wrapped() {
    let rules = rules(&[(Decision::Deny, "Bash(curl:*)")]);
    for command in [
        "curl https://x",
        "\"curl\" x",
        "'curl' x",
        "c\\url x",
        "ls && curl x | sh",
        "echo $(curl x)",
        "echo `curl x`",
        "sudo curl x",
        "env A=1 curl x",
        "A=1 curl x",
        "/usr/bin/curl x",
        "bash -c 'curl x'",
        "sh -c \"ls; curl x\"",
        "(curl x)",
        "curl x > out",
        "ls\ncurl x",
        "timeout 5 curl x",
        "stdbuf -o0 curl x",
        "setsid curl x",
        "ionice -c3 curl x",
        "flock /tmp/l curl x",
        "echo $((1<<EOF))\ncurl x\nEOF",
        "(( x = 1 << EOF ))\ncurl x",
        "echo $(( $(curl x) + 1 ))",
        "((curl x); true)",
        "( (curl x) )",
    ] {
        assert_eq!(
            decided(&rules, "bash", &bash(command)),
            Some(Decision::Deny),
            "{command:?}"
        );
    }
    for command in [
        "echo curl",
        "curlie x",
        "ls # curl x",
        "git commit -m 'curl x'",
    ] {
        assert_eq!(decided(&rules, "bash", &bash(command)), None, "{command:?}");
    }
}

#[test]
fn a_command_is_allowed_only_when_every_part_is() {
    let rules = rules(&[
        (Decision::Allow, "Bash(git status:*)"),
        (Decision::Allow, "Bash(cargo test:*)"),
    ]);
    assert_eq!(
        decided(&rules, "bash", &bash("git status && cargo test -p x")),
        Some(Decision::Allow)
    );
    for command in [
        "git status; rm -rf build",
        "cargo test $(curl x)",
        "git status > /tmp/x",
        "git stash",
    ] {
        assert_eq!(decided(&rules, "bash", &bash(command)), None, "{command:?}");
    }
}

#[test]
fn paths_read_as_claude_code_reads_them() {
    let rules = rules(&[
        (Decision::Deny, "Read(.env)"),
        (Decision::Deny, "Read(./secrets/**)"),
        (Decision::Deny, "Edit(/config/**)"),
        (Decision::Deny, "Read(//etc/shadow)"),
        (Decision::Deny, "Read(~/.ssh/**)"),
        (Decision::Allow, "Edit(src/**)"),
    ]);
    let path = |p: &str| json!({ "path": p });
    for (tool, input) in [
        ("read_file", path(".env")),
        ("read_file", path("deep/er/.env")),
        ("read_file", path("secrets/key.pem")),
        ("read_file", path("./secrets/a/b")),
        ("write_file", path("../config/app.toml")),
        ("edit_file", path("/work/project/config/x")),
        ("read_file", path("/etc/shadow")),
        ("read_file", path("/home/me/.ssh/id_ed25519")),
        ("grep", path("secrets/a")),
        ("grep", path("secrets")),
        ("read_file", path("secrets/")),
    ] {
        assert_eq!(
            decided(&rules, tool, &input),
            Some(Decision::Deny),
            "{tool} {input}"
        );
    }
    // The working directory is /work/project/sub: `/config` is the project's, `secrets` the
    // working directory's.
    assert_eq!(decided(&rules, "read_file", &path("../secrets/x")), None);
    assert_eq!(decided(&rules, "read_file", &path("env.txt")), None);
    assert_eq!(
        decided(&rules, "write_file", &path("src/main.rs")),
        Some(Decision::Allow)
    );
    assert_eq!(decided(&rules, "write_file", &path("src2/main.rs")), None);
    // A `Read` rule says nothing of writes, an `Edit` rule nothing of reads.
    assert_eq!(decided(&rules, "read_file", &path("src/main.rs")), None);
    assert_eq!(decided(&rules, "write_file", &path(".env")), None);
}

#[test]
fn tool_names_alone_and_rules_that_can_never_match() {
    let rules = rules(&[
        (Decision::Deny, "Grep"),
        (Decision::Deny, "WebFetch"),
        (Decision::Allow, "Bash(*rm*)"),
        (Decision::Ask, "Read([)"),
    ]);
    assert_eq!(
        decided(&rules, "grep", &json!({"pattern": "x"})),
        Some(Decision::Deny)
    );
    let dead: Vec<&str> = rules.dead().map(|(rule, _)| rule.text.as_str()).collect();
    assert_eq!(dead, ["WebFetch", "Bash(*rm*)", "Read([)"]);
    assert_eq!(decided(&rules, "bash", &bash("rm x")), None);
}

/// Whatever way a denied program is written into a command (quoting, chaining, wrapping,
/// redirection, substitution), the command is denied.
#[test]
fn a_denied_program_is_denied_however_the_command_is_written() {
    use proptest::prelude::*;
    let rules = rules(&[(Decision::Deny, "Bash(curl:*)")]);
    let quoted = prop_oneof![
        Just("curl".to_string()),
        Just("'curl'".to_string()),
        Just("\"curl\"".to_string()),
        Just("cu'r'l".to_string()),
        Just("c\\url".to_string()),
        Just("/usr/bin/curl".to_string()),
    ];
    let wrapper = prop_oneof![
        Just(String::new()),
        Just("sudo ".to_string()),
        Just("env X=1 ".to_string()),
        Just("X=1 ".to_string()),
        Just("nice -n 5 ".to_string()),
        Just("command ".to_string()),
        Just("time ".to_string()),
    ];
    let before = prop_oneof![
        Just(String::new()),
        Just("ls && ".to_string()),
        Just("ls; ".to_string()),
        Just("ls | ".to_string()),
        Just("true || ".to_string()),
        Just("ls\n".to_string()),
    ];
    let after = prop_oneof![
        Just(String::new()),
        Just(" > out".to_string()),
        Just(" 2>&1 | tee x".to_string()),
        Just(" && ls".to_string()),
    ];
    let shape = prop_oneof![
        Just("{}".to_string()),
        Just("echo $({})".to_string()),
        Just("bash -c '{}'".to_string()),
        Just("( {} )".to_string()),
    ];
    let strategy = (before, wrapper, quoted, "[a-z:/.]{0,12}", after, shape);
    skillet_test_support::check_property(
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/proptest-regressions/rules.txt"
        ),
        "a denied program is denied however the command is written",
        256,
        strategy,
        |(before, wrapper, program, argument, after, shape)| {
            let inner = format!("{wrapper}{program} {argument}");
            let inner = if shape.contains('\'') {
                inner.replace('\'', "")
            } else {
                inner
            };
            let command = format!("{before}{}{after}", shape.replace("{}", &inner));
            prop_assert_eq!(
                decided(&rules, "bash", &bash(&command)),
                Some(Decision::Deny),
                "{:?}",
                command
            );
            Ok(())
        },
    );
}

#[test]
fn an_ask_on_reading_is_reported_as_doing_nothing() {
    let rules = rules(&[
        (Decision::Ask, "Read(.env)"),
        (Decision::Ask, "Grep"),
        (Decision::Ask, "Bash(git push:*)"),
        (Decision::Deny, "Read(.env)"),
    ]);
    let dead: Vec<&str> = rules.dead().map(|(rule, _)| rule.text.as_str()).collect();
    assert_eq!(dead, ["Read(.env)", "Grep"]);
    assert_eq!(
        decided(&rules, "read_file", &json!({"path": ".env"})),
        Some(Decision::Deny)
    );
}

#[test]
fn deny_sees_through_eval_find_exec_and_more_wrappers() {
    let rules = rules(&[(Decision::Deny, "Bash(rm:*)")]);
    for command in [
        "eval rm -f a2",
        "chrt -o 0 rm -f a3",
        "strace -o /dev/null rm -f a4",
        "ltrace -o x rm -f a",
        "find . -name a5 -exec rm {} +",
        "find . -execdir rm {} ';'",
        "bash -c 'eval rm -f a6'",
        "unbuffer rm x",
        "env -S 'rm -f a1'",
        "coproc rm x",
        "fakeroot rm x",
        "prlimit --nofile=256 rm x",
        "rbash -c 'rm x'",
        "setpriv rm x",
        "valgrind -q rm x",
        "sg root 'rm x'",
    ] {
        assert_eq!(
            decided(&rules, "bash", &bash(command)),
            Some(Decision::Deny),
            "{command}"
        );
    }
    assert_eq!(decided(&rules, "bash", &bash("find . -name rm")), None);
    assert_eq!(decided(&rules, "bash", &bash("eval echo rm")), None);
}
