//! The stage-level output schema (`--output-schema FILE`): a JSON Schema every doc
//! the stage writes must satisfy, whatever its concept, with `--on-schema-error`
//! deciding what a doc that breaks it becomes (`skip`, the default, as for a
//! concept's schema: a VALIDATION failure `parse.schema`; `warn`: the doc, with the
//! violations in its `errors` and on stderr; `halt`: that failure, then the run stops
//! with exit code 1).
//!
//! The file is read and checked (JSON, a valid JSON Schema, no remote `$ref`) before
//! any input is read; every error names it. The schema is checked against the doc as
//! written, less `_type`: `url`, `concept`, `id`, `name`, the page's context, and the
//! doc's fields as top-level keys (`/price`, not `/fields/price`), after the concept's
//! own schema, if any.

use jsonschema::Validator;
use std::path::{Path, PathBuf};

use crate::rules::OnSchemaError;

/// A JSON Schema every doc must satisfy, and what a doc that breaks it becomes.
#[derive(Debug, Clone)]
pub struct OutputSchema {
    /// The file it was read from, as given (named in messages).
    pub path: PathBuf,
    /// The compiled schema.
    pub validator: std::sync::Arc<Validator>,
    /// What a doc that breaks it becomes.
    pub on_error: OnSchemaError,
}

/// Why an output schema file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum SchemaFileError {
    /// The file could not be read.
    #[error("cannot read output schema file {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The file is not JSON.
    #[error("output schema file {}:{line}:{column}: not JSON: {message}", path.display())]
    NotJson {
        /// The file.
        path: PathBuf,
        /// Where.
        line: usize,
        /// Where.
        column: usize,
        /// What the JSON parser said.
        message: String,
    },
    /// The file is JSON but not a usable JSON Schema.
    #[error("output schema file {}: {source}", path.display())]
    NotSchema {
        /// The file.
        path: PathBuf,
        /// What is wrong, with a hint.
        source: SchemaError,
    },
}

/// Why a JSON value is not a usable JSON Schema (the message follows the schema's name:
/// `<schema> is not a valid JSON Schema at `/type`: …`).
#[derive(Debug, thiserror::Error)]
pub enum SchemaError {
    /// Neither an object nor a boolean.
    #[error("is not a JSON Schema: a schema is an object or a boolean")]
    NotAnObject,
    /// It breaks the JSON Schema meta-schema.
    #[error("is not a valid JSON Schema{}: {message}", at_path(at))]
    Invalid {
        /// Where in the schema (a JSON pointer; empty at the top).
        at: String,
        /// What the meta-schema says.
        message: String,
    },
    /// It is valid but cannot be compiled (a remote `$ref`, for instance).
    #[error("is not a usable JSON Schema: {message} (hint: remote `$ref`s are not fetched)")]
    Unusable {
        /// What the compiler says.
        message: String,
    },
}

fn at_path(at: &str) -> String {
    if at.is_empty() {
        String::new()
    } else {
        format!(" at `{at}`")
    }
}

impl OutputSchema {
    /// Reads and compiles a JSON Schema file.
    pub fn load(path: &Path, on_error: OnSchemaError) -> Result<Self, SchemaFileError> {
        let text = std::fs::read_to_string(path).map_err(|source| SchemaFileError::Read {
            path: path.to_owned(),
            source,
        })?;
        let value: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| SchemaFileError::NotJson {
                path: path.to_owned(),
                line: e.line(),
                column: e.column(),
                message: e.to_string(),
            })?;
        let validator = compile(&value).map_err(|source| SchemaFileError::NotSchema {
            path: path.to_owned(),
            source,
        })?;
        Ok(Self {
            path: path.to_owned(),
            validator: std::sync::Arc::new(validator),
            on_error,
        })
    }
}

/// Compiles a JSON Schema, or says why it is not one (shared with the rules file's
/// per-concept schemas).
pub(crate) fn compile(schema: &serde_json::Value) -> Result<Validator, SchemaError> {
    if !schema.is_object() && !schema.is_boolean() {
        return Err(SchemaError::NotAnObject);
    }
    if let Err(e) = jsonschema::meta::validate(schema) {
        return Err(SchemaError::Invalid {
            at: e.instance_path().to_string(),
            message: e.to_string(),
        });
    }
    jsonschema::validator_for(schema).map_err(|e| SchemaError::Unusable {
        message: e.to_string(),
    })
}

/// The violations of `value` against `schema`, at most ten, each led by the path of
/// the offending value (`/price: …`).
pub fn violations(schema: &Validator, value: &serde_json::Value) -> Vec<String> {
    schema
        .iter_errors(value)
        .take(10)
        .map(|e| {
            let at = e.instance_path().to_string();
            if at.is_empty() {
                e.to_string()
            } else {
                format!("{at}: {e}")
            }
        })
        .collect()
}
