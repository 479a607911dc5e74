//! The columns of a concept's table: which fields, in which order, of which type.
//!
//! A table's columns are fixed when its first doc arrives (a CSV header and a Parquet
//! schema are written before any row). They come from, in this order:
//!
//! 1. `--fields a,b,c`: those, for every concept;
//! 2. the rules file (`--rules`, the one `rip-parse` ran with): `url`, `id`, `name`, then
//!    the fields the concept declares, its ancestors' (`extends`) first, as `rip-parse`
//!    writes them; a concept with `generic = true` (and `unknown`) adds the generic fields;
//! 3. without rules: the generic doc's fields for a generic doc (concept `page`, or a doc
//!    with `contentFrom`), else `url`, `id`, `name` and the first doc's own fields.
//!
//! Types come from the rules (`type`, `list`, `extract = "exists"`), from the record
//! contract for the fixed and generic names, and are [`ColumnType::Json`] (the value as
//! JSON text) when nothing says.

use indexmap::IndexMap;
use serde::Deserialize;
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

/// A scalar type of a column (or of a list's items).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scalar {
    /// Text (`string`, `url`).
    String,
    /// A 64-bit integer (`integer`).
    Integer,
    /// A 64-bit float (`number`).
    Number,
    /// `true` or `false` (`boolean`, `extract = "exists"`).
    Boolean,
}

/// A column's type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnType {
    /// One value.
    Scalar(Scalar),
    /// A list of values (`list = true`).
    List(Scalar),
    /// Any value, as its JSON text (a type nothing declares: objects, arrays of objects).
    Json,
}

/// One column: a doc's field and its type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Column {
    /// The doc's top-level key.
    pub name: String,
    /// Its type.
    pub ty: ColumnType,
}

/// The fixed fields every table starts with (without `--fields`).
const FIXED: &[&str] = &["url", "id", "name"];

/// The fields of a generic doc (`docs/records.md`), in the order rip-parse writes them.
const GENERIC: &[(&str, ColumnType)] = {
    use ColumnType::{Json, List, Scalar as S};
    use Scalar::String as T;
    &[
        ("canonical", S(T)),
        ("lang", S(T)),
        ("description", S(T)),
        ("keywords", List(T)),
        ("headline", S(T)),
        ("authors", List(T)),
        ("published", S(T)),
        ("modified", S(T)),
        ("siteName", S(T)),
        ("excerpt", S(T)),
        ("image", S(T)),
        ("structured", Json),
        ("contentFrom", S(T)),
        ("headings", Json),
        ("text", S(T)),
        ("markdown", S(T)),
        ("links", Json),
    ]
};

/// The type of a field the record contract fixes, when `name` is one.
fn contract_type(name: &str) -> Option<ColumnType> {
    use ColumnType::Scalar as S;
    Some(match name {
        "url" | "concept" | "id" | "name" | "parent" | "linkText" | "resolves" | "title" => {
            S(Scalar::String)
        }
        "attempt" | "httpAttempts" | "elapsedMs" | "depth" => S(Scalar::Integer),
        _ => return GENERIC.iter().find(|(n, _)| *n == name).map(|(_, t)| *t),
    })
}

/// A rules file, read only for what the columns need (`rip-parse --check-rules` checks
/// the rest).
#[derive(Debug, Deserialize)]
struct RulesFile {
    #[serde(default, rename = "concept")]
    concepts: Vec<ConceptSpec>,
}

#[derive(Debug, Deserialize)]
struct ConceptSpec {
    name: String,
    #[serde(default)]
    extends: Option<String>,
    #[serde(default)]
    generic: Option<bool>,
    #[serde(default)]
    fields: IndexMap<String, FieldSpec>,
}

#[derive(Debug, Deserialize)]
struct FieldSpec {
    #[serde(default)]
    list: bool,
    #[serde(default, rename = "type")]
    value_type: Option<String>,
    #[serde(default)]
    extract: Option<String>,
}

impl FieldSpec {
    fn column_type(&self) -> ColumnType {
        let scalar = match (self.extract.as_deref(), self.value_type.as_deref()) {
            (Some("exists"), _) => Scalar::Boolean,
            (_, Some("integer")) => Scalar::Integer,
            (_, Some("number")) => Scalar::Number,
            (_, Some("boolean")) => Scalar::Boolean,
            _ => Scalar::String,
        };
        if self.list {
            ColumnType::List(scalar)
        } else {
            ColumnType::Scalar(scalar)
        }
    }
}

/// A rules file that cannot be read for its concepts' fields.
#[derive(Debug, thiserror::Error)]
pub enum RulesError {
    /// The file cannot be read.
    #[error("cannot read the rules file {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not a rules file.
    #[error(
        "{}: not a rules file: {source} (hint: `rip-parse --rules FILE --check-rules` names \
         every problem)",
        path.display()
    )]
    Toml {
        /// The file.
        path: PathBuf,
        /// What the TOML parser said.
        source: Box<toml::de::Error>,
    },
}

/// How each concept's columns are chosen (see the module docs).
#[derive(Debug, Clone, Default)]
pub struct ColumnChoice {
    /// `--fields`: these columns for every concept.
    pub fields: Option<Vec<String>>,
    /// Each concept's declared fields (ancestors' first) and whether it is generic, from
    /// the rules file.
    concepts: IndexMap<String, (IndexMap<String, ColumnType>, bool)>,
}

impl ColumnChoice {
    /// `--fields` (or none) and the rules file (or none).
    pub fn new(fields: Option<Vec<String>>, rules: Option<&Path>) -> Result<Self, RulesError> {
        let mut choice = Self {
            fields,
            concepts: IndexMap::new(),
        };
        if let Some(path) = rules {
            let text = std::fs::read_to_string(path).map_err(|source| RulesError::Read {
                path: path.to_owned(),
                source,
            })?;
            let file: RulesFile = toml::from_str(&text).map_err(|e| RulesError::Toml {
                path: path.to_owned(),
                source: Box::new(e),
            })?;
            choice.concepts = resolve(&file);
        }
        Ok(choice)
    }

