//! Standing permission rules as a session gathers them ([`skillet_agent::rules`]): the
//! `[permissions]` tables of the config files read (a project's `allow` only once it is
//! trusted: the files' split does that), and Claude Code's `permissions` in `settings.json`, so
//! a Claude Code user's rules carry over: the user's `~/.claude/settings.json` whole, and the
//! project's `.claude/settings.json` and `.claude/settings.local.json` for their `deny` and
//! `ask` (they only narrow); a project's Claude Code `allow` rules are never applied, since
//! trust pins the project's `skillet.toml` and not them.

use std::path::{Path, PathBuf};

use skillet_agent::permission::Mode;
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

/// The permission mode a session starts in and the folders added to it: `--permission-mode`,
/// else `default_mode` in a config file, else `defaultMode` in the user's Claude Code
/// settings; the `--add-dir` folders, then each file's `additional_directories`, then the
/// user's Claude Code `additionalDirectories`. A project's Claude Code settings add neither
/// (they would widen, and trust does not pin them).
pub(super) fn mode_and_dirs(
    args: &crate::Flags,
    files: &Files,
    user: &ClaudeUser,
    warnings: &mut Vec<String>,
) -> (Mode, Vec<PathBuf>) {
    // A file that cannot be read: reading its rules says what is wrong with it.
    let claude_permissions = user
        .value
        .as_ref()
        .ok()
        .and_then(Option::as_ref)
        .and_then(|value| value.get("permissions"));
    let mode = args
        .permission_mode
        .or_else(|| {
            files
                .value(|f| f.permissions.as_ref()?.default_mode.clone())
                .and_then(|(mode, _)| Mode::parse(&mode))
        })
        .or_else(|| {
            let named = claude_permissions?.get("defaultMode")?.as_str()?;
            let mode = Mode::parse(named);
            if mode.is_none() {
                warnings.push(format!(
                    "note: ~/.claude/settings.json: defaultMode \"{named}\" is not a mode skillet has (default, acceptEdits, plan); sessions start in default"
                ));
            }
            mode
        })
        .unwrap_or_default();
    let mut dirs = args.add_dirs.clone();
    for (_, config) in &files.layers {
        dirs.extend(
            config
                .permissions
                .iter()
                .flat_map(|p| p.additional_directories.iter().flatten())
                .cloned(),
        );
    }
    if let Some(list) = claude_permissions
        .and_then(|permissions| permissions.get("additionalDirectories"))
        .and_then(serde_json::Value::as_array)
    {
        dirs.extend(
            list.iter()
                .filter_map(|dir| dir.as_str())
                .map(PathBuf::from),
        );
    }
    (mode, dirs)
}

/// The user's own Claude Code settings (`~/.claude/settings.json`), read once for the rules,
/// the mode and the added folders.
pub(super) struct ClaudeUser {
    path: Option<PathBuf>,
    /// Its JSON (`None`: no file), or why it cannot be read.
    value: Result<Option<serde_json::Value>, String>,
}

impl ClaudeUser {
    /// Reads the file in `home`.
    pub(super) fn read(home: Option<&Path>) -> Self {
        let path = home.map(|home| home.join(".claude/settings.json"));
        let value = path.as_deref().map_or(Ok(None), read_claude_value);
        Self { path, value }
    }
}

/// Claude Code's rules: the project's settings files at `project_root` (their `deny` and `ask`)
/// and the user's. A file that cannot be read is a warning, never an error: it is Claude Code's
/// file.
pub(super) fn from_claude(
    project_root: &Path,
    user: &ClaudeUser,
    warnings: &mut Vec<String>,
) -> Vec<Gathered> {
    // A project's Claude Code files never allow: trust pins the project's `skillet.toml`, not
    // them, so a pull could change what they allow unseen. Their deny and ask rules apply.
    let mut files: Vec<(PathBuf, bool, Found)> =
        [".claude/settings.local.json", ".claude/settings.json"]
            .into_iter()
            .map(|name| {
                let path = project_root.join(name);
                let found = read_claude_value(&path).and_then(|value| rules_in(value.as_ref()));
                (path, false, found)
            })
            .collect();
    if let Some(path) = &user.path {
        let found = user
            .value
            .clone()
            .and_then(|value| rules_in(value.as_ref()));
        files.push((path.clone(), true, found));
    }
    let mut rules = Vec::new();
    for (path, allow_counts, found) in files {
        match found {
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

/// A Claude Code settings file as JSON (`None`: no file), read with a cap.
fn read_claude_value(path: &Path) -> Result<Option<serde_json::Value>, String> {
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
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(|error| format!("not JSON: {error}"))
}

/// A settings file's rules (`None`: no file), or why they cannot be read.
type Found = Result<Option<Vec<(Decision, String)>>, String>;

/// The `permissions` rules of a Claude Code settings file's JSON (`None`: no file).
fn rules_in(value: Option<&serde_json::Value>) -> Found {
    let Some(value) = value else {
        return Ok(None);
    };
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
