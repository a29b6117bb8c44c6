//! Rendering and budgets: a block never exceeds its budget and content cannot close its frame.
#![no_main]

use instructions_lsp::chain::render::{Item, Request, SectionStyle, render};
use instructions_lsp::chain::settings::Frame;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if data.len() < 3 {
        return;
    }
    let budget = i64::from(u16::from_le_bytes([data[0], data[1]])) - 16;
    let frame = if data[2] & 1 == 0 { Frame::WorkspaceContext } else { Frame::SystemReminder };
    let text = String::from_utf8_lossy(&data[3..]);
    // Items are separated by NUL; a heading and its content by the first newline.
    let pairs: Vec<(String, String)> = text
        .split('\0')
        .take(6)
        .map(|chunk| match chunk.split_once('\n') {
            Some((h, c)) => (h.to_string(), c.to_string()),
            None => ("AGENTS.md".to_string(), chunk.to_string()),
        })
        .collect();
    let items: Vec<Item> = pairs.iter().map(|(h, c)| Item { heading: h, content: c }).collect();
    let r = render(&Request { frame, budget_bytes: budget, items: &items, style: SectionStyle::Initial, notices: &[] });
    if budget <= 0 {
        assert!(r.text.is_empty());
        return;
    }
    assert!(r.text.len() <= budget as usize);
    let (open, close) = match frame {
        Frame::WorkspaceContext => ("<workspace-context source=\"project-instruction-files\">", "</workspace-context>"),
        Frame::SystemReminder => ("<system-reminder>", "</system-reminder>"),
    };
    if r.text.starts_with(open) {
        assert_eq!(r.text.matches(close).count(), 1);
        assert!(r.text.ends_with(close));
    }
});
