//! Position conversion and incremental edits stay inside the text.
#![no_main]

use instructions_lsp::lsp::convert::{Encoding, apply_change, offset, position};
use libfuzzer_sys::fuzz_target;
use tower_lsp_server::lsp_types::{Position, Range, TextDocumentContentChangeEvent};

fuzz_target!(|data: &[u8]| {
    if data.len() < 9 {
        return;
    }
    let n = |i: usize| u32::from(u16::from_le_bytes([data[i], data[i + 1]]));
    let enc = if data[8] & 1 == 0 { Encoding::Utf16 } else { Encoding::Utf8 };
    let mut text = String::from_utf8_lossy(&data[9..]).into_owned();
    let pos = Position::new(n(0) % 64, n(2));
    let at = offset(&text, pos, enc);
    assert!(at <= text.len() && text.is_char_boundary(at));
    let back = position(text.as_bytes(), at, enc);
    assert_eq!(offset(&text, back, enc), at);
    let change = TextDocumentContentChangeEvent {
        range: Some(Range::new(pos, Position::new(n(4) % 64, n(6)))),
        range_length: None,
        text: "é🎉\n".into(),
    };
    apply_change(&mut text, &change, enc);
});
