//! Small operations on URL paths: relative references and glob matching.

/// The relative reference that resolves to `to` from a page at `from` (both absolute paths,
/// without query): from `/a/b` to `/a/c` is `c`, to `/x/y` is `../x/y`, to `/` is `../`.
pub(crate) fn relative_reference(from: &str, to: &str) -> String {
    let base_dirs = dir_segments(from);
    let (to_dirs, file) = match to.rsplit_once('/') {
        Some((dirs, file)) => (dirs.split('/').filter(|s| !s.is_empty()).collect(), file),
        None => (Vec::new(), to),
    };
    let common = base_dirs
        .iter()
        .zip(&to_dirs)
        .take_while(|(a, b)| a == b)
        .count();
    let mut out = String::new();
    for _ in common..base_dirs.len() {
        out.push_str("../");
    }
    for dir in &to_dirs[common..] {
        out.push_str(dir);
        out.push('/');
    }
    out.push_str(file);
    if out.is_empty() {
        return "./".into();
    }
    // `a:b` would read as a scheme.
    let first = out.split('/').next().unwrap_or_default();
    if first.contains(':') {
        out.insert_str(0, "./");
    }
    out
}

fn dir_segments(path: &str) -> Vec<&str> {
    match path.rsplit_once('/') {
        Some((dirs, _file)) => dirs.split('/').filter(|s| !s.is_empty()).collect(),
        None => Vec::new(),
    }
}

/// Whether `text` matches `pattern`, where `*` matches any run of characters (`/` included)
/// and every other character matches itself.
pub(crate) fn glob_match(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    let [first, middle @ .., last] = parts.as_slice() else {
        // split always yields at least one part; a single part means no `*`.
        return pattern == text;
    };
    let Some(mut rest) = text.strip_prefix(first) else {
        return false;
    };
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_references() {
        assert_eq!(relative_reference("/a/b", "/a/c"), "c");
        assert_eq!(relative_reference("/a/b", "/x/y"), "../x/y");
        assert_eq!(relative_reference("/a/b", "/"), "../");
        assert_eq!(relative_reference("/item-1", "/"), "./");
        assert_eq!(relative_reference("/", "/item-2"), "item-2");
        assert_eq!(relative_reference("/a/b/c", "/a/d/"), "../d/");
        assert_eq!(relative_reference("/", "/x:y"), "./x:y");
        assert_eq!(relative_reference("/a/", "/a/"), "./");
    }

    #[test]
    fn relative_references_resolve_back() {
        // Resolve with the RFC 3986 merge + remove_dot_segments, on a few cases.
        fn resolve(base: &str, reference: &str) -> String {
            let dir = &base[..=base.rfind('/').unwrap_or(0)];
            let merged = format!("{dir}{reference}");
            let mut out: Vec<&str> = Vec::new();
            let segments: Vec<&str> = merged.split('/').skip(1).collect();
            for (i, seg) in segments.iter().enumerate() {
                let last = i + 1 == segments.len();
                match *seg {
                    "." => {
                        if last {
                            out.push("");
                        }
                    }
                    ".." => {
                        out.pop();
                        if last {
                            out.push("");
                        }
                    }
                    s => out.push(s),
                }
            }
            format!("/{}", out.join("/"))
        }
        let paths = [
            "/", "/a", "/a/", "/a/b", "/a/b/c", "/x/y", "/a/d/", "/item-3",
        ];
        for from in paths {
            for to in paths {
                let reference = relative_reference(from, to);
                assert_eq!(
                    resolve(from, &reference),
                    to,
                    "{from} -> {to} via {reference}"
                );
            }
        }
    }

    #[test]
    fn globs() {
        assert!(glob_match("/a/*", "/a/b/c"));
        assert!(glob_match("/a/*.json", "/a/b.json"));
        assert!(!glob_match("/a/*.json", "/a/b.html"));
        assert!(glob_match("*", ""));
        assert!(glob_match("/x", "/x"));
        assert!(!glob_match("/x", "/xy"));
        assert!(glob_match("/*/item-*", "/s-1/item-9"));
        assert!(!glob_match("/a*a", "/a"));
        assert!(glob_match("/a*a", "/aa"));
    }
}
