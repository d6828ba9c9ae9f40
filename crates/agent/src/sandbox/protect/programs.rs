//! What other tools' settings in a workspace name for them to read or run, which protecting
//! the settings alone would leave writable: what the `.envrc` sources, the programs
//! `.yarnrc.yml`, `.yarnrc` and `bunfig.toml` start, and the files lefthook's config extends,
//! sources and takes scripts from. Read, never run: a name given through a variable is not
//! found (docs/sandbox.md's limits). Paths are given as named, not cleaned up: the layout
//! walks them as the kernel does.

use std::path::{Path, PathBuf};

/// The largest `.envrc` read for what it sources.
const MAX_ENVRC_BYTES: u64 = 64 * 1024;

/// What the `.envrc` in `cwd` has direnv read besides itself, which direnv's `allow` does not
/// cover (it pins `.envrc` alone): `source_env`/`source_env_if_exists` and plain `source`/`.`
/// files, `dotenv` files
/// (`.env` by default), `use flake`/`use nix`'s Nix files and `use devenv`'s. A `PATH_add` folder is not:
/// builds write there (see docs/sandbox.md's limits).
pub(in crate::sandbox) fn envrc_sources(cwd: &Path) -> Vec<PathBuf> {
    let Some(bytes) = top_file(cwd, ".envrc", MAX_ENVRC_BYTES) else {
        return Vec::new();
    };
    // Read as the shell reads it (quotes, `$(…)`, `if …; then …`, line continuations), each
    // simple command with `$PWD` and `$(pwd)` as the working directory.
    let pwd = cwd.display().to_string();
    let text = String::from_utf8_lossy(&bytes)
        .replace("\\\n", " ")
        .replace("$(pwd)", &pwd)
        .replace("${PWD}", &pwd)
        .replace("$PWD", &pwd);
    let mut found = Vec::new();
    let add = |found: &mut Vec<PathBuf>, name: &str| {
        if !name.is_empty() && !name.contains('$') {
            // Not cleaned up lexically: the layout walks it as the kernel does.
            found.push(cwd.join(name));
        }
    };
    for command in crate::shell::simple_commands(&text) {
        let words = command.argv();
        let Some((program, rest)) = words.split_first() else {
            continue;
        };
        // Any word that names a file of the project: a script it runs (`$(sh scripts/env.sh)`),
        // a file it sources or reads.
        for word in words {
            if cwd.join(word).is_file() {
                add(&mut found, word);
            }
        }
        match program.as_str() {
            "source_env" | "source_env_if_exists" | "source" | "." => {
                if let Some(file) = rest.first() {
                    add(&mut found, file);
                }
            }
            "dotenv" | "dotenv_if_exists" => {
                add(&mut found, rest.first().map_or(".env", String::as_str));
            }
            "use" if matches!(rest.first().map(String::as_str), Some("flake" | "nix")) => {
                let folder = rest
                    .get(1)
                    .filter(|word| !word.starts_with('-') && cwd.join(word).is_dir());
                // `use flake ./nix`: the folder whole (the flake and what it imports).
                if let Some(folder) = folder {
                    add(&mut found, folder);
                } else {
                    for name in ["flake.nix", "flake.lock", "shell.nix", "default.nix"] {
                        add(&mut found, name);
                    }
                    for file in rest.iter().skip(1).filter(|word| !word.starts_with('-')) {
                        add(&mut found, file);
                    }
                }
            }
            // devenv's files: its shell hook runs on `cd`.
            "use" if rest.first().map(String::as_str) == Some("devenv") => {
                for name in [
                    "devenv.nix",
                    "devenv.yaml",
                    "devenv.lock",
                    "devenv.local.nix",
                ] {
                    add(&mut found, name);
                }
            }
            _ => {}
        }
    }
    found.sort();
    found.dedup();
    found
}

