//! Trust in a project: what a repository's own files may do beyond being read.
//!
//! A project's skills are text someone else wrote. They are always shown to the model as text,
//! but two things in them act: dynamic context (`` !`command` `` lines, run before the body is
//! sent) and `allowed-tools` (calls approved without asking). A project's `skillet.toml` may
//! also ask for what only the user may grant (`yes`, the provider, where requests go, the
//! sandbox). None of it takes effect until the user trusts the project.
//!
//! Trust is the user's, never the project's: it is kept in the user's config folder
//! ([`TRUST_FILE`]), keyed by the project's root (its git root), and pinned to what it unlocks:
//! a digest of each acting skill's folder inside the project (every file, hidden ones included,
//! by its raw name, and every link with its target) and of the config file. An edit to any of
//! them, or a new acting skill, and the project is asked about again ([`TrustState::Changed`]);
//! a skill edited after the session started acts no more ([`SkillTrust::trusts`] checks its
//! digest again each time). Whether a skill is the project's is decided by where its folder
//! really is (a `--skills-dir` or link into the project is the project's). The user's own skills
//! (their folders outside the project) are not pinned, but they too act only in a project the
//! user trusts: their commands and grants run the project's code (`npm test`, git's hooks).
//!
//! Nothing here runs anything: finding what a project would unlock only reads files.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use skillet_skills::{Library, RootKind, Skill};

use crate::facts::Facts;

/// The file, in the user's config folder, that records the projects trusted or declined.
pub const TRUST_FILE: &str = "trusted-projects.toml";
/// The largest trust file read.
pub const MAX_TRUST_FILE_BYTES: u64 = 4 * 1024 * 1024;
/// The most entries (files, folders, links) of one skill's folder pinned; a skill with more
/// cannot be trusted.
pub const MAX_PINNED_FILES: usize = 1024;
/// The most bytes of one skill's folder pinned; a skill with more cannot be trusted.
pub const MAX_PINNED_BYTES: u64 = 64 * 1024 * 1024;
/// The deepest folder of a skill pinned; a skill deeper cannot be trusted.
pub const MAX_PINNED_DEPTH: usize = 16;

/// Why the trust file cannot be read or written.
#[derive(Debug, thiserror::Error)]
pub enum TrustError {
    /// Reading or writing it failed.
    #[error("{path}: {error}")]
    Io {
        /// The trust file.
        path: PathBuf,
        /// What failed (said in the message, so not a separate cause).
        error: std::io::Error,
    },
    /// It is not what skillet writes.
    #[error("{path}: {message}\n  hint: fix or delete the file; `skillet trust` writes it again")]
    Parse {
        /// The trust file.
        path: PathBuf,
        /// TOML's message.
        message: String,
    },
}

/// A project skill that trusting the project would let act.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActingSkill {
    /// Its name.
    pub name: String,
    /// Its folder, absolute (a command's file: [`Skill::home`]).
    pub dir: PathBuf,
    /// The commands its body runs (dynamic context), as written.
    pub commands: Vec<String>,
    /// Its `allowed-tools`.
    pub allowed_tools: Vec<String>,
    /// The model it runs on as a subagent (`context: fork` with a `model`).
    pub model: Option<String>,
    /// The digest of its folder; `None` when it is too large to pin (it is then never trusted).
    pub digest: Option<String>,
    /// It is a custom command (`.claude/commands/NAME.md`), not a skill folder.
    pub command: bool,
}

/// A project's `skillet.toml` asking for what only trust grants.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigGrants {
    /// The file.
    pub path: PathBuf,
    /// What it sets, one `key = value` each.
    pub grants: Vec<String>,
    /// The digest of the file.
    pub digest: String,
}

impl ConfigGrants {
    /// A file read once: its path, its lines as shown, the digest of the bytes read; `None`
    /// when there is none, or nothing in it to grant.
    fn read(found: Option<(PathBuf, Vec<String>, String)>) -> Option<Self> {
        found
            .filter(|(_, lines, _)| !lines.is_empty())
            .map(|(path, grants, digest)| Self {
                path,
                grants,
                digest,
            })
    }
}

