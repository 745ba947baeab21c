//! The dlqspec binary: parses the command line and hands it to the library.

use clap::Parser;

fn main() {
    let cli = dlqspec::commands::cli::Cli::parse();
    std::process::exit(dlqspec::commands::execute(cli));
}
