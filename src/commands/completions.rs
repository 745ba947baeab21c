//! `dlqspec completions SHELL`: a shell completion script, generated from the clap definition.

use clap::{Command, CommandFactory};

use crate::commands::cli::{Cli, CompletionsArgs};
use crate::run::exit;

#[expect(
    clippy::disallowed_methods,
    reason = "prints: the completion script goes to stdout"
)]
pub(crate) fn completions(args: CompletionsArgs) -> i32 {
    let mut command = offered(&Cli::command());
    let name = command.get_name().to_owned();
    clap_complete::generate(args.shell, &mut command, name, &mut std::io::stdout());
    exit::PASSED
}

/// The command line as a completion script offers it: without its hidden options (the old
/// spellings, kept one release), which clap_complete's scripts would suggest otherwise.
fn offered(command: &Command) -> Command {
    let mut pruned = Command::default()
        .name(command.get_name().to_owned())
        .args(
            command
                .get_arguments()
                .filter(|arg| !arg.is_hide_set())
                .cloned(),
        )
        .subcommands(command.get_subcommands().map(offered))
        .hide(command.is_hide_set())
        .disable_help_flag(command.is_disable_help_flag_set());
    if let Some(about) = command.get_about() {
        pruned = pruned.about(about.clone());
    }
    if let Some(version) = command.get_version() {
        pruned = pruned.version(version.to_owned());
    }
    pruned
}
