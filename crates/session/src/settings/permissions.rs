//! Standing permission rules as a session gathers them ([`skillet_agent::rules`]): the
//! `[permissions]` tables of the config files read (a project's `allow` only once it is
//! trusted: the files' split does that), and Claude Code's `permissions` in `settings.json`, so
//! a Claude Code user's rules carry over: the user's `~/.claude/settings.json` whole, and the
//! project's `.claude/settings.json` and `.claude/settings.local.json` for their `deny` and
//! `ask` (they only narrow); a project's Claude Code `allow` rules are never applied, since
//! trust pins the project's `skillet.toml` and not them.

use std::path::{Path, PathBuf};

use skillet_agent::rules::Decision;

use super::layers::Files;

/// The largest Claude Code settings file read.
pub const MAX_CLAUDE_SETTINGS_BYTES: u64 = 1024 * 1024;

/// One rule as gathered: what it decides, as written, and where it came from.
pub type Gathered = (Decision, String, String);

/// The rules of every config file read, in the order the files are read.
pub(super) fn from_files(files: &Files) -> Vec<Gathered> {
    let mut rules = Vec::new();
    for (path, config) in &files.layers {
        let Some(permissions) = &config.permissions else {
            continue;
        };
        for (decision, list) in [
            (Decision::Deny, &permissions.deny),
            (Decision::Ask, &permissions.ask),
            (Decision::Allow, &permissions.allow),
        ] {
            for rule in list.iter().flatten() {
                rules.push((decision, rule.clone(), path.display().to_string()));
            }
        }
    }
    rules
}

/// Claude Code's rules: the project's settings files at `project_root` (`allow` only when
/// `trusted_project`) and the user's in `home`. A file that cannot be read is a warning, never
/// an error: it is Claude Code's file.
pub(super) fn from_claude(
    project_root: &Path,
    home: Option<&Path>,
    warnings: &mut Vec<String>,
) -> Vec<Gathered> {
    // A project's Claude Code files never allow: trust pins the project's `skillet.toml`, not
    // them, so a pull could change what they allow unseen. Their deny and ask rules apply.
    let mut files: Vec<(PathBuf, bool)> = vec![
        (project_root.join(".claude/settings.local.json"), false),
        (project_root.join(".claude/settings.json"), false),
    ];
    if let Some(home) = home {
        files.push((home.join(".claude/settings.json"), true));
    }
    let mut rules = Vec::new();
    for (path, allow_counts) in files {
        match read_claude(&path) {
            Ok(None) => {}
            Ok(Some(found)) => {
                for (decision, rule) in found {
                    if decision == Decision::Allow && !allow_counts {
                        warnings.push(format!(
                            "warning: {}: the allow rule `{rule}` is ignored: a project's Claude Code settings allow nothing in skillet (trust does not pin them)\n  hint: put it under [permissions] in the project's skillet.toml, which trust pins, or in your own",
                            path.display()
                        ));
                        continue;
                    }
                    rules.push((decision, rule, path.display().to_string()));
                }
            }
            Err(why) => warnings.push(format!(
                "warning: {}: its permission rules are not applied: {why}",
                path.display()
            )),
        }
    }
    rules
}

/// The `permissions` of a Claude Code settings file (`None`: no file).
fn read_claude(path: &Path) -> Result<Option<Vec<(Decision, String)>>, String> {
    if std::fs::symlink_metadata(path).is_err() {
        return Ok(None);
    }
    let mut file = skillet_skills::open_regular(path).map_err(|error| error.to_string())?;
    let mut bytes = Vec::new();
    let over = skillet_skills::read_capped(&mut file, &mut bytes, MAX_CLAUDE_SETTINGS_BYTES)
        .map_err(|error| error.to_string())?;
    if over {
        return Err(format!(
            "over {MAX_CLAUDE_SETTINGS_BYTES} bytes, the most read of it"
        ));
    }
    let value: serde_json::Value =
        serde_json::from_slice(&bytes).map_err(|error| format!("not JSON: {error}"))?;
    let Some(permissions) = value.get("permissions") else {
        return Ok(Some(Vec::new()));
    };
    let mut found = Vec::new();
    for (decision, key) in [
        (Decision::Deny, "deny"),
        (Decision::Ask, "ask"),
        (Decision::Allow, "allow"),
    ] {
        let Some(list) = permissions.get(key) else {
            continue;
        };
        let list = list
            .as_array()
            .ok_or_else(|| format!("permissions.{key} is not a list"))?;
        // A value that is not a rule is skipped, said; the others still apply (a deny list
        // never fails open for one bad entry).
        for rule in list {
            match rule.as_str() {
                Some(rule) => found.push((decision, rule.to_string())),
                None => found.push((decision, format!("(not a rule: {rule})"))),
            }
        }
    }
    Ok(Some(found))
}
