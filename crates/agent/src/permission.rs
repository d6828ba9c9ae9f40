//! Who may write files and run commands. Reading is always allowed.
//!
//! Tools that write or run ask the [`Gate`] themselves, once they know exactly what they will do
//! (a write shows its diff). A write to a protected path ([`crate::paths::protection`]) is
//! refused where nobody can be asked (`run`) and asked for each time in `chat`: "always" never
//! covers it. "Always" covers what was approved, as rules would say it ([`crate::rules::scope_of`]:
//! this command's program and subcommand, this file's folder), never the whole tool.

use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};

use crate::grants::ActiveSkill;
use crate::rules::{Decision, Rules, Scope, scope_of};

/// What a tool may do, which decides whether it needs permission.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ToolKind {
    /// Reads only; always allowed.
    Read,
    /// Writes files.
    Write,
    /// Runs commands.
    Execute,
}

/// What the user answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Approval {
    /// Allow this call.
    Yes,
    /// Refuse this call.
    No,
    /// Refuse this call and tell the model why: what the user typed (do this instead).
    Refuse(String),
    /// Allow this call and, for the session, what [`ApprovalRequest::always`] names.
    Always,
    /// Refuse this call and stop the turn (Ctrl-C at the prompt): no other call of the turn
    /// runs and no request follows; the turn ends with [`crate::AgentError::Cancelled`].
    Stop,
}

/// A session's permission mode (`--permission-mode`, `/mode`), as Claude Code's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// Ask before writes and commands (or whatever the policy says: `--yes`, `run`).
    #[default]
    Default,
    /// File edits run without asking (not on protected paths); commands as in default.
    AcceptEdits,
    /// Reading tools only: the model explores and ends its turn with a plan to approve.
    Plan,
}

impl Mode {
    /// Every mode, in the order `/mode` lists them.
    pub const ALL: [Self; 3] = [Self::Default, Self::AcceptEdits, Self::Plan];

    /// Its name on the command line: `default`, `accept-edits`, `plan`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Default => "default",
            Self::AcceptEdits => "accept-edits",
            Self::Plan => "plan",
        }
    }

    /// Reads a name (Claude Code's `acceptEdits` too).
    pub fn parse(text: &str) -> Option<Self> {
        match text.trim() {
            "default" => Some(Self::Default),
            "accept-edits" | "acceptEdits" => Some(Self::AcceptEdits),
            "plan" => Some(Self::Plan),
            _ => None,
        }
    }

    fn from_u8(value: u8) -> Self {
        Self::ALL
            .get(usize::from(value))
            .copied()
            .unwrap_or_default()
    }

    fn to_u8(self) -> u8 {
        match self {
            Self::Default => 0,
            Self::AcceptEdits => 1,
            Self::Plan => 2,
        }
    }
}

/// A call that needs the user's approval.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalRequest {
    /// The tool.
    pub tool: String,
    /// What it may do.
    pub kind: ToolKind,
    /// The command or path, for the question (untrusted: the interface neutralises control
    /// characters before showing it).
    pub summary: String,
    /// What will change: a write's diff (untrusted too).
    pub detail: Option<String>,
    /// Why the target is protected, when it is: asked for each time, refused in `run`.
    pub protected: Option<&'static str>,
    /// What "always" would keep ([`Scope`]; shown as rules, `Bash(npm test:*)`), filled in by
    /// the [`Gate`] before it asks; empty when "always" is not offered (a protected path, a
    /// command no rule could allow part by part).
    pub always: Vec<Scope>,
}

impl ApprovalRequest {
    /// A request for a call of `tool`, of `kind`, shown as `summary`.
    pub fn new(tool: &str, kind: ToolKind, summary: impl Into<String>) -> Self {
        Self {
            tool: tool.to_string(),
            kind,
            summary: summary.into(),
            detail: None,
            protected: None,
            always: Vec::new(),
        }
    }
}

/// Asks the user (the chat's prompt).
pub trait Approver: Send + Sync {
    /// Asks about one call.
    fn approve(&self, request: &ApprovalRequest) -> Approval;
}