/// The first `limit` bytes of `cwd`'s file `name`, opened as the engine opens what a
/// repository controls (a regular file only, no blocking open); none when it is not one.
fn top_file(cwd: &Path, name: &str, limit: u64) -> Option<Vec<u8>> {
    let mut file = skillet_skills::open_regular(&cwd.join(name)).ok()?;
    let mut bytes = Vec::new();
    skillet_skills::read_capped(&mut file, &mut bytes, limit).ok()?;
    Some(bytes)
}

/// The largest `.yarnrc.yml`, `.yarnrc`, `bunfig.toml` or lefthook config read for the files
/// it runs.
const MAX_YARNRC_BYTES: u64 = 64 * 1024;

/// What the package managers' settings in `cwd` have every run of them start (protecting the
/// settings alone would leave the program they name writable): `.yarnrc.yml`'s `yarnPath` and
/// its plugins' `path`s, Yarn 1's `.yarnrc` `yarn-path`, and `bunfig.toml`'s `preload` (at the
/// top and under `[test]`).
pub(in crate::sandbox) fn tool_programs(cwd: &Path) -> Vec<PathBuf> {
    tool_settings(cwd).0
}

/// [`tool_programs`], and the lefthook configs that could not be read whole (over
/// [`MAX_LEFTHOOK_BYTES`], or refused by the parser): what they name is unknown, so the caller
/// leaves nothing writable.
pub(in crate::sandbox) fn tool_settings(cwd: &Path) -> (Vec<PathBuf>, Vec<String>) {
    let mut values: Vec<String> = Vec::new();
    if let Some(bytes) = top_file(cwd, ".yarnrc.yml", MAX_YARNRC_BYTES) {
        values.extend(String::from_utf8_lossy(&bytes).lines().filter_map(|line| {
            // A comment after the value is not part of it.
            let line = line.split(" #").next().unwrap_or("").trim();
            let value = match line.strip_prefix("- ") {
                // A plugin given as a plain path, or as `- path: …`.
                Some(item) => item.strip_prefix("path:").unwrap_or(item),
                None => line
                    .strip_prefix("yarnPath:")
                    .or_else(|| line.strip_prefix("path:"))?,
            };
            Some(value.trim().trim_matches(['"', '\'']).to_string())
        }));
    }
    // Yarn 1: `yarn-path "./.yarn/releases/yarn-1.22.22.cjs"` (quoted or not, `=` allowed).
    if let Some(bytes) = top_file(cwd, ".yarnrc", MAX_YARNRC_BYTES) {
        values.extend(String::from_utf8_lossy(&bytes).lines().filter_map(|line| {
            let rest = line.trim().strip_prefix("yarn-path")?;
            let value = rest.trim_start_matches([' ', '\t', '=']).trim();
            Some(value.trim_matches(['"', '\'']).to_string())
        }));
    }
    if let Some(bytes) = top_file(cwd, "bunfig.toml", MAX_YARNRC_BYTES)
        && let Ok(table) = toml::from_str::<toml::Table>(&String::from_utf8_lossy(&bytes))
    {
        let test = table.get("test").and_then(toml::Value::as_table);
        for preload in [
            table.get("preload"),
            test.and_then(|test| test.get("preload")),
        ]
        .into_iter()
        .flatten()
        {
            match preload {
                toml::Value::String(one) => values.push(one.clone()),
                toml::Value::Array(many) => values.extend(
                    many.iter()
                        .filter_map(toml::Value::as_str)
                        .map(str::to_string),
                ),
                _ => {}
            }
        }
    }
    let mut found: Vec<PathBuf> = values
        .into_iter()
        // A package (`bun-plugin-x`, `yarn-plugin@1`) is not a file of the project's; a file
        // is named with a slash or a script's extension.
        .filter(|value| {
            !value.is_empty()
                && !value.contains('$')
                && !value.contains(':')
                && (value.contains('/')
                    || [".js", ".cjs", ".mjs", ".ts", ".mts", ".cts", ".tsx", ".jsx"]
                        .iter()
                        .any(|extension| value.ends_with(extension)))
        })
        // Not cleaned up lexically: the layout walks it as the kernel does.
        .map(|value| cwd.join(value))
        .collect();
    let (lefthook, unread) = lefthook_files(cwd);
    found.extend(lefthook);
    (found, unread)
}

