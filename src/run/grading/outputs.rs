//! A class's files in the output folder, written by grade itself once every run is over (no
//! submission runs while they are put in place), each through `files/`: a submission's
//! reports and pictures, the summaries, a shard's reports copied by `--merge`; and what an
//! earlier grading left that this one did not write removed, so it cannot pass for this one's.

use std::path::Path;

use crate::files::atomic_file::{remove_own, replace_own};
use crate::run::grading::pictures::{is_picture_name, picture_file, picture_folder};
use crate::run::grading::row::{Graded, WrittenReports};
use crate::run::grading::submission::Reports;
use crate::run::grading::{MAX_REPORT_BYTES, MAX_TEXT_REPORT_BYTES, read_bounded, read_held};

/// The most of a picture (`dlqspec explain --format html`) kept: one is a few hundred KiB at
/// most, since its rows are capped; a larger one is not dlqspec's.
const MAX_PICTURE_BYTES: u64 = 8 << 20;

/// The most entries of a submission's `explain` folder looked at for stale pictures.
const MAX_PICTURE_FOLDER_ENTRIES: usize = 4096;

/// Writes each graded submission's reports into `output`, in the class's order: its row says
/// which were written, or in its note why not. One that did not run has none, and no picture
/// of an earlier grading may pass for its.
pub(crate) fn write_class(output: &Path, graded: Vec<(Graded, Option<Reports>)>) -> Vec<Graded> {
    graded
        .into_iter()
        .map(|(mut row, reports)| {
            match reports {
                Some(reports) => match write_reports(output, &row.name, reports) {
                    Ok(written) => row.reports = written,
                    Err(why) => row.note = why,
                },
                None => {
                    if let Err(why) = remove_stale_pictures(output, &row.name, &[]) {
                        row.note = format!("{}; {why}", row.note);
                    }
                }
            }
            row
        })
        .collect()
}

/// Writes `files` (each a name and its text: the summaries) into `output`, each replacing
/// what is there (a link planted at one is replaced, never written through).
pub(crate) fn write_summaries(output: &Path, files: &[(&str, String)]) -> Result<(), String> {
    for (file, text) in files {
        let path = output.join(file);
        replace_own(&path, text.as_bytes())
            .map_err(|error| format!("cannot write {}: {error}", path.display()))?;
    }
    Ok(())
}

/// Copies the reports of `row` that a shard's folder (`from`) holds into `output`, as the
/// shard wrote them (each read bounded, a regular file only), its pictures into its folder
/// there; pictures of an earlier grading there that the shard did not make are removed.
pub(crate) fn copy_reports(output: &Path, row: &Graded, from: &Path) -> Result<(), String> {
    let mut pictures = Vec::new();
    for (kind, file) in row.reports.files(&row.name) {
        let to = output.join(&file);
        read_bounded(&from.join(&file), MAX_REPORT_BYTES).and_then(|bytes| {
            // A picture is in its submission's folder, made here as the shard made it.
            if kind == "html" {
                pictures.push(file.clone());
                return write_picture(output, &row.name, &file, &bytes);
            }
            replace_own(&to, &bytes)
                .map_err(|error| format!("cannot write {}: {error}", to.display()))
        })?;
    }
    remove_stale_pictures(output, &row.name, &pictures)
}

/// Removes a file or link at `path`, if there is one.
fn remove_stale(path: &Path) -> Result<(), String> {
    remove_own(path).map_err(|error| format!("cannot remove {}: {error}", path.display()))
}

