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
    if args.install {
        return install(&palette);
    }
    let page = match render(args.subcommand.as_deref()) {
        Ok(page) => page,
        Err(message) => return super::messages::usage_error(&message, &palette),
    };
    // A closed stdout (piped into `head`) is not worth a panic or an error.
    let _ = std::io::stdout().write_all(&page);
    exit::PASSED
}

/// `dlqspec man --install`: every page into the user's man folder, and where they went.
#[expect(
    clippy::disallowed_methods,
    reason = "prints: what was installed goes to stdout"
)]
fn install(palette: &Palette) -> i32 {
    let env = |name: &str| std::env::var(name).ok();
    let Some(dir) = man_folder(&env) else {
        return super::messages::usage_error(
            "no folder to install the man pages in: set HOME (or XDG_DATA_HOME)",
            palette,
        );
    };
    let pages = match pages() {
        Ok(pages) => pages,
        Err(message) => return super::messages::usage_error(&message, palette),
    };
    if let Err(error) = std::fs::create_dir_all(&dir) {
        return super::messages::usage_error(
            &format!("cannot make {}: {error}", dir.display()),
            palette,
        );
    }
    for (name, page) in &pages {
        let path = dir.join(name);
        if let Err(error) = crate::files::atomic_file::replace_own(&path, page) {
            return super::messages::usage_error(
                &format!("cannot write {}: {error}", path.display()),
                palette,
            );
        }
    }
    let _ = writeln!(
        std::io::stdout(),
        "installed {} in {}: `man dlqspec` and `man dlqspec-run` find them where ~/.local/bin is on PATH; elsewhere, add {} to MANPATH",
        crate::text::listing::count(pages.len(), "man page"),
        dir.display(),
        dir.parent().unwrap_or(&dir).display()
    );
    exit::PASSED
}

/// Where `--install` puts the pages: `$XDG_DATA_HOME/man/man1` (when absolute), else
/// `$HOME/.local/share/man/man1`; `None` with neither.
fn man_folder(env: &dyn Fn(&str) -> Option<String>) -> Option<std::path::PathBuf> {
    let set = |name: &str| env(name).filter(|value| !value.is_empty());
    let data = match set("XDG_DATA_HOME").filter(|dir| std::path::Path::new(dir).is_absolute()) {
        Some(dir) => std::path::PathBuf::from(dir),
        None => std::path::Path::new(&set("HOME")?).join(".local/share"),
    };
    Some(data.join("man").join("man1"))
}

/// Every page, by its file name: `dlqspec.1`, then `dlqspec-SUBCOMMAND.1` for each command
/// `--help` lists.
fn pages() -> Result<Vec<(String, Vec<u8>)>, String> {
    let mut pages = vec![("dlqspec.1".to_owned(), render(None)?)];
    for sub in Cli::command()
        .get_subcommands()
        .filter(|s| !s.is_hide_set())
    {
        let name = sub.get_name().to_owned();
        pages.push((format!("dlqspec-{name}.1"), render(Some(&name))?));
    }
    Ok(pages)
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
    fn the_pages_install_under_the_users_data_folder() {
        let env = |vars: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                vars.iter()
                    .find(|(key, _)| *key == name)
                    .map(|(_, value)| (*value).to_owned())
            }
        };
        assert_eq!(
            man_folder(&env(&[("HOME", "/home/u")])),
            Some("/home/u/.local/share/man/man1".into())
        );
        assert_eq!(
            man_folder(&env(&[("HOME", "/home/u"), ("XDG_DATA_HOME", "/data")])),
            Some("/data/man/man1".into())
        );
        // A relative XDG_DATA_HOME is ignored, as the XDG specification says.
        assert_eq!(
            man_folder(&env(&[("HOME", "/home/u"), ("XDG_DATA_HOME", "data")])),
            Some("/home/u/.local/share/man/man1".into())
        );
        assert_eq!(man_folder(&env(&[])), None);
        let pages = pages().unwrap();
        assert_eq!(pages[0].0, "dlqspec.1");
        assert!(pages.iter().any(|(name, _)| name == "dlqspec-run.1"));
        assert!(pages.iter().all(|(name, _)| !name.contains("init")));
    }

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
