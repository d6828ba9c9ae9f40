//! Integration tests of the skills engine: discovery, parsing, the three layers.
//! The seed cases of the teaching implementation are marked `seed:`.

#![allow(
    clippy::unwrap_used,
    clippy::panic,
    clippy::print_stderr,
    reason = "test helpers"
)]

use std::fs;
use std::path::{Path, PathBuf};

use pretty_assertions::assert_eq;
use skillet_skills::{
    CatalogFormat, Environment, FrontmatterStatus, Invoker, LoadError, MAX_LISTED_FILES, Root,
    RootKind, default_roots, discover, render_catalog, resolve_in_skill,
};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/library")
}

fn explicit(path: &Path) -> Vec<Root> {
    vec![Root::new(path, RootKind::Explicit)]
}

/// Writes `root/dir/SKILL.md` with `content` and returns the folder.
fn write_skill(root: &Path, dir: &str, content: &str) -> PathBuf {
    let folder = root.join(dir);
    fs::create_dir_all(&folder).unwrap();
    fs::write(folder.join("SKILL.md"), content).unwrap();
    folder
}

fn skill_text(name: &str, description: &str) -> String {
    format!("---\nname: {name}\ndescription: {description}\n---\n{name} body\n")
}

fn names(library: &skillet_skills::Library) -> Vec<&str> {
    library.skills().iter().map(|s| s.name.as_str()).collect()
}

// ---------------------------------------------------------------- seed cases

#[test]
fn seed_valid_frontmatter() {
    let temp = tempfile::tempdir().unwrap();
    write_skill(
        temp.path(),
        "pdf",
        "---\nname: pdf\ndescription: Process PDF files\n---\n# PDF\nBody\n",
    );
    let library = discover(&explicit(temp.path()));
    let skill = library.get("pdf").unwrap();
    assert_eq!(skill.description, "Process PDF files");
    assert_eq!(skill.status, FrontmatterStatus::Parsed);
    assert!(skill.diagnostics.is_empty());
    assert_eq!(skill.read_body().unwrap(), "# PDF\nBody");
}

#[test]
fn seed_no_frontmatter() {
    let library = discover(&explicit(&fixtures()));
    let skill = library.get("no-frontmatter").unwrap();
    assert_eq!(skill.status, FrontmatterStatus::Missing);
    assert_eq!(skill.description, "No Frontmatter Here");
    assert_eq!(
        skill.read_body().unwrap(),
        "# No Frontmatter   Here\n\nJust a body."
    );
    assert_eq!(skill.diagnostics.len(), 1);
    assert!(
        skill.diagnostics[0]
            .message
            .contains("must start with YAML frontmatter")
    );
}

#[test]
fn seed_invalid_yaml_gives_empty_metadata_and_keeps_the_body() {
    let library = discover(&explicit(&fixtures()));
    let skill = library.get("broken-yaml").unwrap();
    assert!(matches!(
        skill.status,
        FrontmatterStatus::InvalidYaml { .. }
    ));
    assert_eq!(skill.frontmatter.name, None);
    assert_eq!(skill.description, "Broken YAML");
    assert!(
        skill
            .read_body()
            .unwrap()
            .contains("The body is still the skill.")
    );
    let diagnostic = &skill.diagnostics[0];
    assert!(
        diagnostic
            .message
            .starts_with("Invalid YAML in frontmatter")
    );
    assert_eq!(diagnostic.line, Some(3));
}

#[test]
fn seed_missing_root_is_empty() {
    let library = discover(&explicit(Path::new("/definitely/not/here")));
    assert!(library.skills().is_empty());
    assert!(library.diagnostics().is_empty());
}

#[test]
fn seed_empty_root_is_empty() {
    let temp = tempfile::tempdir().unwrap();
    let library = discover(&explicit(temp.path()));
    assert!(library.skills().is_empty());
}

#[test]
fn seed_name_falls_back_to_the_folder() {
    let temp = tempfile::tempdir().unwrap();
    write_skill(temp.path(), "from-folder", "---\ndescription: d\n---\nbody");
    let library = discover(&explicit(temp.path()));
    let skill = library.get("from-folder").unwrap();
    assert_eq!(skill.frontmatter.name, None);
    assert!(
        skill.diagnostics[0]
            .message
            .contains("Missing required field in frontmatter: name")
    );
}

