//! What a skill's `allowed-tools` grants, as far as the rules care (the shell, writes, the web).

use crate::rules::Capability;

/// How much of the shell `allowed-tools` grants.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) enum Shell {
    /// No `Bash`.
    #[default]
    None,
    /// `Bash(git:*)` and the like: some commands.
    Scoped,
    /// `Bash` or `Bash(*)`: any command.
    Any,
}

/// The tools a skill's `allowed-tools` grants, as far as the rules care.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Grants {
    shell: Shell,
    /// A tool that writes files.
    write: bool,
    /// A web tool.
    network: bool,
}

impl Grants {
    /// What `allowed-tools` (as the skills crate split it) grants.
    pub(crate) fn from_tools(tools: &[String]) -> Self {
        let mut grants = Self::default();
        for tool in tools {
            let (name, scope) = match tool.split_once('(') {
                Some((name, rest)) => (name, Some(rest.trim_end_matches(')').trim())),
                None => (tool.as_str(), None),
            };
            let name = name.trim().to_ascii_lowercase();
            match name.as_str() {
                "bash" | "shell" | "run_shell_command" => {
                    let any = scope.is_none_or(|scope| scope.is_empty() || scope == "*");
                    grants.shell = if any || grants.shell == Shell::Any {
                        Shell::Any
                    } else {
                        Shell::Scoped
                    };
                }
                "write" | "edit" | "multiedit" | "notebookedit" | "write_file" | "edit_file"
                | "replace" => grants.write = true,
                "webfetch" | "websearch" | "web_fetch" | "google_web_search" => {
                    grants.network = true;
                }
                _ => {}
            }
        }
        grants
    }

    pub(super) fn grants(&self, capability: Capability) -> bool {
        match capability {
            Capability::Shell => self.shell != Shell::None,
            Capability::Write => self.write || self.shell == Shell::Any,
            Capability::Network => self.network || self.shell == Shell::Any,
        }
    }
}
