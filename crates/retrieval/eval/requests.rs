//! The evaluation's request files (`*.jsonl`, one `{"query": …, "expected": [names]}` a line;
//! no `expected` for a request no skill fits), read the same way by every example and test.

use std::path::Path;

/// One request and the skills that would be right for it (none: no skill fits).
pub struct Request {
    pub query: String,
    pub expected: Vec<String>,
}

/// Every request of a file.
pub fn load(path: &Path) -> Vec<Request> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| {
            let value: serde_json::Value = serde_json::from_str(line).unwrap();
            Request {
                query: value["query"].as_str().unwrap().to_string(),
                expected: value
                    .get("expected")
                    .and_then(serde_json::Value::as_array)
                    .map(|names| {
                        names
                            .iter()
                            .map(|n| n.as_str().unwrap().to_string())
                            .collect()
                    })
                    .unwrap_or_default(),
            }
        })
        .collect()
}