/// The policy for writes and commands.
#[derive(Clone)]
pub enum Permissions {
    /// Ask the user each time (chat), remembering "always".
    Ask(Arc<dyn Approver>),
    /// Allow them (`run --yes`); file tools stay confined to the working directory.
    Allow,
    /// Refuse them, telling the model why.
    Deny {
        /// What the model is told.
        reason: String,
    },
}

/// Where what "always" approved is said to come from.
pub const APPROVED_SOURCE: &str = "approved in this session";

/// What the model is told of a write or command in plan mode.
pub const PLAN_REFUSAL: &str = "refused: the session is in plan mode, where only reading tools run. Explore with them, then end your turn with your plan as your answer; the user approves it before anything is changed";

/// Applies the policy, remembering what the user allowed for the session, with the rules of
/// the skills active in this turn ([`crate::grants`]).
pub struct Gate {
    permissions: Permissions,
    /// The standing rules: deny, ask, allow.
    rules: Rules,
    /// What the user approved "always" in this session: allow rules.
    approved: Mutex<Rules>,
    /// The [`Mode`], as a number (shared with subagents and the chat's `/mode`).
    mode: AtomicU8,
    /// The skills active in this turn.
    active: Mutex<Vec<ActiveSkill>>,
    /// Skills the user invoked for the next turn (`/name`): active when it starts.
    next_turn: Mutex<Vec<ActiveSkill>>,
    /// The user answered [`Approval::Stop`] in this turn (shared with subagents, whose gate
    /// this is too).
    stopped: AtomicBool,
}

/// What the model is told of the call the user stopped the turn at.
const STOPPED: &str = "denied: the user stopped the turn here";

/// What the model is told of a call the user refused.
fn refused(reason: Option<&str>) -> String {
    match reason.map(str::trim).filter(|reason| !reason.is_empty()) {
        Some(reason) => format!("denied: the user refused this call and said: {reason}"),
        None => "denied: the user refused this call; ask what they want instead".to_string(),
    }
}

impl Gate {
    /// A gate for this policy.
    pub fn new(permissions: Permissions) -> Self {
        Self::with_rules(permissions, Rules::default())
    }

    /// A gate for this policy with standing rules.
    pub fn with_rules(permissions: Permissions, rules: Rules) -> Self {
        Self {
            permissions,
            approved: Mutex::new(Rules::new([], rules.places().clone())),
            rules,
            mode: AtomicU8::new(Mode::Default.to_u8()),
            active: Mutex::new(Vec::new()),
            next_turn: Mutex::new(Vec::new()),
            stopped: AtomicBool::new(false),
        }
    }

    /// The permission mode now.
    pub fn mode(&self) -> Mode {
        Mode::from_u8(self.mode.load(Ordering::SeqCst))
    }

    /// Switches the permission mode (for this session and its subagents).
    pub fn set_mode(&self, mode: Mode) {
        self.mode.store(mode.to_u8(), Ordering::SeqCst);
    }

