//! A call's arguments checked against the tool's input schema before anything is sent, so the
//! model hears what is wrong in words it can act on. The part of JSON Schema tools use is
//! checked: `type` (one or a list), `required`, `properties`, `additionalProperties: false`,
//! `enum`, `const` and `items`; other keywords are left to the server, which checks again.

use serde_json::Value;

/// The most problems reported for one call.
const MAX_PROBLEMS: usize = 8;

/// `Ok` when `arguments` fit `schema`; otherwise each problem, one line each, naming the path
/// (`arguments.owner`, `arguments.labels[2]`).
pub fn check(schema: &Value, arguments: &Value) -> Result<(), String> {
    let mut problems = Vec::new();
    walk(schema, arguments, "arguments", 0, &mut problems);
    if problems.is_empty() {
        Ok(())
    } else {
        problems.truncate(MAX_PROBLEMS);
        Err(problems.join("\n"))
    }
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(number) if number.is_i64() || number.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn fits_type(wanted: &str, value: &Value) -> bool {
    let actual = type_name(value);
    wanted == actual
        || (wanted == "number" && actual == "integer")
        || (wanted == "integer"
            && value
                .as_f64()
                .is_some_and(|number| number.fract() == 0.0 && number.is_finite()))
}

fn walk(schema: &Value, value: &Value, path: &str, depth: usize, problems: &mut Vec<String>) {
    if problems.len() >= MAX_PROBLEMS || depth > crate::catalog::MAX_SCHEMA_DEPTH {
        return;
    }
    let Some(schema) = schema.as_object() else {
        return;
    };
    let wanted: Vec<&str> = match schema.get("type") {
        Some(Value::String(one)) => vec![one.as_str()],
        Some(Value::Array(many)) => many.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    if !wanted.is_empty() && !wanted.iter().any(|wanted| fits_type(wanted, value)) {
        problems.push(format!(
            "{path}: expected {}, got {}",
            wanted.join(" or "),
            type_name(value)
        ));
        return;
    }
    if let Some(Value::Array(allowed)) = schema.get("enum")
        && !allowed.contains(value)
    {
        let shown: Vec<String> = allowed.iter().take(10).map(Value::to_string).collect();
        problems.push(format!("{path}: must be one of {}", shown.join(", ")));
    }
    if let Some(constant) = schema.get("const")
        && constant != value
    {
        problems.push(format!("{path}: must be {constant}"));
    }
    match value {
        Value::Object(map) => {
            let properties = schema.get("properties").and_then(Value::as_object);
            if let Some(Value::Array(required)) = schema.get("required") {
                for name in required.iter().filter_map(Value::as_str) {
                    if !map.contains_key(name) {
                        problems.push(format!("{path}.{name}: required, missing"));
                    }
                }
            }
            for (name, inner) in map {
                match properties.and_then(|properties| properties.get(name)) {
                    Some(property) => {
                        walk(
                            property,
                            inner,
                            &format!("{path}.{name}"),
                            depth + 1,
                            problems,
                        );
                    }
                    None if schema.get("additionalProperties") == Some(&Value::Bool(false)) => {
                        let known: Vec<&str> = properties
                            .map(|p| p.keys().map(String::as_str).collect())
                            .unwrap_or_default();
                        problems.push(format!(
                            "{path}.{name}: not a parameter of this tool (it takes: {})",
                            known.join(", ")
                        ));
                    }
                    None => {}
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items") {
                for (index, item) in items.iter().enumerate() {
                    walk(
                        item_schema,
                        item,
                        &format!("{path}[{index}]"),
                        depth + 1,
                        problems,
                    );
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn arguments_are_checked_against_the_schema() {
        let schema = json!({
            "type": "object",
            "properties": {
                "owner": {"type": "string"},
                "count": {"type": "integer"},
                "state": {"enum": ["open", "closed"]},
                "labels": {"type": "array", "items": {"type": "string"}},
                "ratio": {"type": ["number", "null"]}
            },
            "required": ["owner"],
            "additionalProperties": false
        });
        assert_eq!(
            check(&schema, &json!({"owner": "me", "count": 3, "ratio": null})),
            Ok(())
        );
        assert_eq!(
            check(&schema, &json!({"owner": "me", "count": 3.0, "ratio": 0.5})),
            Ok(())
        );
        let wrong = check(
            &schema,
            &json!({"count": "3", "state": "merged", "labels": ["a", 2], "extra": 1}),
        )
        .unwrap_err();
        for expected in [
            "arguments.owner: required, missing",
            "arguments.count: expected integer, got string",
            "arguments.state: must be one of \"open\", \"closed\"",
            "arguments.labels[1]: expected string, got integer",
            "arguments.extra: not a parameter of this tool",
        ] {
            assert!(wrong.contains(expected), "{expected} in:\n{wrong}");
        }
        assert!(
            check(&schema, &json!([]))
                .unwrap_err()
                .contains("expected object, got array")
        );
    }
}
