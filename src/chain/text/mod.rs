//! Reading the files' text as the agents read it.
//!
//! - `read.rs`: every read, capped per file and per view; never a blocking open; JavaScript's trim.
//! - `front_matter.rs`: the `---` block at a file's top: found, stripped, its strings and globs.
//! - `comments.rs`: Claude Code's hiding of HTML comments that stand as blocks.
//! - `imports.rs`: `@path` imports, Gemini's inline form and Claude Code's listed form.
//! - `keys.rs`: the front matter of rule files key by key, as each agent reads it.

pub mod comments;
pub mod front_matter;
pub mod imports;
pub mod keys;
pub mod read;