/// Writes a submission's `NAME.txt` and `NAME.jsonl`, each replacing what is there (a link or
/// file planted there is replaced, never written through); which were written.
fn write_reports(output: &Path, name: &str, reports: Reports) -> Result<WrittenReports, String> {
    let text = output.join(format!("{name}.txt"));
    let jsonl = output.join(format!("{name}.jsonl"));
    let reports_json = reports.json_lines.is_some();
    let human = read_held(reports.human, MAX_TEXT_REPORT_BYTES)
        .map_err(|e| format!("cannot read its report back: {e}"))?;
    replace_own(&text, &human)
        .map_err(|error| format!("cannot write {}: {error}", text.display()))?;
    match reports.json_lines {
        Some(file) => {
            let bytes = read_held(file, MAX_REPORT_BYTES)
                .map_err(|e| format!("cannot read its report back: {e}"))?;
            replace_own(&jsonl, &bytes)
                .map_err(|error| format!("cannot write {}: {error}", jsonl.display()))?;
        }
        // A report of an earlier grading must not pass for this one's.
        None => remove_stale(&jsonl)?,
    }
    let mut pictures = Vec::new();
    for (spec, page) in reports.pictures {
        let file = picture_file(name, &spec);
        // Two specs whose paths make the same file name: the first one's picture stays.
        if pictures
            .iter()
            .any(|drawn: &String| picture_file(name, drawn) == file)
        {
            continue;
        }
        let bytes = read_held(page, MAX_PICTURE_BYTES)
            .map_err(|e| format!("cannot read a picture back: {e}"))?;
        write_picture(output, name, &file, &bytes)?;
        pictures.push(spec);
    }
    let made: Vec<String> = pictures
        .iter()
        .map(|spec| picture_file(name, spec))
        .collect();
    remove_stale_pictures(output, name, &made)?;
    Ok(WrittenReports {
        text: true,
        json_lines: reports_json,
        pictures,
    })
}

/// Writes a picture at `file` (from `picture_file`) under `output`, in folders of
/// grade's own: a link planted for the submission's folder or its `explain` folder is refused,
/// never followed out of `output`; a link at the file itself is replaced.
fn write_picture(output: &Path, name: &str, file: &str, bytes: &[u8]) -> Result<(), String> {
    let path = output.join(file);
    crate::files::folders::own_folder(output, Path::new(&picture_folder(name)))
        .and_then(|_| replace_own(&path, bytes))
        .map_err(|error| format!("cannot write {}: {error}", path.display()))
}

