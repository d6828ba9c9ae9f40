//! What comes before a session starts ([`crate::builder::start`]): the skills of its folder,
//! the trust settled there ([`crate::trust`]), the settings resolved with it, and a stored
//! session to continue, which may work in another folder: then that folder's skills, the trust
//! recorded for it (nothing is asked) and the settings resolved again there, so one project's
//! trust never applies in another. What is said goes through a [`Report`].

use std::path::{Path, PathBuf};
use std::sync::Arc;

use skillet_agent::AgentError;
use skillet_agent::transcript::{self, Transcript};
use skillet_library::trust::SkillTrust;
use skillet_skills::{Library, discover, find_git_root, terminal_safe};

use crate::builder::{Report, Resumed};
use crate::sessions::{LATEST, project_sessions};
use crate::settings::{Settings, SettingsError, Sources};
use crate::trust::{Decided, recorded_decided};
use crate::{Flags, Workspace};

/// Why a stored session cannot be continued.
#[derive(Debug, thiserror::Error)]
pub enum ResumeError {
    /// It cannot be named or continued as asked (a usage error: the CLI exits 2).
    #[error("{message}")]
    Usage {
        /// What is wrong.
        message: String,
        /// What to do instead.
        hint: &'static str,
    },
    /// The sessions folder cannot be read.
    #[error("cannot read {}", dir.display())]
    Listing {
        /// The sessions folder.
        dir: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// Its transcript cannot be locked or read.
    #[error(transparent)]
    Transcript(#[from] AgentError),
}

/// What `skillet sessions` is, for hints.
const ID_HINT: &str = "`skillet sessions` lists this project's sessions";

/// The skills the workspace reads, with load problems said once.
pub fn library(workspace: &Workspace, report: &mut dyn Report) -> Arc<Library> {
    let library = discover(&workspace.roots);
    let problems = library.diagnostics().len()
        + library
            .skills()
            .iter()
            .map(|s| s.diagnostics.len())
            .sum::<usize>();
    if problems > 0 {
        report.note(&format!(
            "note: {problems} problems while loading skills; `skillet skills list` shows them"
        ));
    }
    Arc::new(library)
}

/// The settings of a session in `workspace` from `flags` (`yes` given on the command line),
/// its project's file granting only when `trusted_project`; what a project file tried to set
/// is said.
pub fn settings(
    workspace: &Workspace,
    flags: &Flags,
    yes: bool,
    trusted_project: bool,
    report: &mut dyn Report,
) -> Result<Settings, SettingsError> {
    let project_root = workspace.project_root();
    let settings = Settings::resolve(
        flags,
        yes,
        &Sources::of_this_process(&project_root, trusted_project),
    )?;
    for warning in &settings.warnings {
        report.note(warning);
    }
    Ok(settings)
}

/// The skills of the session working in `workspace` (those its trust admits:
/// [`SkillTrust::admits`]), which may act, and its settings: those
/// found where skillet started (`started_in`) as `here` holds them, or, for a session that
/// works elsewhere, that folder's own, with the trust recorded for it.
pub fn skills_at(
    workspace: &Workspace,
    started_in: &Path,
    here: (Arc<Library>, Decided, Settings),
    (flags, yes): (&Flags, bool),
    report: &mut dyn Report,
) -> Result<(Arc<Library>, SkillTrust, Settings), SettingsError> {
    let (skills_here, decided, settings_here) = here;
    if workspace.env.cwd == started_in {
        let skills = decided.skills.admitted(skills_here);
        return Ok((skills, decided.skills, settings_here));
    }
    let skills = library(workspace, report);
    let decided = recorded_decided(workspace, &skills);
    let settings = settings(workspace, flags, yes, decided.project_trusted, report)?;
    Ok((decided.skills.admitted(skills), decided.skills, settings))
}

/// The session `resume` names, if any ([`LATEST`]: this project's newest), stored in
/// `sessions_dir`, and the workspace it runs in: its own working directory, wherever skillet
/// was started (`None`: the given one).
pub fn find_resumed(
    workspace: &Workspace,
    sessions_dir: &Path,
    resume: Option<&str>,
    report: &mut dyn Report,
) -> Result<(Option<Workspace>, Option<Resumed>), ResumeError> {
    let Some(id) = resume else {
        return Ok((None, None));
    };
    let path = session_path(sessions_dir, id, &workspace.env.cwd)?;
    // Locked before it is read: another skillet writing to it now is refused here, before any
    // work, and none can write between the reading and the appending.
    let locked = Transcript::append_to(&path)?;
    let transcript::Loaded {
        header,
        messages: history,
        model,
    } = transcript::load_session(&path)?;
    let model = model.unwrap_or_else(|| header.model.clone());
    // A session whose folder is gone cannot be asked for: a usage error, like an unknown id.
    let cwd = std::fs::canonicalize(&header.cwd).map_err(|_| ResumeError::Usage {
        message: format!(
            "session {} worked in {}, which is gone; it cannot be resumed there",
            header.id,
            terminal_safe(&header.cwd.display().to_string(), false)
        ),
        hint: ID_HINT,
    })?;
    if cwd != workspace.env.cwd {
        report.note(&format!(
            "note: session {} works in {}; continuing there",
            header.id,
            terminal_safe(&cwd.display().to_string(), false)
        ));
    }
    Ok((
        Some(workspace.at(cwd)),
        Some(Resumed {
            transcript: locked,
            header,
            history,
            model,
        }),
    ))
}

/// The transcript of a session id, or for [`LATEST`] of the session of the project `cwd` is in
/// (its git root, else `cwd` itself) written to last in which the user said something (a
/// session left empty, by `/clear` then `/exit`, is not one to continue).
fn session_path(dir: &Path, id: &str, cwd: &Path) -> Result<PathBuf, ResumeError> {
    if id != LATEST {
        if id.is_empty()
            || !id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            return Err(ResumeError::Usage {
                message: format!(
                    "--resume: '{}' is not a session id (they look like 20261130-042927-29b8)",
                    terminal_safe(id, false)
                ),
                hint: ID_HINT,
            });
        }
        let path = dir.join(format!("{id}.jsonl"));
        if !path.is_file() {
            return Err(ResumeError::Usage {
                message: format!("--resume: no session '{id}' in {}", dir.display()),
                hint: ID_HINT,
            });
        }
        return Ok(path);
    }
    let latest = project_sessions(dir, cwd, 1).map_err(|source| ResumeError::Listing {
        dir: dir.to_path_buf(),
        source,
    })?;
    let latest = latest.into_iter().next().map(|s| s.path);
    latest.ok_or_else(|| {
        let project = find_git_root(cwd).unwrap_or_else(|| cwd.to_path_buf());
        ResumeError::Usage {
            message: format!(
                "no session of this project ({}) to continue in {}",
                project.display(),
                dir.display()
            ),
            hint: "`--resume ID` continues a session of another project; `skillet run \"PROMPT\"` starts one",
        }
    })
}
