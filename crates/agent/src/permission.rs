//! Who may write files and run commands. Reading is always allowed.
//!
//! Tools that write or run ask the [`Gate`] themselves, once they know exactly what they will do
//! (a write shows its diff). A write to a protected path ([`crate::paths::protection`]) is
//! refused where nobody can be asked (`run`) and asked for each time in `chat`: "always" never
//! covers it.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use crate::tool::ToolKind;

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

/// Applies the policy, remembering what the user allowed for the session.
pub struct Gate {
    permissions: Permissions,
    always: Mutex<HashSet<ToolKind>>,
    /// The user answered [`Approval::Stop`] in this turn (shared with subagents, whose gate
    /// this is too).
    stopped: AtomicBool,
}

/// What the model is told of the call the user stopped the turn at.
const STOPPED: &str = "denied: the user stopped the turn here";

impl Gate {
    /// A gate for this policy.
    pub fn new(permissions: Permissions) -> Self {
        Self {
            permissions,
            always: Mutex::new(HashSet::new()),
            stopped: AtomicBool::new(false),
        }
    }

    /// Whether the user stopped the turn at an approval prompt.
    pub fn stopped(&self) -> bool {
        self.stopped.load(Ordering::SeqCst)
    }

    /// A new turn starts: an earlier stop no longer counts.
    pub(crate) fn start_turn(&self) {
        self.stopped.store(false, Ordering::SeqCst);
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

    /// `Ok` when the call may run; otherwise what the model is told.
    pub fn check(&self, request: &ApprovalRequest) -> Result<(), String> {
        if request.kind == ToolKind::Read {
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

    #[test]
    fn always_never_covers_a_protected_path_and_run_refuses_it() {
        let approver = Arc::new(Count(
            Mutex::new(vec![Approval::Always, Approval::Always, Approval::No]),
            Mutex::new(0),
        ));
        let gate = Gate::new(Permissions::Ask(approver.clone()));
        assert!(gate.check(&request(None)).is_ok());
        assert!(gate.check(&request(None)).is_ok(), "remembered");
        assert_eq!(*approver.1.lock().unwrap(), 1);
        assert!(gate.check(&request(Some("is inside .git"))).is_ok());
        assert!(gate.check(&request(Some("is inside .git"))).is_err());
        assert_eq!(*approver.1.lock().unwrap(), 3, "asked each time");
        let allow = Gate::new(Permissions::Allow);
        assert!(allow.check(&request(None)).is_ok());
        let refused = allow.check(&request(Some("is inside .git"))).unwrap_err();
        assert!(refused.contains("is inside .git"), "{refused}");
    }
}
