//! The HTML pages' one door to markup that is not escaped: the style sheets and the script
//! built into the program (`assets/`, included at build time). Everything else a page shows is
//! a value spliced into maud's `html!`, which escapes it by construction; no reporter escapes
//! text by hand, and `tests/architecture.rs` refuses `PreEscaped`, an own `Render` and markup
//! in a string literal anywhere but here.
//!
//! Why a template engine, and why maud: the three pages (explain's picture, the matrix,
//! summary.html) were `format!` strings with about 70 calls of an escape function, one missed
//! call an injection into a teacher's browser. maud builds in a third of askama's time (askama
//! brings `syn` 3, winnow and a TOML reader; maud only builds on the `syn` 2 already there),
//! renders a little faster, and keeps a template beside the code that fills it, typed, where
//! askama's templates are files read by a derive (docs/performance.md, "The HTML template
//! engine"). The pages stayed the same documents (the browser tests and the pages' tests hold
//! their elements and texts); maud writes `<path ...></path>` for `<path .../>` and no `'` as an
//! entity (every attribute is double-quoted).

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
