//! The JSON Schema of the policy file is generated from the Rust types; the committed copy
//! must match, and every policy under testdata/policy must validate against it.

use crate::support::testdata;

/// What `rip-route --policy-schema` prints.
fn generated() -> String {
    rip_route::spec::json_schema()
}

#[test]
fn the_committed_schema_is_the_generated_one() {
    let want = generated();
    let schema_path = rip_testkit::repo().join("docs/schemas/policy.schema.json");
    if std::env::var_os("UPDATE_SCHEMA").is_some() {
        std::fs::create_dir_all(schema_path.parent().unwrap()).unwrap();
        std::fs::write(&schema_path, &want).unwrap();
    }
    let have = std::fs::read_to_string(&schema_path).unwrap_or_default();
    assert!(
        have == want,
        "docs/schemas/policy.schema.json is stale (hint: UPDATE_SCHEMA=1 cargo test -p rip-route schema)"
    );
}

#[test]
fn every_testdata_policy_validates_and_loads() {
    let schema: serde_json::Value = serde_json::from_str(&generated()).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let dir = testdata("policy");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        let value: serde_json::Value = match path.extension().and_then(|e| e.to_str()) {
            Some("toml") => toml::from_str(&text).unwrap(),
            Some("json") => serde_json::from_str(&text).unwrap(),
            _ => continue,
        };
        let errors: Vec<String> = validator
            .iter_errors(&value)
            .map(|e| e.to_string())
            .collect();
        assert!(errors.is_empty(), "{}: {errors:?}", path.display());
        rip_route::Policy::from_file(&path).unwrap_or_else(|e| panic!("{e}"));
        n += 1;
    }
    assert!(n >= 1);
    let bad = serde_json::json!({"rules": [{"route": "teleport"}]});
    assert!(!validator.is_valid(&bad));
    let bad = serde_json::json!({"rules": [{"route": "capture", "category": "BROKEN"}]});
    assert!(!validator.is_valid(&bad));
}
