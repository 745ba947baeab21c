//! Where a submission's pictures go (`NAME/explain/SPEC.html`, each a `dlqspec explain --format
//! html` of one failing spec), and how a picture of an earlier grading is known again.

/// The most pictures `grade` draws of one submission: one per failing spec, the first ones
/// of the suite's order. Each needs a run of its own (`dlqspec explain`).
pub(crate) const MAX_PICTURES: usize = 5;

/// Where the picture of `spec` (a path as the run reports it) for submission `name` goes,
/// relative to the output folder: `NAME/explain/STEM.html`, the stem made of letters, digits,
/// `-` and `_`, with `.` for each `/` (so `specs/dlq-consumer/a.yaml` is
/// `specs.dlq-consumer.a.html`).
pub(crate) fn picture_file(name: &str, spec: &str) -> String {
    let stem = spec
        .strip_suffix(".yaml")
        .or_else(|| spec.strip_suffix(".yml"))
        .unwrap_or(spec);
    let stem: String = stem
        .chars()
        .map(|c| match c {
            c if c.is_ascii_alphanumeric() || c == '-' || c == '_' => c,
            '/' | '\\' => '.',
            _ => '_',
        })
        .collect();
    format!(
        "{}/{}.html",
        picture_folder(name),
        stem.trim_start_matches('.')
    )
}

/// The folder of submission `name`'s pictures, relative to the output folder.
pub(crate) fn picture_folder(name: &str) -> String {
    format!("{name}/explain")
}

/// Whether `file` (a name in a [`picture_folder`]) is one [`picture_file`] could give: the
/// pictures of an earlier grading are known by it, and nothing else there is touched.
pub(crate) fn is_picture_name(file: &str) -> bool {
    file.strip_suffix(".html").is_some_and(|stem| {
        !stem.starts_with('.')
            && stem
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picture_names_are_known_again_and_nothing_else_is() {
        for spec in ["specs/dlq-consumer/a.yaml", "x y/.b.yml", "c"] {
            let file = picture_file("alice", spec);
            let (folder, name) = file.rsplit_once('/').unwrap();
            assert_eq!(folder, picture_folder("alice"));
            assert!(is_picture_name(name), "{name}");
        }
        for not_ours in [
            "notes.txt",
            ".hidden.html",
            "a b.html",
            "page.htm",
            "x.html.bak",
        ] {
            assert!(!is_picture_name(not_ours), "{not_ours}");
        }
    }
}
