//! `dlqspec types`: an exercise folder's type declarations, for a student's editor.

use std::io::Write;

use crate::commands::cli::{TypesArgs, TypesLanguage};
use crate::commands::messages::usage_error;
use crate::model::language::Language;
use crate::report::{Palette, sanitize};
use crate::run::exit;

pub(crate) fn types(args: TypesArgs, palette: Palette) -> i32 {
    let Some(contract) = crate::contracts::registry::exercise_of_path(&args.exercise) else {
        return usage_error(
            &format!(
                "{}: no exercise folder there (a folder holding exercise.yaml, or a spec or folder inside one)",
                args.exercise.display()
            ),
            &palette,
        );
    };
    // TypeScript's declarations serve every solution Node.js runs.
    let language = match args.language {
        TypesLanguage::Typescript => Language::JavaScript,
        TypesLanguage::Python => Language::Python,
    };
    let Some(text) = contract.types(language) else {
        return usage_error(
            &format!(
                "{} has no {} declarations",
                contract.name(),
                language.title()
            ),
            &palette,
        );
    };
    let mut out = sanitize::stdout();
    let _ = out.write_all(text.as_bytes());
    exit::PASSED
}
