//! The pure engine: settings, discovery, loading, rendering and findings. Nothing in here
//! knows about LSP.

pub mod agents;
pub mod config;
pub mod config_edit;
pub mod config_keys;
pub mod confine;
pub mod discover;
pub mod lint;
pub mod loader;
pub mod model;
pub mod patterns;
pub mod render;
pub mod repo;
pub mod settings;
pub mod source;
pub mod targets;
pub mod text;
pub mod tokens;
pub mod words;
