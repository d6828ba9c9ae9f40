//! The blocklist of the `bash` tool: commands refused outright because they destroy the
//! machine or its data whatever the intent (`rm -rf ~`, `mkfs`, `dd of=/dev/sda`, …). It reads
//! the command as the shell splits it into simple commands and words, so a quoted `rm -rf /` in
//! a commit message passes and `rm -rf "$HOME"` does not. It is a guard against slips, not a
//! boundary: a command can always be written so that no list recognises it (the tests name some
//! ways), and the sandbox ([`crate::sandbox`]) is what contains it.

use std::sync::LazyLock;

use regex::Regex;

use crate::shell::{file_name, simple_commands};

/// Commands refused outright: they destroy the machine or its data, whatever the intent. A rule
/// looks at the programs the command runs (each simple command's program and arguments, as the
/// shell splits them: see [`simple_commands`]), at the files it redirects output to, or, for the
/// fork bomb (a function, not a program), at its text.
static RULES: [(Check, &str); 9] = [
    (
        Check::Program(&["rm"], deletes_system_folders),
        "deletes the root, home or system folders",
    ),
    (Check::Program(&["mkfs*"], any_arguments), "formats a disk"),
    (Check::Program(&["dd"], writes_to_disk), "overwrites a disk"),
    (Check::OutputTo(is_disk), "overwrites a disk"),
    (
        Check::Program(&["shutdown", "reboot", "halt", "poweroff"], any_arguments),
        "stops the machine",
    ),
    (
        Check::Program(&["systemctl"], stops_the_machine),
        "stops the machine",
    ),
    (Check::Text(&FORK_BOMB), "is a fork bomb"),
    (
        Check::Program(&["chmod"], recursive_on_root),
        "changes permissions of the whole system",
    ),
    (
        Check::Program(&["chown"], recursive_on_root),
        "changes owners of the whole system",
    ),
];

/// What a rule of [`RULES`] looks at.
enum Check {
    /// The command's raw text.
    Text(&'static LazyLock<Option<Regex>>),
    /// A program run, by file name (`name*`: any name starting so), and a test of its arguments.
    Program(&'static [&'static str], fn(&[String]) -> bool),
    /// The file an output redirection (`>`, `>>`, `&>`, …) writes to.
    OutputTo(fn(&str) -> bool),
}

/// `:(){ :|:& };:` and its spacings.
static FORK_BOMB: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r":\(\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:").ok());

/// What `rm -r` or `rm -f` must never be pointed at, once trailing `/` and `/*` are removed
/// (the root itself, `/`, `/*`, becomes empty).
const SYSTEM_FOLDERS: [&str; 13] = [
    "~", "$HOME", "${HOME}", "/home", "/usr", "/etc", "/bin", "/boot", "/lib", "/var", "/root",
    "/opt", "/sbin",
];

/// Names of disk devices under `/dev/`.
const DISKS: [&str; 7] = ["sd", "hd", "nvme", "vd", "xvd", "disk", "mmcblk"];

/// `rm`, recursive or forced, on the root, the home folder or a system folder; or told not to
/// spare the root.
fn deletes_system_folders(args: &[String]) -> bool {
    if args.iter().any(|arg| arg == "--no-preserve-root") {
        return true;
    }
    let (mut forced, mut system, mut operands) = (false, false, false);
    for arg in args {
        if operands || !arg.starts_with('-') || arg == "-" {
            system |= is_system_folder(arg);
        } else if arg == "--" {
            operands = true;
        } else if arg == "--recursive" || arg == "--force" {
            forced = true;
        } else if !arg.starts_with("--") {
            forced |= arg.contains(['r', 'R', 'f']);
        }
    }
    forced && system
}

/// `chmod -R` or `chown -R` on the root.
fn recursive_on_root(args: &[String]) -> bool {
    let recursive = args.iter().any(|arg| {
        arg == "--recursive"
            || (arg.starts_with('-') && !arg.starts_with("--") && arg.contains('R'))
    });
    recursive
        && args
            .iter()
            .any(|arg| !arg.is_empty() && trim_folder(arg).is_empty())
}

/// `dd` writing a disk (`of=/dev/sda`).
fn writes_to_disk(args: &[String]) -> bool {
    args.iter()
        .any(|arg| arg.strip_prefix("of=").is_some_and(is_disk))
}

/// `systemctl poweroff`, `reboot` or `halt`.
fn stops_the_machine(args: &[String]) -> bool {
    args.iter()
        .find(|arg| !arg.starts_with('-'))
        .is_some_and(|verb| matches!(verb.as_str(), "poweroff" | "reboot" | "halt"))
}

/// For programs refused whatever their arguments.
fn any_arguments(_args: &[String]) -> bool {
    true
}

/// Whether a path is a disk device (`/dev/sda`, `/dev/nvme0n1`, …).
fn is_disk(path: &str) -> bool {
    path.strip_prefix("/dev/")
        .is_some_and(|device| DISKS.iter().any(|disk| device.starts_with(disk)))
}

/// Whether a path names the root or one of [`SYSTEM_FOLDERS`].
fn is_system_folder(path: &str) -> bool {
    let folder = trim_folder(path);
    if folder.is_empty() {
        return !path.is_empty();
    }
    SYSTEM_FOLDERS.contains(&folder)
}

/// A path without its trailing `/` and `/*`: `~/` is `~`, `/usr/*` is `/usr`, `/` is empty.
fn trim_folder(path: &str) -> &str {
    let mut folder = path;
    while let Some(shorter) = folder
        .strip_suffix("/*")
        .or_else(|| folder.strip_suffix('/'))
    {
        folder = shorter;
    }
    folder
}

/// Why a command is refused, if it is.
pub fn blocked(command: &str) -> Option<&'static str> {
    let commands = simple_commands(command);
    RULES
        .iter()
        .find(|(check, _)| match check {
            Check::Text(regex) => regex.iter().any(|regex| regex.is_match(command)),
            Check::Program(names, test) => commands.iter().any(|simple| {
                simple.argv().split_first().is_some_and(|(program, args)| {
                    let program = file_name(program);
                    names.iter().any(|name| {
                        name.strip_suffix('*')
                            .map_or(*name == program, |prefix| program.starts_with(prefix))
                    }) && test(args)
                })
            }),
            Check::OutputTo(test) => commands.iter().any(|simple| {
                simple
                    .redirects
                    .iter()
                    .any(|(operator, target)| operator.contains('>') && test(target))
            }),
        })
        .map(|(_, why)| *why)
}

#[cfg(test)]
mod tests;
