//! `dlqspec man`: man pages generated from the clap definition, so they never drift from `--help`.

use std::io::Write;

use clap::CommandFactory;

use crate::commands::cli::{Cli, ManArgs};
use crate::report::Palette;
use crate::run::exit;

#[expect(
    clippy::disallowed_methods,
    reason = "prints: the man page goes to stdout"
)]
pub(crate) fn man(args: ManArgs, palette: Palette) -> i32 {
    let page = match render(args.subcommand.as_deref()) {
        Ok(page) => page,
        Err(message) => return super::messages::usage_error(&message, &palette),
    };
    // A closed stdout (piped into `head`) is not worth a panic or an error.
    let _ = std::io::stdout().write_all(&page);
    exit::PASSED
}

/// dlqspec(1), or dlqspec-SUBCOMMAND(1) with that subcommand's options and examples.
pub(crate) fn render(subcommand: Option<&str>) -> Result<Vec<u8>, String> {
    let command = Cli::command();
    let command = match subcommand {
        None => command,
        Some(name) => {
            let Some(sub) = command.find_subcommand(name) else {
                let known: Vec<&str> = command.get_subcommands().map(|s| s.get_name()).collect();
                return Err(format!(
                    "no subcommand `{name}`; expected one of {}",
                    known.join(", ")
                ));
            };
            let title = format!("dlqspec-{}", sub.get_name());
            sub.clone()
                .display_name(title.clone())
                .bin_name(format!("dlqspec {}", sub.get_name()))
                .version(env!("CARGO_PKG_VERSION"))
        }
    };
    let mut page = Vec::new();
    clap_mangen::Man::new(command)
        .source(format!("dlqspec {}", env!("CARGO_PKG_VERSION")))
        .render(&mut page)
        .map_err(|error| format!("cannot render the man page: {error}"))?;
    Ok(page)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_subcommand_help_shows_an_example() {
        for sub in Cli::command()
            .get_subcommands()
            .filter(|sub| !sub.is_hide_set())
        {
            let after = sub
                .get_after_help()
                .map(|h| h.to_string())
                .unwrap_or_default();
            assert!(
                after.contains("Example") && after.contains("dlqspec "),
                "`dlqspec {} --help` has no example",
                sub.get_name()
            );
        }
    }

    #[test]
    fn the_main_page_lists_subcommands_and_each_has_its_own_page() {
        let main = String::from_utf8(render(None).unwrap()).unwrap();
        assert!(main.contains(".TH dlqspec 1"), "{main}");
        assert!(main.contains("dlqspec\\-run(1)"), "{main}");
        let run = String::from_utf8(render(Some("run")).unwrap()).unwrap();
        assert!(
            run.contains(".TH dlqspec-run 1  \"dlqspec 0.1.0\""),
            "{run}"
        );
        for option in ["\\-\\-partition", "\\-\\-fail\\-fast", "\\-\\-format"] {
            assert!(run.contains(option), "dlqspec-run(1) lacks {option}");
        }
        let error = render(Some("nope")).unwrap_err();
        assert!(
            error.starts_with("no subcommand `nope`; expected one of run, rules, "),
            "{error}"
        );
    }
}
