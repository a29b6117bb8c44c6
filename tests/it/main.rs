//! The integration tests: one binary, so that the shared support (`common/`) is compiled once, a
//! module per boundary. Trees are real directories in temp dirs; the server runs in process over
//! in-memory pipes (`common/lsp.rs`) or as the built binary over stdio.
//!
//! - `cli`: the binary's commands; `diff`: `diff` on generated and recorded git histories;
//!   `consistency`: every edge asked the same questions;
//! - `lsp`, `lifecycle`: the language server in process; `stdio`, `transport`: the binary over
//!   stdio and hostile clients;
//! - `mcp`, `hook`: the agents' edges, with the official MCP client SDK and the real agents;
//! - `agents`, `editor_agents`: the profiles against the real agents and the editors' rules;
//!   `agent_versions`: `scripts/agent-versions`, the pins beside the newest releases;
//! - `starts`: every place an agent starts, as `check` judges it;
//! - `properties`: generated input; `hostile_server`, `hostile_binary`: hostile trees and input, in
//!   process and against the binary; `hostile_edges`: hostile input on the MCP server and the hooks.

mod common;

mod agent_versions;
mod agents;
mod cli;
mod confinement;
mod consistency;
mod diff;
mod editor_agents;
mod fixes;
mod hook;
mod hostile_binary;
mod hostile_edges;
mod hostile_server;
mod lenses;
mod lifecycle;
mod lsp;
mod mcp;
mod properties;
mod starts;
mod stdio;
mod transport;