/// What lefthook's configs in `cwd` (every name it reads, [`super::names`]) have it read or
/// run besides themselves: the files `extends` merges in (the folder before a pattern's first
/// wildcard, for `ci/*.yml`), the `rc` file it sources before each hook, and its script folders
/// `source_dir` and `source_dir_local` when set to others than the protected defaults.
fn lefthook_files(cwd: &Path) -> (Vec<PathBuf>, Vec<String>) {
    let mut values: Vec<String> = Vec::new();
    let mut unread: Vec<String> = Vec::new();
    let mut configs: Vec<String> = super::PROTECTED_TOP_NAMES
        .iter()
        .filter(|name| {
            name.contains("lefthook")
                && [".yml", ".yaml", ".toml", ".json", ".jsonc"]
                    .iter()
                    .any(|extension| name.ends_with(extension))
        })
        .map(|name| (*name).to_string())
        .collect();
    // What a config extends is read for what it extends in turn (lefthook follows `extends`
    // of extended files too), to a bound.
    let mut read = 0;
    let mut seen: std::collections::HashSet<PathBuf> = std::collections::HashSet::new();
    while let Some(name) = configs.pop() {
        // Each config once, however many name it (and however they spell its path).
        let key =
            skillet_skills::confine::normalize(&cwd.join(&name)).unwrap_or_else(|| cwd.join(&name));
        if !seen.insert(key) {
            continue;
        }
        if read >= MAX_LEFTHOOK_CONFIGS {
            // What the rest name is unknown.
            unread.push(format!(
                "{name} lies past the {MAX_LEFTHOOK_CONFIGS} lefthook configs read through `extends`"
            ));
            break;
        }
        let Some(bytes) = top_file(cwd, &name, MAX_LEFTHOOK_BYTES + 1) else {
            continue;
        };
        read += 1;
        let found = (bytes.len() as u64 <= MAX_LEFTHOOK_BYTES)
            .then(|| lefthook_config_values(&name, &String::from_utf8_lossy(&bytes)))
            .flatten();
        let Some(found) = found else {
            unread.push(format!(
                "{name} could not be read whole (over {MAX_LEFTHOOK_BYTES} bytes, a `!!binary` value, or not understood)"
            ));
            continue;
        };
        for (_, extends) in found.iter().filter(|(key, _)| *key == "extends") {
            for value in extends.iter().filter(|value| !value.contains('$')) {
                if value.contains(['*', '?', '[', '{']) {
                    configs.extend(pattern_matches(cwd, value));
                } else {
                    configs.push(value.clone());
                }
            }
        }
        values.extend(found.into_iter().flat_map(|(_, values)| values));
    }
    let mut found: Vec<PathBuf> = Vec::new();
    for value in values
        .into_iter()
        .filter(|value| !value.is_empty() && !value.contains('$') && !value.contains("://"))
    {
        let Some(at) = value.find(['*', '?', '[', '{']) else {
            found.push(cwd.join(value));
            continue;
        };
        // A pattern: the folder its matches lie in; at the top, the matches there now (the
        // working directory cannot be read-only alone: docs/sandbox.md's limits).
        match value[..at].rsplit_once('/') {
            Some((folder, _)) => found.push(cwd.join(folder)),
            None => found.extend(top_matches(cwd, &value)),
        }
    }
    found.sort();
    found.dedup();
    (found, unread)
}

/// The largest lefthook config read; a larger one leaves nothing writable.
pub const MAX_LEFTHOOK_BYTES: u64 = 1024 * 1024;
/// The most lefthook configs read for one workspace (its own and those they extend).
const MAX_LEFTHOOK_CONFIGS: usize = 64;
/// The most YAML documents of one lefthook config read.
const MAX_YAML_DOCUMENTS: usize = 16;