#[test]
fn seed_several_skills_in_byte_order() {
    let temp = tempfile::tempdir().unwrap();
    for name in ["charlie", "alpha", "bravo"] {
        write_skill(temp.path(), name, &skill_text(name, "d"));
    }
    let library = discover(&explicit(temp.path()));
    assert_eq!(names(&library), ["alpha", "bravo", "charlie"]);
}

#[test]
fn seed_empty_catalog_renders_nothing() {
    let temp = tempfile::tempdir().unwrap();
    let library = discover(&explicit(temp.path()));
    for format in [CatalogFormat::List, CatalogFormat::Xml] {
        let catalog = render_catalog(library.skills(), format, 8_000);
        assert_eq!(catalog.text, "");
        assert!(!catalog.text.contains("no skills available"));
    }
}

#[test]
fn seed_catalog_line_is_name_colon_description() {
    let temp = tempfile::tempdir().unwrap();
    write_skill(temp.path(), "pdf", &skill_text("pdf", "Process PDF files"));
    let catalog = render_catalog(
        discover(&explicit(temp.path())).skills(),
        CatalogFormat::List,
        8_000,
    );
    assert_eq!(catalog.text, "  - pdf: Process PDF files");
}

#[test]
fn seed_tags_suffix_and_none_without_tags() {
    let temp = tempfile::tempdir().unwrap();
    write_skill(
        temp.path(),
        "a",
        "---\nname: a\ndescription: First\ntags: x, y\n---\n",
    );
    write_skill(temp.path(), "b", "---\nname: b\ndescription: Second\n---\n");
    let catalog = render_catalog(
        discover(&explicit(temp.path())).skills(),
        CatalogFormat::List,
        8_000,
    );
    assert_eq!(catalog.text, "  - a: First [x, y]\n  - b: Second");
}

#[test]
fn seed_load_wraps_the_body_in_a_skill_tag() {
    let temp = tempfile::tempdir().unwrap();
    write_skill(
        temp.path(),
        "pdf",
        "---\nname: pdf\ndescription: d\n---\nStep one.\n",
    );
    let loaded = discover(&explicit(temp.path()))
        .load("pdf", Invoker::Model)
        .unwrap();
    assert!(
        loaded.starts_with("<skill name=\"pdf\">\nStep one.\n"),
        "{loaded}"
    );
    assert!(loaded.ends_with("</skill>"));
}

#[test]
fn seed_unknown_skill_lists_the_available_ones() {
    let temp = tempfile::tempdir().unwrap();
    write_skill(temp.path(), "pdf", &skill_text("pdf", "d"));
    write_skill(temp.path(), "docx", &skill_text("docx", "d"));
    let error = discover(&explicit(temp.path()))
        .load("pdg", Invoker::Model)
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "Unknown skill 'pdg'. Available: docx, pdf. Did you mean 'pdf'?"
    );
}

#[test]
fn seed_folded_description_becomes_one_line() {
    let library = discover(&explicit(&fixtures()));
    let skill = library.get("folded").unwrap();
    assert_eq!(skill.description, "line one line two");
    assert_eq!(
        skill.frontmatter.when_to_use.as_deref(),
        Some("When folding matters.")
    );
}

#[test]
fn seed_body_without_frontmatter_marker_in_description() {
    // `---not frontmatter` starts a body.
    let temp = tempfile::tempdir().unwrap();
    write_skill(temp.path(), "x", "---not frontmatter\nname: y\n");
    let skill = discover(&explicit(temp.path())).get("x").cloned().unwrap();
    assert_eq!(skill.status, FrontmatterStatus::Missing);
    assert_eq!(skill.description, "---not frontmatter");
}

// ---------------------------------------------------------------- parsing

#[test]
fn crlf_bom_and_unquoted_colon() {
    let temp = tempfile::tempdir().unwrap();
    write_skill(
        temp.path(),
        "crlf",
        "\u{feff}---\r\nname: crlf\r\ndescription: Use when: windows\r\n---\r\nBody\r\n",
    );
    let library = discover(&explicit(temp.path()));
    let skill = library.get("crlf").unwrap();
    assert_eq!(skill.description, "Use when: windows");
    assert_eq!(
        skill.status,
        FrontmatterStatus::RecoveredByQuoting { lines: vec![3] }
    );
    assert_eq!(skill.read_body().unwrap(), "Body");
}

