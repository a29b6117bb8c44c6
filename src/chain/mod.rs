//! The pure engine: settings, discovery, loading, rendering and findings. Nothing in here
//! knows about LSP.

pub mod agents;
pub mod config;
pub mod config_edit;
pub mod config_keys;
pub mod confine;
pub mod discover;
pub mod lint;
pub mod render;
pub mod settings;
pub mod source;
pub mod targets;
pub mod tokens;
pub mod words;
