//! Settings from `KEY=VALUE` pairs and a profile name, as the command line, the MCP server and
//! the hooks take them: one parser, so that every edge reads `--set` alike.

use serde_json::{Map, Value};

use crate::chain::settings::{Env, Settings};

/// Every name `--profile` takes.
pub fn profile_names() -> Vec<&'static str> {
    crate::chain::settings::Profile::NAMES.iter().chain(crate::chain::agents::NAMES).copied().collect()
}

/// One `--set KEY=VALUE`: VALUE is JSON when it parses as JSON, else a string; text that opens
/// like JSON (`[`, `{`, `"`) but does not parse is an error that says where.
pub fn parse_set(pair: &str) -> Result<(String, Value), String> {
    let Some((key, raw)) = pair.split_once('=') else {
        return Err(format!("--set takes KEY=VALUE, got `{pair}`"));
    };
    let key = key.trim().to_string();
    let value = match serde_json::from_str(raw) {
        Ok(v) => v,
        Err(e) if raw.trim_start().starts_with(['[', '{', '"']) => {
            return Err(format!(
                "--set {key}: the value `{raw}` is not valid JSON ({e}, at column {}); quote a plain string or fix the JSON",
                e.column()
            ));
        }
        Err(_) => Value::String(raw.to_string()),
    };
    Ok((key, value))
}

/// The overrides `--set` gives the agent profile `name`: `baselineMaxBytes` is its byte budget
/// and `instructionFileCandidates` its file names (Codex: extra fallbacks). With `lenient`,
/// other keys are left to the engine's profiles; else they are an error.
pub fn agent_overrides(name: &str, sets: &Value, lenient: bool) -> Result<crate::chain::agents::Overrides, String> {
    let mut o = crate::chain::agents::Overrides::default();
    let Some(obj) = sets.as_object() else { return Ok(o) };
    for (key, value) in obj {
        match key.as_str() {
            "baselineMaxBytes" => {
                o.max_bytes = Some(
                    value
                        .as_u64()
                        .ok_or_else(|| format!("baselineMaxBytes: expected a non-negative integer, got {value}"))?,
                )
            }
            "instructionFileCandidates" => {
                o.candidates = Some(
                    value
                        .as_array()
                        .and_then(|a| a.iter().map(|v| v.as_str().map(str::to_string)).collect::<Option<Vec<_>>>())
                        .ok_or_else(|| {
                            format!("instructionFileCandidates: expected an array of file names, got {value}")
                        })?,
                );
            }
            k if name == "copilot" && crate::chain::agents::COPILOT_SETTINGS.contains(&k) => {
                o.editor.insert(k.to_string(), value.clone());
            }
            _ if lenient => {}
            other if name == "copilot" => {
                return Err(format!(
                    "the agent profile `copilot` takes {}, not `{other}`",
                    crate::chain::agents::COPILOT_SETTINGS.join(", ")
                ));
            }
            other => {
                return Err(format!(
                    "the agent profile `{name}` takes baselineMaxBytes and instructionFileCandidates, not `{other}`"
                ));
            }
        }
    }
    Ok(o)
}

/// `--set KEY=VALUE` pairs as one JSON object, a later pair winning over an earlier one.
pub fn set_object(set: &[String]) -> Result<Map<String, Value>, String> {
    let mut obj = Map::new();
    for pair in set {
        let (key, value) = parse_set(pair)?;
        obj.insert(key, value);
    }
    Ok(obj)
}

/// Settings from a profile name (`dsh`, `ds4`, or an agent) and `KEY=VALUE` pairs; every
/// problem is an error that says what was wrong. The warnings are things to say but not to fail
/// on.
pub fn settings_from(profile: Option<&str>, set: &[String], env: &Env) -> Result<(Settings, Vec<String>), String> {
    if let Some(p) = profile
        && !profile_names().contains(&p)
    {
        return Err(format!("unknown profile `{p}`; expected one of {}", profile_names().join(", ")));
    }
    let mut obj = set_object(set)?;
    // A `--set profile=…` wins over `--profile`, as a later setting does.
    if let Some(p) = profile {
        obj.entry("profile").or_insert_with(|| Value::String(p.to_string()));
    }
    let (settings, problems) = Settings::parse(&Value::Object(obj), None, env);
    if let Some(p) = problems.first() {
        return Err(p.to_string());
    }
    let mut warnings = Vec::new();
    if !settings.ignored_candidates.is_empty() {
        warnings.push(format!(
            "ignored candidate entries {:?}: a candidate is a file name without `/` or `\\`, not empty, `.` or `..`",
            settings.ignored_candidates
        ));
    }
    Ok((settings, warnings))
}
