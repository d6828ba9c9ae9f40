//! Tests of [`super`]: the layout of protected paths.

use super::*;

fn layout_of(cwd: &Path) -> Layout {
    layout(cwd, &[cwd.to_path_buf()], &[])
}

#[test]
fn missing_names_get_placeholders_and_existing_ones_are_read_only() {
    let temp = tempfile::tempdir().unwrap();
    let cwd = temp.path().canonicalize().unwrap();
    std::fs::create_dir_all(cwd.join(".git/hooks")).unwrap();
    std::fs::create_dir_all(cwd.join(".git/objects")).unwrap();
    std::fs::write(cwd.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::write(cwd.join(".git/config"), "[core]\n").unwrap();
    std::fs::write(cwd.join("AGENTS.md"), "x").unwrap();
    let layout = layout_of(&cwd);
    assert!(layout.read_only.contains(&cwd.join("AGENTS.md")));
    assert!(layout.read_only.contains(&cwd.join(".git/config")));
    assert!(layout.read_only.contains(&cwd.join(".git/hooks")));
    assert!(
        !layout.read_only.contains(&cwd.join(".git")),
        "commits write there"
    );
    assert!(layout.pinned.contains(&cwd.join(".git")));
    assert!(
        layout
            .missing
            .contains(&(cwd.join(".git/commondir"), Placeholder::File(b".\n")))
    );
    assert!(
        layout
            .missing
            .contains(&(cwd.join(".claude"), Placeholder::Folder))
    );
    assert!(
        layout
            .missing
            .contains(&(cwd.join("CLAUDE.md"), Placeholder::Folder))
    );
    assert!(
        layout
            .missing
            .contains(&(cwd.join("skills"), Placeholder::Folder))
    );
}

#[test]
fn without_a_repository_a_git_folder_cannot_be_made() {
    let temp = tempfile::tempdir().unwrap();
    let cwd = temp.path().canonicalize().unwrap();
    let layout = layout_of(&cwd);
    assert!(
        layout
            .missing
            .contains(&(cwd.join(".git"), Placeholder::Folder))
    );
}

#[test]
fn a_parent_after_a_link_is_taken_where_the_link_leads() {
    // `tools/current -> v2/bin`: `tools/current/../hook.sh` is `tools/v2/hook.sh` to the
    // kernel, not `tools/hook.sh` as a lexical clean-up would say.
    let temp = tempfile::tempdir().unwrap();
    let cwd = temp.path().canonicalize().unwrap();
    std::fs::create_dir_all(cwd.join("tools/v2/bin")).unwrap();
    std::fs::write(cwd.join("tools/v2/hook.sh"), "echo lint").unwrap();
    std::os::unix::fs::symlink("v2/bin", cwd.join("tools/current")).unwrap();
    std::fs::create_dir_all(cwd.join("docs/v2/inner")).unwrap();
    std::os::unix::fs::symlink("v2/inner", cwd.join("docs/current")).unwrap();
    // An instruction file through such a link, existing and missing.
    std::os::unix::fs::symlink("tools/current/../hook.sh", cwd.join("CLAUDE.md")).unwrap();
    std::os::unix::fs::symlink("docs/current/../AGENTS.local.md", cwd.join("AGENTS.md")).unwrap();
    let layout = layout_of(&cwd);
    assert!(layout.read_only.contains(&cwd.join("tools/v2/hook.sh")));
    assert!(!layout.read_only.contains(&cwd.join("tools/hook.sh")));
    assert!(
        layout
            .missing
            .iter()
            .any(|(path, _)| path == &cwd.join("docs/v2/AGENTS.local.md")),
        "{:?}",
        layout.missing
    );
    assert!(
        layout
            .links
            .iter()
            .any(|(link, _)| link == &cwd.join("tools/current"))
    );
    // A `..` above the writable folder leads out of it: nothing to mount there.
    std::os::unix::fs::symlink("../../../outside", cwd.join(".mcp.json")).unwrap();
    let layout = layout_of(&cwd);
    assert!(layout.read_only.iter().all(|path| path.starts_with(&cwd)));
    assert!(
        layout
            .missing
            .iter()
            .all(|(path, _)| path.starts_with(&cwd))
    );
}

#[test]
fn a_path_ending_in_a_parent_protects_the_folder_it_reaches() {
    // `.husky -> hooks/x/..` is `hooks`.
    let temp = tempfile::tempdir().unwrap();
    let cwd = temp.path().canonicalize().unwrap();
    std::fs::create_dir_all(cwd.join("hooks/x")).unwrap();
    std::os::unix::fs::symlink("hooks/x/..", cwd.join(".husky")).unwrap();
    // A real folder left with `..` on the way (`tools/bin/../hook.sh`) is pinned: one
    // swapped for a link would send the `..` elsewhere.
    std::fs::create_dir_all(cwd.join("tools/bin")).unwrap();
    std::fs::write(cwd.join("tools/hook.sh"), "x").unwrap();
    std::os::unix::fs::symlink("tools/bin/../hook.sh", cwd.join("CLAUDE.md")).unwrap();
    let layout = layout_of(&cwd);
    assert!(layout.read_only.contains(&cwd.join("hooks")), "{layout:?}");
    assert!(layout.read_only.contains(&cwd.join("tools/hook.sh")));
    assert!(layout.pinned.contains(&cwd.join("tools/bin")), "{layout:?}");
    assert!(layout.pinned.contains(&cwd.join("tools")));
    assert!(!layout.whole);
}

#[test]
fn a_protected_path_that_is_the_working_directory_fails_closed_unless_it_is_the_users() {
    let temp = tempfile::tempdir().unwrap();
    let cwd = temp.path().canonicalize().unwrap();
    // The user's own skill root as the working directory (a skill's author at work).
    let layout = layout(&cwd, std::slice::from_ref(&cwd), std::slice::from_ref(&cwd));
    assert!(!layout.whole);
    assert!(!layout.read_only.contains(&cwd));
    // A repository's `.claude -> .`: nothing writable, and said.
    std::os::unix::fs::symlink(".", cwd.join(".claude")).unwrap();
    let layout = layout_of(&cwd);
    assert!(layout.whole);
    assert!(layout.read_only.contains(&cwd), "{layout:?}");
    assert!(
        layout.incomplete.iter().any(
            |said| said.contains(".claude is protected, and it leads to")
                && said.contains("write nowhere")
        ),
        "{:?}",
        layout.incomplete
    );
}

#[test]
fn a_missing_folder_left_with_a_parent_and_proc_and_own_folders() {
    let temp = tempfile::tempdir().unwrap();
    let cwd = temp.path().canonicalize().unwrap();
    // `build` is missing: its placeholder makes `build/..` the working directory.
    std::fs::create_dir_all(cwd.join("notes")).unwrap();
    std::fs::write(cwd.join("notes/instr.md"), "x").unwrap();
    std::os::unix::fs::symlink("build/../notes/instr.md", cwd.join("CLAUDE.md")).unwrap();
    let layout = layout_of(&cwd);
    assert!(
        layout.read_only.contains(&cwd.join("notes/instr.md")),
        "{layout:?}"
    );
    assert!(
        layout
            .missing
            .iter()
            .any(|(path, _)| path == &cwd.join("build"))
    );
    assert!(!layout.whole);
    // `/proc/self/cwd/…` is somewhere else for every reader: nothing writable.
    std::os::unix::fs::symlink("/proc/self/cwd/evil", cwd.join(".mcp.json")).unwrap();
    assert!(layout_of(&cwd).whole);
    std::fs::remove_file(cwd.join(".mcp.json")).unwrap();
    // Reached by `..` rather than named: the same.
    let up = "../".repeat(cwd.components().count());
    std::os::unix::fs::symlink(format!("{up}proc/1/cwd/evil"), cwd.join(".mcp.json")).unwrap();
    assert!(layout_of(&cwd).whole);
    std::fs::remove_file(cwd.join(".mcp.json")).unwrap();
    // The user's configuration as the working directory: nothing writable, and said.
    let own = [cwd.clone()];
    let layout = layout_for(
        std::slice::from_ref(&cwd),
        std::slice::from_ref(&cwd),
        &Guarded {
            own: &own,
            ..Guarded::default()
        },
    );
    assert!(layout.whole, "{layout:?}");
}

#[test]
fn a_link_in_the_home_folders_hidden_folders_to_the_root_protects_nothing() {
    // Wine's `~/.wine/dosdevices/z: -> /` with the home folder as the working directory.
    let temp = tempfile::tempdir().unwrap();
    let home = temp.path().canonicalize().unwrap();
    std::fs::create_dir_all(home.join(".wine/dosdevices")).unwrap();
    std::fs::create_dir_all(home.join("work")).unwrap();
    std::os::unix::fs::symlink("/", home.join(".wine/dosdevices/z:")).unwrap();
    let layout = layout_for(
        std::slice::from_ref(&home),
        std::slice::from_ref(&home),
        &Guarded {
            home: Some(&home),
            ..Guarded::default()
        },
    );
    assert!(!layout.whole, "{:?}", layout.incomplete);
    assert!(layout.reopened.contains(&home.join("work")), "{layout:?}");
}

#[test]
fn home_as_a_config_folder_and_links_under_homes_visible_folders() {
    let temp = tempfile::tempdir().unwrap();
    let home = temp.path().canonicalize().unwrap();
    let project = home.join("w");
    std::fs::create_dir_all(&project).unwrap();
    // A configuration folder that is the home folder (`XDG_CONFIG_HOME=$HOME`) makes every
    // folder in it configuration: nothing writable. (`ZDOTDIR=$HOME`, the home folder's
    // dotfiles, is not given as one: the settings leave it to the home folder's rule.)
    let own = [home.clone()];
    let guarded = Guarded {
        own: &own,
        home: Some(&home),
        ..Guarded::default()
    };
    let layout = layout_for(
        std::slice::from_ref(&project),
        std::slice::from_ref(&project),
        &guarded,
    );
    assert!(layout.whole, "{:?}", layout.incomplete);
    // The home folder as the working directory, with a repository in a visible folder
    // whose protected folder links back up: the project's link, so nothing writable.
    std::fs::create_dir_all(project.join(".claude")).unwrap();
    std::os::unix::fs::symlink("../../..", project.join(".claude/skills")).unwrap();
    std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(&project)
        .output()
        .unwrap();
    let guarded = Guarded {
        home: Some(&home),
        ..Guarded::default()
    };
    let layout = layout_for(
        std::slice::from_ref(&home),
        std::slice::from_ref(&home),
        &guarded,
    );
    assert!(layout.whole, "{layout:?}");
}

#[test]
fn the_same_folder_passed_by_many_links_is_counted_once() {
    let temp = tempfile::tempdir().unwrap();
    let cwd = temp.path().canonicalize().unwrap();
    std::fs::create_dir_all(cwd.join(".claude/bin")).unwrap();
    std::fs::create_dir_all(cwd.join("pkg")).unwrap();
    for index in 0..(MAX_PASSED_FOLDERS + 20) {
        std::fs::write(cwd.join(format!("pkg/t{index}.js")), "x").unwrap();
        std::os::unix::fs::symlink(
            format!("../../pkg/../pkg/t{index}.js"),
            cwd.join(format!(".claude/bin/t{index}")),
        )
        .unwrap();
    }
    let layout = layout_of(&cwd);
    assert!(!layout.whole, "{:?}", layout.incomplete);
    assert!(layout.pinned.contains(&cwd.join("pkg")));
}

#[test]
fn links_protect_where_they_lead() {
    let temp = tempfile::tempdir().unwrap();
    let cwd = temp.path().canonicalize().unwrap();
    std::fs::create_dir_all(cwd.join("docs")).unwrap();
    std::fs::write(cwd.join("docs/agents.md"), "x").unwrap();
    std::os::unix::fs::symlink("docs/agents.md", cwd.join("CLAUDE.md")).unwrap();
    std::os::unix::fs::symlink("nowhere/file", cwd.join(".envrc")).unwrap();
    let layout = layout_of(&cwd);
    assert!(layout.read_only.contains(&cwd.join("docs/agents.md")));
    assert!(layout.pinned.contains(&cwd.join("docs")));
    assert!(
        layout
            .missing
            .contains(&(cwd.join("nowhere"), Placeholder::Folder))
    );
}