/// [`LEFTHOOK_FILE_KEYS`]' values in the lefthook config `name` holding `text`, by key: YAML
/// read as YAML (anchors, aliases, merge keys, flow mappings, quoted and explicit keys) and
/// line by line too, so a file YAML refuses still gives what its lines name; TOML; JSON with
/// JSONC's comments and trailing commas.
fn lefthook_config_values(name: &str, text: &str) -> Option<Vec<(&'static str, Vec<String>)>> {
    let parsed: serde_json::Value = match Path::new(name)
        .extension()
        .and_then(std::ffi::OsStr::to_str)
    {
        Some("toml") => serde_json::to_value(toml::from_str::<toml::Table>(text).ok()?).ok()?,
        Some("json" | "jsonc") => serde_json::from_str(&without_comments(text)).ok()?,
        // Every document of the file (a second one after `---` is no reason to read none),
        // tags dropped as lefthook's YAML reader drops one it does not know (`!foo rc: x`).
        _ => {
            use serde::Deserialize as _;
            // `!!binary` (or a tag ending so, through a `%TAG` handle) is decoded by lefthook's
            // reader and read as its text by this one: what it names is unknown.
            let binary = text.match_indices("binary").any(|(at, _)| {
                // The text before it in its word is a tag's start (`!!`, `!e!`,
                // `!<tag:yaml.org,2002:`), not a shell's `!` (`':!binary/'`, `!(*.binary)`).
                text[..at]
                    .rsplit(char::is_whitespace)
                    .next()
                    .map(|token| token.trim_start_matches(['[', '{', ',', '-', '?', ':']))
                    .is_some_and(|token| {
                        token.starts_with('!')
                            && token
                                .chars()
                                .all(|c| c.is_ascii_alphanumeric() || "!<:,./-_".contains(c))
                    })
            });
            if binary {
                return None;
            }
            let mut found = Vec::new();
            for document in yaml_serde::Deserializer::from_str(text).take(MAX_YAML_DOCUMENTS) {
                let mut value = untagged(yaml_serde::Value::deserialize(document).ok()?)?;
                value.apply_merge().ok()?;
                found.extend(lefthook_values(&serde_json::to_value(value).ok()?));
            }
            found.push(("extends", lefthook_yaml_values(text)));
            return Some(found);
        }
    };
    Some(lefthook_values(&parsed))
}

/// `value` without its tags, keys' too, all the way down.
fn untagged(value: yaml_serde::Value) -> Option<yaml_serde::Value> {
    use yaml_serde::Value;
    Some(match value {
        Value::Tagged(tagged)
            if tagged.tag == "binary" || tagged.tag == "tag:yaml.org,2002:binary" =>
        {
            return None;
        }
        Value::Tagged(tagged) => untagged(tagged.value)?,
        Value::Sequence(items) => Value::Sequence(
            items
                .into_iter()
                .map(untagged)
                .collect::<Option<Vec<_>>>()?,
        ),
        Value::Mapping(entries) => Value::Mapping(
            entries
                .into_iter()
                .map(|(key, value)| Some((untagged(key)?, untagged(value)?)))
                .collect::<Option<_>>()?,
        ),
        other => other,
    })
}

/// What a pattern of `extends` matches now, relative to `cwd` (`ci/*.yml`: the wildcards in
/// its last part), at most [`MAX_TOP_MATCHES`].
fn pattern_matches(cwd: &Path, pattern: &str) -> Vec<String> {
    let (folder, name) = pattern.rsplit_once('/').unwrap_or(("", pattern));
    if folder.contains(['*', '?', '[', '{']) {
        return Vec::new();
    }
    std::fs::read_dir(cwd.join(folder))
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .filter_map(|entry| entry.file_name().to_str().map(str::to_string))
        .filter(|entry| wildcard_match(name.as_bytes(), entry.as_bytes()))
        .take(MAX_TOP_MATCHES)
        .map(|entry| {
            if folder.is_empty() {
                entry
            } else {
                format!("{folder}/{entry}")
            }
        })
        .collect()
}

