//! The two sides a diff compares.

/// One side of a diff.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Revision {
    /// A git revision (`main`, `HEAD~1`, a commit id).
    Commit(String),
    /// The files in the working tree now (what `.gitignore` leaves), staged or not.
    WorkingTree,
}

impl Revision {
    pub fn label(&self) -> String {
        match self {
            Revision::Commit(r) => r.clone(),
            Revision::WorkingTree => "the working tree".to_string(),
        }
    }
}