/// What trusting a project unlocks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unlocks {
    /// The project's root (its git root, else the working directory), canonical.
    pub root: PathBuf,
    /// Its skills (folders inside it) with dynamic context or `allowed-tools`, in the library's
    /// order: pinned.
    pub skills: Vec<ActingSkill>,
    /// The user's own skills (folders outside the project) that act: not pinned, but acting
    /// here only once the project is trusted.
    pub own: Vec<ActingSkill>,
    /// Its custom commands (`.claude/commands/NAME.md`) that do not act: usable only once
    /// the project is trusted ([`SkillTrust::admits`]), but not pinned, as a skill that does not
    /// act is not. Each `/NAME` and its file.
    pub commands: Vec<(String, PathBuf)>,
    /// Its `skillet.toml`, when that asks for a grant.
    pub config: Option<ConfigGrants>,
    /// Its `.mcp.json`, when that names MCP servers: commands the repository chose, started
    /// only once the project is trusted (each line a server as it would start).
    pub servers: Option<ConfigGrants>,
    /// Its Claude Code settings (`.claude/settings.json`, `.claude/settings.local.json`), when
    /// they hold hooks: commands run at every call, message and turn's end, run only once the
    /// project is trusted (each line a hook as it would run).
    pub hooks: Option<ConfigGrants>,
}

impl Unlocks {
    /// What trusting the project at `root` would unlock: the library's project skills that act
    /// (read from disk now), and `config`, a `skillet.toml` with the grants it asks for (the
    /// caller reads it: the settings are the caller's). Nothing is run.
    pub fn find(root: &Path, library: &Library, config: Option<(PathBuf, Vec<String>)>) -> Self {
        Self::find_with(root, library, &Facts::gather(library, None), config)
    }

    /// [`Unlocks::find`] with the commands of the skills' bodies from `facts` (gathered for
    /// `library`).
    pub fn find_with(
        root: &Path,
        library: &Library,
        facts: &Facts,
        config: Option<(PathBuf, Vec<String>)>,
    ) -> Self {
        let root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
        let mut skills = Vec::new();
        let mut own = Vec::new();
        let mut project_commands = Vec::new();
        for (index, skill) in library.skills().iter().enumerate() {
            let commands = facts.commands(index);
            // Whose a skill is takes its folder's real path: asked only of those that act.
            if !acts(skill, commands) {
                if is_project_command(skill) {
                    project_commands.push((skill.name.clone(), skill.file.clone()));
                }
                continue;
            }
            let projects = is_projects(&root, skill);
            if let Some(acting) = acting(skill, commands, projects) {
                if projects {
                    skills.push(acting);
                } else {
                    own.push(acting);
                }
            }
        }
        let config = config
            .filter(|(_, grants)| !grants.is_empty())
            .map(|(path, grants)| ConfigGrants {
                digest: file_digest(&path).unwrap_or_else(|_| "unreadable".into()),
                path,
                grants,
            });
        Self {
            root,
            skills,
            own,
            commands: project_commands,
            config,
            servers: None,
            hooks: None,
        }
    }

    /// With the project's MCP servers file: its path, each server as it would start, and the
    /// digest ([`digest_of`]) of the very bytes those lines were read from.
    #[must_use]
    pub fn with_servers(mut self, servers: Option<(PathBuf, Vec<String>, String)>) -> Self {
        self.servers = ConfigGrants::read(servers);
        self
    }

    /// With the project's hooks: the settings file shown, each hook as it would run, and the
    /// digest ([`digest_of`]) of the very bytes those lines were read from.
    #[must_use]
    pub fn with_hooks(mut self, hooks: Option<(PathBuf, Vec<String>, String)>) -> Self {
        self.hooks = ConfigGrants::read(hooks);
        self
    }

