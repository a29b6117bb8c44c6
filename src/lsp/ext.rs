//! The custom methods (docs/protocol.md) as typed params, parsed with errors that say what is
//! accepted.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tower_lsp_server::jsonrpc::Error;

pub const EFFECTIVE: &str = "instructions/effective";
pub const TRANSITIONS: &str = "instructions/transitions";
pub const TOUCH: &str = "instructions/touch";
pub const DID_CHANGE: &str = "instructions/didChange";

/// Server-side commands (`workspace/executeCommand`).
pub const CMD_OPEN: &str = "instructions.open";
/// `[uri, agent]`: what `agent` gets once it reads `uri` (a file, or a folder: as it starts
/// there), answered as `{ title, text, view }` for the client to show.
pub const CMD_SHOW_VIEW: &str = "instructions.showView";

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EffectiveParams {
    pub uri: Option<String>,
    #[serde(default)]
    pub unsaved: bool,
    /// A profile name (`dsh`, `ds4`, an agent profile) or `"all"`.
    pub profile: Option<String>,
    /// With `profile`: each profile's size in tokens too.
    #[serde(default)]
    pub tokens: bool,
}

impl EffectiveParams {
    pub const SHAPE: &'static str = "{ uri?: string, unsaved?: boolean, profile?: \"dsh\" | \"ds4\" | \"codex\" | \"claude\" | \"gemini\" | \"opencode\" | \"dsh-next\" | \"copilot\" | \"cursor\" | \"all\" | \"targets\", tokens?: boolean }";
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TransitionsParams {
    pub uri: Option<String>,
    #[serde(default)]
    pub since: u64,
}

impl TransitionsParams {
    pub const SHAPE: &'static str = "{ uri?: string, since?: number (a non-negative integer) }";
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum TouchKind {
    Read,
    Write,
    Edit,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TouchParams {
    pub uri: String,
    pub kind: TouchKind,
}

impl TouchParams {
    pub const SHAPE: &'static str = "{ uri: string, kind: \"read\" | \"write\" | \"edit\" }";
}

#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DidChangeParams {
    pub folder: String,
    pub seq: u64,
}

/// `instructions/didChange` as a typed notification.
pub enum DidChange {}

impl tower_lsp_server::lsp_types::notification::Notification for DidChange {
    type Params = DidChangeParams;
    const METHOD: &'static str = DID_CHANGE;
}

/// Parses params (a missing or null `params` counts as `{}`), or a -32602 error naming the
/// method, what was wrong and the accepted shape.
pub fn parse<T: DeserializeOwned>(method: &str, shape: &str, params: Value) -> Result<T, Error> {
    let params = if params.is_null() { Value::Object(Default::default()) } else { params };
    serde_json::from_value(params)
        .map_err(|e| Error::invalid_params(format!("{method}: {e}; accepted params: {shape}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn errors_say_what_is_accepted() {
        let err = parse::<EffectiveParams>(EFFECTIVE, EffectiveParams::SHAPE, json!({"uri": 3})).err();
        let message = err.map(|e| e.message.to_string()).unwrap_or_default();
        assert!(message.contains("instructions/effective: invalid type"), "{message}");
        assert!(message.contains(r#"{ uri?: string, unsaved?: boolean, profile?: "dsh""#), "{message}");
        let err = parse::<TouchParams>(TOUCH, TouchParams::SHAPE, json!({"uri": "file:///a", "kind": "delete"})).err();
        assert!(err.is_some_and(|e| e.message.contains("unknown variant `delete`")));
        assert!(parse::<EffectiveParams>(EFFECTIVE, EffectiveParams::SHAPE, Value::Null).is_ok());
    }
}
