//! What a session's agents get now: its chain rendered as blocks (the baseline, then each reached
//! nested directory), computed once and viewed many ways.

use crate::chain::discover::{Chain, ChainFile, SkippedFile};
use crate::chain::render::{self, Item, Rendered, SectionStyle};
use crate::chain::settings::Settings;
use crate::session::answer::Block;

/// Files rendered together as one block.
#[derive(Clone, Debug)]
pub struct RenderedFiles {
    pub files: Vec<ChainFile>,
    pub rendered: Rendered,
}

impl RenderedFiles {
    pub fn block(&self) -> Block {
        Block::new(&self.files, &self.rendered)
    }
}

/// Everything a session's agents get now, computed once and viewed many ways.
#[derive(Clone, Debug)]
pub struct Snapshot {
    pub chain: Chain,
    pub baseline: RenderedFiles,
    pub nested: Vec<RenderedFiles>,
    /// What the reached nested directories hold but do not load.
    pub nested_skipped: Vec<SkippedFile>,
}

impl Snapshot {
    /// Every file on the session's chain, baseline then nested.
    pub fn files(&self) -> impl Iterator<Item = &ChainFile> {
        self.baseline.files.iter().chain(self.nested.iter().flat_map(|n| n.files.iter()))
    }

    /// Every skipped candidate, baseline then nested.
    pub fn skipped(&self) -> impl Iterator<Item = &SkippedFile> {
        self.chain.skipped.iter().chain(&self.nested_skipped)
    }
}

/// Renders files as one block of a session.
pub fn render_files(settings: &Settings, files: Vec<ChainFile>, style: SectionStyle) -> RenderedFiles {
    render_with_notices(settings, files, style, &[])
}

/// Renders files and notices (such as `Instructions removed: <path>`) as one block.
pub fn render_with_notices(
    settings: &Settings,
    files: Vec<ChainFile>,
    style: SectionStyle,
    notices: &[String],
) -> RenderedFiles {
    let items: Vec<Item> = files.iter().map(|f| Item { heading: &f.heading, content: &f.file.text }).collect();
    let rendered = render::render(&render::Request {
        frame: settings.frame,
        budget_bytes: settings.budget_bytes,
        items: &items,
        style,
        notices,
    });
    RenderedFiles { files, rendered }
}

/// Indices of files that reach the agent with at least one byte (or are empty and shown).
pub(crate) fn delivered(out: &RenderedFiles) -> Vec<usize> {
    let r = &out.rendered;
    (0..out.files.len())
        .filter(|&i| {
            let len = out.files[i].file.text.len();
            !r.disabled && !r.omitted.contains(&i) && (r.included_bytes(i, len) > 0 || len == 0)
        })
        .collect()
}
