//! Schema violations in words: each [`jsonschema`] error of a state file becomes a
//! [`Problem`] naming the field (`crawler.maxPages`), what was expected and what was
//! found; an unknown field gets the closest known name as a suggestion.

use crate::problem::Problem;
use crate::state;
use serde_json::Value;

/// Checks `value` against the published schema; one problem per violation.
pub fn schema_problems(value: &Value) -> Vec<Problem> {
    let schema: Value = serde_json::from_str(&state::json_schema()).expect("the schema is JSON");
    let validator = jsonschema::options()
        .should_validate_formats(true)
        .build(&schema)
        .expect("the state schema compiles");
    let mut out: Vec<Problem> = validator
        .iter_errors(value)
        .flat_map(|e| describe(&schema, &e))
        .collect();
    out.sort_by(|a, b| a.field.cmp(&b.field));
    out.dedup();
    out
}

fn describe(schema: &Value, e: &jsonschema::ValidationError<'_>) -> Vec<Problem> {
    use jsonschema::error::ValidationErrorKind as K;
    // `oneOf`/`anyOf`: an enum of documented constants, or alternatives.
    if let K::OneOfNotValid { context } | K::AnyOf { context } = e.kind() {
        let consts: Option<Vec<String>> = context
            .iter()
            .map(|branch| match branch.as_slice() {
                [one] => match one.kind() {
                    K::Constant { expected_value } => Some(expected_value.to_string()),
                    _ => None,
                },
                _ => None,
            })
            .collect();
        if let Some(consts) = consts.filter(|c| !c.is_empty()) {
            return vec![Problem {
                field: dotted(&segments_of(e)),
                message: format!(
                    "expected one of {}, found {}",
                    consts.join(", "),
                    found(e.instance())
                ),
            }];
        }
        let inner: Vec<Problem> = context
            .iter()
            .flatten()
            .flat_map(|sub| describe(schema, sub))
            .collect();
        if !inner.is_empty() {
            return inner;
        }
    }
    vec![describe_one(schema, e)]
}

fn segments_of(e: &jsonschema::ValidationError<'_>) -> Vec<String> {
    e.instance_path()
        .to_string()
        .split('/')
        .skip(1)
        .map(|s| s.replace("~1", "/").replace("~0", "~"))
        .collect()
}

fn describe_one(schema: &Value, e: &jsonschema::ValidationError<'_>) -> Problem {
    use jsonschema::error::ValidationErrorKind as K;
    let segments = segments_of(e);
    let field = dotted(&segments);
    let found = || found(e.instance());
    let (field, message) = match e.kind() {
        K::Required { property } => {
            let name = property.as_str().unwrap_or_default();
            (join(&field, name), "is required, and missing".to_owned())
        }
        K::AdditionalProperties { unexpected } => {
            let known = known_fields(schema, &segments);
            let names = unexpected.join("`, `");
            let hint = unexpected
                .first()
                .and_then(|u| closest(u, &known))
                .map(|c| format!(" (did you mean `{c}`?)"))
                .unwrap_or_default();
            let at = if field.is_empty() {
                "the top level".to_owned()
            } else {
                format!("`{field}`")
            };
            (
                join(&field, unexpected.first().map_or("", String::as_str)),
                format!(
                    "unknown field `{names}` in {at}{hint}; expected one of: {}",
                    known.join(", ")
                ),
            )
        }
        K::Type { kind } => (
            field,
            format!("expected {}, found {}", type_words(kind), found()),
        ),
        K::Enum { options } => (
            field,
            format!("expected one of {}, found {}", list(options), found()),
        ),
        K::Minimum { limit } => (
            field,
            format!("expected a number ≥ {limit}, found {}", found()),
        ),
        K::Maximum { limit } => (
            field,
            format!("expected a number ≤ {limit}, found {}", found()),
        ),
        K::MinItems { limit } => (
            field,
            format!("expected at least {limit} item(s), found {}", found()),
        ),
        K::MinLength { limit } => (
            field,
            format!("expected at least {limit} character(s), found {}", found()),
        ),
        K::Pattern { .. } if credentials_in_broker(&field, e.instance()) => {
            (field, BROKER_CREDENTIALS.to_owned())
        }
        K::Pattern { pattern } => (
            field,
            format!("expected text matching `{pattern}`, found {}", found()),
        ),
        K::Format { format } => (
            field,
            format!("expected a valid `{format}`, found {}", found()),
        ),
        _ => (field, format!("{e} (found {})", found())),
    };
    Problem { field, message }
}

