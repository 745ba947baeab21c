//! The languages dlqspec runs solutions in through a shim of its own: each knows its `--impl`
//! prefix, its solution files' extensions, its shim, how its interpreter is found, how its
//! lesson spells keys, and what its box needs. Every other module asks a [`Language`] and
//! names none of these itself (tests/architecture.rs holds it), so a new language is one
//! variant here and one shim in `shims/`.

use crate::model::implementation::Naming;

/// A language a shim of dlqspec's own hosts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Language {
    Python,
    /// JavaScript and TypeScript, both run by Node.js.
    JavaScript,
}

impl Language {
    /// Every language, in the order a submission folder's entry files are searched for.
    pub const ALL: [Language; 2] = [Language::Python, Language::JavaScript];

    /// Its name as an implementation says it in `hello` and reports show it.
    pub fn name(self) -> &'static str {
        match self {
            Language::Python => "python",
            Language::JavaScript => "javascript",
        }
    }

    /// The `--impl` prefix that runs a solution in it: `python:FILE`, `node:FILE`.
    pub fn prefix(self) -> &'static str {
        match self {
            Language::Python => "python",
            Language::JavaScript => "node",
        }
    }

    /// Its name for a person: `Python`, `JavaScript/TypeScript`.
    pub(crate) fn title(self) -> &'static str {
        match self {
            Language::Python => "Python",
            Language::JavaScript => "JavaScript/TypeScript",
        }
    }

    /// The extensions of its solution files, in the order a folder's `solution.*` is searched.
    pub fn extensions(self) -> &'static [&'static str] {
        match self {
            Language::Python => &["py"],
            Language::JavaScript => &["ts", "mjs", "js", "cjs", "mts", "cts"],
        }
    }

    /// Those of its extensions that are TypeScript's, which Node.js runs only transformed.
    pub(crate) fn typescript_extensions(self) -> &'static [&'static str] {
        match self {
            Language::Python => &[],
            Language::JavaScript => &["ts", "mts", "cts"],
        }
    }

    /// Its shim, in the shims folder.
    pub fn shim(self) -> &'static str {
        match self {
            Language::Python => "python/dlqspec_shim.py",
            Language::JavaScript => "node/dlqspec-shim.mjs",
        }
    }

    /// The folders of the shims folder its shim needs, parents first.
    pub(crate) fn shim_folders(self) -> &'static [&'static str] {
        match self {
            Language::Python => &["python"],
            Language::JavaScript => &["node", "node/vendor"],
        }
    }

    /// Its interpreter: the variable that names another (a command line), and the program run
    /// when it names none, looked up on `PATH`.
    pub fn interpreter(self) -> (&'static str, &'static str) {
        match self {
            Language::Python => ("DLQSPEC_PYTHON", "python3"),
            Language::JavaScript => ("DLQSPEC_NODE", "node"),
        }
    }

    /// The interpreter for a person: what the variable should name.
    pub(crate) fn interpreter_title(self) -> &'static str {
        match self {
            Language::Python => "Python 3",
            Language::JavaScript => "Node.js (20 or later)",
        }
    }

    /// How its lesson spells keys: camelCase for JavaScript and TypeScript.
    pub fn naming(self) -> Naming {
        match self {
            Language::Python => Naming::Snake,
            Language::JavaScript => Naming::Camel,
        }
    }

    /// What its box needs besides its own files: whether a class's submissions in it start
    /// warm, forked from one boxed interpreter (the zygote, which only Python's shim serves).
    pub(crate) fn starts_warm(self) -> bool {
        match self {
            Language::Python => true,
            Language::JavaScript => false,
        }
    }

    /// The language whose `--impl` prefix is `prefix`.
    pub fn of_prefix(prefix: &str) -> Option<Language> {
        Language::ALL.into_iter().find(|l| l.prefix() == prefix)
    }

    /// How an implementation that names its language `name` in `hello` (and says nothing of
    /// its naming) spells keys: its language's way, else snake_case.
    pub fn naming_of(name: &str) -> Naming {
        Language::of_name(name).map_or(Naming::Snake, Language::naming)
    }

    /// The language of a solution file with extension `extension`.
    pub fn of_extension(extension: &str) -> Option<Language> {
        Language::ALL
            .into_iter()
            .find(|l| l.extensions().contains(&extension))
    }

    /// The language an implementation names in `hello` (any case; `typescript`, `js` and
    /// `ts` are JavaScript's too), when it is one of these.
    pub fn of_name(name: &str) -> Option<Language> {
        let name = name.to_ascii_lowercase();
        Language::ALL.into_iter().find(|l| {
            l.name() == name
                || l.prefix() == name
                || (*l == Language::JavaScript && name == "typescript")
                || l.extensions().contains(&name.as_str())
        })
    }

    /// Every extension of a solution file, in the order a folder's `solution.*` is searched.
    pub fn all_extensions() -> impl Iterator<Item = &'static str> {
        Language::ALL
            .into_iter()
            .flat_map(|l| l.extensions().iter().copied())
    }
}

impl std::fmt::Display for Language {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_language_is_found_by_each_of_its_names() {
        for language in Language::ALL {
            assert_eq!(Language::of_prefix(language.prefix()), Some(language));
            assert_eq!(Language::of_name(language.name()), Some(language));
            for extension in language.extensions() {
                assert_eq!(Language::of_extension(extension), Some(language));
            }
            assert!(language.shim().starts_with(language.shim_folders()[0]));
        }
        assert_eq!(Language::of_name("TypeScript"), Some(Language::JavaScript));
        assert_eq!(Language::of_name("ts"), Some(Language::JavaScript));
        assert_eq!(Language::of_name("java"), None);
        assert_eq!(Language::naming_of("TypeScript"), Naming::Camel);
        assert_eq!(Language::naming_of("python"), Naming::Snake);
        assert_eq!(Language::naming_of("java"), Naming::Snake);
        assert_eq!(Language::of_extension("rb"), None);
        assert_eq!(
            Language::all_extensions().collect::<Vec<_>>(),
            ["py", "ts", "mjs", "js", "cjs", "mts", "cts"]
        );
    }
}
