//! The frontmatter fields of a skill, read leniently from the raw YAML mapping.

use yaml_serde::{Mapping, Value};

/// Field names the specification defines.
pub const SPEC_FIELDS: [&str; 6] = [
    "allowed-tools",
    "compatibility",
    "description",
    "license",
    "metadata",
    "name",
];

/// Fields that clients (Claude Code, `OpenCode`, Codex) read but the specification does not define.
/// `validate` reports them as warnings, unknown fields as errors.
pub const CLIENT_FIELDS: [&str; 14] = [
    "agent",
    "argument-hint",
    "arguments",
    "context",
    "disable-model-invocation",
    "disallowed-tools",
    "effort",
    "hooks",
    "model",
    "paths",
    "tags",
    "user-invocable",
    "when_to_use",
    "when-to-use",
];

/// Every field of a skill's frontmatter, read leniently.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Frontmatter {
    /// `name`, trimmed; `None` when absent or not a scalar.
    pub name: Option<String>,
    /// `description`, folded to one line; `None` when absent, empty or not a scalar.
    pub description: Option<String>,
    /// `license`.
    pub license: Option<String>,
    /// `compatibility`.
    pub compatibility: Option<String>,
    /// `metadata`, each value coerced to a string, in file order.
    pub metadata: Vec<(String, String)>,
    /// `allowed-tools`: a space-separated string, a comma list or a YAML list.
    pub allowed_tools: Vec<String>,
    /// `disallowed-tools`: tools refused while the skill is active, spelled as `allowed-tools`.
    pub disallowed_tools: Vec<String>,
    /// `context`: `fork` runs the skill as a subagent with a fresh history.
    pub context: Option<String>,
    /// `model`: the model a forked skill runs on (`inherit`: the session's).
    pub model: Option<String>,
    /// `disable-model-invocation`: the model may not load the skill; it is left out of the catalog.
    pub disable_model_invocation: bool,
    /// `user-invocable` (default true): whether the user may invoke the skill as `/name`.
    pub user_invocable: bool,
    /// `when_to_use` (also `when-to-use`), folded to one line.
    pub when_to_use: Option<String>,
    /// `argument-hint`.
    pub argument_hint: Option<String>,
    /// `arguments`: names for the positional arguments, in order (`$name` in the body stands for
    /// the argument at that position); a YAML list or a space- or comma-separated string.
    pub arguments: Vec<String>,
    /// `tags`: a YAML list or a comma-separated string.
    pub tags: Vec<String>,
    /// Keys that are neither in the specification nor known client fields, in file order.
    pub unknown_fields: Vec<String>,
    /// Problems met while reading the fields: (field, message).
    pub problems: Vec<(String, String)>,
}

impl Frontmatter {
    /// Reads the fields of `mapping`, recording what could not be read in `problems`.
    pub fn from_mapping(mapping: &Mapping) -> Self {
        let mut fields = Self {
            user_invocable: true,
            ..Self::default()
        };
        for (key, value) in mapping {
            let Some(key) = scalar_string(key) else {
                fields
                    .problems
                    .push((String::new(), "a frontmatter key is not a string".into()));
                continue;
            };
            fields.read_field(&key, value);
        }
        fields
    }

    fn read_field(&mut self, key: &str, value: &Value) {
        match key {
            "name" => self.name = self.text(key, value).map(|name| name.trim().to_string()),
            "description" => {
                self.description = self.text(key, value).as_deref().and_then(fold_nonempty);
            }
            "license" => self.license = self.text(key, value),
            "compatibility" => self.compatibility = self.text(key, value),
            "when_to_use" | "when-to-use" => {
                self.when_to_use = self
                    .text(key, value)
                    .as_deref()
                    .and_then(fold_nonempty)
                    .map(|text| self.one_line(key, &text));
            }
            "argument-hint" => {
                self.argument_hint = self.text(key, value).map(|text| self.one_line(key, &text));
            }
            "arguments" => {
                let names = self.list(key, value, split_tags);
                self.arguments = names.iter().map(|name| self.one_line(key, name)).collect();
            }
            "metadata" => self.metadata = self.string_map(key, value),
            "allowed-tools" => self.allowed_tools = self.list(key, value, split_tool_list),
            "disallowed-tools" => {
                self.disallowed_tools = self.list(key, value, split_tool_list);
            }
            "context" => self.context = self.text(key, value).map(|text| text.trim().to_string()),
            "model" => self.model = self.text(key, value).map(|text| text.trim().to_string()),
            "tags" => self.tags = self.list(key, value, split_tags),
            "disable-model-invocation" => {
                self.disable_model_invocation = self.boolean(key, value).unwrap_or(false);
            }
            "user-invocable" => self.user_invocable = self.boolean(key, value).unwrap_or(true),
            _ if SPEC_FIELDS.contains(&key) || CLIENT_FIELDS.contains(&key) => {}
            _ => self.unknown_fields.push(key.to_string()),
        }
    }

