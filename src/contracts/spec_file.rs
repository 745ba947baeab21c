//! The keys every spec starts with, whatever its contract: declared once (`spec_file!`) for
//! every vocabulary's file type, and checked once into the spec's `SpecHeader`.
//!
//! A vocabulary writes only its own keys; the macro puts the header's before them, with the
//! docs the schema shows, and gives the type `header`, which checks them all (grading, a name
//! that is not blank, the smells allowed) and gathers every error in the loader's list. A
//! macro, not a flattened struct: serde cannot deny unknown keys through `flatten`, and the
//! did-you-mean of a misspelt key needs every key of the file in one list.

/// Declares a spec file type: the header's keys, then the ones given, and its `header` check.
macro_rules! spec_file {
    (
        $(#[$meta:meta])*
        $name:ident {
            $($(#[$field_meta:meta])* $field:ident: $type:ty,)*
        }
    ) => {
        $(#[$meta])*
        pub(crate) struct $name {
            /// The contract's or exercise's name.
            #[expect(
                dead_code,
                reason = "read by serde and the schema: the loader chose the contract by the key already"
            )]
            pub(crate) contract: String,
            /// What the scenario shows, in one line; unique within a suite.
            pub(crate) name: $crate::text::yaml::Spanned<String>,
            #[serde(default)]
            pub(crate) description: String,
            /// The ids of the rules this scenario checks (`dlqspec rules` lists them).
            #[serde(default)]
            pub(crate) rules: Vec<$crate::text::yaml::Spanned<String>>,
            /// Points the spec is worth in autograder results (`--format gradescope`); default 1.
            #[serde(default)]
            #[schemars(range(min = 0))]
            pub(crate) points: Option<$crate::text::yaml::Spanned<f64>>,
            /// Who sees the result on an autograder: `visible` (default), `hidden` (only pass or
            /// fail), `after_due_date`, `after_published` (Gradescope's; only pass or fail before).
            #[serde(default)]
            pub(crate) visibility: Option<$crate::contracts::contract::Visibility>,
            /// Smells `dlqspec lint` is not to report in this spec, each with why it is fine here:
            /// `[{smell: never-delivered, reason: "..."}]`. An allow that suppresses nothing is
            /// reported itself (`stale-allow`).
            #[serde(default)]
            pub(crate) allow: Vec<$crate::text::yaml::Spanned<$crate::contracts::smell::AllowSpec>>,
            $($(#[$field_meta])* pub(crate) $field: $type,)*
        }

        impl $name {
            /// The spec's header, its keys checked: `None` where one is wrong, its errors kept
            /// in `errors` with the file's others.
            pub(crate) fn header(
                &self,
                file: &$crate::text::source::SourceFile,
                errors: &mut $crate::text::spec_error::SpecErrors,
            ) -> Option<$crate::contracts::contract::SpecHeader> {
                use $crate::contracts::contract::{Grading, SpecHeader};
                let grading = errors
                    .keep(Grading::from_keys(file, self.points.as_ref(), self.visibility))
                    .unwrap_or_default();
                let header = errors.keep(SpecHeader::new(
                    file,
                    self.name.clone(),
                    self.description.clone(),
                    &self.rules,
                    grading,
                ));
                let allow = errors.keep($crate::contracts::smell::allows(file, &self.allow));
                let mut header = header?;
                header.allow = allow?;
                Some(header)
            }
        }
    };
}

pub(crate) use spec_file;

/// The header every starter spec (`dlqspec new`) opens with: the contract, the name written as
/// one YAML scalar (so `a: tricky name` stays a string), a description to write, and the rules.
pub(crate) fn starter_header(contract: &str, name: &str, rules: &[&str]) -> String {
    format!(
        "contract: {contract}\nname: {}\ndescription: >\n  Say in a sentence or two what this \
         scenario shows and why it matters.\n# The rules this scenario checks; `dlqspec rules` \
         lists them all.\nrules: [{}]\n",
        crate::text::yaml::flow(&serde_json::Value::String(name.to_owned())),
        rules.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_starter_header_keeps_a_tricky_name_one_string() {
        let header = starter_header("c", "a: tricky # name", &["c/one", "c/two"]);
        assert!(
            header.starts_with("contract: c\nname: \"a: tricky # name\"\n"),
            "{header}"
        );
        assert!(header.ends_with("rules: [c/one, c/two]\n"), "{header}");
    }
}
