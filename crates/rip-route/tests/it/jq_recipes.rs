//! The guide's `jq` recipes for error documents (docs/guide/jq.md), run against a golden
//! stream: each ```sh block between `<!-- jq-recipes -->` and `<!-- /jq-recipes -->` is run
//! by bash in a folder holding `stream.ndjson` and `out/site/failures.json` (from
//! testdata/jq), and its output must equal `testdata/jq/expected/NN.out` (`UPDATE_RECIPES=1` rewrites them).

use crate::support::testdata;
use std::path::Path;
use std::process::Command;

fn recipes() -> Vec<String> {
    let guide = std::fs::read_to_string(rip_testkit::repo().join("docs/guide/jq.md")).unwrap();
    let start = guide
        .find("<!-- jq-recipes -->")
        .expect("the guide's jq-recipes marker");
    let end = guide
        .find("<!-- /jq-recipes -->")
        .expect("the guide's closing marker");
    let mut out = Vec::new();
    let mut block: Option<String> = None;
    for line in guide[start..end].lines() {
        match (&mut block, line.trim_end()) {
            (None, "```sh") => block = Some(String::new()),
            (Some(_), "```") => out.push(block.take().unwrap()),
            (Some(b), l) => {
                b.push_str(l);
                b.push('\n');
            }
            (None, _) => {}
        }
    }
    out
}

fn copy(from: &str, to: &Path) {
    std::fs::create_dir_all(to.parent().unwrap()).unwrap();
    std::fs::copy(testdata(from), to).unwrap();
}

#[test]
fn jq_recipes_in_the_guide_give_the_documented_output() {
    let jq = Command::new("jq").arg("--version").output();
    assert!(
        jq.is_ok_and(|o| o.status.success()),
        "jq is needed (hint: scripts/setup test)"
    );
    let recipes = recipes();
    assert!(recipes.len() >= 6, "found {} recipes", recipes.len());
    let dir = tempfile::tempdir().unwrap();
    copy("jq/stream.ndjson", &dir.path().join("stream.ndjson"));
    copy(
        "jq/out/site/failures.json",
        &dir.path().join("out/site/failures.json"),
    );
    let expected_dir = testdata("jq/expected");
    let update = std::env::var_os("UPDATE_RECIPES").is_some();
    for (i, recipe) in recipes.iter().enumerate() {
        let out = Command::new("bash")
            .args(["-euo", "pipefail", "-c", recipe])
            .current_dir(dir.path())
            .output()
            .unwrap();
        let stdout = String::from_utf8(out.stdout).unwrap();
        assert!(
            out.status.success() && !stdout.trim().is_empty(),
            "recipe {} failed or printed nothing:\n{recipe}\n{}",
            i + 1,
            String::from_utf8_lossy(&out.stderr)
        );
        let path = format!("{expected_dir}/{:02}.out", i + 1);
        if update {
            std::fs::write(&path, &stdout).unwrap();
        }
        let want = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{path}: {e} (hint: UPDATE_RECIPES=1 to write it)"));
        assert_eq!(stdout, want, "recipe {} changed:\n{recipe}", i + 1);
    }
    let files = std::fs::read_dir(&expected_dir).unwrap().count();
    assert_eq!(
        files,
        recipes.len(),
        "one expected output per recipe, no stale ones"
    );
}