    /// Whether trust would unlock nothing.
    pub fn is_empty(&self) -> bool {
        self.skills.is_empty()
            && self.own.is_empty()
            && self.commands.is_empty()
            && self.config.is_none()
            && self.servers.is_none()
            && self.hooks.is_none()
    }

    /// What trust unlocks, for the user to read before deciding: each acting skill with every
    /// line of every command it runs and its tool grants, then the config's grants. Names,
    /// paths and command lines are the project's text: each is kept on its own line with
    /// control and hidden characters shown as escapes (the caller still makes the whole safe
    /// for the terminal).
    pub fn describe(&self) -> String {
        let mut text = String::new();
        let skill_lines = |text: &mut String, skill: &ActingSkill, whose: &str| {
            let slash = if skill.command { "/" } else { "" };
            let _ = writeln!(
                text,
                "- {whose} {slash}{} ({})",
                one_line(&skill.name),
                one_line(&skill.dir.display().to_string())
            );
            for command in &skill.commands {
                let _ = writeln!(text, "    runs:");
                for line in command.lines() {
                    let _ = writeln!(text, "      {}", one_line(line));
                }
            }
            if !skill.allowed_tools.is_empty() {
                let grants: Vec<String> = skill
                    .allowed_tools
                    .iter()
                    .map(|tool| one_line(tool))
                    .collect();
                let _ = writeln!(text, "    allows without asking: {}", grants.join(", "));
            }
            if let Some(model) = &skill.model {
                let _ = writeln!(
                    text,
                    "    runs as a subagent on the model: {}",
                    one_line(model)
                );
            }
        };
        for skill in &self.skills {
            let whose = if skill.command { "command" } else { "skill" };
            skill_lines(&mut text, skill, whose);
            if skill.digest.is_none() {
                let _ = writeln!(
                    text,
                    "    (its folder is over {MAX_PINNED_FILES} entries, {MAX_PINNED_BYTES} bytes or {MAX_PINNED_DEPTH} levels, or has a link out of it: it cannot be pinned, so it stays untrusted)"
                );
            }
        }
        for skill in &self.own {
            skill_lines(&mut text, skill, "your skill");
        }
        for (name, file) in &self.commands {
            let _ = writeln!(
                text,
                "- command /{} ({})",
                one_line(name),
                one_line(&file.display().to_string())
            );
        }
        if let Some(config) = &self.config {
            let _ = writeln!(
                text,
                "- {} sets:",
                one_line(&config.path.display().to_string())
            );
            for grant in &config.grants {
                let _ = writeln!(text, "    {}", one_line(grant));
            }
        }
        if let Some(servers) = &self.servers {
            let _ = writeln!(
                text,
                "- {} starts MCP servers:",
                one_line(&servers.path.display().to_string())
            );
            for server in &servers.grants {
                let _ = writeln!(text, "    {}", one_line(server));
            }
        }
        if let Some(hooks) = &self.hooks {
            let _ = writeln!(
                text,
                "- {} runs hooks (in the sandbox; the scripts in .claude/hooks are pinned with them, files elsewhere that a hook runs are not):",
                one_line(&hooks.path.display().to_string())
            );
            for hook in &hooks.grants {
                let _ = writeln!(text, "    {}", one_line(hook));
            }
        }
        text
    }