#[test]
fn non_utf8_file_is_skipped_and_the_rest_load() {
    let temp = tempfile::tempdir().unwrap();
    write_skill(temp.path(), "good", &skill_text("good", "d"));
    let bad = temp.path().join("bad");
    fs::create_dir(&bad).unwrap();
    fs::write(
        bad.join("SKILL.md"),
        b"---\nname: bad\ndescription: \xff\xfe\n---\n",
    )
    .unwrap();
    let library = discover(&explicit(temp.path()));
    assert_eq!(names(&library), ["good"]);
    let diagnostic = &library.diagnostics()[0];
    assert_eq!(
        diagnostic.path,
        bad.canonicalize().unwrap().join("SKILL.md")
    );
    assert!(
        diagnostic.message.contains("not valid UTF-8"),
        "{diagnostic}"
    );
}

#[test]
fn frontmatter_longer_than_the_prefix_is_read_whole() {
    let temp = tempfile::tempdir().unwrap();
    let long = "word ".repeat(1_500);
    write_skill(
        temp.path(),
        "long",
        &format!(
            "---\nname: long\nmetadata:\n  note: {long}\ndescription: Found past the prefix\n---\nbody"
        ),
    );
    let library = discover(&explicit(temp.path()));
    let skill = library.get("long").unwrap();
    assert_eq!(skill.description, "Found past the prefix");
    assert!(skill.diagnostics.is_empty(), "{:?}", skill.diagnostics);
}

#[test]
fn multibyte_character_cut_by_the_prefix_is_not_an_encoding_error() {
    let temp = tempfile::tempdir().unwrap();
    // Pad so that a 3-byte character straddles the 4096-byte boundary.
    let header = "---\nname: cut\ndescription: d\n---\n";
    let pad = "a".repeat(4095 - header.len());
    write_skill(temp.path(), "cut", &format!("{header}{pad}€€€ tail"));
    let library = discover(&explicit(temp.path()));
    assert!(library.get("cut").is_some());
    assert!(library.diagnostics().is_empty());
}

#[test]
fn body_edits_show_without_rediscovery() {
    let temp = tempfile::tempdir().unwrap();
    let dir = write_skill(temp.path(), "live", &skill_text("live", "d"));
    let library = discover(&explicit(temp.path()));
    fs::write(
        dir.join("SKILL.md"),
        "---\nname: live\ndescription: d\n---\nEdited body\n",
    )
    .unwrap();
    assert!(
        library
            .load("live", Invoker::Model)
            .unwrap()
            .contains("Edited body")
    );
}

#[test]
fn every_field_is_kept() {
    let temp = tempfile::tempdir().unwrap();
    write_skill(
        temp.path(),
        "full",
        "---\nname: full\ndescription: d\nlicense: MIT\ncompatibility: Python 3\nmetadata:\n  author: A\n  version: 2\nallowed-tools: Read, Grep\ndisable-model-invocation: off\nuser-invocable: no\nwhen_to_use: w\nargument-hint: '[file]'\ntags:\n  - t1\nrequires: {mcp: [rube]}\n---\n",
    );
    let library = discover(&explicit(temp.path()));
    let fields = &library.get("full").unwrap().frontmatter;
    assert_eq!(fields.license.as_deref(), Some("MIT"));
    assert_eq!(fields.compatibility.as_deref(), Some("Python 3"));
    assert_eq!(
        fields.metadata,
        [
            ("author".into(), "A".into()),
            ("version".into(), "2".into())
        ]
    );
    assert_eq!(fields.allowed_tools, ["Read", "Grep"]);
    assert!(!fields.disable_model_invocation);
    assert!(!fields.user_invocable);
    assert_eq!(fields.when_to_use.as_deref(), Some("w"));
    assert_eq!(fields.argument_hint.as_deref(), Some("[file]"));
    assert_eq!(fields.tags, ["t1"]);
    assert_eq!(fields.unknown_fields, ["requires"]);
}

