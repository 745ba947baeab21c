//! Terminal styling: the palette reporters use, empty when color is off.
//!
//! Colour is anstream and anstyle (already in clap's tree), not colored: colored decides once
//! from stdout and ignores `TERM=dumb`; anstream honours `NO_COLOR`, `CLICOLOR_FORCE`,
//! `TERM=dumb` and per-stream terminal detection.

use anstyle::{AnsiColor, Style};

/// Styles for each kind of text; every style is plain when color is off.
#[derive(Debug, Clone, Copy)]
pub struct Palette {
    pub(crate) pass: Style,
    pub(crate) fail: Style,
    pub(crate) skip: Style,
    pub(crate) spec: Style,
    pub(crate) dim: Style,
    pub(crate) bold: Style,
    pub(crate) removed: Style,
    pub(crate) added: Style,
    pub(crate) hunk: Style,
    pub(crate) caret: Style,
}

impl Palette {
    pub(crate) fn new(color: bool) -> Self {
        if !color {
            return Palette::plain();
        }
        let fg = |c: AnsiColor| Style::new().fg_color(Some(c.into()));
        Palette {
            pass: fg(AnsiColor::Green).bold(),
            fail: fg(AnsiColor::Red).bold(),
            skip: fg(AnsiColor::Yellow).bold(),
            spec: fg(AnsiColor::Magenta).bold(),
            dim: Style::new().dimmed(),
            bold: Style::new().bold(),
            removed: fg(AnsiColor::Red),
            added: fg(AnsiColor::Green),
            hunk: fg(AnsiColor::Cyan),
            caret: fg(AnsiColor::Red).bold(),
        }
    }

    pub fn plain() -> Self {
        let plain = Style::new();
        Palette {
            pass: plain,
            fail: plain,
            skip: plain,
            spec: plain,
            dim: plain,
            bold: plain,
            removed: plain,
            added: plain,
            hunk: plain,
            caret: plain,
        }
    }
}

/// `text` wrapped in `style`'s escape codes (none for a plain style).
pub(crate) fn paint(style: Style, text: &str) -> String {
    if style == Style::new() {
        text.to_owned()
    } else {
        format!("{}{text}{}", style.render(), style.render_reset())
    }
}
