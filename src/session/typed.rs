//! What the agents say of an open instruction file as typed: the findings placed at a token of
//! its text (an import that names no file, a front-matter key an agent misreads), worked out by
//! the agents' own loaders over the editor's buffers instead of the disk, so that an editor
//! shows them before a save, as `check` will say them after it. The rest of what the agents say
//! of a file (a cut, a file another one shadows) follows saved files.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::chain::agents;
use crate::chain::lint::Finding;

use super::Session;

/// What the agents of `session` that read `path` (started in its folder) say at its tokens,
/// with `buffers` read instead of the disk: the agents asked, and their findings of `path`.
/// An agent whose view from there does not hold the file is not asked. `cache` is a scope that
/// has read nothing (see [`agents::with_texts`]).
pub fn token_findings(
    session: &Session,
    path: &Path,
    buffers: &[(PathBuf, Arc<str>)],
    cache: &Arc<agents::RepoCache>,
) -> (Vec<&'static str>, Vec<Finding>) {
    let Some(dir) = path.parent() else { return (Vec::new(), Vec::new()) };
    let env = agents::AgentEnv::from_process();
    let selected = session.profiles();
    agents::with_texts(cache, buffers, || {
        let mut asked = Vec::new();
        let mut out = Vec::new();
        for name in agents::NAMES.iter().copied().filter(|n| selected.iter().any(|s| s == n)) {
            let Some(profile) = agents::profile(name, &env, &session.overrides(name)) else { continue };
            let view = agents::load(&profile, dir, &[]);
            if !view.files.iter().any(|f| f.path == path) {
                continue;
            }
            asked.push(name);
            out.extend(agents::view_findings(&view, dir).into_iter().filter(|f| f.path == path && f.code.at_token()));
        }
        (asked, out)
    })
}