// ---------------------------------------------------------------- discovery

#[test]
fn fixtures_load_with_nested_and_hidden_skills_in_explicit_roots() {
    let library = discover(&explicit(&fixtures()));
    assert_eq!(
        names(&library),
        [
            "hidden-skill",
            "Title Case",
            "broken-yaml",
            "folded",
            "nested-parent",
            "child-skill",
            "lowercase-file",
            "manual-only",
            "no-frontmatter",
            "pdf",
            "tagged",
        ]
    );
}

#[test]
fn hidden_folders_are_skipped_in_project_and_user_roots() {
    let library = discover(&[Root::new(fixtures(), RootKind::Project)]);
    assert!(library.get("hidden-skill").is_none());
    assert!(library.get("pdf").is_some());
}

#[test]
fn git_and_node_modules_are_never_walked() {
    let temp = tempfile::tempdir().unwrap();
    write_skill(temp.path(), ".git/inside", &skill_text("inside", "d"));
    write_skill(temp.path(), "node_modules/pkg", &skill_text("pkg", "d"));
    write_skill(temp.path(), "ok", &skill_text("ok", "d"));
    assert_eq!(names(&discover(&explicit(temp.path()))), ["ok"]);
}

#[test]
fn uppercase_skill_file_is_preferred() {
    let temp = tempfile::tempdir().unwrap();
    let dir = write_skill(temp.path(), "both", &skill_text("both", "upper"));
    fs::write(dir.join("skill.md"), skill_text("both", "lower")).unwrap();
    let library = discover(&explicit(temp.path()));
    let skill = library.get("both").unwrap();
    assert_eq!(skill.description, "upper");
    assert!(skill.file.ends_with("SKILL.md"));
    let library = discover(&explicit(&fixtures()));
    assert!(
        library
            .get("lowercase-file")
            .unwrap()
            .file
            .ends_with("skill.md")
    );
}

#[test]
fn first_found_wins_and_shadowed_copies_are_reported() {
    let temp = tempfile::tempdir().unwrap();
    let project = temp.path().join("project");
    let user = temp.path().join("user");
    write_skill(&project, "deploy", &skill_text("deploy", "project copy"));
    write_skill(&user, "deploy", &skill_text("deploy", "user copy"));
    write_skill(
        &user,
        "other/deploy",
        &skill_text("deploy", "second user copy"),
    );
    let library = discover(&[
        Root::new(&project, RootKind::Project),
        Root::new(&user, RootKind::User),
    ]);
    let skill = library.get("deploy").unwrap();
    assert_eq!(skill.description, "project copy");
    assert_eq!(skill.root_kind, RootKind::Project);
    let user = user.canonicalize().unwrap();
    assert_eq!(
        skill.shadowed,
        [
            user.join("deploy/SKILL.md"),
            user.join("other/deploy/SKILL.md")
        ]
    );
    let shadow_warnings: Vec<_> = library
        .diagnostics()
        .iter()
        .filter(|d| d.message.contains("is shadowed by"))
        .collect();
    assert_eq!(shadow_warnings.len(), 2);
    assert!(
        shadow_warnings[0]
            .message
            .contains(&skill.file.display().to_string())
    );
}

#[test]
fn depth_bound_cuts_with_a_warning() {
    let temp = tempfile::tempdir().unwrap();
    write_skill(temp.path(), "1/2/3/4/5/six", &skill_text("six", "d"));
    write_skill(temp.path(), "1/2/3/4/5/6/seven", &skill_text("seven", "d"));
    let library = discover(&explicit(temp.path()));
    assert_eq!(names(&library), ["six"]);
    assert!(
        library.diagnostics()[0]
            .message
            .contains("deeper than 6 levels")
    );
}

#[test]
fn folder_bound_cuts_project_roots_with_a_warning() {
    let temp = tempfile::tempdir().unwrap();
    for index in 0..2_005 {
        fs::create_dir(temp.path().join(format!("d{index:05}"))).unwrap();
    }
    write_skill(temp.path(), "zz-last", &skill_text("zz-last", "d"));
    let project = discover(&[Root::new(temp.path(), RootKind::Project)]);
    assert!(project.get("zz-last").is_none());
    assert!(
        project.diagnostics()[0]
            .message
            .contains("stopped after reading 2000 folders")
    );
    // A root the user names is walked whole.
    let named = discover(&explicit(temp.path()));
    assert!(named.get("zz-last").is_some());
    assert!(named.diagnostics().is_empty());
}

