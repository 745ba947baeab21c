//! The HTML pages' one door to markup that is not escaped: the style sheets and the script
//! built into the program (`assets/`, included at build time). Everything else a page shows is
//! a value spliced into maud's `html!`, which escapes it by construction; no reporter escapes
//! text by hand, and `tests/architecture.rs` refuses `PreEscaped`, an own `Render` and markup
//! in a string literal anywhere but here.

use maud::{Markup, PreEscaped, html};

/// explain's picture page.
pub(crate) const EXPLAIN_CSS: &str = include_str!("assets/explain.css");
/// The conformance matrix's page.
pub(crate) const MATRIX_CSS: &str = include_str!("assets/matrix.css");
/// `grade`'s summary.html.
pub(crate) const GRADE_SUMMARY_CSS: &str = include_str!("assets/grade_summary.css");
/// Sorts summary.html's table by the heading clicked (`data-col` names its column).
pub(crate) const SORT_ROWS_JS: &str = include_str!("assets/sort_rows.js");

/// A style sheet of the program's own, as a page's `<style>`: only a constant built in.
pub(crate) fn style(css: &'static str) -> Markup {
    html! { style { "\n" (PreEscaped(css)) } }
}

/// A script of the program's own, as a page's `<script>`: only a constant built in.
pub(crate) fn script(js: &'static str) -> Markup {
    html! { script { "\n" (PreEscaped(js)) } }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_assets_hold_no_end_of_their_element() {
        for asset in [EXPLAIN_CSS, MATRIX_CSS, GRADE_SUMMARY_CSS, SORT_ROWS_JS] {
            assert!(!asset.to_ascii_lowercase().contains("</"), "{asset}");
        }
        assert!(
            style(MATRIX_CSS)
                .into_string()
                .starts_with("<style>\nbody{")
        );
    }
}
