//! Who may write files and run commands. Reading is always allowed.
//!
//! Tools that write or run ask the [`Gate`] themselves, once they know exactly what they will do
//! (a write shows its diff). A write to a protected path ([`crate::paths::protection`]) is
//! refused where nobody can be asked (`run`) and asked for each time in `chat`: "always" never
//! covers it.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use crate::grants::ActiveSkill;
use crate::rules::{Decision, Rules};

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
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Approval {
    /// Allow this call.
    Yes,
    /// Refuse this call.
    No,
    /// Allow this and every later call of this kind in the session.
    Always,
    /// Refuse this call and stop the turn (Ctrl-C at the prompt): no other call of the turn
    /// runs and no request follows; the turn ends with [`crate::AgentError::Cancelled`].
    Stop,
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

/// Applies the policy, remembering what the user allowed for the session, with the rules of
/// the skills active in this turn ([`crate::grants`]).
pub struct Gate {
    permissions: Permissions,
    /// The standing rules: deny, ask, allow.
    rules: Rules,
    always: Mutex<HashSet<ToolKind>>,
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

impl Gate {
    /// A gate for this policy.
    pub fn new(permissions: Permissions) -> Self {
        Self::with_rules(permissions, Rules::default())
    }

    /// A gate for this policy with standing rules.
    pub fn with_rules(permissions: Permissions, rules: Rules) -> Self {
        Self {
            permissions,
            rules,
            always: Mutex::new(HashSet::new()),
            active: Mutex::new(Vec::new()),
            next_turn: Mutex::new(Vec::new()),
            stopped: AtomicBool::new(false),
        }
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

    /// The active skill whose `allowed-tools` let this call run unasked.
    fn allowed_by(&self, tool: &str, input: &serde_json::Value) -> Option<String> {
        let active = self.active.lock().ok()?;
        active
            .iter()
            .find(|skill| skill.allows(tool, input))
            .map(|skill| skill.name.clone())
    }

    /// Whether this call may run without anyone being asked now: allowed by the policy (`run
    /// --yes`, "always" in chat) or by an active skill, not protected, not refused. What a
    /// skill's dynamic context runs must pass this: it never asks.
    pub fn allows_unasked(&self, request: &ApprovalRequest, input: &serde_json::Value) -> bool {
        if request.protected.is_some() || self.refusal(&request.tool, input).is_some() {
            return false;
        }
        match self.rules.decide(&request.tool, input) {
            Some((Decision::Ask, _)) => return false,
            Some((Decision::Allow, _)) => return true,
            _ => {}
        }
        request.kind == ToolKind::Read
            || self.asks_nobody(request.kind)
            || self.allowed_by(&request.tool, input).is_some()
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

    /// True when calls of this kind run without anyone being asked about each: `run --yes`, or
    /// `chat` once the user allowed the kind "always".
    pub fn asks_nobody(&self, kind: ToolKind) -> bool {
        match &self.permissions {
            Permissions::Allow => true,
            Permissions::Deny { .. } => false,
            Permissions::Ask(_) => self
                .always
                .lock()
                .is_ok_and(|always| always.contains(&kind)),
        }
    }

    /// A call a standing `ask` rule covers: asked about each time in `chat` ("always" does not
    /// cover it), refused where nobody can be asked.
    fn ask_each_time(
        &self,
        request: &ApprovalRequest,
        rule: &crate::rules::StandingRule,
    ) -> Result<(), String> {
        match &self.permissions {
            Permissions::Ask(_) if self.stopped() => Err(STOPPED.to_string()),
            Permissions::Ask(approver) => match approver.approve(request) {
                Approval::Yes | Approval::Always => Ok(()),
                Approval::No => Err(
                    "denied: the user refused this call; ask what they want instead".to_string(),
                ),
                Approval::Stop => {
                    self.stopped.store(true, Ordering::SeqCst);
                    Err(STOPPED.to_string())
                }
            },
            Permissions::Allow => Err(format!(
                "refused: the permission rule `{}` (ask, in {}) wants the user asked about this call, and nobody can be asked here; tell the user what you would run instead",
                rule.text, rule.source
            )),
            Permissions::Deny { reason } => Err(format!("denied: {reason}")),
        }
    }

    /// The standing rules.
    pub fn rules(&self) -> &Rules {
        &self.rules
    }

    /// `Ok` when the call (`input`, as the model gave it) may run; otherwise what the model is
    /// told. An active skill's `allowed-tools` let it run unasked, except on a protected path.
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
        if let Some((Decision::Ask, rule)) = standing {
            return self.ask_each_time(request, rule);
        }
        let allowed = matches!(standing, Some((Decision::Allow, _)))
            || self.allowed_by(&request.tool, input).is_some();
        if request.protected.is_none() && allowed {
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
            Permissions::Ask(_) if self.stopped() => Err(STOPPED.to_string()),
            Permissions::Ask(approver) => {
                if request.protected.is_none()
                    && self
                        .always
                        .lock()
                        .is_ok_and(|always| always.contains(&request.kind))
                {
                    return Ok(());
                }
                match approver.approve(request) {
                    Approval::Yes => Ok(()),
                    Approval::Always if request.protected.is_some() => Ok(()),
                    Approval::Always => {
                        if let Ok(mut always) = self.always.lock() {
                            always.insert(request.kind);
                        }
                        Ok(())
                    }
                    Approval::No => Err(
                        "denied: the user refused this call; ask what they want instead"
                            .to_string(),
                    ),
                    Approval::Stop => {
                        self.stopped.store(true, Ordering::SeqCst);
                        Err(STOPPED.to_string())
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Count(Mutex<Vec<Approval>>, Mutex<usize>);

    impl Approver for Count {
        fn approve(&self, _request: &ApprovalRequest) -> Approval {
            *self.1.lock().unwrap() += 1;
            self.0.lock().unwrap().remove(0)
        }
    }

    fn request(protected: Option<&'static str>) -> ApprovalRequest {
        ApprovalRequest {
            tool: "write_file".into(),
            kind: ToolKind::Write,
            summary: "x".into(),
            detail: None,
            protected,
        }
    }

    use serde_json::Value;

    #[test]
    fn always_never_covers_a_protected_path_and_run_refuses_it() {
        let approver = Arc::new(Count(
            Mutex::new(vec![Approval::Always, Approval::Always, Approval::No]),
            Mutex::new(0),
        ));
        let gate = Gate::new(Permissions::Ask(approver.clone()));
        assert!(gate.check(&request(None), &Value::Null).is_ok());
        assert!(
            gate.check(&request(None), &Value::Null).is_ok(),
            "remembered"
        );
        assert_eq!(*approver.1.lock().unwrap(), 1);
        assert!(
            gate.check(&request(Some("is inside .git")), &Value::Null)
                .is_ok()
        );
        assert!(
            gate.check(&request(Some("is inside .git")), &Value::Null)
                .is_err()
        );
        assert_eq!(*approver.1.lock().unwrap(), 3, "asked each time");
        let allow = Gate::new(Permissions::Allow);
        assert!(allow.check(&request(None), &Value::Null).is_ok());
        let refused = allow
            .check(&request(Some("is inside .git")), &Value::Null)
            .unwrap_err();
        assert!(refused.contains("is inside .git"), "{refused}");
    }
}