#[cfg(unix)]
mod links {
    use super::{
        Path, Root, RootKind, discover, explicit, fs, names, resolve_in_skill, skill_text,
        write_skill,
    };
    use pretty_assertions::assert_eq;
    use std::os::unix::fs::symlink;

    #[test]
    fn link_outside_the_root_is_not_loaded_and_is_reported() {
        let temp = tempfile::tempdir().unwrap();
        let root = temp.path().join("root");
        fs::create_dir(&root).unwrap();
        let outside = write_skill(temp.path(), "outside/secret", &skill_text("secret", "d"));
        symlink(&outside, root.join("secret")).unwrap();
        let file_link = root.join("filelink");
        fs::create_dir(&file_link).unwrap();
        symlink(outside.join("SKILL.md"), file_link.join("SKILL.md")).unwrap();
        let library = discover(&explicit(&root));
        assert!(library.skills().is_empty());
        let messages: Vec<String> = library
            .diagnostics()
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(messages.len(), 2, "{messages:?}");
        assert!(
            messages
                .iter()
                .all(|m| m.contains("link points outside its skills root"))
        );
    }

    #[test]
    fn a_skill_file_swapped_for_a_link_out_of_its_root_after_discovery_is_not_read() {
        let temp = tempfile::tempdir().unwrap();
        let root = temp.path().join("root");
        let dir = write_skill(&root, "swap", &skill_text("swap", "d"));
        write_skill(
            &root,
            "other",
            "---\nname: other\ndescription: d\n---\nOther body\n",
        );
        fs::write(temp.path().join("secret.txt"), "---\nx: y\n---\nSECRET").unwrap();
        let library = discover(&explicit(&root));
        let skill = library.get("swap").unwrap().clone();
        // After discovery, the file becomes a link out of the root.
        fs::remove_file(dir.join("SKILL.md")).unwrap();
        symlink(temp.path().join("secret.txt"), dir.join("SKILL.md")).unwrap();
        let error = skill.read_body().unwrap_err();
        assert!(
            matches!(error, skillet_skills::Error::LeftRoot { .. }),
            "{error}"
        );
        let message = error.to_string();
        assert!(
            message.contains("outside the skills root") && !message.contains("SECRET"),
            "{message}"
        );
        let loaded = library.load("swap", skillet_skills::Invoker::Model);
        assert!(
            loaded
                .as_ref()
                .is_err_and(|e| !e.to_string().contains("SECRET")),
            "{loaded:?}"
        );
        // A link that stays inside the root is read, as discovery would have: relative or
        // absolute.
        for target in [root.join("other/SKILL.md"), "../other/SKILL.md".into()] {
            fs::remove_file(dir.join("SKILL.md")).unwrap();
            symlink(&target, dir.join("SKILL.md")).unwrap();
            assert_eq!(skill.read_body().unwrap(), "Other body", "{target:?}");
        }
        // A relative link out of the root is refused as the absolute one was.
        fs::remove_file(dir.join("SKILL.md")).unwrap();
        symlink("../../secret.txt", dir.join("SKILL.md")).unwrap();
        assert!(matches!(
            skill.read_body(),
            Err(skillet_skills::Error::LeftRoot { .. })
        ));
    }

    #[test]
    fn link_inside_the_root_loads_once_and_cycles_are_cut() {
        let temp = tempfile::tempdir().unwrap();
        let root = temp.path();
        let real = write_skill(root, "real/skill-a", &skill_text("skill-a", "d"));
        symlink(&real, root.join("alias")).unwrap();
        symlink(root, root.join("real/loop")).unwrap();
        let library = discover(&explicit(root));
        assert_eq!(names(&library), ["skill-a"]);
        assert!(library.get("skill-a").unwrap().shadowed.is_empty());
        assert!(
            library.diagnostics().is_empty(),
            "{:?}",
            library.diagnostics()
        );
    }

