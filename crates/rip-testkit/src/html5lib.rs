//! html5lib-tests' data, as copied to `testdata/conformance/html5lib/` (see its
//! README): the inputs of the tree-construction tests, read as html5lib's own harness
//! reads them.

use std::path::{Path, PathBuf};

/// One `#data` of a tree-construction `.dat` file.
pub struct TreeCase {
    /// `file.dat#n` (n counted from 1; `scripted/file.dat#n` for those).
    pub name: String,
    /// The input, as the test gives it to the parser.
    pub data: String,
    /// A `#document-fragment` case (parsed in a context element by html5lib).
    pub fragment: bool,
}

/// `testdata/conformance/html5lib/<rel>`.
pub fn dir(rel: &str) -> PathBuf {
    crate::testdata("conformance/html5lib").join(rel)
}

/// Every case of every tree-construction `.dat` file (`scripted/` too), in file order.
pub fn tree_construction_cases() -> Vec<TreeCase> {
    let root = dir("tree-construction");
    let mut files = Vec::new();
    dat_files(&root, &mut files);
    files.sort();
    let mut all = Vec::new();
    for file in files {
        let name = file.strip_prefix(&root).unwrap().display().to_string();
        let text = std::fs::read_to_string(&file)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", file.display()));
        all.extend(cases(&name, &text));
    }
    all
}

fn dat_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let entries =
        std::fs::read_dir(dir).unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()));
    for entry in entries {
        let path = entry.unwrap().path();
        if path.is_dir() {
            dat_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "dat") {
            out.push(path);
        }
    }
}

/// The cases of a `.dat` file, read as html5lib's harness (`tests/support.py`'s
/// `TestData`) reads them: a line starting with `#` opens a section, a test starts at
/// `#data`, and a section's text loses its last newline.
fn cases(name: &str, text: &str) -> Vec<TreeCase> {
    let mut out: Vec<TreeCase> = Vec::new();
    let mut section = "";
    for line in text.split_inclusive('\n') {
        if let Some(heading) = line.strip_prefix('#') {
            section = heading.trim();
            match section {
                "data" => out.push(TreeCase {
                    name: format!("{name}#{}", out.len() + 1),
                    data: String::new(),
                    fragment: false,
                }),
                "document-fragment" => {
                    if let Some(case) = out.last_mut() {
                        case.fragment = true;
                    }
                }
                _ => {}
            }
        } else if section == "data"
            && let Some(case) = out.last_mut()
        {
            case.data.push_str(line);
        }
    }
    for case in &mut out {
        if case.data.ends_with('\n') {
            case.data.pop();
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dat_file_reads_as_html5libs_harness_reads_it() {
        let text = "#data\n<p>a\n\nb\n#errors\n(1,1): x\n#document\n| <html>\n\n\
                    #data\n<td>\n#errors\n#document-fragment\ntr\n#document\n| <td>\n";
        let got = cases("t.dat", text);
        assert_eq!(got.len(), 2);
        assert_eq!(
            (got[0].name.as_str(), got[0].data.as_str()),
            ("t.dat#1", "<p>a\n\nb")
        );
        assert!(!got[0].fragment);
        assert_eq!(
            (got[1].name.as_str(), got[1].data.as_str()),
            ("t.dat#2", "<td>")
        );
        assert!(got[1].fragment);
    }
}
