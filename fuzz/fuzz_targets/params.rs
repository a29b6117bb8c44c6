//! The params of every custom method: parsed, or a -32602 error that says what is accepted.
#![no_main]

use instructions_lsp::lsp::ext::{self, EffectiveParams, TouchParams, TransitionsParams};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(data) else { return };
    let errors = [
        ext::parse::<EffectiveParams>(ext::EFFECTIVE, EffectiveParams::SHAPE, value.clone()).err(),
        ext::parse::<TransitionsParams>(ext::TRANSITIONS, TransitionsParams::SHAPE, value.clone()).err(),
        ext::parse::<TouchParams>(ext::TOUCH, TouchParams::SHAPE, value).err(),
    ];
    for e in errors.into_iter().flatten() {
        assert!(e.message.contains("accepted params"));
    }
});
