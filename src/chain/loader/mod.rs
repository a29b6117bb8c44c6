//! Computing an agent's view from its profile, and saying what it means.
//!
//! - `find.rs`: finding the files: probes, the walk up, picks, rules folders, links out of the
//!   project, where a touch's walk starts, a file's identity.
//! - `load.rs`: [`load::load`]: globals, project files, touches, then the budget or whole reads
//!   with imports, and the agent's join.
//! - `rules.rs`: what is wrong with glob-attached rules such as Copilot's and Cursor's (dead
//!   patterns, front matter), searched in the repository once per run.
//! - `explain.rs`: what an agent does differently, in words and as findings.
//! - `deps.rs`: the directories a view depends on, so that it can be remembered while they are
//!   watched.
//! - `hits.rs`: which files a pattern under the cursor matches, for hovers.

pub mod deps;
pub mod explain;
pub mod find;
pub mod hits;
pub mod load;
pub mod rules;
