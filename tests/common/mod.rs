#![allow(dead_code)]

pub mod lsp;
pub mod stdio;
pub mod tree;

use serde_json::Value;

/// (action, path) of every change of a transitions batch.
pub fn changes(batch: &Value) -> Vec<(String, String)> {
    batch["changes"]
        .as_array()
        .map(|cs| {
            cs.iter()
                .map(|c| (c["action"].as_str().unwrap_or("").into(), c["path"].as_str().unwrap_or("").into()))
                .collect()
        })
        .unwrap_or_default()
}

/// Expected (action, path) pairs.
pub fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter().map(|(a, p)| (a.to_string(), p.to_string())).collect()
}