/// The entries at the top of `cwd` whose names match `pattern` (`*` and `?` only; other
/// wildcards match nothing), at most [`MAX_TOP_MATCHES`].
fn top_matches(cwd: &Path, pattern: &str) -> Vec<PathBuf> {
    pattern_matches(cwd, pattern)
        .into_iter()
        .map(|name| cwd.join(name))
        .collect()
}

/// The most entries a pattern of lefthook's `extends` protects at the top of a workspace.
const MAX_TOP_MATCHES: usize = 256;

/// Whether `name` matches `pattern`'s `*` (any run) and `?` (any one byte). Linear in both
/// (the last `*` is the only one ever backtracked to), so a repository's pattern such as
/// `*a*a*a*a*b` cannot make the layout work exponentially.
fn wildcard_match(pattern: &[u8], name: &[u8]) -> bool {
    let (mut p, mut n) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while n < name.len() {
        match pattern.get(p) {
            Some(b'*') => {
                star = Some((p, n));
                p += 1;
            }
            Some(&c) if c == b'?' || c == name[n] => {
                p += 1;
                n += 1;
            }
            _ => match star {
                Some((star_p, star_n)) => {
                    p = star_p + 1;
                    n = star_n + 1;
                    star = Some((star_p, star_n + 1));
                }
                None => return false,
            },
        }
    }
    pattern[p..].iter().all(|&c| c == b'*')
}

