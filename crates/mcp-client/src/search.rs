//! `search_tools`' ranking: every server's tools as documents for skillet's own matcher (by
//! words over names, descriptions and parameter names; by meaning too when the session has its
//! embedding model), blended as skills are.

use std::collections::HashMap;
use std::sync::Mutex;

use skillet_library::index::SkillIndex;
use skillet_retrieval::{Matcher, Mode};

use crate::catalog::ToolDef;

/// The most tools one search returns.
pub const MAX_RESULTS: usize = 10;
/// How many a search returns unless asked for another number.
pub const DEFAULT_RESULTS: usize = 5;

/// The words a tool is found by: its name's words twice (as a skill's name counts), its
/// server, its description, its parameters' names.
pub fn words(tool: &ToolDef) -> String {
    let name = split_name(&tool.name);
    format!(
        "{name} {name} {} {} {}",
        tool.server,
        tool.description,
        tool.parameters()
            .iter()
            .map(|parameter| split_name(parameter))
            .collect::<Vec<_>>()
            .join(" ")
    )
}

/// The text a tool is embedded by: `name words: description`.
pub fn meaning(tool: &ToolDef) -> String {
    let description: String = tool.description.chars().take(1000).collect();
    format!("{}: {description}", split_name(&tool.name))
}

/// `createIssue`, `create_issue`, `create-issue` and `files.read` as words.
fn split_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    let mut previous_lower = false;
    for c in name.chars() {
        if matches!(c, '_' | '-' | '.' | '/') {
            out.push(' ');
            previous_lower = false;
            continue;
        }
        if c.is_ascii_uppercase() && previous_lower {
            out.push(' ');
        }
        previous_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
        out.push(c.to_ascii_lowercase());
    }
    out
}

/// Vectors of tools already embedded, by their text (a tool listed again unchanged is not
/// embedded again).
#[derive(Default)]
pub struct Vectors {
    known: Mutex<HashMap<String, Vec<f32>>>,
}

/// The most vectors kept (a server that renames its tools at every listing cannot grow this).
const MAX_VECTORS: usize = 4096;

impl Vectors {
    /// One vector per tool from `index`'s model, `None` without one (or if it fails).
    fn of(&self, tools: &[ToolDef], index: &SkillIndex) -> Option<(usize, Vec<f32>)> {
        let texts: Vec<String> = tools.iter().map(meaning).collect();
        let mut known = self.known.lock().ok()?;
        let missing: Vec<&str> = texts
            .iter()
            .filter(|text| !known.contains_key(*text))
            .map(String::as_str)
            .collect();
        if !missing.is_empty() {
            let vectors = index.embed_texts(&missing).ok()??;
            if known.len() + missing.len() > MAX_VECTORS {
                known.clear();
            }
            for (text, vector) in missing.iter().zip(vectors) {
                known.insert((*text).to_string(), vector);
            }
        }
        let dimensions = known.values().next()?.len();
        let mut flat = Vec::with_capacity(dimensions * tools.len());
        for text in &texts {
            let vector = known.get(text)?;
            if vector.len() != dimensions {
                return None;
            }
            flat.extend_from_slice(vector);
        }
        Some((dimensions, flat))
    }
}

/// The best `k` of `tools` for `query`, best first: by words and meaning when `index` has a
/// model, else by words (only tools sharing a word with the query).
pub fn rank(
    tools: &[ToolDef],
    query: &str,
    k: usize,
    index: Option<&SkillIndex>,
    vectors: &Vectors,
) -> Vec<usize> {
    if tools.is_empty() {
        return Vec::new();
    }
    let texts: Vec<String> = tools.iter().map(words).collect();
    let mut matcher = Matcher::new(texts.iter().map(String::as_str));
    let mut query_vector = None;
    if let Some(index) = index.filter(|index| index.has_model())
        && let Some((dimensions, flat)) = vectors.of(tools, index)
    {
        matcher = matcher.with_vectors(dimensions, flat);
        query_vector = index.embed_query(query).ok().flatten();
    }
    let (_, ranked) = matcher.rank(query, query_vector.as_deref(), Mode::Hybrid, k);
    ranked.into_iter().map(|ranked| ranked.index).collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn tool(name: &str, description: &str) -> ToolDef {
        ToolDef {
            server: "s".into(),
            name: name.into(),
            qualified: crate::catalog::qualified_name("s", name),
            description: description.into(),
            schema: json!({"type": "object", "properties": {"repoName": {}}}),
            read_only: false,
        }
    }

    #[test]
    fn names_split_into_words() {
        assert_eq!(split_name("createIssue"), "create issue");
        assert_eq!(split_name("files.read_all-v2"), "files read all v2");
        assert!(words(&tool("x", "y")).contains("repo name"));
    }

    #[test]
    fn words_rank_without_a_model() {
        let tools = [
            tool("create_issue", "Open a new issue in a repository"),
            tool("list_pull_requests", "List pull requests of a repository"),
            tool("query", "Run a SQL query against the database"),
        ];
        let vectors = Vectors::default();
        assert_eq!(
            rank(&tools, "run sql on the database", 3, None, &vectors)[0],
            2
        );
        assert_eq!(rank(&tools, "open an issue", 3, None, &vectors)[0], 0);
        assert!(rank(&tools, "zebra", 3, None, &vectors).is_empty());
    }
}