    #[test]
    fn the_same_root_reached_twice_loads_once() {
        let temp = tempfile::tempdir().unwrap();
        let skills = temp.path().join("skills");
        write_skill(&skills, "one", &skill_text("one", "d"));
        let claude = temp.path().join(".claude");
        fs::create_dir(&claude).unwrap();
        symlink(&skills, claude.join("skills")).unwrap();
        let library = discover(&[
            Root::new(claude.join("skills"), RootKind::Project),
            Root::new(&skills, RootKind::Project),
        ]);
        assert_eq!(names(&library), ["one"]);
        assert!(library.get("one").unwrap().shadowed.is_empty());
    }

    #[test]
    fn layer3_refuses_links_out_of_the_skill() {
        let temp = tempfile::tempdir().unwrap();
        let dir = write_skill(temp.path(), "s", &skill_text("s", "d"));
        fs::write(temp.path().join("secret.txt"), "secret").unwrap();
        symlink(temp.path().join("secret.txt"), dir.join("leak.txt")).unwrap();
        let error = resolve_in_skill(&dir, Path::new("leak.txt")).unwrap_err();
        assert!(error.to_string().contains("outside the skill folder"));
        // And the listing leaves the link out.
        let (files, _) = skillet_skills::list_skill_files(&dir);
        assert!(files.is_empty(), "{files:?}");
    }
}

#[test]
fn default_roots_find_project_and_user_skills_in_order() {
    let temp = tempfile::tempdir().unwrap();
    let repo = temp.path().join("repo");
    fs::create_dir_all(repo.join(".git")).unwrap();
    let home = temp.path().join("home");
    write_skill(
        &repo.join("sub/.claude/skills"),
        "near",
        &skill_text("near", "d"),
    );
    write_skill(
        &repo.join(".agents/skills"),
        "top",
        &skill_text("top", "project"),
    );
    write_skill(&repo.join("skills"), "plain", &skill_text("plain", "d"));
    write_skill(
        &home.join(".claude/skills"),
        "top",
        &skill_text("top", "user"),
    );
    write_skill(
        &home.join(".config/skillet/skills"),
        "own",
        &skill_text("own", "d"),
    );
    let env = Environment {
        cwd: repo.join("sub"),
        home: Some(home),
        xdg_config_home: None,
    };
    let library = discover(&default_roots(&env));
    assert_eq!(names(&library), ["near", "top", "plain", "own"]);
    assert_eq!(library.get("top").unwrap().description, "project");
    assert_eq!(library.get("top").unwrap().shadowed.len(), 1);
}

// ---------------------------------------------------------------- Layer 1

#[test]
fn catalog_leaves_out_user_only_skills() {
    let library = discover(&explicit(&fixtures()));
    let catalog = render_catalog(library.skills(), CatalogFormat::List, 8_000);
    assert!(!catalog.text.contains("manual-only"));
    assert_eq!(catalog.listed, library.skills().len() - 1);
}

#[test]
fn catalog_snapshots() {
    let library = discover(&explicit(&fixtures()));
    let list = render_catalog(library.skills(), CatalogFormat::List, 8_000);
    insta::assert_snapshot!("catalog_list", list.text);
    let xml = render_catalog(library.skills(), CatalogFormat::Xml, 8_000);
    let root = fixtures().canonicalize().unwrap().display().to_string();
    insta::assert_snapshot!("catalog_xml", xml.text.replace(&root, "[FIXTURES]"));
}

#[test]
fn xml_catalog_escapes_values() {
    let temp = tempfile::tempdir().unwrap();
    write_skill(
        temp.path(),
        "angle",
        "---\nname: angle\ndescription: Use <b> tags & \"stuff\"\n---\n",
    );
    let catalog = render_catalog(
        discover(&explicit(temp.path())).skills(),
        CatalogFormat::Xml,
        8_000,
    );
    assert!(
        catalog
            .text
            .contains("<description>Use &lt;b&gt; tags &amp; &quot;stuff&quot;</description>")
    );
    assert!(
        catalog
            .text
            .starts_with("<available_skills>\n<skill><name>angle</name>")
    );
    assert!(catalog.text.ends_with("</skill>\n</available_skills>"));
}

