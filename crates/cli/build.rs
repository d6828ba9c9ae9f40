//! Build facts for `skillet --version`: the git commit (`unknown` without git or outside a
//! checkout; git is never required) and the features built in. Reruns only when the checkout's
//! HEAD (or the branch it points at) moves, so it costs nothing on ordinary builds.

#![allow(
    clippy::print_stdout,
    reason = "a build script speaks to cargo on stdout"
)]

use std::path::Path;
use std::process::Command;

/// The features reported, as cargo names them in `CARGO_FEATURE_*`.
const FEATURES: &[&str] = &["embeddings", "download", "highlight"];

fn main() {
    let manifest = std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default();
    let workspace = Path::new(&manifest).join("../..");
    println!("cargo:rerun-if-changed=build.rs");
    let git = workspace.join(".git");
    let head = git.join("HEAD");
    if head.is_file() {
        println!("cargo:rerun-if-changed={}", head.display());
        // HEAD names a branch; a commit moves the branch, not HEAD.
        if let Ok(text) = std::fs::read_to_string(&head)
            && let Some(reference) = text.trim().strip_prefix("ref: ")
        {
            for moved in [git.join(reference), git.join("packed-refs")] {
                if moved.is_file() {
                    println!("cargo:rerun-if-changed={}", moved.display());
                }
            }
        }
    }
    let commit = Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .current_dir(&workspace)
        .output()
        .ok()
        .filter(|output| output.status.success())
        .and_then(|output| String::from_utf8(output.stdout).ok())
        .map(|text| text.trim().to_string())
        .filter(|text| !text.is_empty() && text.chars().all(|c| c.is_ascii_hexdigit()))
        .unwrap_or_else(|| "unknown".to_string());
    println!("cargo:rustc-env=SKILLET_GIT_COMMIT={commit}");
    let features: Vec<&str> = FEATURES
        .iter()
        .copied()
        .filter(|feature| {
            std::env::var_os(format!("CARGO_FEATURE_{}", feature.to_uppercase())).is_some()
        })
        .collect();
    let features = if features.is_empty() {
        "none".to_string()
    } else {
        features.join(", ")
    };
    println!("cargo:rustc-env=SKILLET_FEATURES={features}");
}
