//! Provider-neutral conversation types: what the agent keeps in its history and sends.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Who said a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The user (and tool results, which answer the model on the user's side).
    User,
    /// The model.
    Assistant,
}

/// One block of a message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentBlock {
    /// Text.
    Text {
        /// The text.
        text: String,
    },
    /// The model calls a tool.
    ToolUse {
        /// The call's id, which its result must name.
        id: String,
        /// The tool's name.
        name: String,
        /// The arguments (a JSON object; `{}` when the model sent none or they did not parse).
        input: Value,
    },
    /// An image the user gave (`@shot.png`, `run --image FILE`), sent inline.
    Image {
        /// Its type: `image/png`, `image/jpeg`, `image/gif` or `image/webp`
        /// ([`IMAGE_MEDIA_TYPES`]).
        media_type: String,
        /// Its bytes, base64 (standard alphabet, padded).
        data: String,
    },
    /// The model's thinking before it answered (Anthropic's extended thinking), kept so it can
    /// be sent back unchanged: the API checks `signature` and wants the thinking of a turn
    /// still using tools at the start of its first answer.
    Thinking {
        /// What it thought (a summary on recent models); shown dimmed, never obeyed.
        thinking: String,
        /// The provider's signature over it, sent back as it came.
        signature: String,
    },
    /// Thinking the provider's safety systems encrypted: never shown, sent back as it came.
    RedactedThinking {
        /// The encrypted thinking.
        data: String,
    },
    /// The result of a tool call.
    ToolResult {
        /// The id of the call this answers.
        tool_use_id: String,
        /// What the tool returned.
        content: String,
        /// True when the tool failed (the model should recover).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        is_error: bool,
    },
}

/// The smallest thinking budget Anthropic takes, in tokens.
pub const MIN_THINKING_BUDGET: u32 = 1_024;
/// The largest thinking budget taken, in tokens: the most output any Claude model gives
/// (128k, Sonnet 3.7 with its long-output beta); a model's own limit is lower, and Anthropic
/// refuses a request past it, saying so.
pub const MAX_THINKING_BUDGET: u32 = 128_000;

/// The image types both providers take inline.
pub const IMAGE_MEDIA_TYPES: [&str; 4] = ["image/png", "image/jpeg", "image/gif", "image/webp"];

/// The largest image sent, in bytes: its base64 form stays within Anthropic's 5 MB per image.
pub const MAX_IMAGE_BYTES: usize = 3_750_000;

impl ContentBlock {
    /// Whether this is the model's thinking (shown or redacted).
    pub fn is_thinking(&self) -> bool {
        matches!(self, Self::Thinking { .. } | Self::RedactedThinking { .. })
    }

    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text { text: text.into() }
    }

    /// An image block of `bytes`, its type read from the bytes themselves (never from a file's
    /// name); `None` when they are not a PNG, JPEG, GIF or WebP, or are over
    /// [`MAX_IMAGE_BYTES`].
    pub fn image(bytes: &[u8]) -> Option<Self> {
        use base64::Engine as _;
        if bytes.len() > MAX_IMAGE_BYTES {
            return None;
        }
        let media_type = image_type(bytes)?;
        Some(Self::Image {
            media_type: media_type.to_string(),
            data: base64::engine::general_purpose::STANDARD.encode(bytes),
        })
    }
}

/// The image type `bytes` start with: PNG, JPEG, GIF or WebP's signature.
pub fn image_type(bytes: &[u8]) -> Option<&'static str> {
    let [png, jpeg, gif, webp] = IMAGE_MEDIA_TYPES;
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some(png)
    } else if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
        Some(jpeg)
    } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        Some(gif)
    } else if bytes.len() >= 12 && bytes.starts_with(b"RIFF") && &bytes[8..12] == b"WEBP" {
        Some(webp)
    } else {
        None
    }
}

/// A message of the conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// Who said it.
    pub role: Role,
    /// What was said.
    pub content: Vec<ContentBlock>,
}

impl Message {
    /// A user message of one text block.
    pub fn user(text: impl Into<String>) -> Self {
        Self {
            role: Role::User,
            content: vec![ContentBlock::text(text)],
        }
    }

