//! Who may write files and run commands. Reading is always allowed.

use std::collections::HashSet;
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
}

/// A call that needs the user's approval.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalRequest {
    /// The tool.
    pub tool: String,
    /// What it may do.
    pub kind: ToolKind,
    /// The command or path, for the question.
    pub summary: String,
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
}

impl Gate {
    /// A gate for this policy.
    pub fn new(permissions: Permissions) -> Self {
        Self {
            permissions,
            always: Mutex::new(HashSet::new()),
        }
    }

    /// `Ok` when the call may run; otherwise what the model is told.
    pub fn check(&self, request: &ApprovalRequest) -> Result<(), String> {
        if request.kind == ToolKind::Read {
            return Ok(());
        }
        match &self.permissions {
            Permissions::Allow => Ok(()),
            Permissions::Deny { reason } => Err(format!("denied: {reason}")),
            Permissions::Ask(approver) => {
                if self
                    .always
                    .lock()
                    .is_ok_and(|always| always.contains(&request.kind))
                {
                    return Ok(());
                }
                match approver.approve(request) {
                    Approval::Yes => Ok(()),
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
                }
            }
        }
    }
}
