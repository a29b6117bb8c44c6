//! Byte offsets <-> LSP positions (UTF-16 by default, UTF-8 when negotiated), incremental
//! edits, and engine findings -> LSP diagnostics.

use tower_lsp_server::lsp_types::{
    Diagnostic, DiagnosticRelatedInformation, DiagnosticSeverity, DiagnosticTag, Location, NumberOrString, Position,
    Range, TextDocumentContentChangeEvent, Uri,
};

use crate::chain::lint::{Change, Finding, Fix, Severity};
use crate::paths::path_to_uri;

/// How positions count characters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    Utf8,
    Utf16,
}

/// Units of a string in the encoding.
fn units(s: &str, enc: Encoding) -> u32 {
    let n = match enc {
        Encoding::Utf8 => s.len(),
        Encoding::Utf16 => s.encode_utf16().count(),
    };
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// The position of a byte offset in text that may hold invalid UTF-8 after the offset.
pub fn position(text: &[u8], offset: usize, enc: Encoding) -> Position {
    let offset = offset.min(text.len());
    let before = &text[..offset];
    let line_start = before.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let line = before.iter().filter(|&&b| b == b'\n').count();
    let character = units(&String::from_utf8_lossy(&before[line_start..]), enc);
    Position { line: u32::try_from(line).unwrap_or(u32::MAX), character }
}

/// The byte offset of a position, clamped to the line's end and the text's end; a position
/// inside a character snaps to the character's start.
pub fn offset(text: &str, pos: Position, enc: Encoding) -> usize {
    let mut line_start = 0;
    for _ in 0..pos.line {
        match text[line_start..].find('\n') {
            Some(i) => line_start += i + 1,
            None => return text.len(),
        }
    }
    let line_end = text[line_start..].find('\n').map_or(text.len(), |i| line_start + i);
    let line = &text[line_start..line_end];
    let mut remaining = pos.character as usize;
    for (i, ch) in line.char_indices() {
        let width = match enc {
            Encoding::Utf8 => ch.len_utf8(),
            Encoding::Utf16 => ch.len_utf16(),
        };
        if remaining < width {
            return line_start + i;
        }
        remaining -= width;
    }
    line_end
}

/// Applies one content change (incremental or whole); ranges out of bounds are clamped.
pub fn apply_change(text: &mut String, change: &TextDocumentContentChangeEvent, enc: Encoding) {
    match change.range {
        None => *text = change.text.clone(),
        Some(range) => {
            let start = offset(text, range.start, enc);
            let end = offset(text, range.end, enc).max(start);
            text.replace_range(start..end, &change.text);
        }
    }
}

pub fn uri_of(path: &std::path::Path) -> Option<Uri> {
    path_to_uri(path).parse().ok()
}

/// An engine finding as an LSP diagnostic, placed in `text` (the buffer or the disk bytes).
pub fn diagnostic(f: &Finding, text: &[u8], enc: Encoding) -> Diagnostic {
    let (start, end) = f.span.byte_range(text);
    let severity = match f.severity() {
        Severity::Error => DiagnosticSeverity::ERROR,
        Severity::Warning => DiagnosticSeverity::WARNING,
        Severity::Information => DiagnosticSeverity::INFORMATION,
        Severity::Hint => DiagnosticSeverity::HINT,
    };
    let tags = (f.code == crate::chain::lint::Code::Shadowed).then(|| vec![DiagnosticTag::UNNECESSARY]);
    let related = f.related.as_ref().and_then(|r| {
        Some(vec![DiagnosticRelatedInformation {
            location: Location { uri: uri_of(&r.path)?, range: Range::default() },
            message: r.message.clone(),
        }])
    });
    // The fix travels with the diagnostic (as ruff's server sends its own): a code action asks
    // for it back.
    let data = f.fix.as_ref().and_then(|fix| fix_data(fix, text, enc));
    Diagnostic {
        data,
        range: Range { start: position(text, start, enc), end: position(text, end, enc) },
        severity: Some(severity),
        code: Some(NumberOrString::String(f.code.name().into())),
        source: Some("instructions".into()),
        message: f.message.clone(),
        related_information: related,
        tags,
        ..Diagnostic::default()
    }
}

/// A fix as a diagnostic's `data` carries it (`{ fix: { title, change } }`), its place in
/// `text` (the finding's file) in the client's encoding.
pub fn fix_data(fix: &Fix, text: &[u8], enc: Encoding) -> Option<serde_json::Value> {
    let change = match &fix.change {
        Change::Replace { start, end, text: with } => serde_json::json!({
            "range": Range { start: position(text, *start, enc), end: position(text, *end, enc) },
            "newText": with,
        }),
        Change::Create { path } => serde_json::json!({ "create": uri_of(path)? }),
        // Placed when the fix is asked for, in the file as the editor has it then.
        Change::Config { path, change } => serde_json::json!({ "config": { "uri": uri_of(path)?, "change": change } }),
    };
    Some(serde_json::json!({ "fix": { "title": fix.title, "change": change } }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf16_and_utf8_columns() {
        let text = "a😀b\n日x";
        let bytes = text.as_bytes();
        assert_eq!(position(bytes, 5, Encoding::Utf16), Position::new(0, 3));
        assert_eq!(position(bytes, 5, Encoding::Utf8), Position::new(0, 5));
        assert_eq!(position(bytes, 10, Encoding::Utf16), Position::new(1, 1));
        assert_eq!(offset(text, Position::new(0, 3), Encoding::Utf16), 5);
        assert_eq!(offset(text, Position::new(0, 2), Encoding::Utf16), 1, "inside a surrogate pair snaps back");
        assert_eq!(offset(text, Position::new(1, 99), Encoding::Utf16), text.len());
        assert_eq!(offset(text, Position::new(9, 0), Encoding::Utf16), text.len());
    }

    #[test]
    fn incremental_changes_apply_and_clamp() {
        let mut text = "hello\nworld".to_string();
        let change = |sl, sc, el, ec, t: &str| TextDocumentContentChangeEvent {
            range: Some(Range::new(Position::new(sl, sc), Position::new(el, ec))),
            range_length: None,
            text: t.into(),
        };
        apply_change(&mut text, &change(1, 0, 1, 5, "there"), Encoding::Utf16);
        assert_eq!(text, "hello\nthere");
        apply_change(&mut text, &change(0, 5, 0, 5, " 🎉"), Encoding::Utf16);
        apply_change(&mut text, &change(0, 8, 0, 8, "!"), Encoding::Utf16);
        assert_eq!(text, "hello 🎉!\nthere");
        apply_change(&mut text, &change(7, 0, 3, 0, "?"), Encoding::Utf16);
        assert_eq!(text, "hello 🎉!\nthere?");
    }
}
