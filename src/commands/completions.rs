//! `dlqspec completions SHELL`: a shell completion script, generated from the clap definition.

use clap::CommandFactory;

use crate::commands::cli::{Cli, CompletionsArgs};
use crate::run::runner::exit;

pub fn completions(args: CompletionsArgs) -> i32 {
    let mut command = Cli::command();
    let name = command.get_name().to_owned();
    clap_complete::generate(args.shell, &mut command, name, &mut std::io::stdout());
    exit::PASSED
}
