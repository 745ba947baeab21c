//! Routing a parsed command line to its subcommand.

use crate::commands::cli::{Cli, Command};
use crate::commands::messages::{usage_error, use_color};
use crate::report::Palette;

/// Runs the command and returns the exit code.
pub fn execute(mut cli: Cli) -> i32 {
    // First, before any thread starts: what to undo on Ctrl-C or a kill.
    crate::files::interrupts::install();
    let palette = Palette::new(use_color(cli.color));
    for note in cli.command.adopt_old_spellings() {
        use std::io::Write;
        let _ = writeln!(crate::report::sanitize::stderr(), "{note}");
    }
    if let Err(broken) = super::exercises::register(&cli, &palette) {
        use std::io::Write;
        let _ = write!(crate::report::sanitize::stderr(), "{broken}");
        crate::external::children::end_all();
        return crate::run::exit::SPEC_OR_USAGE_ERROR;
    }
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
        Command::Types(args) => super::types::types(args, palette),
        Command::Init { .. } => usage_error(
            "dlqspec has no `init`: `dlqspec new specs/dlq-consumer/my-case.yaml` writes a starter spec that passes as written (`dlqspec new --help`); `dlqspec run` runs the specs of ./specs",
            &palette,
        ),
    };
    // Last: whatever an implementation left running below dlqspec ends with it.
    crate::external::children::end_all();
    code
}