    /// The concatenated text blocks.
    pub fn text(&self) -> String {
        self.content
            .iter()
            .filter_map(|block| match block {
                ContentBlock::Text { text } => Some(text.as_str()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("")
    }

    /// The tool calls in this message, in order.
    pub fn tool_uses(&self) -> impl Iterator<Item = (&str, &str, &Value)> {
        self.content.iter().filter_map(|block| match block {
            ContentBlock::ToolUse { id, name, input } => Some((id.as_str(), name.as_str(), input)),
            _ => None,
        })
    }
}

/// A tool the model may call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// Its name.
    pub name: String,
    /// What it does, for the model.
    pub description: String,
    /// JSON Schema of its input object.
    pub input_schema: Value,
}

/// Why the model stopped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// It finished its answer.
    EndTurn,
    /// It wants tool results.
    ToolUse,
    /// It ran out of output tokens.
    MaxTokens,
    /// A stop sequence.
    StopSequence,
    /// Anything else the provider said.
    Other(String),
}

/// Token counts of one request, or summed over a session.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Input tokens not read from or written to the cache.
    pub input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// Input tokens written to the prompt cache.
    pub cache_write_tokens: u64,
    /// Input tokens read from the prompt cache.
    pub cache_read_tokens: u64,
}

impl Usage {
    /// Adds another count to this one.
    pub fn add(&mut self, other: Usage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cache_write_tokens += other.cache_write_tokens;
        self.cache_read_tokens += other.cache_read_tokens;
    }

    /// `in 1200 (cache read 1000, write 0) · out 35`.
    pub fn summary(&self) -> String {
        format!(
            "input {} tokens (cache read {}, cache write {}), output {} tokens",
            self.input_tokens, self.cache_read_tokens, self.cache_write_tokens, self.output_tokens
        )
    }
}

/// What to send: everything but the model's identity and transport.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    /// The system prompt.
    pub system: &'a str,
    /// The conversation so far.
    pub messages: &'a [Message],
    /// The tools offered.
    pub tools: &'a [ToolSpec],
    /// The most output tokens.
    pub max_tokens: u32,
    /// Stream the answer (server-sent events) or wait for it whole.
    pub stream: bool,
    /// Let the model think first, with at most this many tokens (at least
    /// [`MIN_THINKING_BUDGET`]; Anthropic's extended thinking, added to `max_tokens` so the
    /// answer keeps its own room); `None`: no thinking. The OpenAI dialect sends nothing for it.
    pub thinking: Option<u32>,
}

/// The model's whole answer to one request.
#[derive(Debug, Clone, PartialEq)]
pub struct Response {
    /// The assistant message. It holds no empty (or whitespace-only) text block, and every tool
    /// call's input is a JSON object; it may be empty when the model said nothing.
    pub message: Message,
    /// Why it stopped.
    pub stop_reason: StopReason,
    /// What it cost.
    pub usage: Usage,
    /// Tool calls whose arguments could not be read (cut off by the output limit, or not a
    /// JSON object). Each stays in [`Response::message`] with input `{}`, so the history stays
    /// valid; the caller should answer it with an error result naming [`MalformedCall::error`]
    /// instead of running it.
    pub malformed_calls: Vec<MalformedCall>,
}

/// A tool call whose arguments could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MalformedCall {
    /// The call's id (its block in the message has input `{}`).
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// What was wrong, for the model: `the arguments are not valid JSON (EOF while parsing …);
    /// they were probably cut off by the output limit`.
    pub error: String,
}

/// What a provider reports while an answer streams in, for showing it as it comes.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamEvent {
    /// More text.
    TextDelta(String),
    /// More of the model's thinking (Anthropic's `thinking_delta`, or the `reasoning_content`
    /// some OpenAI-compatible servers stream); for showing only.
    ThinkingDelta(String),
    /// A tool call begins.
    ToolUseStart {
        /// The call's id.
        id: String,
        /// The tool's name.
        name: String,
    },
    /// A request is retried after an error.
    Retrying {
        /// Which attempt comes next (2 for the first retry).
        attempt: u32,
        /// How long it waits first.
        delay_ms: u64,
        /// Why.
        reason: String,
    },
}
