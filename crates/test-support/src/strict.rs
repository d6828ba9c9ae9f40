//! The strict half of [`crate::MockServer`]: checks a request body the way the real APIs do and
//! words each refusal as they do (HTTP 400, their error body), so a test fails where the real
//! service would. It models the services, not skillet: it reads only the JSON that was sent and
//! shares no code with the client under test.
//!
//! [`anthropic`] holds the Messages API's rules, [`openai`] those of Chat Completions. Where
//! a service's exact wording is not known (noted at the rule), the message says the same thing
//! in that service's style.

pub mod anthropic;
pub mod openai;
pub mod thinking;

use serde_json::{Value, json};

/// Which API a request speaks, by its path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// The Anthropic Messages API (`…/messages`).
    Anthropic,
    /// OpenAI Chat Completions (`…/chat/completions`).
    OpenAi,
}

impl Dialect {
    /// The dialect of a request path; `None` for paths neither API serves.
    pub fn of(path: &str) -> Option<Self> {
        if path.ends_with("/messages") {
            Some(Self::Anthropic)
        } else if path.ends_with("/chat/completions") {
            Some(Self::OpenAi)
        } else {
            None
        }
    }

    /// Checks a request body against this API's rules.
    pub fn check(self, body: &Value) -> Result<(), Rejection> {
        match self {
            Self::Anthropic => anthropic::check(body),
            Self::OpenAi => openai::check(body),
        }
    }
}

/// Why the API refuses a request (it answers HTTP 400).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejection {
    /// The message, worded as the API words it.
    pub message: String,
    /// OpenAI's `param` (`messages.[3].role`); `None` sends `null` (and Anthropic has none).
    pub param: Option<String>,
    /// OpenAI's `code` (`invalid_type`, `unsupported_parameter`); `None` sends `null`.
    pub code: Option<String>,
}

impl Rejection {
    /// A refusal with this message, no `param` and no `code`.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            param: None,
            code: None,
        }
    }

    /// Sets OpenAI's `param`.
    #[must_use]
    pub fn param(mut self, param: impl Into<String>) -> Self {
        self.param = Some(param.into());
        self
    }

    /// Sets OpenAI's `code`.
    #[must_use]
    pub fn code(mut self, code: impl Into<String>) -> Self {
        self.code = Some(code.into());
        self
    }

    /// The 400 body the API sends: `{"type":"error","error":{"type":"invalid_request_error",
    /// "message":…}}` for Anthropic, `{"error":{"message":…,"type":"invalid_request_error",
    /// "param":…,"code":…}}` for OpenAI.
    pub fn body(&self, dialect: Dialect) -> String {
        match dialect {
            Dialect::Anthropic => json!({
                "type": "error",
                "error": {"type": "invalid_request_error", "message": self.message},
            }),
            Dialect::OpenAi => json!({
                "error": {
                    "message": self.message,
                    "type": "invalid_request_error",
                    "param": self.param,
                    "code": self.code,
                },
            }),
        }
        .to_string()
    }
}

/// `Err` with a refusal.
pub(crate) fn reject<T>(rejection: Rejection) -> Result<T, Rejection> {
    Err(rejection)
}

/// The name of a JSON value's type, as validators say it.
pub(crate) fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Whether `name` matches `^[a-zA-Z0-9_-]{1,max}$`, the pattern both APIs give ids and names.
pub(crate) fn is_identifier(name: &str, max: usize) -> bool {
    (1..=max).contains(&name.len())
        && name
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'-')
}