    /// The record that trusting (or declining) exactly this content leaves.
    fn record(&self, trusted: bool) -> Record {
        Record {
            root: self.root.clone(),
            trusted,
            at: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |elapsed| elapsed.as_secs()),
            config: self.config.as_ref().map(|config| config.digest.clone()),
            servers: self.servers.as_ref().map(|servers| servers.digest.clone()),
            hooks: self.hooks.as_ref().map(|hooks| hooks.digest.clone()),
            skills: self
                .skills
                .iter()
                .map(|skill| {
                    let digest = skill.digest.clone().unwrap_or_else(|| UNPINNABLE.into());
                    (self.key(&skill.dir), digest)
                })
                .collect(),
        }
    }

    /// The record of trusting (or declining) this content, kept with what `old` pinned that is
    /// not here now (a skill gone, or found only with `--skills-dir`): it comes back trusted
    /// only as it was.
    fn record_over(&self, trusted: bool, old: Option<&Record>) -> Record {
        let mut record = self.record(trusted);
        if let Some(old) = old.filter(|old| old.trusted == trusted) {
            for (key, digest) in &old.skills {
                record
                    .skills
                    .entry(key.clone())
                    .or_insert_with(|| digest.clone());
            }
        }
        record
    }

    /// A skill's folder as recorded: relative to the root where it is inside it.
    fn key(&self, dir: &Path) -> String {
        dir.strip_prefix(&self.root)
            .unwrap_or(dir)
            .display()
            .to_string()
    }

    /// What differs between this content and a record of it: one line each. A skill recorded
    /// but not here now is no change: it only narrows what acts.
    fn changes(&self, record: &Record) -> Vec<String> {
        let mut changes = Vec::new();
        for skill in &self.skills {
            let key = self.key(&skill.dir);
            let digest = skill.digest.as_deref().unwrap_or(UNPINNABLE);
            match record.skills.get(&key) {
                None => changes.push(format!("{}: new", one_line(&key))),
                Some(pinned) if pinned != digest => {
                    changes.push(format!("{}: changed", one_line(&key)));
                }
                Some(_) => {}
            }
        }
        match (&record.servers, &self.servers) {
            (None, Some(servers)) => {
                changes.push(format!("{}: new MCP servers", servers.path.display()));
            }
            (Some(pinned), Some(servers)) if *pinned != servers.digest => {
                changes.push(format!("{}: changed", servers.path.display()));
            }
            _ => {}
        }
        match (&record.hooks, &self.hooks) {
            (None, Some(hooks)) => {
                changes.push(format!("{}: new hooks", hooks.path.display()));
            }
            (Some(pinned), Some(hooks)) if *pinned != hooks.digest => {
                changes.push(format!("{}: changed", hooks.path.display()));
            }
            _ => {}
        }
        match (&record.config, &self.config) {
            (None, Some(config)) => changes.push(format!("{}: new grants", config.path.display())),
            (Some(_), None) => changes.push("skillet.toml: no longer asks for grants".into()),
            (Some(pinned), Some(config)) if *pinned != config.digest => {
                changes.push(format!("{}: changed", config.path.display()));
            }
            _ => {}
        }
        changes
    }
}

/// Where a project stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TrustState {
    /// Nothing in it needs trust (and the user never declined it).
    Nothing,
    /// Trusted, and nothing it unlocks has changed since.
    Trusted,
    /// Declined, and nothing it would unlock has changed since.
    Declined,
    /// Never decided.
    Unknown,
    /// Decided before, but what it unlocks changed since: trust is off until asked again.
    Changed {
        /// Whether it was trusted.
        was_trusted: bool,
        /// What changed, one line each.
        changes: Vec<String>,
    },
}

impl TrustState {
    /// Whether the project's skills and config may act.
    pub fn is_trusted(&self) -> bool {
        matches!(self, Self::Trusted)
    }

    /// Whether the user should be asked (nothing decided for what is there now).
    pub fn needs_asking(&self) -> bool {
        matches!(self, Self::Unknown | Self::Changed { .. })
    }
}

/// One project's decision, as recorded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Record {
    /// The project's root.
    pub root: PathBuf,
    /// Trusted (true) or declined.
    pub trusted: bool,
    /// When, in seconds since 1970.
    pub at: u64,
    /// The digest of its `skillet.toml`, when that asked for grants.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<String>,
    /// Each acting skill's folder (relative to the root) and its digest.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub skills: BTreeMap<String, String>,
    /// The digest of its `.mcp.json`, when that named servers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub servers: Option<String>,
    /// The digest of its Claude Code settings, when they held hooks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hooks: Option<String>,
}