/// Removes the pictures an earlier grading left for submission `name` that this one did not
/// make (`made`, as `picture_file` names them), so that none passes for this
/// grading's. Only regular files named as grade names pictures are removed, and only in a
/// folder reached through no link: anything else there is left alone.
fn remove_stale_pictures(output: &Path, name: &str, made: &[String]) -> Result<(), String> {
    let folder = picture_folder(name);
    let Some(path) = crate::files::folders::existing_own_folder(output, Path::new(&folder)) else {
        return Ok(());
    };
    let Ok(entries) = std::fs::read_dir(&path) else {
        return Ok(());
    };
    for entry in entries.take(MAX_PICTURE_FOLDER_ENTRIES).flatten() {
        let file_name = entry.file_name();
        let Some(file_name) = file_name.to_str() else {
            continue;
        };
        let ours = is_picture_name(file_name) && entry.file_type().is_ok_and(|kind| kind.is_file());
        if ours && !made.contains(&format!("{folder}/{file_name}")) {
            remove_stale(&entry.path())?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::grading::row::{Marks, Status};
    use std::io::Write;

    fn held(text: &str) -> std::fs::File {
        let mut file = tempfile::tempfile().unwrap();
        file.write_all(text.as_bytes()).unwrap();
        file
    }

    fn row(name: &str) -> Graded {
        Graded {
            marks: Marks {
                failed: 1,
                ..Marks::default()
            },
            ..Graded::for_test(&format!("class/{name}"), name, Status::Fail)
        }
    }

    #[test]
    fn a_class_is_written_and_what_an_earlier_grading_left_of_it_goes() {
        let dir = tempfile::tempdir().unwrap();
        let output = dir.path();
        let read = |file: &str| std::fs::read_to_string(output.join(file)).ok();
        for (file, text) in [
            ("alice.jsonl", "an earlier report"),
            ("alice/explain/specs.old.html", "an earlier picture"),
            ("alice/explain/notes.txt", "not grade's"),
            ("bob/explain/specs.a.html", "an earlier picture"),
        ] {
            std::fs::create_dir_all(output.join(file).parent().unwrap()).unwrap();
            std::fs::write(output.join(file), text).unwrap();
        }
        let alice = Reports {
            human: held("alice's run"),
            json_lines: None,
            pictures: vec![
                ("specs/a.yaml".to_owned(), held("<html>a</html>")),
                // The same file name as the first: the first one's picture stays.
                ("specs\\a.yaml".to_owned(), held("<html>again</html>")),
            ],
        };
        let carol = Reports {
            human: held("carol's run"),
            json_lines: Some(held("{\"event\":\"run_started\"}")),
            pictures: Vec::new(),
        };
        let rows = write_class(
            output,
            vec![
                (row("alice"), Some(alice)),
                (row("bob"), None),
                (row("carol"), Some(carol)),
            ],
        );
        assert_eq!(
            rows[0].reports,
            WrittenReports {
                text: true,
                json_lines: false,
                pictures: vec!["specs/a.yaml".to_owned()],
            }
        );
        assert_eq!(read("alice.txt").as_deref(), Some("alice's run"));
        assert_eq!(read("alice.jsonl"), None);
        assert_eq!(
            read("alice/explain/specs.a.html").as_deref(),
            Some("<html>a</html>")
        );
        assert_eq!(read("alice/explain/specs.old.html"), None);
        assert_eq!(
            read("alice/explain/notes.txt").as_deref(),
            Some("not grade's")
        );
        // Not run: none of its reports, and no picture left that could pass for this grading's.
        assert_eq!(rows[1].reports, WrittenReports::default());
        assert_eq!(read("bob/explain/specs.a.html"), None);
        assert!(rows[2].reports.json_lines);
        assert_eq!(
            read("carol.jsonl").as_deref(),
            Some("{\"event\":\"run_started\"}")
        );
        assert!(rows.iter().all(|row| row.note.is_empty()));
    }

    #[cfg(unix)]
    #[test]
    fn a_link_planted_for_a_submissions_folder_is_never_written_through() {
        let dir = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(elsewhere.path(), dir.path().join("alice")).unwrap();
        let alice = Reports {
            human: held("alice's run"),
            json_lines: None,
            pictures: vec![("specs/a.yaml".to_owned(), held("<html>a</html>"))],
        };
        let rows = write_class(dir.path(), vec![(row("alice"), Some(alice))]);
        assert!(
            rows[0].note.contains("is a symbolic link"),
            "{}",
            rows[0].note
        );
        assert_eq!(std::fs::read_dir(elsewhere.path()).unwrap().count(), 0);
    }

    #[test]
    fn summaries_replace_what_is_there_and_a_shards_reports_are_copied() {
        let dir = tempfile::tempdir().unwrap();
        let (shard, output) = (dir.path().join("shard"), dir.path().join("merged"));
        std::fs::create_dir_all(shard.join("alice/explain")).unwrap();
        std::fs::create_dir_all(output.join("alice/explain")).unwrap();
        std::fs::write(shard.join("alice.txt"), "alice's run").unwrap();
        std::fs::write(shard.join("alice/explain/specs.a.html"), "<html>").unwrap();
        std::fs::write(output.join("alice/explain/specs.b.html"), "earlier").unwrap();
        std::fs::write(output.join("summary.csv"), "earlier").unwrap();
        let mut alice = row("alice");
        alice.reports = WrittenReports {
            text: true,
            json_lines: false,
            pictures: vec!["specs/a.yaml".to_owned()],
        };
        copy_reports(&output, &alice, &shard).unwrap();
        let read = |file: &str| std::fs::read_to_string(output.join(file)).ok();
        assert_eq!(read("alice.txt").as_deref(), Some("alice's run"));
        assert_eq!(
            read("alice/explain/specs.a.html").as_deref(),
            Some("<html>")
        );
        assert_eq!(read("alice/explain/specs.b.html"), None);
        // A report the shard's row names and its folder lacks is said, naming it.
        alice.reports.json_lines = true;
        let error = copy_reports(&output, &alice, &shard).unwrap_err();
        assert!(error.contains("alice.jsonl"), "{error}");
        write_summaries(&output, &[("summary.csv", "new".to_owned())]).unwrap();
        assert_eq!(read("summary.csv").as_deref(), Some("new"));
    }
}
