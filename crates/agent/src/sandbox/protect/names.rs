//! The names protected at the top of a workspace: what other tools (and skillet's next session)
//! read as instructions or run, as those tools document it.

/// Names protected at the top of the working directory: folders and files other tools (and
/// skillet's next session) read as instructions or run.
pub const PROTECTED_TOP_NAMES: [&str; 72] = [
    ".git",
    ".gitmodules",
    ".envrc",
    "skillet.toml",
    "AGENTS.md",
    "AGENTS.override.md",
    "CLAUDE.md",
    "CLAUDE.local.md",
    "GEMINI.md",
    ".agents",
    ".claude",
    ".opencode",
    ".mcp.json",
    // Other agents' folders and rule files: servers and hooks they start, what steers them.
    ".codex",
    ".gemini",
    ".cursor",
    ".cursorrules",
    ".windsurfrules",
    ".continue",
    "opencode.json",
    "opencode.jsonc",
    ".crush.json",
    "crush.json",
    ".aider.conf.yml",
    ".kiro",
    ".roo",
    ".windsurf",
    ".clinerules",
    // GitHub Copilot's instructions, prompts and skills (`.github/workflows` run elsewhere).
    ".github/copilot-instructions.md",
    ".github/instructions",
    ".github/prompts",
    ".github/skills",
    ".github/hooks",
    ".github/agents",
    // More agents' folders and instruction files.
    ".qwen",
    "QWEN.md",
    ".junie",
    ".amazonq",
    ".goosehints",
    // A dev container's `initializeCommand` runs on the host at every start.
    ".devcontainer",
    ".devcontainer.json",
    // Version control other than git: Mercurial's and Jujutsu's config runs hooks.
    ".hg",
    ".jj",
    ".sl",
    // Tools that run the project's settings in the user's shell: mise's hooks and sourced
    // files on `cd`, yarn's `yarnPath` on any `yarn`.
    "mise.toml",
    ".mise.toml",
    "mise.local.toml",
    ".mise.local.toml",
    ".config/mise",
    ".config/mise.toml",
    ".mise",
    "mise/config.toml",
    ".yarnrc.yml",
    // Yarn 1's `yarn-path`, pnpm's hooks file and bun's `preload`: run on any `yarn`,
    // `pnpm install` or `bun`.
    ".yarnrc",
    ".pnpmfile.cjs",
    "bunfig.toml",
    // Hook managers: what git's hooks run (husky's `.husky/_` sources `.husky/*`).
    ".husky",
    ".pre-commit-config.yaml",
    "lefthook.yml",
    ".lefthook.yml",
    "lefthook-local.yml",
    ".lefthook-local.yml",
    "lefthook.yaml",
    "lefthook-local.yaml",
    // lefthook's script folders, which `lefthook.yml`'s scripts run.
    ".lefthook",
    ".lefthook-local",
    // husky 4's settings.
    ".huskyrc",
    ".huskyrc.json",
    ".huskyrc.js",
    // Editors' folders: tasks that run when the folder is opened.
    ".vscode",
    ".idea",
    ".zed",
];
