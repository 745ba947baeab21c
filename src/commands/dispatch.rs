//! Routing a parsed command line to its subcommand, and terminal facts they share.

use crate::commands::cli::{Cli, ColorWhen, Command};
use crate::report::Palette;

/// Runs the command and returns the exit code.
pub fn execute(cli: Cli) -> i32 {
    // First, before any thread starts: what to undo on Ctrl-C or a kill.
    crate::files::interrupts::install();
    let palette = Palette::new(use_color(cli.color));
    let code = match cli.command {
        Command::Run(args) => super::run::run(args, palette),
        Command::Watch(args) => super::watch::watch(args, palette),
        Command::Rules(args) => super::rules::rules(args, palette),
        Command::Schema => super::schema::schema(),
        Command::New(args) => super::new::new_spec(args, palette),
        Command::Explain(args) => super::explain::explain(args, palette),
        Command::Bless(args) => super::bless::bless(args, palette),
        Command::Lint(args) => super::lint::lint(args, palette),
        Command::Smoke(args) => super::smoke::smoke(args, palette),
        Command::Matrix(args) => super::matrix::matrix(args, palette),
        Command::Explore(args) => super::explore::explore(args, palette),
        Command::Strength(args) => super::strength::strength(args, palette),
        Command::Grade(args) => super::grade::grade(args, palette),
        Command::Completions(args) => super::completions::completions(args),
        Command::Man(args) => super::man::man(args, palette),
    };
    // Last: whatever an implementation left running below dlqspec ends with it.
    crate::external::children::end_all();
    code
}

/// Whether stdout gets colors: `auto` leaves it to anstream (tty, NO_COLOR, CLICOLOR_FORCE, TERM).
pub fn use_color(when: ColorWhen) -> bool {
    match when {
        ColorWhen::Always => true,
        ColorWhen::Never => false,
        ColorWhen::Auto => {
            anstream::AutoStream::choice(&std::io::stdout()) != anstream::ColorChoice::Never
        }
    }
}

/// Prints a usage-level error (bad path, bad option value) the way every command does.
pub fn usage_error(message: &str, palette: &Palette) -> i32 {
    failure(message, palette);
    crate::run::runner::exit::SPEC_OR_USAGE_ERROR
}

/// Prints a `warning:` line on stderr: something the user should know that stops nothing.
pub fn warning(message: &str, palette: &Palette) {
    use std::io::Write;
    let _ = writeln!(
        crate::report::sanitize::stderr(),
        "{} {}",
        crate::report::style::paint(palette.skip, "warning:"),
        crate::report::sanitize::text(message)
    );
}

/// Prints why a command could not do its work at all, as one `error:` line on stderr.
pub fn failure(message: &str, palette: &Palette) {
    use std::io::Write;
    // Messages name paths found in spec folders: shown escaped, like every untrusted text.
    let _ = writeln!(
        crate::report::sanitize::stderr(),
        "{} {}",
        crate::report::style::paint(palette.fail, "error:"),
        crate::report::sanitize::text(message)
    );
}