/// `queue.broker` with a user, password or token in it (the pattern's `[^@]+` refuses it):
/// said without the value, which is never printed.
fn credentials_in_broker(field: &str, value: &Value) -> bool {
    field == "queue.broker" && value.as_str().is_some_and(|url| url.contains('@'))
}

const BROKER_CREDENTIALS: &str = "takes no credentials (the URL given has some, not shown \
     here): put `user:password` or the token in a file and name it in `queue.credentialsFile`";

pub(crate) fn dotted(segments: &[String]) -> String {
    let mut s = String::new();
    for seg in segments {
        if seg.parse::<usize>().is_ok() {
            s.push_str(&format!("[{seg}]"));
        } else {
            if !s.is_empty() {
                s.push('.');
            }
            s.push_str(seg);
        }
    }
    s
}

fn join(field: &str, name: &str) -> String {
    if field.is_empty() {
        name.to_owned()
    } else {
        format!("{field}.{name}")
    }
}

fn found(v: &Value) -> String {
    let kind = match v {
        Value::Null => return "null".to_owned(),
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    };
    let mut text = v.to_string();
    if text.chars().count() > 60 {
        text = text.chars().take(57).collect::<String>() + "...";
    }
    format!("{text} ({kind})")
}

fn type_words(kind: &jsonschema::error::TypeKind) -> String {
    use jsonschema::error::TypeKind;
    let word = |t: &jsonschema::JsonType| match t.to_string().as_str() {
        "integer" => "an integer ≥ 0".to_owned(),
        "object" => "an object".to_owned(),
        "array" => "an array".to_owned(),
        "null" => "null".to_owned(),
        other => format!("a {other}"),
    };
    match kind {
        TypeKind::Single(t) => word(t),
        TypeKind::Multiple(ts) => ts.iter().map(|t| word(&t)).collect::<Vec<_>>().join(" or "),
    }
}

fn list(options: &Value) -> String {
    match options {
        Value::Array(items) => items
            .iter()
            .map(Value::to_string)
            .collect::<Vec<_>>()
            .join(", "),
        other => other.to_string(),
    }
}

/// Follows `$ref`s inside `schema` from `node`.
fn resolve_ref<'a>(schema: &'a Value, mut node: &'a Value) -> &'a Value {
    for _ in 0..8 {
        match node.get("$ref").and_then(Value::as_str) {
            Some(r) => match r.strip_prefix('#').and_then(|ptr| schema.pointer(ptr)) {
                Some(n) => node = n,
                None => break,
            },
            None => break,
        }
    }
    node
}

/// The property names the schema allows at `segments` (following `$ref`s).
fn known_fields(schema: &Value, segments: &[String]) -> Vec<String> {
    let resolve = |node| resolve_ref(schema, node);
    let mut node = resolve(schema);
    for seg in segments {
        let next = if seg.parse::<usize>().is_ok() {
            node.get("items")
        } else {
            node.get("properties").and_then(|p| p.get(seg))
        };
        let Some(n) = next else { return Vec::new() };
        // `Option<T>` is written as anyOf [T, null]: take the non-null arm.
        let n = n
            .get("anyOf")
            .and_then(Value::as_array)
            .and_then(|arms| arms.iter().find(|a| a.get("type") != Some(&"null".into())))
            .unwrap_or(n);
        node = resolve(n);
    }
    node.get("properties")
        .and_then(Value::as_object)
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default()
}

/// The known name closest to `name` (a typo), if any is close.
fn closest(name: &str, known: &[String]) -> Option<String> {
    let lower = name.to_ascii_lowercase();
    known
        .iter()
        .map(|k| (distance(&lower, &k.to_ascii_lowercase()), k))
        .filter(|(d, _)| *d <= 2.max(name.len() / 4))
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k.clone())
}

fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            cur.push((prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}
