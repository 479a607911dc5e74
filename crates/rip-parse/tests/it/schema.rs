//! The published JSON Schema of rules files (`docs/schemas/rules.schema.json`) is the
//! one the Rust types generate, and it accepts the example rules files.

use serde_json::Value;

use crate::support::*;

fn committed() -> String {
    std::fs::read_to_string(repo().join("docs/schemas/rules.schema.json")).unwrap()
}

#[test]
fn committed_schema_matches_the_rust_types() {
    let generated = rip_parse::rules::model::json_schema();
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(repo().join("docs/schemas/rules.schema.json"), &generated).unwrap();
        return;
    }
    assert!(
        committed() == generated,
        "docs/schemas/rules.schema.json is stale (hint: `rip-parse --rules-schema > \
         docs/schemas/rules.schema.json`, or UPDATE_GOLDEN=1 cargo test -p rip-parse)"
    );
    let r = run(&["--rules-schema"], b"");
    assert_eq!((r.code, r.stdout.as_str()), (0, generated.as_str()));
}

fn toml_as_json(path: &std::path::Path) -> Value {
    toml::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn example_rules_validate_against_the_committed_schema() {
    let schema: Value = serde_json::from_str(&committed()).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    for name in [
        "emberfall-by-url.toml",
        "gloomhollow-by-content.toml",
        "emberfall-wiki.toml",
    ] {
        let doc = toml_as_json(&testdata("parse/rules").join(name));
        let errors: Vec<String> = validator.iter_errors(&doc).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{name}: {errors:?}");
    }
    // And it refuses what the loader refuses for its shape: an unknown key.
    let bad = toml_as_json(&testdata("parse/bad-rules/unknown-field.toml"));
    assert!(!validator.is_valid(&bad));
    let bad = toml_as_json(&testdata("parse/bad-rules/bad-type.toml"));
    assert!(!validator.is_valid(&bad));
}
