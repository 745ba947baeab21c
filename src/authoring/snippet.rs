//! A place in a spec shown to a person: `path:line:col`, the line, and a caret under the column.

use std::fmt::Write as _;

use crate::report::Palette;
use crate::report::style::paint;
use crate::source::Position;

/// The line and a caret under `position.column`, indented under a gutter as wide as the number.
pub fn caret(source_line: &str, position: Position, palette: &Palette) -> String {
    let mut out = String::new();
    let number = position.line.to_string();
    let gutter = " ".repeat(number.len());
    let bar = paint(palette.hunk, "|");
    let _ = writeln!(out, "{} {bar} {source_line}", paint(palette.hunk, &number));
    // Keep tabs as tabs so the caret lines up however the terminal expands them.
    let lead: String = source_line
        .chars()
        .take(position.column.saturating_sub(1))
        .map(|c| if c == '\t' { '\t' } else { ' ' })
        .collect();
    let _ = writeln!(out, "{gutter} {bar} {lead}{}", paint(palette.caret, "^"));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_caret_sits_under_the_column() {
        assert_eq!(
            caret("  - {id: b}", Position::new(12, 5), &Palette::plain()),
            "12 |   - {id: b}\n   |     ^\n"
        );
    }
}
