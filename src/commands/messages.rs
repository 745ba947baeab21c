//! What every command tells on the terminal the same way: usage errors, failures, warnings,
//! an implementation that cannot run, and whether stdout takes colour.

use crate::commands::cli::ColorWhen;
use crate::report::Palette;

/// Whether stdout gets colors: `auto` leaves it to anstream (tty, NO_COLOR, CLICOLOR_FORCE, TERM).
#[expect(
    clippy::disallowed_methods,
    reason = "prints: asks whether stdout takes colour"
)]
pub(crate) fn use_color(when: ColorWhen) -> bool {
    match when {
        ColorWhen::Always => true,
        ColorWhen::Never => false,
        ColorWhen::Auto => {
            anstream::AutoStream::choice(&std::io::stdout()) != anstream::ColorChoice::Never
        }
    }
}

/// Prints a usage-level error (bad path, bad option value) the way every command does.
pub(crate) fn usage_error(message: &str, palette: &Palette) -> i32 {
    failure(message, palette);
    crate::run::exit::SPEC_OR_USAGE_ERROR
}

/// For a command given an implementation that cannot run (`--impl auto:` of a folder with no
/// solution, a machine without Node.js): says why, as a usage error, and gives its exit code.
pub(crate) fn refuse_unrunnable(
    target: &crate::external::launch::Target,
    palette: &Palette,
) -> Option<i32> {
    target
        .unrunnable()
        .map(|unrunnable| usage_error(&unrunnable.teacher, palette))
}

/// Prints a `warning:` line on stderr: something the user should know that stops nothing.
pub(crate) fn warning(message: &str, palette: &Palette) {
    use std::io::Write;
    let _ = writeln!(
        crate::report::sanitize::stderr(),
        "{} {}",
        crate::report::style::paint(palette.skip, "warning:"),
        crate::report::sanitize::text(message)
    );
}

/// Prints why a command could not do its work at all, as one `error:` line on stderr.
pub(crate) fn failure(message: &str, palette: &Palette) {
    use std::io::Write;
    // Messages name paths found in spec folders: shown escaped, like every untrusted text.
    let _ = writeln!(
        crate::report::sanitize::stderr(),
        "{} {}",
        crate::report::style::paint(palette.fail, "error:"),
        crate::report::sanitize::text(message)
    );
}

/// Prints spec errors on stderr, each at its place with the line and a caret.
pub(crate) fn spec_errors(errors: &[crate::text::spec_error::SpecError], palette: &Palette) {
    use std::io::Write;
    let mut err = crate::report::sanitize::stderr();
    for error in errors {
        let _ = write!(err, "{}", crate::report::render::spec_error(error, palette));
    }
}