    /// Whether the columns were chosen (`--fields`) or derived, so that a doc's field
    /// left out is worth a warning.
    pub fn chosen(&self) -> bool {
        self.fields.is_some()
    }

    /// The columns of `concept`'s table, whose first doc is `first`.
    pub fn columns(&self, concept: &str, first: &Map<String, Value>) -> Vec<Column> {
        let declared = self.concepts.get(concept);
        let type_of = |name: &str| -> ColumnType {
            declared
                .and_then(|(f, _)| f.get(name).copied())
                .or_else(|| contract_type(name))
                .unwrap_or(ColumnType::Json)
        };
        let names: Vec<String> = match (&self.fields, declared) {
            (Some(fields), _) => fields.clone(),
            (None, Some((fields, generic))) => {
                let mut names: Vec<String> = FIXED.iter().map(|s| (*s).to_owned()).collect();
                names.extend(
                    fields
                        .keys()
                        .filter(|k| !FIXED.contains(&k.as_str()))
                        .cloned(),
                );
                if *generic {
                    names.extend(GENERIC.iter().map(|(n, _)| (*n).to_owned()));
                }
                dedup(names)
            }
            (None, None) => {
                let mut names: Vec<String> = FIXED.iter().map(|s| (*s).to_owned()).collect();
                let generic = concept == "page" || first.contains_key("contentFrom");
                if generic {
                    names.extend(GENERIC.iter().map(|(n, _)| (*n).to_owned()));
                }
                names.extend(
                    first
                        .keys()
                        .filter(|k| !rip_core::DOC_RESERVED_FIELDS.contains(&k.as_str()))
                        .cloned(),
                );
                dedup(names)
            }
        };
        names
            .into_iter()
            .map(|name| Column {
                ty: type_of(&name),
                name,
            })
            .collect()
    }
}

fn dedup(names: Vec<String>) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    names
        .into_iter()
        .filter(|n| seen.insert(n.clone()))
        .collect()
}

/// Each concept's fields with its ancestors' merged in (ancestors first, an override
/// keeping the ancestor's place, as rip-parse does), and whether it is generic.
fn resolve(file: &RulesFile) -> IndexMap<String, (IndexMap<String, ColumnType>, bool)> {
    let by_name: IndexMap<&str, &ConceptSpec> =
        file.concepts.iter().map(|c| (c.name.as_str(), c)).collect();
    let mut out = IndexMap::new();
    for spec in &file.concepts {
        let mut chain = vec![spec];
        while let Some(parent) = chain
            .last()
            .and_then(|c| c.extends.as_deref())
            .and_then(|p| by_name.get(p))
        {
            if chain.iter().any(|c| c.name == parent.name) {
                break; // a cycle: rip-parse refuses the file
            }
            chain.push(parent);
        }
        let mut fields = IndexMap::new();
        for c in chain.iter().rev() {
            for (name, f) in &c.fields {
                fields.insert(name.clone(), f.column_type());
            }
        }
        let generic = chain
            .iter()
            .find_map(|c| c.generic)
            .unwrap_or(spec.name == "unknown");
        out.insert(spec.name.clone(), (fields, generic));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn choice(rules: &str) -> ColumnChoice {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.toml");
        std::fs::write(&path, rules).unwrap();
        ColumnChoice::new(None, Some(&path)).unwrap()
    }

    #[test]
    fn a_concept_has_its_ancestors_fields_first_with_their_types() {
        let c = choice(
            r#"
            [[concept]]
            name = "entry"
            abstract = true
            fields.name = { selector = "h1" }
            fields.traits = { selector = "li", list = true }
            [[concept]]
            name = "item"
            extends = "entry"
            match.url = 'item-(?P<id>\d+)'
            fields.level = { selector = "dd", type = "integer" }
            fields.price = { selector = "dd", type = "number" }
            fields.magic = { selector = ".m", extract = "exists" }
            "#,
        );
        let cols = c.columns("item", &Map::new());
        let got: Vec<(&str, ColumnType)> = cols.iter().map(|c| (c.name.as_str(), c.ty)).collect();
        use ColumnType::*;
        assert_eq!(
            got,
            [
                ("url", Scalar(super::Scalar::String)),
                ("id", Scalar(super::Scalar::String)),
                ("name", Scalar(super::Scalar::String)),
                ("traits", List(super::Scalar::String)),
                ("level", Scalar(super::Scalar::Integer)),
                ("price", Scalar(super::Scalar::Number)),
                ("magic", Scalar(super::Scalar::Boolean)),
            ]
        );
    }

    #[test]
    fn without_rules_the_first_docs_fields_are_json_columns() {
        let c = ColumnChoice::default();
        let first: Map<String, Value> = serde_json::from_str(
            r#"{"_type":"doc","url":"http://a.test/","concept":"x","attempt":0,"size":{"w":1}}"#,
        )
        .unwrap();
        let names: Vec<_> = c.columns("x", &first).into_iter().map(|c| c.name).collect();
        assert_eq!(names, ["url", "id", "name", "size"]);
        assert_eq!(c.columns("x", &first)[3].ty, ColumnType::Json);
    }

    #[test]
    fn a_file_that_is_not_toml_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.toml");
        std::fs::write(&path, "[[concept]\n").unwrap();
        let e = ColumnChoice::new(None, Some(&path))
            .unwrap_err()
            .to_string();
        assert!(e.contains("bad.toml") && e.contains("hint"), "{e}");
    }
}
