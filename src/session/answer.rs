//! The JSON shapes of `instructions/effective` (docs/protocol.md), built from engine results.
//! Shared by the language server and `effective --json`.

use serde::{Deserialize, Serialize};

use crate::chain::discover::{ChainFile, SkippedFile};
use crate::chain::render::Rendered;
use crate::paths::path_to_uri;

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct EffectiveResult {
    pub folder: String,
    pub project_root: String,
    pub seq: u64,
    pub budget_bytes: i64,
    pub baseline: Block,
    pub nested: Vec<Block>,
    pub preview: Option<Block>,
    pub skipped: Vec<Skipped>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Block {
    pub rendered: String,
    pub bytes: usize,
    pub files: Vec<File>,
    pub omitted: Vec<String>,
    pub truncated: Vec<TruncatedFile>,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct File {
    pub uri: String,
    pub path: String,
    pub scope: String,
    pub kind: String,
    pub bytes: u64,
    pub included_bytes: u64,
    pub sha256: String,
    pub status: String,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct TruncatedFile {
    pub uri: String,
    pub original_bytes: usize,
    pub included_bytes: usize,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Skipped {
    pub uri: String,
    pub path: String,
    pub reason: String,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub shadowed_by: Option<String>,
}

/// Whether a file of a rendered block reaches the agent, and how much of it.
pub fn file_status(rendered: &Rendered, index: usize) -> &'static str {
    if rendered.disabled || rendered.omitted.contains(&index) {
        "omitted"
    } else if rendered.truncated.is_some_and(|t| t.index == index) {
        "truncated"
    } else {
        "loaded"
    }
}

impl Block {
    pub fn new(files: &[ChainFile], rendered: &Rendered) -> Self {
        let uri = |i: usize| files.get(i).map(|f| path_to_uri(&f.path)).unwrap_or_default();
        Self {
            rendered: rendered.text.clone(),
            bytes: rendered.text.len(),
            files: files
                .iter()
                .enumerate()
                .map(|(i, f)| File {
                    uri: path_to_uri(&f.path),
                    path: f.heading.clone(),
                    scope: f.scope.name().into(),
                    kind: f.kind.name().into(),
                    bytes: f.file.bytes(),
                    included_bytes: rendered.included_bytes(i, f.file.text.len()) as u64,
                    sha256: f.file.sha256.clone(),
                    status: file_status(rendered, i).into(),
                })
                .collect(),
            omitted: rendered.omitted.iter().map(|&i| uri(i)).collect(),
            truncated: rendered
                .truncated
                .iter()
                .map(|t| TruncatedFile {
                    uri: uri(t.index),
                    original_bytes: t.original_bytes,
                    included_bytes: t.included_bytes,
                })
                .collect(),
        }
    }
}

impl Skipped {
    pub fn new(s: &SkippedFile) -> Self {
        Self {
            uri: path_to_uri(&s.path),
            path: s.heading.clone(),
            reason: s.reason.name().into(),
            shadowed_by: s.shadowed_by.as_deref().map(path_to_uri),
        }
    }
}