    /// The rules "always" added in this session, as written.
    pub fn approved(&self) -> Vec<String> {
        self.approved
            .lock()
            .map(|approved| {
                approved
                    .all()
                    .iter()
                    .map(|rule| rule.text.clone())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// A skill loaded now: its rules hold until the end of this turn.
    pub fn activate(&self, skill: ActiveSkill) {
        if skill.is_empty() {
            return;
        }
        if let Ok(mut active) = self.active.lock() {
            active.retain(|other| other.name != skill.name);
            active.push(skill);
        }
    }

    /// A skill the user invoked for the turn their message starts: its rules hold from that
    /// turn's start to its end.
    pub fn activate_next_turn(&self, skill: ActiveSkill) {
        if !skill.is_empty()
            && let Ok(mut next) = self.next_turn.lock()
        {
            next.push(skill);
        }
    }

    /// The refusal of a standing `deny` rule, or of an active skill's `disallowed-tools`, for
    /// this call (any tool, reads too), naming the rule or the skill.
    pub fn refusal(&self, tool: &str, input: &serde_json::Value) -> Option<String> {
        if let Some((Decision::Deny, rule)) = self.rules.decide(tool, input) {
            return Some(format!(
                "refused: the permission rule `{}` (deny, in {}) does not allow this call; do the task another way or ask the user",
                rule.text, rule.source
            ));
        }
        let active = self.active.lock().ok()?;
        active
            .iter()
            .find(|skill| skill.refuses(tool, input))
            .map(|skill| {
                format!(
                    "refused: the skill '{}' does not allow this call while it is active (its disallowed-tools); do the task another way or ask the user",
                    skill.name
                )
            })
    }

    /// Whether a rule allows this call to run unasked: a standing `allow` rule, an active
    /// skill's `allowed-tools`, what "always" approved, or, for a write, `accept-edits`.
    fn allowed(&self, request: &ApprovalRequest, input: &serde_json::Value) -> bool {
        let tool = request.tool.as_str();
        matches!(self.rules.decide(tool, input), Some((Decision::Allow, _)))
            || self
                .active
                .lock()
                .is_ok_and(|active| active.iter().any(|skill| skill.allows(tool, input)))
            || self.approved.lock().is_ok_and(|approved| {
                matches!(approved.decide(tool, input), Some((Decision::Allow, _)))
            })
            || (request.kind == ToolKind::Write && self.mode() == Mode::AcceptEdits)
    }

    /// Whether this call may run without anyone being asked now: allowed by the policy (`run
    /// --yes`), a rule, an active skill, what "always" approved or the mode; not protected, not
    /// refused, not in plan mode. What a skill's dynamic context runs must pass this: it never
    /// asks.
    pub fn allows_unasked(&self, request: &ApprovalRequest, input: &serde_json::Value) -> bool {
        if request.kind == ToolKind::Read {
            return self.refusal(&request.tool, input).is_none();
        }
        if request.protected.is_some()
            || self.mode() == Mode::Plan
            || self.refusal(&request.tool, input).is_some()
            || matches!(
                self.rules.decide(&request.tool, input),
                Some((Decision::Ask, _))
            )
        {
            return false;
        }
        self.asks_nobody() || self.allowed(request, input)
    }

    /// Whether the user stopped the turn at an approval prompt.
    pub fn stopped(&self) -> bool {
        self.stopped.load(Ordering::SeqCst)
    }

    /// The user invokes a skill by hand, before the turn its message starts: an earlier stop no
    /// longer counts and the last turn's skills are no longer active (its commands are judged
    /// by the policy and its own rules only); those already invoked for the next turn stay.
    pub(crate) fn begin_invocation(&self) {
        self.stopped.store(false, Ordering::SeqCst);
        if let Ok(mut active) = self.active.lock() {
            active.clear();
        }
    }

    /// A new turn starts: an earlier stop no longer counts, the skills of the last turn are no
    /// longer active, those the user invoked for this one are.
    pub(crate) fn start_turn(&self) {
        self.stopped.store(false, Ordering::SeqCst);
        let next = self
            .next_turn
            .lock()
            .map(|mut next| std::mem::take(&mut *next))
            .unwrap_or_default();
        if let Ok(mut active) = self.active.lock() {
            *active = next;
        }
    }

    /// True when writes and commands run without anyone being asked about each (`run --yes`).
    pub fn asks_nobody(&self) -> bool {
        matches!(self.permissions, Permissions::Allow)
    }

    /// The standing rules.
    pub fn rules(&self) -> &Rules {
        &self.rules
    }

    /// Asks the user about `request` (the approver's answer applied): `offer_always` when
    /// "always" may be offered.
    fn ask(
        &self,
        approver: &dyn Approver,
        request: &ApprovalRequest,
        input: &serde_json::Value,
        offer_always: bool,
    ) -> Result<(), String> {
        if self.stopped() {
            return Err(STOPPED.to_string());
        }
        let mut request = request.clone();
        request.always = if offer_always && request.protected.is_none() {
            scope_of(&request.tool, input, self.rules.places())
        } else {
            Vec::new()
        };
        match approver.approve(&request) {
            Approval::Yes => Ok(()),
            Approval::Always => {
                if let Ok(mut approved) = self.approved.lock() {
                    for scope in &request.always {
                        approved.push_approved(scope, APPROVED_SOURCE);
                    }
                }
                Ok(())
            }
            Approval::No => Err(refused(None)),
            Approval::Refuse(reason) => Err(refused(Some(&reason))),
            Approval::Stop => {
                self.stopped.store(true, Ordering::SeqCst);
                Err(STOPPED.to_string())
            }
        }
    }

    /// `Ok` when the call (`input`, as the model gave it) may run; otherwise what the model is
    /// told. Deny rules, then plan mode, then ask rules (asked each time; refused where nobody
    /// can be asked), then what allows it unasked (not on a protected path), then the policy.
    pub fn check(
        &self,
        request: &ApprovalRequest,
        input: &serde_json::Value,
    ) -> Result<(), String> {
        if request.kind == ToolKind::Read {
            return Ok(());
        }
        let standing = self.rules.decide(&request.tool, input);
        if let Some((Decision::Deny, _)) = standing {
            return Err(self
                .refusal(&request.tool, input)
                .unwrap_or_else(|| "refused by a permission rule".to_string()));
        }
        if self.mode() == Mode::Plan {
            return Err(PLAN_REFUSAL.to_string());
        }
        if let Some((Decision::Ask, rule)) = standing {
            return match &self.permissions {
                Permissions::Ask(approver) => self.ask(approver.as_ref(), request, input, false),
                Permissions::Allow => Err(format!(
                    "refused: the permission rule `{}` (ask, in {}) wants the user asked about this call, and nobody can be asked here; tell the user what you would run instead",
                    rule.text, rule.source
                )),
                Permissions::Deny { reason } => Err(format!("denied: {reason}")),
            };
        }
        if request.protected.is_none() && self.allowed(request, input) {
            return Ok(());
        }
        match &self.permissions {
            Permissions::Allow => match request.protected {
                None => Ok(()),
                Some(why) => Err(format!(
                    "refused: {} {why}; skillet changes it only when the user approves each change, which `skillet run` cannot ask for. Tell the user what to change instead",
                    request.summary
                )),
            },
            Permissions::Deny { reason } => Err(format!("denied: {reason}")),
            Permissions::Ask(approver) => self.ask(approver.as_ref(), request, input, true),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    /// Answers from a list, keeping every request it was asked.
    struct Answers(Mutex<Vec<Approval>>, Mutex<Vec<ApprovalRequest>>);

    impl Answers {
        fn new(answers: &[Approval]) -> Arc<Self> {
            Arc::new(Self(Mutex::new(answers.to_vec()), Mutex::new(Vec::new())))
        }
        fn asked(&self) -> usize {
            self.1.lock().unwrap().len()
        }
    }

    impl Approver for Answers {
        fn approve(&self, request: &ApprovalRequest) -> Approval {
            self.1.lock().unwrap().push(request.clone());
            self.0.lock().unwrap().remove(0)
        }
    }

    fn texts(scopes: &[Scope]) -> Vec<String> {
        scopes.iter().map(Scope::text).collect()
    }

    fn gate(permissions: Permissions) -> Gate {
        let places = crate::rules::Places {
            cwd: "/nonexistent/p".into(),
            project_root: "/nonexistent/p".into(),
            home: None,
            config_dir: None,
        };
        Gate::with_rules(
            permissions,
            Rules::new(
                [(
                    Decision::Deny,
                    "Bash(curl:*)".to_string(),
                    "test".to_string(),
                )],
                places,
            ),
        )
    }

    fn write(path: &str, protected: Option<&'static str>) -> (ApprovalRequest, Value) {
        let mut request = ApprovalRequest::new("write_file", ToolKind::Write, path);
        request.protected = protected;
        (request, json!({ "path": format!("/nonexistent/p/{path}") }))
    }

    fn bash(command: &str) -> (ApprovalRequest, Value) {
        (
            ApprovalRequest::new("bash", ToolKind::Execute, command),
            json!({ "command": command }),
        )
    }

    fn check(gate: &Gate, (request, input): &(ApprovalRequest, Value)) -> Result<(), String> {
        gate.check(request, input)
    }

    #[test]
    fn always_covers_what_was_approved_never_the_whole_tool() {
        let answers = Answers::new(&[Approval::Always, Approval::No, Approval::Always]);
        let gate = self::gate(Permissions::Ask(answers.clone()));
        assert!(check(&gate, &bash("echo one")).is_ok());
        assert_eq!(
            texts(&answers.1.lock().unwrap()[0].always),
            ["Bash(echo:*)"]
        );
        assert!(
            check(&gate, &bash("echo two && echo three")).is_ok(),
            "covered"
        );
        assert_eq!(answers.asked(), 1);
        // The case: "always" on `echo one` let `rm -f app.py.bak` run unasked.
        assert!(check(&gate, &bash("rm -f app.py.bak")).is_err());
        assert_eq!(answers.asked(), 2);
        assert!(check(&gate, &bash("echo x; rm -f y")).is_ok());
        assert_eq!(answers.asked(), 3, "a part not covered is asked about");
        // A file: its folder and below, nothing beside it.
        let answers = Answers::new(&[Approval::Always, Approval::No]);
        let gate = self::gate(Permissions::Ask(answers.clone()));
        assert!(check(&gate, &write("src/a.rs", None)).is_ok());
        assert_eq!(
            texts(&answers.1.lock().unwrap()[0].always),
            ["Edit(src/**)"]
        );
        assert!(check(&gate, &write("src/deep/b.rs", None)).is_ok());
        assert!(check(&gate, &write("README.md", None)).is_err());
        assert_eq!(answers.asked(), 2);
        assert_eq!(gate.approved(), ["Edit(src/**)"]);
    }

    #[test]
    fn always_never_covers_a_protected_path_and_run_refuses_it() {
        let answers = Answers::new(&[Approval::Always, Approval::No]);
        let gate = self::gate(Permissions::Ask(answers.clone()));
        let hook = write(".git/hooks/pre-commit", Some("is inside .git"));
        assert!(check(&gate, &hook).is_ok());
        assert!(
            answers.1.lock().unwrap()[0].always.is_empty(),
            "not offered"
        );
        assert!(check(&gate, &hook).is_err(), "asked again");
        assert_eq!(answers.asked(), 2);
        let allow = self::gate(Permissions::Allow);
        assert!(check(&allow, &write("x", None)).is_ok());
        let refused = check(&allow, &hook).unwrap_err();
        assert!(refused.contains("is inside .git"), "{refused}");
    }

    #[test]
    fn a_refusal_carries_what_the_user_typed() {
        let answers = Answers::new(&[Approval::Refuse("use pytest -x instead".into())]);
        let gate = self::gate(Permissions::Ask(answers));
        let error = check(&gate, &bash("python -m unittest")).unwrap_err();
        assert!(error.ends_with("said: use pytest -x instead"), "{error}");
    }

    #[test]
    fn modes_decide_writes_and_commands() {
        // accept-edits: writes unasked (not protected ones), commands asked.
        let answers = Answers::new(&[Approval::No, Approval::No]);
        let gate = self::gate(Permissions::Ask(answers.clone()));
        gate.set_mode(Mode::AcceptEdits);
        assert!(check(&gate, &write("src/a.rs", None)).is_ok());
        assert!(check(&gate, &bash("ls")).is_err());
        assert!(check(&gate, &write(".git/config", Some("is inside .git"))).is_err());
        assert_eq!(answers.asked(), 2);
        let (request, input) = write("b", None);
        assert!(gate.allows_unasked(&request, &input));
        // Deny rules hold in every mode.
        assert!(
            check(&gate, &bash("curl x"))
                .unwrap_err()
                .contains("Bash(curl:*)")
        );
        // plan: nothing written or run, even under --yes; reading goes on.
        let yes = self::gate(Permissions::Allow);
        yes.set_mode(Mode::Plan);
        assert_eq!(check(&yes, &bash("ls")).unwrap_err(), PLAN_REFUSAL);
        assert_eq!(check(&yes, &write("a", None)).unwrap_err(), PLAN_REFUSAL);
        let (request, input) = bash("ls");
        assert!(!yes.allows_unasked(&request, &input));
        let read = ApprovalRequest::new("read_file", ToolKind::Read, "a");
        assert!(check(&yes, &(read, json!({ "path": "a" }))).is_ok());
        yes.set_mode(Mode::Default);
        assert!(check(&yes, &bash("ls")).is_ok());
        assert_eq!(Mode::parse("acceptEdits"), Some(Mode::AcceptEdits));
        assert_eq!(Mode::parse("yolo"), None);
    }
}