    /// A field shown on one line to a model or a client (`when_to_use`, `argument-hint`,
    /// argument names), cleaned at the source as descriptions are: line breaks made spaces,
    /// what hides or reorders text removed ([`crate::clean::hiding`]), a problem saying so.
    fn one_line(&mut self, field: &str, text: &str) -> String {
        let folded = text.replace(['\n', '\r'], " ");
        let (cleaned, removed) = crate::clean::clean_description(folded.trim());
        if removed.any() {
            let hidden: String = removed
                .hidden
                .chars()
                .take(crate::skill::MAX_HIDDEN_SHOWN)
                .collect();
            self.problem(
                field,
                format!(
                    "Field '{field}': removed {} control, invisible or reordering character(s){}",
                    removed.control
                        + removed.bidi
                        + removed.zero_width
                        + removed.variation
                        + removed.tags,
                    if hidden.is_empty() {
                        String::new()
                    } else {
                        format!(" (tag characters hiding {hidden:?})")
                    }
                ),
            );
        }
        cleaned
    }

    fn problem(&mut self, field: &str, message: String) {
        self.problems.push((field.to_string(), message));
    }

    /// A scalar as text; null is absent; a list or map is a problem.
    fn text(&mut self, field: &str, value: &Value) -> Option<String> {
        if value.is_null() {
            return None;
        }
        let text = scalar_string(value);
        if text.is_none() {
            self.problem(field, format!("Field '{field}' must be a string"));
        }
        text
    }

    fn boolean(&mut self, field: &str, value: &Value) -> Option<bool> {
        let parsed = match value {
            Value::Bool(flag) => Some(*flag),
            Value::Number(number) => match number.as_i64() {
                Some(0) => Some(false),
                Some(1) => Some(true),
                _ => None,
            },
            Value::String(text) => parse_bool(text),
            _ => None,
        };
        if parsed.is_none() {
            self.problem(
                field,
                format!("Field '{field}' must be a boolean (true/false, yes/no, on/off, 1/0)"),
            );
        }
        parsed
    }

    fn list(&mut self, field: &str, value: &Value, split: fn(&str) -> Vec<String>) -> Vec<String> {
        match value {
            Value::Null => Vec::new(),
            Value::Sequence(items) => {
                let mut out = Vec::with_capacity(items.len());
                for item in items {
                    match scalar_string(item) {
                        Some(text) => out.push(text.trim().to_string()),
                        None => self.problem(
                            field,
                            format!("Field '{field}' list items must all be strings"),
                        ),
                    }
                }
                out
            }
            Value::String(text) => split(text),
            _ => {
                self.problem(
                    field,
                    format!("Field '{field}' must be either a string or a list of strings"),
                );
                Vec::new()
            }
        }
    }

    fn string_map(&mut self, field: &str, value: &Value) -> Vec<(String, String)> {
        match value {
            Value::Null => Vec::new(),
            Value::Mapping(mapping) => {
                let mut out = Vec::with_capacity(mapping.len());
                for (key, item) in mapping {
                    match (scalar_string(key), scalar_string(item)) {
                        (Some(key), Some(item)) => out.push((key, item)),
                        (Some(key), None) if item.is_null() => out.push((key, String::new())),
                        _ => {
                            self.problem(
                                field,
                                format!("Field '{field}' must be a map of strings"),
                            );
                        }
                    }
                }
                out
            }
            _ => {
                self.problem(field, format!("Field '{field}' must be a map of strings"));
                Vec::new()
            }
        }
    }
}

/// A scalar's text: strings as they are, numbers and booleans as YAML writes them.
pub(crate) fn scalar_string(value: &Value) -> Option<String> {
    match value {
        Value::String(text) => Some(text.clone()),
        Value::Number(number) => Some(number.to_string()),
        Value::Bool(flag) => Some(flag.to_string()),
        Value::Tagged(tagged) => scalar_string(&tagged.value),
        _ => None,
    }
}

/// `true/false/yes/no/on/off/1/0`, any case.
pub fn parse_bool(text: &str) -> Option<bool> {
    match text.trim().to_ascii_lowercase().as_str() {
        "true" | "yes" | "on" | "1" | "y" => Some(true),
        "false" | "no" | "off" | "0" | "n" => Some(false),
        _ => None,
    }
}