/// The trust file's content.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct StoreFile {
    #[serde(default, rename = "project")]
    projects: Vec<Record>,
}

/// The projects the user trusted or declined, kept in [`TRUST_FILE`] in their config folder.
#[derive(Debug)]
pub struct TrustStore {
    path: PathBuf,
    projects: Vec<Record>,
}

impl TrustStore {
    /// Reads the store in `config_dir` (none there: empty). Only a regular file of at most
    /// [`MAX_TRUST_FILE_BYTES`] is read.
    pub fn open(config_dir: &Path) -> Result<Self, TrustError> {
        let path = config_dir.join(TRUST_FILE);
        let failed = |error| TrustError::Io {
            path: path.clone(),
            error,
        };
        let mut file = match skillet_skills::open_regular(&path) {
            Ok(file) => file,
            Err(skillet_skills::Error::Io { source, .. })
                if source.kind() == std::io::ErrorKind::NotFound =>
            {
                return Ok(Self {
                    path,
                    projects: Vec::new(),
                });
            }
            // The engine's error names the file again: only what the system said is kept.
            Err(skillet_skills::Error::Io { source, .. }) => return Err(failed(source)),
            Err(error) => return Err(failed(std::io::Error::other(error.to_string()))),
        };
        let mut bytes = Vec::new();
        if skillet_skills::read_capped(&mut file, &mut bytes, MAX_TRUST_FILE_BYTES)
            .map_err(failed)?
        {
            return Err(failed(std::io::Error::other(format!(
                "over the {MAX_TRUST_FILE_BYTES}-byte limit for the trust file"
            ))));
        }
        let text = String::from_utf8(bytes)
            .map_err(|_| failed(std::io::Error::other("not UTF-8 text")))?;
        let store: StoreFile = toml::from_str(&text).map_err(|error| TrustError::Parse {
            path: path.clone(),
            message: error.message().to_string(),
        })?;
        Ok(Self {
            path,
            projects: store.projects,
        })
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Every project recorded.
    pub fn records(&self) -> &[Record] {
        &self.projects
    }

    /// The record for a project root.
    pub fn record(&self, root: &Path) -> Option<&Record> {
        self.projects.iter().find(|record| record.root == root)
    }

    /// Where the project `unlocks` describes stands.
    pub fn state(&self, unlocks: &Unlocks) -> TrustState {
        match self.record(&unlocks.root) {
            None if unlocks.is_empty() => TrustState::Nothing,
            None => TrustState::Unknown,
            Some(record) => {
                let changes = unlocks.changes(record);
                match (changes.is_empty(), record.trusted) {
                    (true, true) => TrustState::Trusted,
                    (true, false) if unlocks.is_empty() => TrustState::Nothing,
                    (true, false) => TrustState::Declined,
                    (false, was_trusted) => TrustState::Changed {
                        was_trusted,
                        changes,
                    },
                }
            }
        }
    }

    /// Records the decision for exactly this content and writes the file.
    pub fn decide(&mut self, unlocks: &Unlocks, trusted: bool) -> Result<(), TrustError> {
        let record = unlocks.record_over(trusted, self.record(&unlocks.root));
        self.projects.retain(|record| record.root != unlocks.root);
        self.projects.push(record);
        self.save()
    }

    /// Forgets a project (it is asked about again); whether it was recorded.
    pub fn forget(&mut self, root: &Path) -> Result<bool, TrustError> {
        let before = self.projects.len();
        self.projects.retain(|record| record.root != root);
        if self.projects.len() == before {
            return Ok(false);
        }
        self.save().map(|()| true)
    }

    /// Writes the file whole, through a temporary file renamed over it (a crash leaves the old
    /// one or the new one, never half of either).
    fn save(&self) -> Result<(), TrustError> {
        let failed = |error| TrustError::Io {
            path: self.path.clone(),
            error,
        };
        let dir = self.path.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir).map_err(failed)?;
        let mut text = String::from(
            "# The projects you trusted or declined, written by skillet (`skillet trust`).\n\
             # Each is pinned to digests of what trust unlocks there: an edit asks again.\n\n",
        );
        text.push_str(
            &toml::to_string_pretty(&StoreFile {
                projects: self.projects.clone(),
            })
            .map_err(|error| failed(std::io::Error::other(error.to_string())))?,
        );
        let mut temp = tempfile::NamedTempFile::new_in(dir).map_err(failed)?;
        std::io::Write::write_all(&mut temp, text.as_bytes()).map_err(failed)?;
        temp.as_file().sync_all().map_err(failed)?;
        temp.persist(&self.path)
            .map_err(|error| failed(error.error))?;
        Ok(())
    }
}

