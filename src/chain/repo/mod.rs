//! The repository as the agents see it, and one run's memory of it.
//!
//! - `memo.rs`: the file system's answers (a stat, a real path, a file's bytes), asked once per
//!   scope.
//! - `project.rs`: the project's base (the nearest folder holding `.git`) and the walk of its
//!   files as the agents' searches make it.
//! - `listing.rs`: the listing a walk builds as it goes, until there are too many files.
//! - `index.rs`: the files listed once and searched in one pass for every rule's patterns.
//! - `cache.rs`: the scope ([`cache::with_cache`]) in which many views share listings, compiled
//!   rules, rule outcomes and the memo.

pub mod cache;
pub mod index;
pub mod listing;
pub mod memo;
pub mod project;
