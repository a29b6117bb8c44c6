//! What an agent is and what it produces, as data: no file is read here.
//!
//! - `profile.rs`: the rule types ([`profile::Probe`], [`profile::Pick`], [`profile::Root`],
//!   [`profile::Budget`], [`profile::Join`], …) and [`profile::AgentProfile`], one agent's
//!   answers to them.
//! - `view.rs`: what a profile produces: [`view::Scope`], [`view::Status`], [`view::AgentFile`],
//!   [`view::AgentView`], a rule file's problems.
//! - `env.rs`: what profiles are made from: [`env::AgentEnv`] (home, variables), [`env::Overrides`]
//!   (a user's settings), [`env::FILE_NAMES`], which paths are agents' files.
//! - `fix.rs`: a finding's fix as data ([`fix::Fix`]), which every edge presents its own way.
//! - `names.rs`: every agent's name and how a person calls it, for the layers that know the
//!   agents by name only (settings, the configuration file, findings).

pub mod env;
pub mod fix;
pub mod names;
pub mod profile;
pub mod view;
