//! A fix of a finding, as data: what it changes (bytes of the finding's file, a file made, the
//! configuration set), which every edge presents its own way (`check --fix`, a quick fix).

use std::path::PathBuf;

/// A safe change that mends a finding, named by its title ("Rename `glob` to `globs`").
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Fix {
    pub title: String,
    pub change: Change,
}

/// What a [`Fix`] changes.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Change {
    /// Bytes `start..end` of the finding's file become `text`.
    Replace { start: usize, end: usize, text: String },
    /// A new empty file at `path` (the file an import names). Offered one at a time in the
    /// editor, never by a fix of everything: what it should hold is the author's to write.
    Create { path: PathBuf },
    /// `change` made to another file, `path` (the configuration), created when it does not
    /// exist. A decision (raise a budget, accept a finding): offered in the editor, never by a
    /// fix of everything. Placed in the file's text only when it is made
    /// (`config_edit::place`): an editor places it in its buffer, which may not be saved.
    Config { path: PathBuf, change: ConfigChange },
}

/// What a fix sets in the configuration file.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(tag = "set", rename_all = "camelCase")]
pub enum ConfigChange {
    /// `[agent] max-bytes = bytes`.
    Budget { agent: String, bytes: u64 },
    /// `code` added to the `[accept]` entry `key` (a file, named from the configuration's
    /// folder).
    Accept { key: String, code: String },
}

impl Fix {
    /// A fix that replaces bytes `start..end` of the finding's file with `text`.
    pub fn replace(title: String, start: usize, end: usize, text: String) -> Self {
        Fix { title, change: Change::Replace { start, end, text } }
    }

    /// Whether a fix of everything (`check --fix`, `source.fixAll`) applies it.
    pub fn in_fix_all(&self) -> bool {
        matches!(self.change, Change::Replace { .. })
    }
}
