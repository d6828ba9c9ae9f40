//! Every environment variable skillet reads, in one place.

use std::path::PathBuf;

/// The user's home directory.
pub const HOME: &str = "HOME";
/// The base of user configuration folders.
pub const XDG_CONFIG_HOME: &str = "XDG_CONFIG_HOME";

/// A path from an environment variable, when set and not empty.
pub fn path(name: &str) -> Option<PathBuf> {
    std::env::var_os(name)
        .filter(|value| !value.is_empty())
        .map(PathBuf::from)
}