/// Which skills may act in this session: none unless the project is trusted; then the user's
/// own skills (folders outside the project), and the project's while each folder is as pinned.
#[derive(Debug, Clone, Default)]
pub struct SkillTrust {
    /// The project's root and the pinned digest of each acting skill folder inside it (both
    /// canonical); `None`: the project is not trusted.
    pinned: Option<(PathBuf, HashMap<PathBuf, String>)>,
    /// The project's MCP servers file and the digest it was trusted with.
    servers: Option<(PathBuf, String)>,
    /// The project's hooks (its settings) and the digest they were trusted with.
    hooks: Option<(PathBuf, String)>,
}

impl SkillTrust {
    /// Trust for a trusted project: its acting skills as they are now.
    pub fn trusted(unlocks: &Unlocks) -> Self {
        Self {
            pinned: Some((
                unlocks.root.clone(),
                unlocks
                    .skills
                    .iter()
                    .filter_map(|skill| Some((skill.dir.clone(), skill.digest.clone()?)))
                    .collect(),
            )),
            servers: unlocks
                .servers
                .as_ref()
                .map(|servers| (servers.path.clone(), servers.digest.clone())),
            hooks: unlocks
                .hooks
                .as_ref()
                .map(|hooks| (hooks.path.clone(), hooks.digest.clone())),
        }
    }

    /// The project's hooks as trusted (the settings file shown), with their digest: they run
    /// only when the bytes read to run them have this digest ([`digest_of`]).
    pub fn trusted_hooks(&self) -> Option<(&Path, &str)> {
        self.hooks
            .as_ref()
            .map(|(path, digest)| (path.as_path(), digest.as_str()))
    }

    /// The project's MCP servers file as trusted, with its digest: its servers start only
    /// when the bytes read to start them have this digest ([`digest_of`]).
    pub fn trusted_servers(&self) -> Option<(&Path, &str)> {
        self.servers
            .as_ref()
            .map(|(path, digest)| (path.as_path(), digest.as_str()))
    }

    /// No trust: no skill's commands run and no grant applies.
    pub fn untrusted() -> Self {
        Self {
            pinned: None,
            servers: None,
            hooks: None,
        }
    }

    /// Whether the project is trusted.
    pub fn project_trusted(&self) -> bool {
        self.pinned.is_some()
    }

    /// Whether the session may offer this skill at all: every skill, but a project's custom
    /// command only once the project is trusted (a command is what the user runs by typing
    /// `/NAME`, so the repository's own must not stand behind a name until the user trusts it).
    pub fn admits(&self, skill: &Skill) -> bool {
        self.project_trusted() || !is_project_command(skill)
    }

    /// `library` with only what [`SkillTrust::admits`].
    pub fn admitted(&self, library: std::sync::Arc<Library>) -> std::sync::Arc<Library> {
        if library.skills().iter().all(|skill| self.admits(skill)) {
            return library;
        }
        std::sync::Arc::new(library.retain(|skill| self.admits(skill)))
    }

