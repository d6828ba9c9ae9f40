//! The command-line interface, as clap structs.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// skillet: an agent that uses Agent Skills, and tools for skill authors.
#[derive(Debug, Parser)]
#[command(name = "skillet", version, about, arg_required_else_help = true)]
pub struct Cli {
    /// Options every command takes.
    #[command(flatten)]
    pub global: GlobalArgs,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Options every command takes.
#[derive(Debug, Args)]
pub struct GlobalArgs {
    /// A folder of skills to use instead of the default roots (repeatable; first wins on a
    /// name collision)
    #[arg(long = "skills-dir", value_name = "DIR", global = true)]
    pub skills_dirs: Vec<PathBuf>,
    /// Work as if started in this folder
    #[arg(long, value_name = "DIR", global = true)]
    pub cwd: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Discover, inspect, validate and create skills
    #[command(subcommand)]
    Skills(SkillsCommand),
}

#[derive(Debug, Subcommand)]
pub enum SkillsCommand {
    /// List every discovered skill (diagnostics go to stderr)
    List {
        /// Print a JSON array instead of a table
        #[arg(long)]
        json: bool,
    },
    /// Print a skill as the model receives it when it loads it (Layer 2)
    Show {
        /// The skill's name
        name: String,
    },
    /// Print the catalog the model sees (Layer 1); what the budget cut goes to stderr
    Catalog {
        /// How the catalog is written
        #[arg(long, value_enum, default_value_t = CatalogFormatArg::List)]
        format: CatalogFormatArg,
        /// The catalog's budget in characters
        #[arg(long, value_name = "CHARS", default_value_t = skillet_skills::DEFAULT_CATALOG_BUDGET)]
        budget: usize,
    },
    /// Check skills against the specification; exit 1 when any has errors
    Validate {
        /// Skill folders, SKILL.md files, or roots to walk (default: every discovered skill)
        paths: Vec<PathBuf>,
        /// Print a JSON array instead of text
        #[arg(long)]
        json: bool,
    },
    /// Create a new skill from a template that passes `validate`
    New {
        /// The skill's name: lowercase letters, digits and hyphens
        name: String,
        /// The folder to create it in (default: .agents/skills at the project root)
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
    },
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum CatalogFormatArg {
    /// `  - name: description [tags]` lines
    List,
    /// `<available_skills>` XML
    Xml,
}
