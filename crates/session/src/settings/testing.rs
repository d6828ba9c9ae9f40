//! Settings resolved in tests from given variables and folders, never the process's own.

use std::path::{Path, PathBuf};

use super::{Settings, SettingsError, Sources};
use crate::Flags;

/// Resolves with these variables and this project root, and no user config folder.
pub(super) fn resolve(
    vars: &[(&str, &str)],
    args: &Flags,
    project: &Path,
) -> Result<Settings, SettingsError> {
    resolve_with_user(vars, args, project, None)
}

/// Resolves with these variables, this project root and this user config folder; the data
/// folder is `/data`.
pub(super) fn resolve_with_user(
    vars: &[(&str, &str)],
    args: &Flags,
    project: &Path,
    user: Option<&Path>,
) -> Result<Settings, SettingsError> {
    let vars: Vec<(String, String)> = vars
        .iter()
        .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
        .collect();
    let var = move |name: &str| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
    Settings::resolve(
        args,
        false,
        &Sources {
            var: &var,
            project_root: project,
            user_config_dir: user.map(Path::to_path_buf),
            user_data_dir: Some(PathBuf::from("/data")),
            trusted_project: false,
        },
    )
}