    /// Whether this skill's commands may run and its tool grants apply now: the project is
    /// trusted, and a skill whose folder is in the project was pinned and is unchanged since
    /// (read again now).
    pub fn trusts(&self, skill: &Skill) -> bool {
        self.check(skill).trusted
    }

    /// [`SkillTrust::trusts`], and for a pinned skill its `SKILL.md` as read for the digest:
    /// the body that was checked is the body used, with no second read to swap a file into.
    pub fn check(&self, skill: &Skill) -> Checked {
        let untrusted = Checked {
            trusted: false,
            skill_md: None,
        };
        let Some((root, pinned)) = &self.pinned else {
            return untrusted;
        };
        if !is_projects(root, skill) {
            return Checked {
                trusted: true,
                skill_md: None,
            };
        }
        let Some(digest) = pinned.get(&canonical(skill.home())) else {
            return untrusted;
        };
        match digest_reading(skill) {
            Some((now, skill_md)) if &now == digest => Checked {
                trusted: true,
                skill_md,
            },
            _ => untrusted,
        }
    }
}

/// What [`SkillTrust::check`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checked {
    /// The skill may act.
    pub trusted: bool,
    /// Its `SKILL.md` as read for the digest that was checked (a pinned skill's).
    pub skill_md: Option<Vec<u8>>,
}

/// A path with its links resolved, where it can be.
fn canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// Whether `dir` (canonical) is inside the project `root` (canonical).
fn inside(root: &Path, dir: &Path) -> bool {
    dir.starts_with(root)
}

/// Whether a skill is the project's: found in a project root (wherever a link there leads), or
/// with its folder really inside the project (a `--skills-dir` or a link into it). The others
/// are the user's own.
fn is_projects(root: &Path, skill: &Skill) -> bool {
    skill.root_kind == RootKind::Project || inside(root, &canonical(skill.home()))
}

/// Whether a skill is one of the project's custom commands (its `.claude/commands`).
fn is_project_command(skill: &Skill) -> bool {
    skill.is_command() && skill.root_kind == RootKind::Project
}

/// What a record holds for a skill that acts but cannot be pinned (it stays untrusted).
const UNPINNABLE: &str = "unpinnable";

/// A skill that acts, its body's `commands` known (its folder canonical; a project's skill
/// with its digest read now);
/// `None` when it does not act (or cannot be read).
fn acting(skill: &Skill, commands: &[String], projects: bool) -> Option<ActingSkill> {
    if !acts(skill, commands) {
        return None;
    }
    let commands = commands.to_vec();
    let model = forked_model(skill);
    Some(ActingSkill {
        name: skill.name.clone(),
        dir: canonical(skill.home()),
        commands,
        allowed_tools: skill.frontmatter.allowed_tools.clone(),
        model,
        digest: if projects { skill_digest(skill) } else { None },
        command: skill.is_command(),
    })
}

/// A forked skill's model: its choice to make only once trusted (it can pick any, at any cost),
/// pinned as commands and grants are.
fn forked_model(skill: &Skill) -> Option<String> {
    skill.frontmatter.model.clone().filter(|model| {
        !model.trim().is_empty()
            && !model.trim().eq_ignore_ascii_case("inherit")
            && skill
                .frontmatter
                .context
                .as_deref()
                .is_some_and(|context| context.eq_ignore_ascii_case("fork"))
    })
}

/// Whether a skill acts: its body runs commands, it grants tools, or it forks on a model of its
/// choosing.
fn acts(skill: &Skill, commands: &[String]) -> bool {
    !commands.is_empty()
        || !skill.frontmatter.allowed_tools.is_empty()
        || forked_model(skill).is_some()
}

/// Text of the project's shown on one line: control and hidden characters as escapes.
fn one_line(text: &str) -> String {
    skillet_skills::escape_invisible(text).into_owned()
}

mod digest;

pub use digest::{digest_of, folder_digest, skill_digest};
use digest::{digest_reading, file_digest};

#[cfg(test)]
mod tests;
