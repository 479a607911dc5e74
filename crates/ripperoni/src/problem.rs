//! [`Problem`]: one thing wrong with a state file, as both the schema check
//! (`schema_errors`) and the checks after it (`validate`) report it. Its own module so that
//! neither of those imports the other for it.

use std::fmt;

/// One problem with a state file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The field, as a dotted path (`crawler.maxPages`, `urls[2]`); empty for the whole
    /// file.
    pub field: String,
    /// What is wrong: what was expected and what was found.
    pub message: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.field.is_empty() {
            write!(f, "{}", self.message)
        } else {
            write!(f, "`{}`: {}", self.field, self.message)
        }
    }
}