fn many_skills(
    count: usize,
    description_chars: usize,
) -> (tempfile::TempDir, skillet_skills::Library) {
    let temp = tempfile::tempdir().unwrap();
    for index in 0..count {
        let name = format!("skill-{index:03}");
        let description = format!("{name} {}", "x".repeat(description_chars));
        write_skill(temp.path(), &name, &skill_text(&name, &description));
    }
    let library = discover(&explicit(temp.path()));
    (temp, library)
}

#[test]
fn budget_shortens_descriptions_evenly_first() {
    let (_temp, library) = many_skills(10, 200);
    let full = render_catalog(library.skills(), CatalogFormat::List, usize::MAX);
    assert!(!full.report.is_cut());
    let budget = full.text.chars().count() / 2;
    let catalog = render_catalog(library.skills(), CatalogFormat::List, budget);
    assert!(catalog.text.chars().count() <= budget);
    assert_eq!(catalog.listed, 10);
    assert!(catalog.report.dropped.is_empty());
    assert_eq!(catalog.report.shortened.len(), 10);
    let limit = catalog.report.description_limit.unwrap();
    for line in catalog.text.lines() {
        let description = line.split_once(": ").unwrap().1;
        assert!(description.chars().count() <= limit);
        assert!(description.ends_with('…'));
    }
    let summary = catalog.report.summary().unwrap();
    assert!(summary.contains("10 descriptions shortened"), "{summary}");
}

#[test]
fn budget_drops_skills_from_the_end_when_shortening_is_not_enough() {
    let (_temp, library) = many_skills(50, 200);
    for format in [CatalogFormat::List, CatalogFormat::Xml] {
        let catalog = render_catalog(library.skills(), format, 1_500);
        assert!(catalog.text.chars().count() <= 1_500, "{format:?}");
        assert!(catalog.listed > 0 && catalog.listed < 50);
        assert_eq!(catalog.report.dropped.len(), 50 - catalog.listed);
        assert_eq!(
            catalog.report.dropped[0],
            format!("skill-{:03}", catalog.listed)
        );
        assert!(
            catalog
                .report
                .summary()
                .unwrap()
                .contains("skills left out")
        );
    }
    let nothing = render_catalog(library.skills(), CatalogFormat::List, 10);
    assert_eq!(nothing.text, "");
    assert_eq!(nothing.report.dropped.len(), 50);
}

// ---------------------------------------------------------------- Layer 2

#[test]
fn load_snapshot_lists_files_without_reading_them() {
    let library = discover(&explicit(&fixtures()));
    let loaded = library.load("pdf", Invoker::Model).unwrap();
    let root = fixtures().canonicalize().unwrap().display().to_string();
    insta::assert_snapshot!("load_pdf", loaded.replace(&root, "[FIXTURES]"));
    assert!(!loaded.contains("Fill fields with"));
}

#[test]
fn load_caps_the_file_list() {
    let temp = tempfile::tempdir().unwrap();
    let dir = write_skill(temp.path(), "big", &skill_text("big", "d"));
    fs::create_dir(dir.join("assets")).unwrap();
    for index in 0..60 {
        fs::write(dir.join(format!("assets/f{index:02}.txt")), "x").unwrap();
    }
    let loaded = discover(&explicit(temp.path()))
        .load("big", Invoker::Model)
        .unwrap();
    assert_eq!(loaded.matches("\n- assets/").count(), MAX_LISTED_FILES);
    assert!(loaded.contains("- … and 10 more\n</skill>"));
    assert!(!loaded.contains("- SKILL.md"));
}

#[test]
fn load_refuses_user_only_skills_to_the_model() {
    let library = discover(&explicit(&fixtures()));
    let error = library.load("manual-only", Invoker::Model).unwrap_err();
    assert!(matches!(error, LoadError::UserOnly { .. }));
    assert!(library.load("manual-only", Invoker::User).is_ok());
    let unknown = library
        .load("nope", Invoker::Model)
        .unwrap_err()
        .to_string();
    assert!(!unknown.contains("manual-only"), "{unknown}");
}

