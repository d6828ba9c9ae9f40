//! `skillet skills test`: trigger tests, run as a skill author runs them. A small library ranked
//! by words (no model: deterministic) for the output and exit codes; the corpus pool with the
//! embedding model for five real skills and trigger files written for them
//! (`tests/fixtures/triggers`), one of whose `should_not` requests the skill's broad
//! description fires.

#![allow(clippy::unwrap_used, clippy::panic, reason = "tests")]

mod common;
#[path = "../../retrieval/eval/pool.rs"]
mod pool;

use std::path::{Path, PathBuf};

use common::{Sandbox, run, write_skill};
use serde_json::Value;

/// Twenty unrelated skills around `pdf` and `git`, so words weigh as in a real library.
fn sandbox() -> Sandbox {
    let sandbox = Sandbox::empty();
    let skills = sandbox.project.join(".agents/skills");
    write_skill(
        &skills,
        "pdf",
        "---\nname: pdf\ndescription: Fill PDF forms and extract text from PDF files\n---\nBody\n",
    );
    write_skill(
        &skills,
        "git",
        "---\nname: git\ndescription: Clean up git branches and rewrite commit history\n---\nBody\n",
    );
    for n in 0..20 {
        write_skill(
            &skills,
            &format!("other{n}"),
            &format!(
                "---\nname: other{n}\ndescription: Unrelated task number {n} about topic{n}\n---\nBody\n"
            ),
        );
    }
    sandbox
}

fn triggers(sandbox: &Sandbox, skill: &str, text: &str) -> PathBuf {
    let path = sandbox
        .project
        .join(".agents/skills")
        .join(skill)
        .join("evals/triggers.json");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, text).unwrap();
    path
}

fn redact(text: &str, sandbox: &Sandbox) -> String {
    text.replace(&sandbox.root.display().to_string(), "[TMP]")
}