/// JSONC as JSON: `//` and `/* */` comments outside strings dropped, and a comma before a
/// closing bracket.
fn without_comments(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let (mut at, mut in_string) = (0, false);
    while at < bytes.len() {
        let byte = bytes[at];
        if in_string {
            out.push(byte);
            if byte == b'\\' && at + 1 < bytes.len() {
                out.push(bytes[at + 1]);
                at += 1;
            } else if byte == b'"' {
                in_string = false;
            }
        } else if bytes[at..].starts_with(b"//") {
            while at < bytes.len() && bytes[at] != b'\n' {
                at += 1;
            }
            continue;
        } else if bytes[at..].starts_with(b"/*") {
            at += 2;
            while at < bytes.len() && !bytes[at..].starts_with(b"*/") {
                at += 1;
            }
            at += 2;
            continue;
        } else if byte == b',' {
            if !matches!(next_token(&bytes[at + 1..]), Some(b'}' | b']')) {
                out.push(byte);
            }
        } else {
            in_string = byte == b'"';
            out.push(byte);
        }
        at += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The first byte of `bytes` that is neither space nor inside a comment.
fn next_token(bytes: &[u8]) -> Option<u8> {
    let mut at = 0;
    while at < bytes.len() {
        if bytes[at].is_ascii_whitespace() {
            at += 1;
        } else if bytes[at..].starts_with(b"//") {
            at += bytes[at..]
                .iter()
                .position(|b| *b == b'\n')
                .unwrap_or(bytes.len() - at);
        } else if bytes[at..].starts_with(b"/*") {
            at += 2 + bytes[at + 2..]
                .windows(2)
                .position(|pair| pair == b"*/")
                .map_or(bytes.len() - at - 2, |end| end + 2);
        } else {
            return Some(bytes[at]);
        }
    }
    None
}

/// The keys of lefthook's config that name files: what it merges in, sources, takes scripts
/// from, and the command it runs itself as (`lefthook: tools/lefthook.sh`).
const LEFTHOOK_FILE_KEYS: [&str; 5] = [
    "extends",
    "rc",
    "source_dir",
    "source_dir_local",
    "lefthook",
];

/// [`LEFTHOOK_FILE_KEYS`]' values in a config read as JSON (or TOML or YAML turned into it),
/// by key.
fn lefthook_values(config: &serde_json::Value) -> Vec<(&'static str, Vec<String>)> {
    LEFTHOOK_FILE_KEYS
        .iter()
        // lefthook matches its keys in any case (`RC:`, `Source_Dir:`); where several spell
        // one key (`RC` and `rc`), every one's value counts.
        .flat_map(|key| {
            config
                .as_object()
                .into_iter()
                .flatten()
                .filter(move |(name, _)| name.eq_ignore_ascii_case(key))
                .map(move |(_, value)| (*key, value))
        })
        .map(|(key, value)| {
            let values = match value {
                serde_json::Value::String(one) => vec![one.clone()],
                serde_json::Value::Array(many) => many
                    .iter()
                    .filter_map(serde_json::Value::as_str)
                    .map(str::to_string)
                    .collect(),
                _ => Vec::new(),
            };
            (key, values)
        })
        .collect()
}

/// [`LEFTHOOK_FILE_KEYS`]' values in a YAML config, read line by line: a top-level key
/// (quoted or not) with its value on the line (`rc: ./ci/rc`, `extends: [a.yml, b.yml]`, a
/// flow list over several lines) or as the block list below it; a tag (`!!seq`) and a
/// comment are not values.
fn lefthook_yaml_values(text: &str) -> Vec<String> {
    let unquote = |value: &str| value.trim().trim_matches(['"', '\'']).to_string();
    let mut values = Vec::new();
    let mut in_list = false;
    let mut flow: Option<String> = None;
    for line in text.lines() {
        // A comment after the value is not part of it.
        let line = strip_comment(line);
        if let Some(open) = flow.as_mut() {
            open.push_str(line);
            if line.contains(']') {
                let list = std::mem::take(open);
                flow = None;
                values.extend(flow_items(&list).map(unquote));
            }
            continue;
        }
        if line.starts_with([' ', '\t', '-']) {
            if in_list && let Some(item) = line.trim().strip_prefix('-') {
                values.push(unquote(item));
            }
            continue;
        }
        in_list = false;
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let key = key.trim().trim_matches(['"', '\'']).to_ascii_lowercase();
        if !LEFTHOOK_FILE_KEYS.contains(&key.as_str()) {
            continue;
        }
        let value = value.trim();
        // A tag (`!!str`, `!!seq`) says how to read what follows it.
        let value = match value.strip_prefix('!') {
            Some(tagged) => tagged
                .split_once([' ', '\t'])
                .map_or("", |(_, rest)| rest.trim()),
            None => value,
        };
        if value.is_empty() {
            in_list = true;
        } else if value.starts_with('[') {
            if value.contains(']') {
                values.extend(flow_items(value).map(unquote));
            } else {
                flow = Some(value.to_string());
            }
        } else {
            values.push(unquote(value));
        }
    }
    values
}

/// A YAML line without its comment (a `#` after a space or a tab, or at its start).
fn strip_comment(line: &str) -> &str {
    if line.trim_start().starts_with('#') {
        return "";
    }
    let cut = line
        .char_indices()
        .find(|&(at, c)| c == '#' && at > 0 && line[..at].ends_with([' ', '\t']))
        .map_or(line.len(), |(at, _)| at);
    &line[..cut]
}

/// The items of a YAML flow list (`[a, "b"]`).
fn flow_items(list: &str) -> impl Iterator<Item = &str> {
    list.trim()
        .trim_start_matches('[')
        .trim_end_matches(']')
        .split(',')
        .filter(|item| !item.trim().is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lefthooks_files_are_found_in_every_form() {
        let temp = tempfile::tempdir().unwrap();
        let cwd = temp.path();
        std::fs::write(
            cwd.join("lefthook.yml"),
            "\"extends\":\t# shared\n  - ci/a.yml\n  - 'ci/b.yml' # two\n'source_dir': b/\nrc: !!str ./ci/rc\nlefthook: tools/lefthook.sh\nother: [x]\nremotes:\n  - git_url: https://example.com/r\n",
        )
        .unwrap();
        std::fs::write(
            cwd.join("lefthook-local.jsonc"),
            "{\n  // mine\n  \"extends\": [\"ci/c.yml\", /* and */ \"lefthook-*.yml\",],\n}\n",
        )
        .unwrap();
        std::fs::write(
            cwd.join(".lefthook.yaml"),
            "extends: [\n  ci/d.yml,\n  \"e/*.yml\"\n]\n",
        )
        .unwrap();
        std::fs::write(cwd.join("lefthook-extra.yml"), "").unwrap();
        let mut found = tool_programs(cwd);
        found.sort();
        let mut expected: Vec<PathBuf> = [
            "b/",
            "ci/a.yml",
            "ci/b.yml",
            "ci/c.yml",
            "ci/d.yml",
            "e",
            "ci/rc",
            "lefthook-extra.yml",
            "tools/lefthook.sh",
        ]
        .iter()
        .map(|name| cwd.join(name))
        .collect();
        expected.sort();
        assert_eq!(found, expected);
    }

    #[test]
    fn a_second_document_and_extends_through_patterns_and_parents_are_followed() {
        let temp = tempfile::tempdir().unwrap();
        let cwd = temp.path();
        for folder in ["ci", "shared"] {
            std::fs::create_dir_all(cwd.join(folder)).unwrap();
        }
        std::fs::write(
            cwd.join("lefthook.yml"),
            "? extends\n: [ci/*.yml]\n\"\\x72c\": evil.sh\n---\nnote: second\n",
        )
        .unwrap();
        std::fs::write(cwd.join("ci/base.yml"), "extends: [shared/hooks.yml]\n").unwrap();
        std::fs::write(
            cwd.join("lefthook-local.yml"),
            "extends: [ci/../shared/b.yml]\n",
        )
        .unwrap();
        std::fs::write(cwd.join("shared/b.yml"), "extends: [shared/c.yml]\n").unwrap();
        let found = tool_programs(cwd);
        for name in [
            "ci",
            "evil.sh",
            "shared/hooks.yml",
            "ci/../shared/b.yml",
            "shared/c.yml",
        ] {
            assert!(found.contains(&cwd.join(name)), "{name}: {found:?}");
        }
    }

    #[test]
    fn tags_are_dropped_and_a_config_not_read_whole_is_said() {
        let temp = tempfile::tempdir().unwrap();
        let cwd = temp.path();
        // A tag on a key, a tag on a value under an escaped key.
        for (config, name) in [
            ("!foo rc: evil.sh\n", "evil.sh"),
            ("\"\\x72c\": !foo other.sh\n", "other.sh"),
        ] {
            std::fs::write(cwd.join("lefthook.yml"), config).unwrap();
            let (found, unread) = tool_settings(cwd);
            assert!(unread.is_empty(), "{config}");
            assert!(found.contains(&cwd.join(name)), "{config}: {found:?}");
        }
        // Past the size read, or nested past what the parser takes: unknown, and said.
        let long = format!(
            "{}\nrc: evil.sh\n",
            "#".repeat(usize::try_from(MAX_LEFTHOOK_BYTES).unwrap())
        );
        std::fs::write(cwd.join("lefthook.yml"), long).unwrap();
        assert!(tool_settings(cwd).1[0].starts_with("lefthook.yml"));
        let deep = format!("rc: evil.sh\nx: {}1{}\n", "[".repeat(200), "]".repeat(200));
        std::fs::write(cwd.join("lefthook.yml"), deep).unwrap();
        assert!(tool_settings(cwd).1[0].starts_with("lefthook.yml"));
    }

    #[test]
    fn binary_values_any_case_keys_commented_commas_and_long_chains() {
        eprintln!(
            "{:?}",
            yaml_serde::from_str::<yaml_serde::Value>("rc: !!binary Li9ldmlsLnNo\n")
        );
        let temp = tempfile::tempdir().unwrap();
        let cwd = temp.path();
        // `!!binary` is decoded by lefthook: unknown here, so said.
        for config in [
            "rc: !!binary Li9ldmlsLnNo\n",
            "? !!binary cmM=\n: ./evil.sh\n",
        ] {
            std::fs::write(cwd.join("lefthook.yml"), config).unwrap();
            assert!(
                tool_settings(cwd).1[0].starts_with("lefthook.yml"),
                "{config}"
            );
        }
        std::fs::write(
            cwd.join("lefthook.yml"),
            "RC: ./evil.sh\nSource_Dir: hooks/\n",
        )
        .unwrap();
        let (found, unread) = tool_settings(cwd);
        assert!(unread.is_empty());
        assert!(found.contains(&cwd.join("./evil.sh")) && found.contains(&cwd.join("hooks/")));
        std::fs::remove_file(cwd.join("lefthook.yml")).unwrap();
        // A trailing comma before a comment is still a trailing comma.
        std::fs::write(
            cwd.join("lefthook.jsonc"),
            "{\n  \"rc\": \"r.sh\", // mine\n  /* c */\n}\n",
        )
        .unwrap();
        let (found, unread) = tool_settings(cwd);
        assert!(unread.is_empty(), "{unread:?}");
        assert!(found.contains(&cwd.join("r.sh")));
        std::fs::remove_file(cwd.join("lefthook.jsonc")).unwrap();
        // A chain of extends longer than is read: the rest unknown, and said.
        std::fs::create_dir_all(cwd.join("ci")).unwrap();
        std::fs::write(cwd.join("lefthook.yml"), "extends: [ci/c1.yml]\n").unwrap();
        for index in 1..=(MAX_LEFTHOOK_CONFIGS + 5) {
            std::fs::write(
                cwd.join(format!("ci/c{index}.yml")),
                format!("extends: [ci/c{}.yml]\n", index + 1),
            )
            .unwrap();
        }
        assert!(!tool_settings(cwd).1.is_empty());
    }

    #[test]
    fn keys_spelt_twice_shell_bangs_and_short_chains() {
        let temp = tempfile::tempdir().unwrap();
        let cwd = temp.path();
        // Both spellings of one key: both protected, whichever lefthook takes.
        std::fs::write(
            cwd.join("lefthook.json"),
            r#"{"RC": "./a.sh", "rc": "./evil.sh"}"#,
        )
        .unwrap();
        let (found, unread) = tool_settings(cwd);
        assert!(unread.is_empty());
        for name in ["./a.sh", "./evil.sh"] {
            assert!(found.contains(&cwd.join(name)), "{name}: {found:?}");
        }
        std::fs::remove_file(cwd.join("lefthook.json")).unwrap();
        // A shell's `!` next to "binary" is no tag.
        for run in [
            "git diff --cached --check -- ':!binary/'",
            "bash -O extglob -c 'rm -f out/!(*.binary)'",
            "echo \"done!binary-check\"",
        ] {
            std::fs::write(
                cwd.join("lefthook.yml"),
                format!("pre-commit:\n  commands:\n    x:\n      run: {run}\n"),
            )
            .unwrap();
            assert!(tool_settings(cwd).1.is_empty(), "{run}");
        }
        // A chain of six configs is read whole, each once.
        std::fs::create_dir_all(cwd.join("ci")).unwrap();
        std::fs::write(cwd.join("lefthook.yml"), "extends: [ci/c1.yml]\n").unwrap();
        for index in 1..=5 {
            std::fs::write(
                cwd.join(format!("ci/c{index}.yml")),
                format!("extends: [ci/c{}.yml]\nrc: r{index}.sh\n", index + 1),
            )
            .unwrap();
        }
        let (found, unread) = tool_settings(cwd);
        assert!(unread.is_empty(), "{unread:?}");
        assert!(found.contains(&cwd.join("r5.sh")));
    }

    #[test]
    fn wildcards_match_as_globs_do_and_in_linear_time() {
        for (pattern, name, matches) in [
            ("lefthook-*.yml", "lefthook-extra.yml", true),
            ("lefthook-*.yml", "lefthook.yml", false),
            ("?.yml", "a.yml", true),
            ("*", "", true),
            ("a*b*c", "aXbYc", true),
            ("a*b*c", "aXbY", false),
        ] {
            assert_eq!(
                wildcard_match(pattern.as_bytes(), name.as_bytes()),
                matches,
                "{pattern} {name}"
            );
        }
        // Exponential for a backtracking matcher; immediate here.
        let pattern = format!("{}b", "*a".repeat(40));
        assert!(!wildcard_match(
            pattern.as_bytes(),
            "a".repeat(255).as_bytes()
        ));
    }
}