#[test]
fn load_refuses_huge_bodies() {
    let temp = tempfile::tempdir().unwrap();
    let body = "line of text\n".repeat(20_000);
    write_skill(
        temp.path(),
        "huge",
        &format!("---\nname: huge\ndescription: d\n---\n{body}"),
    );
    let error = discover(&explicit(temp.path()))
        .load("huge", Invoker::Model)
        .unwrap_err()
        .to_string();
    assert!(error.starts_with("cannot load skill 'huge'"), "{error}");
    assert!(error.contains("over the 200000-byte limit"), "{error}");
}

// ---------------------------------------------------------------- Layer 3

#[test]
fn layer3_resolves_inside_and_refuses_escapes() {
    let library = discover(&explicit(&fixtures()));
    let dir = &library.get("pdf").unwrap().dir;
    let resolved = resolve_in_skill(dir, Path::new("references/forms.md")).unwrap();
    assert!(resolved.ends_with("pdf/references/forms.md"));
    assert!(resolve_in_skill(dir, &dir.join("scripts/extract.py")).is_ok());
    for escape in [
        "../tagged/SKILL.md",
        "references/../../tagged/SKILL.md",
        "/etc/passwd",
    ] {
        let error = resolve_in_skill(dir, Path::new(escape)).unwrap_err();
        assert!(
            error.to_string().contains("outside the skill folder"),
            "{escape}: {error}"
        );
    }
    let missing = resolve_in_skill(dir, Path::new("references/none.md")).unwrap_err();
    assert!(
        missing.to_string().contains("references/none.md"),
        "{missing}"
    );
}

#[test]
fn a_fence_cut_by_the_prefix_is_not_taken_for_a_closing_line() {
    let temp = tempfile::tempdir().unwrap();
    // The prefix would end right after "---" of the line "---x: not a fence".
    let header = "---\nname: cut-fence\ndescription: d\nnote: ";
    let pad = "x".repeat(4096 - header.len() - 4);
    let text = format!("{header}{pad}\n---x: not a fence\n---\nbody\n");
    write_skill(temp.path(), "cut-fence", &text);
    let library = discover(&explicit(temp.path()));
    let skill = library.get("cut-fence").unwrap();
    assert_eq!(skill.status, FrontmatterStatus::Parsed);
    // The key after the cut was read: the frontmatter did not end at the cut.
    assert_eq!(skill.frontmatter.unknown_fields, ["note", "---x"]);
    assert_eq!(skill.read_body().unwrap(), "body");
}

#[test]
fn a_commands_folder_makes_each_markdown_file_a_skill_named_by_its_file() {
    let temp = tempfile::tempdir().unwrap();
    let root = temp.path().join("commands");
    fs::create_dir_all(root.join("frontend/deep")).unwrap();
    fs::write(root.join("review.md"), "Review the change.\n").unwrap();
    fs::write(
        root.join("frontend/component.md"),
        "---\nname: other\ndescription: Make a component\n---\nMake $ARGUMENTS.\n",
    )
    .unwrap();
    fs::write(root.join("frontend/deep/page.md"), "A page.\n").unwrap();
    fs::write(root.join("notes.txt"), "not a command").unwrap();
    fs::write(root.join(".hidden.md"), "hidden").unwrap();
    fs::write(root.join(".md"), "no name").unwrap();
    let library = discover(&[Root::commands(&root, RootKind::User)]);
    assert_eq!(names(&library), ["review", "component", "page"]);
    let review = library.get("review").unwrap();
    assert!(review.is_command());
    assert_eq!(review.description, "Review the change.");
    assert!(review.diagnostics.is_empty(), "{:?}", review.diagnostics);
    assert_eq!(review.home(), review.file.as_path());
    assert_eq!(review.first_positional(), 1);
    // The file names it, whatever the frontmatter says; the folders are its namespace.
    let component = library.get("component").unwrap();
    assert_eq!(component.origin(), "user command:frontend");
    assert_eq!(
        library.get("page").unwrap().origin(),
        "user command:frontend:deep"
    );
    assert_eq!(review.origin(), "user command");
    // No files of its own: its folder holds other commands.
    assert!(skillet_skills::skill_files(review).files.is_empty());
    assert!(matches!(
        resolve_in_skill(review, Path::new("notes.txt")),
        Err(skillet_skills::Error::CommandHasNoFiles { .. })
    ));
    // The same folder as an ordinary root holds no skills.
    assert!(discover(&explicit(&root)).skills().is_empty());
}