/// Folds whitespace runs (newlines included) into single spaces.
pub fn fold_whitespace(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for word in text.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

fn fold_nonempty(text: &str) -> Option<String> {
    let folded = fold_whitespace(text);
    (!folded.is_empty()).then_some(folded)
}

/// Splits a tool list: on commas when there are any outside parentheses, else on whitespace
/// outside parentheses (`Bash(git add:*) Read` is two tools).
fn split_tool_list(text: &str) -> Vec<String> {
    let has_top_level_comma = {
        let mut depth = 0_i32;
        text.chars().any(|c| {
            match c {
                '(' => depth += 1,
                ')' => depth -= 1,
                _ => {}
            }
            c == ',' && depth == 0
        })
    };
    let mut out = Vec::new();
    let mut current = String::new();
    let mut depth = 0_i32;
    for c in text.chars() {
        let separator = if has_top_level_comma {
            c == ','
        } else {
            c.is_whitespace()
        };
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            _ => {}
        }
        if separator && depth == 0 {
            push_trimmed(&mut out, &current);
            current.clear();
        } else {
            current.push(c);
        }
    }
    push_trimmed(&mut out, &current);
    out
}

/// Splits tags given as a string: on commas, else on whitespace.
fn split_tags(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    if text.contains(',') {
        for part in text.split(',') {
            push_trimmed(&mut out, part);
        }
    } else {
        for part in text.split_whitespace() {
            push_trimmed(&mut out, part);
        }
    }
    out
}

fn push_trimmed(out: &mut Vec<String>, part: &str) {
    let part = part.trim();
    if !part.is_empty() {
        out.push(part.to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn fields(yaml: &str) -> Frontmatter {
        let value: Value = yaml_serde::from_str(yaml).unwrap();
        Frontmatter::from_mapping(value.as_mapping().unwrap())
    }

    #[test]
    fn allowed_tools_in_three_spellings() {
        assert_eq!(
            fields("allowed-tools: Bash(git add:*) Read").allowed_tools,
            ["Bash(git add:*)", "Read"]
        );
        assert_eq!(
            fields("allowed-tools: Read, Grep, Bash(a, b)").allowed_tools,
            ["Read", "Grep", "Bash(a, b)"]
        );
        assert_eq!(
            fields("allowed-tools:\n  - Read\n  - Grep").allowed_tools,
            ["Read", "Grep"]
        );
        assert_eq!(
            fields("allowed-tools: [Read, Grep]").allowed_tools,
            ["Read", "Grep"]
        );
        let forked = fields("disallowed-tools: Write, Bash(rm:*)\ncontext: fork\nmodel: haiku");
        assert_eq!(forked.disallowed_tools, ["Write", "Bash(rm:*)"]);
        assert_eq!(
            (forked.context.as_deref(), forked.model.as_deref()),
            (Some("fork"), Some("haiku"))
        );
    }

    #[test]
    fn allowed_tools_of_wrong_type_is_a_problem() {
        let read = fields("allowed-tools: 123");
        assert!(read.allowed_tools.is_empty());
        assert_eq!(
            read.problems,
            [(
                "allowed-tools".to_string(),
                "Field 'allowed-tools' must be either a string or a list of strings".to_string()
            )]
        );
        let read = fields("allowed-tools:\n  - Read\n  - {a: b}");
        assert_eq!(read.allowed_tools, ["Read"]);
        assert_eq!(read.problems.len(), 1);
    }

    #[test]
    fn booleans_in_every_spelling() {
        for (text, expected) in [
            ("true", true),
            ("yes", true),
            ("on", true),
            ("1", true),
            ("'yes'", true),
            ("false", false),
            ("no", false),
            ("off", false),
            ("0", false),
            ("Off", false),
        ] {
            let read = fields(&format!("disable-model-invocation: {text}"));
            assert_eq!(read.disable_model_invocation, expected, "{text}");
            assert!(read.problems.is_empty(), "{text}");
        }
        let read = fields("user-invocable: no");
        assert!(!read.user_invocable);
        let read = fields("user-invocable: maybe");
        assert!(read.user_invocable);
        assert_eq!(read.problems.len(), 1);
    }

    #[test]
    fn description_is_folded() {
        let read = fields("description: >-\n  line one\n  line two\n");
        assert_eq!(read.description.as_deref(), Some("line one line two"));
        let read = fields("description: |\n  a\n\n  b   c\n");
        assert_eq!(read.description.as_deref(), Some("a b c"));
    }

    #[test]
    fn metadata_values_are_coerced_to_strings() {
        let read = fields("metadata:\n  author: Test\n  version: 1.0\n  stable: true\n");
        assert_eq!(
            read.metadata,
            [
                ("author".to_string(), "Test".to_string()),
                ("version".to_string(), "1.0".to_string()),
                ("stable".to_string(), "true".to_string())
            ]
        );
        assert!(read.problems.is_empty());
        let read = fields("metadata: [a]");
        assert_eq!(read.problems.len(), 1);
    }

    #[test]
    fn numeric_name_is_text_and_unknown_fields_are_kept() {
        let read = fields("name: 123\nrequires: {mcp: [rube]}\nwhen_to_use: now\ntags: a, b");
        assert_eq!(read.name.as_deref(), Some("123"));
        assert_eq!(read.unknown_fields, ["requires"]);
        assert_eq!(read.when_to_use.as_deref(), Some("now"));
        assert_eq!(read.tags, ["a", "b"]);
    }
}