#[test]
fn passing_failing_and_broken_trigger_files() {
    let sandbox = sandbox();
    // No trigger file anywhere: a usage error saying how to write one.
    let out = run(common::skillet(&sandbox, None).args(["skills", "test"]));
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("evals/triggers.json"), "{}", out.stderr);
    triggers(
        &sandbox,
        "pdf",
        r#"{"should": ["fill the pdf forms and extract pdf text"], "should_not": ["clean up git branches and commit history"]}"#,
    );
    let out = run(common::skillet(&sandbox, None).args(["skills", "test", "pdf"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    insta::assert_snapshot!("triggers_pass", redact(&out.stdout, &sandbox));
    // Without the model (offline here, so the lookup says nothing), the note says so once.
    assert_eq!(
        out.stderr.matches("ranked by words only").count(),
        1,
        "{}",
        out.stderr
    );
    // A request that misses and one that fires: exit 1, each said.
    triggers(
        &sandbox,
        "git",
        r#"{"should": ["rebase my feature onto main"], "should_not": ["clean up git branches and commit history please"]}"#,
    );
    let out = run(common::skillet(&sandbox, None).args(["skills", "test", "git"]));
    assert_eq!(out.code, 1, "{}", out.stderr);
    insta::assert_snapshot!("triggers_fail", redact(&out.stdout, &sandbox));
    assert!(
        out.stderr.contains("git: trigger tests failed"),
        "{}",
        out.stderr
    );
    // Every skill with a file, as JSON for CI.
    let out = run(common::skillet(&sandbox, None).args(["skills", "test", "--json"]));
    assert_eq!(out.code, 1, "{}", out.stderr);
    let document: Value = serde_json::from_str(&out.stdout).unwrap();
    let verdicts: Vec<(String, bool)> = document
        .as_array()
        .unwrap()
        .iter()
        .map(|skill| {
            (
                skill["skill"].as_str().unwrap().to_string(),
                skill["passed"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        verdicts,
        [("git".to_string(), false), ("pdf".to_string(), true)]
    );
    assert_eq!(document[0]["requests"][1]["suggested"], true);
    assert_eq!(document[0]["requests"][1]["rank"], 1);
    // A broken file: a usage error naming it; `validate` reports it too.
    let path = triggers(&sandbox, "pdf", r#"{"should": ["ok"], "shoud_not": []}"#);
    let out = run(common::skillet(&sandbox, None).args(["skills", "test", "pdf"]));
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("unknown field `shoud_not`"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains(&path.display().to_string()),
        "{}",
        out.stderr
    );
    let out =
        run(common::skillet(&sandbox, None).args(["skills", "validate", ".agents/skills/pdf"]));
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert!(
        out.stdout
            .contains("trigger file: unknown field `shoud_not`"),
        "{}",
        out.stdout
    );
    // An unknown skill, and --queries FILE with two names.
    let out = run(common::skillet(&sandbox, None).args(["skills", "test", "nope"]));
    assert_eq!(out.code, 2);
    let out = run(common::skillet(&sandbox, None).args([
        "skills",
        "test",
        "pdf",
        "git",
        "--queries",
        "x.json",
    ]));
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("name exactly one"), "{}", out.stderr);
}

#[test]
fn match_explains_each_score_and_places_a_skill() {
    let sandbox = sandbox();
    let out = run(common::skillet(&sandbox, None).args([
        "skills",
        "match",
        "fill the pdf forms and clean up branches",
        "--top-k",
        "2",
        "--skill",
        "other3",
    ]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    insta::assert_snapshot!("match_explain", out.stdout);
    let out = run(common::skillet(&sandbox, None).args([
        "skills",
        "match",
        "fill pdf forms",
        "--explain",
        "--json",
    ]));
    let document: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(document[0]["name"], "pdf");
    assert_eq!(document[0]["explain"]["mode"], "lexical");
    assert!(document[0]["explain"]["terms"].as_array().unwrap().len() >= 2);
    let out =
        run(common::skillet(&sandbox, None).args(["skills", "match", "x", "--skill", "nope"]));
    assert_eq!(out.code, 2, "{}", out.stderr);
}

/// A sandbox with two skills, `docx` (whose body, not its description, speaks of redlining a
/// contract) and `pptx`.
fn documents_and_decks() -> Sandbox {
    let sandbox = sandbox();
    let skills = sandbox.project.join(".agents/skills");
    write_skill(
        &skills,
        "docx",
        "---\nname: docx\ndescription: Create and edit Word documents, with their styles and tables.\n---\n# Reviewing\n\nRedline a contract: tracked changes, and remarks in the margin.\n",
    );
    write_skill(
        &skills,
        "pptx",
        "---\nname: pptx\ndescription: Create and edit PowerPoint decks, with their layouts and notes.\n---\n# Slides\n\nKeep one idea per slide.\n",
    );
    sandbox
}

/// `skills match "redline this contract" --explain --json` with the model and `extra`, as JSON.
fn redline_explained(sandbox: &Sandbox, model: &std::path::Path, extra: &[&str]) -> Value {
    let mut command = common::skillet(sandbox, None);
    command.env("SKILLET_EMBED_MODEL", model).args([
        "skills",
        "match",
        "redline this contract",
        "--explain",
        "--json",
    ]);
    command.args(extra);
    let out = run(&mut command);
    assert_eq!(out.code, 0, "{}", out.stderr);
    serde_json::from_str(&out.stdout).unwrap()
}

/// With the model, the blend weighs the body's words: a request in the words of a skill's body,
/// not its description, ranks that skill first, and `--explain` marks those words as the body's;
/// by words alone (`--mode lexical`) the body does not count.
#[test]
fn with_the_model_a_body_word_ranks_and_is_marked_as_the_body_s() {
    let Some(model) = skillet_test_support::embedding_model_or_skip("body words in the blend")
    else {
        return;
    };
    let sandbox = documents_and_decks();
    let matched = |extra: &[&str]| {
        let mut args = vec!["--top-k", "3"];
        args.extend_from_slice(extra);
        redline_explained(&sandbox, &model, &args)
    };
    let document = matched(&[]);
    assert_eq!(document[0]["name"], "docx", "{document:#}");
    assert_eq!(document[0]["explain"]["mode"], "hybrid");
    let terms = document[0]["explain"]["terms"].as_array().unwrap();
    let body: Vec<&str> = terms
        .iter()
        .filter(|term| term["in"] == "body")
        .map(|term| term["term"].as_str().unwrap())
        .collect();
    assert_eq!(body, ["redline", "contract"], "{document:#}");
    // Relevance in hybrid mode: the words as a share of the request's weight, with the cosine.
    let why = &document[0]["explain"];
    let number = |field: &str| why[field].as_f64().unwrap();
    let (cosine, weight) = (number("cosine"), number("query_weight"));
    let expected = 0.5 * cosine + 0.5 * (number("bm25") / weight).min(1.0) * cosine.max(0.0).sqrt();
    assert!(
        weight > 0.0 && (number("relevance") - expected).abs() < 1e-4,
        "{document:#}"
    );
    let threshold = why["thresholds"]["relevance"].as_f64().unwrap();
    assert_eq!(
        why["relevant"].as_bool(),
        Some(number("relevance") >= threshold),
        "{document:#}"
    );
    let document = matched(&["--mode", "lexical"]);
    assert_eq!(
        document.as_array().unwrap().len(),
        0,
        "words alone do not read bodies: {document:#}"
    );
    let mut command = common::skillet(&sandbox, None);
    command.env("SKILLET_EMBED_MODEL", &model).args([
        "skills",
        "match",
        "redline this contract",
        "--explain",
        "--top-k",
        "1",
    ]);
    let out = run(&mut command);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.contains("redline ") && out.stdout.contains("%, body)"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("only in the skill's body"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("× min(1, BM25 / the request's weight ")
            && out.stdout.contains("; threshold 0.26: "),
        "{}",
        out.stdout
    );
}

#[test]
fn with_model_the_configured_model_is_asked_three_times_per_request() {
    let sandbox = sandbox();
    triggers(
        &sandbox,
        "pdf",
        r#"{"should": ["fill the pdf forms and extract pdf text"], "should_not": ["clean up git branches and commit history"]}"#,
    );
    let server = skillet_test_support::MockServer::start();
    for turn in [
        skillet_test_support::Turn::tool("a", "load_skill", serde_json::json!({"name": "pdf"})),
        skillet_test_support::Turn::tool("b", "load_skill", serde_json::json!({"name": "pdf"})),
        skillet_test_support::Turn::text("I can do that without a skill."),
        skillet_test_support::Turn::tool("c", "load_skill", serde_json::json!({"name": "git"})),
        skillet_test_support::Turn::text("no"),
        skillet_test_support::Turn::text("no"),
    ] {
        server.push_turn(turn);
    }
    let out = run(common::skillet(&sandbox, Some((&server, "sk-test")))
        .args(["skills", "test", "pdf", "--model"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.contains("model: loaded it 2/3"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("model: loaded it 0/3 (instead: git)"),
        "{}",
        out.stdout
    );
    // Each request alone, with the session's catalog and tools, nothing run in between.
    let requests = server.requests();
    assert_eq!(requests.len(), 6);
    for request in &requests {
        assert_eq!(request.body["messages"].as_array().unwrap().len(), 1);
        assert!(request.body["system"].to_string().contains("pdf"));
    }
    assert_eq!(server.rejections(), Vec::<String>::new());
}

#[test]
fn skills_new_writes_a_trigger_template_that_validates_and_runs() {
    let sandbox = sandbox();
    let out = run(common::skillet(&sandbox, None).args(["skills", "new", "fresh"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let template = sandbox
        .project
        .join(".agents/skills/fresh/evals/triggers.json");
    assert!(template.is_file(), "{}", out.stdout);
    let out =
        run(common::skillet(&sandbox, None).args(["skills", "validate", ".agents/skills/fresh"]));
    assert_eq!(out.code, 0, "{}", out.stdout);
    let out = run(common::skillet(&sandbox, None).args(["skills", "test", "fresh"]));
    assert!(out.stdout.contains("fresh ("), "{}", out.stdout);
}

#[test]
fn five_corpus_skills_with_trigger_files_and_a_broad_description_caught_firing() {
    let Some(corpus) = skillet_test_support::corpus_dir() else {
        skillet_test_support::skip(
            "SKIPPED: trigger tests over the corpus: no corpus (set SKILLET_CORPUS to its folder)",
        );
        return;
    };
    let Some(model) =
        skillet_test_support::embedding_model_or_skip("trigger tests over the corpus")
    else {
        return;
    };
    let sandbox = Sandbox::empty();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/triggers");
    let mut command = common::skillet(&sandbox, None);
    command.env("SKILLET_EMBED_MODEL", &model);
    for collection in pool::POOL {
        command.arg("--skills-dir").arg(corpus.join(collection));
    }
    command
        .args(["skills", "test", "--json", "--queries"])
        .arg(&fixtures);
    let out = run(&mut command);
    assert_eq!(out.code, 1, "{}", out.stderr);
    let document: Value = serde_json::from_str(&out.stdout).unwrap();
    let skills: Vec<&str> = document
        .as_array()
        .unwrap()
        .iter()
        .map(|skill| skill["skill"].as_str().unwrap())
        .collect();
    assert_eq!(
        skills,
        [
            "brainstorming",
            "pdf",
            "systematic-debugging",
            "test-driven-development",
            "xlsx"
        ]
    );
    // "pdf" meaning a probability density function: the pdf skill's description ("anything
    // with PDF files") fires on it, and the test says so.
    let pdf = &document[1]["requests"];
    let fired = pdf
        .as_array()
        .unwrap()
        .iter()
        .find(|request| {
            request["request"]
                .as_str()
                .unwrap()
                .contains("probability density")
        })
        .unwrap();
    assert_eq!(fired["should"], false);
    assert_eq!(fired["suggested"], true);
    assert_eq!(fired["passed"], false);
    assert_eq!(fired["rank"], 1);
    // Every request was ranked against the whole pool.
    for skill in document.as_array().unwrap() {
        for request in skill["requests"].as_array().unwrap() {
            assert!(request["passed"].is_boolean(), "{request}");
        }
    }
}

#[test]
#[expect(
    clippy::too_many_lines,
    reason = "one library, advised on with and without the model"
)]
fn validate_advises_on_descriptions_a_model_cannot_tell_apart() {
    let sandbox = Sandbox::empty();
    let skills = sandbox.project.join(".agents/skills");
    // Two skills from one template, told apart by a product name; a third of its own.
    for (name, product) in [("mem-automation", "Mem"), ("mem0-automation", "Mem0")] {
        write_skill(
            &skills,
            name,
            &format!(
                "---\nname: {name}\ndescription: Automate {product} tasks via the Rube MCP server. Always search the tools first for their current schemas, then call them. Use when the user asks for {product}.\n---\nSteps.\n"
            ),
        );
    }
    write_skill(
        &skills,
        "pdf-forms",
        "---\nname: pdf-forms\ndescription: Fill in PDF forms, read their fields and flatten them into plain pages. Use when the user has a PDF form to complete or inspect.\n---\nSteps.\n",
    );
    write_skill(
        &skills,
        "terse",
        "---\nname: terse\ndescription: Spreadsheet helper\n---\nSteps.\n",
    );
    write_skill(
        &skills,
        "timed",
        "---\nname: timed\ndescription: Turns meeting notes into a list of decisions, owners and dates for the follow-up mail.\nwhen-to-use: After a meeting, with its notes at hand.\n---\nSteps.\n",
    );
    // Without the model: the text advice only, and the comparison said to be missing.
    let out = run(common::skillet(&sandbox, None).args(["skills", "validate", "--json"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let warnings = |stdout: &str, skill: &str| -> Vec<String> {
        let document: Value = serde_json::from_str(stdout).unwrap();
        document
            .as_array()
            .unwrap()
            .iter()
            .filter(|v| v["name"] == skill)
            .flat_map(|v| v["warnings"].as_array().unwrap().clone())
            .map(|w| w["message"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(
        warnings(&out.stdout, "terse"),
        [
            "Field 'description' has 2 words; under 20, a model has little to match a request against",
            "Field 'description' does not say when to use the skill",
        ]
    );
    assert_eq!(warnings(&out.stdout, "pdf-forms"), Vec::<String>::new());
    let timed = warnings(&out.stdout, "timed");
    assert!(
        timed.iter().all(|w| !w.contains("does not say when")),
        "a when-to-use field says when: {timed:?}"
    );
    assert!(
        out.stderr
            .contains("descriptions were not compared with the other skills'"),
        "{}",
        out.stderr
    );
    let Some(model) =
        skillet_test_support::embedding_model_or_skip("validate's near-duplicate advice")
    else {
        return;
    };
    let mut command = common::skillet(&sandbox, None);
    command
        .env("SKILLET_EMBED_MODEL", &model)
        .args(["skills", "validate", "--json"]);
    let out = run(&mut command);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let mem = warnings(&out.stdout, "mem-automation");
    assert_eq!(mem.len(), 1, "{mem:?}");
    assert!(
        mem[0].starts_with("Field 'description' means nearly what skill 'mem0-automation' in "),
        "{mem:?}"
    );
    assert!(
        warnings(&out.stdout, "mem0-automation")[0].contains("skill 'mem-automation'"),
        "{}",
        out.stdout
    );
    assert_eq!(warnings(&out.stdout, "pdf-forms"), Vec::<String>::new());
    // One skill named: compared with the library all the same.
    let mut command = common::skillet(&sandbox, None);
    command.env("SKILLET_EMBED_MODEL", &model).args([
        "skills",
        "validate",
        ".agents/skills/mem0-automation",
    ]);
    let out = run(&mut command);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout
            .contains("means nearly what skill 'mem-automation'"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("1 skill checked: 0 with errors; 0 errors, 1 warning"),
        "{}",
        out.stdout
    );
}

/// `skills test` with the model: each request's relevance (what the threshold applies to), the
/// same figure `--explain` gives, and no words-only note.
#[test]
fn with_the_model_skills_test_says_each_request_s_relevance() {
    let Some(model) = skillet_test_support::embedding_model_or_skip("relevance in skills test")
    else {
        return;
    };
    let sandbox = documents_and_decks();
    let explained = redline_explained(&sandbox, &model, &[]);
    let why = &explained[0]["explain"];
    let threshold = why["thresholds"]["relevance"].as_f64().unwrap();
    let number = |field: &str| why[field].as_f64().unwrap();
    triggers(
        &sandbox,
        "docx",
        r#"{"should": ["redline this contract"], "should_not": ["bake a sourdough loaf"]}"#,
    );
    let tested = |json: bool| {
        let mut command = common::skillet(&sandbox, None);
        command
            .env("SKILLET_EMBED_MODEL", &model)
            .args(["skills", "test", "docx"]);
        if json {
            command.arg("--json");
        }
        run(&mut command)
    };
    // The request's words are only in the body, the cosine small: ranked first, yet under the
    // threshold, a miss (exit 1) that says by how much.
    let out = tested(true);
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert!(!out.stderr.contains("words only"), "{}", out.stderr);
    let document: Value = serde_json::from_str(&out.stdout).unwrap();
    let requests = &document[0]["requests"];
    let relevance = requests[0]["relevance"].as_f64().unwrap();
    assert!(
        (relevance - number("relevance")).abs() < 1e-4,
        "{document:#}"
    );
    let off_topic = requests[1]["relevance"].as_f64().unwrap();
    assert!(off_topic < threshold, "{document:#}");
    let out = tested(false);
    assert!(
        out.stdout.contains(&format!(
            "not suggested (relevance {relevance:.3}, under 0.26)"
        )) && out.stdout.contains(&format!(
            "not suggested (relevance {off_topic:.3}, under 0.26)"
        )),
        "{}",
        out.stdout
    );
}
