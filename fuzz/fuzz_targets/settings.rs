//! Settings parsing: any JSON yields settings (and problems), never a panic.
#![no_main]

use instructions_lsp::chain::settings::{Env, Settings, is_valid_candidate};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(data) else { return };
    let env = Env { home: Some("/home/u".into()), dsh_home: Some("~/d".into()), xdg_state_home: None };
    let (settings, _) = Settings::parse(&value, None, &env);
    let _ = Settings::parse(&value, Some(&settings), &env);
    assert!(settings.all_names().all(is_valid_candidate));
});
