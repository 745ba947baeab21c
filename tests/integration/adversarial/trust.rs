//! The fourth round (docs/security.md): a hidden spec's data in a visible result through any
//! channel, the host's page cache probed from the box, the copy into the box raced (and the
//! packages it binds, swapped for a link after it), dlqspec's
//! own memory taken by replies as large as a line may be, and a CSV note that is a formula to
//! a spreadsheet splitting on `;`. Each runs as root and, where the machine allows, as an
//! ordinary user (uid 65533 through `setpriv` when the tests run as root).

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Stdio};

use super::container::{ORDINARY_UID, Place, Who, everyone, is_root, passed, run};
use super::sandbox::{SPEC, hostile, text};
use crate::common::{Ran, dlqspec, ran, root};

/// A hidden spec holding `SECRET-7731` and a visible one beside it, in `dir`: the hidden one
/// first, so that a run in file order serves it first.
fn hidden_and_visible(dir: &Path) {
    let hidden = std::fs::read_to_string(
        root().join("specs/dlq-consumer/permanent-on-the-first-delivery.yaml"),
    )
    .unwrap()
    .replace("price=-5", "price=SECRET-7731")
    .replace(
        "contract: dlq-consumer\n",
        "contract: dlq-consumer\nvisibility: hidden\n",
    );
    assert!(hidden.contains("SECRET-7731") && hidden.contains("visibility: hidden"));
    std::fs::write(dir.join("a-hidden.yaml"), hidden).unwrap();
    for (name, spec) in [
        ("b-visible.yaml", "success-acks-and-returns-ok.yaml"),
        ("c-visible.yaml", "already-dead-lettered-id-sent-again.yaml"),
    ] {
        std::fs::copy(root().join("specs/dlq-consumer").join(spec), dir.join(name)).unwrap();
    }
}

#[test]
fn a_hidden_spec_reaches_no_visible_result_whatever_the_channel() {
    for who in everyone() {
        for jobs in ["1", "2"] {
            let place = Place::new(who);
            let specs = place.path().join("specs");
            std::fs::create_dir_all(&specs).unwrap();
            hidden_and_visible(&specs);
            let solution = hostile(&place.path().join("alice"), "hidden_stash.py", &[]);
            let results = place.path().join("out");
            std::fs::create_dir_all(&results).unwrap();
            place.hand_over();
            if who == Who::Ordinary && is_root() {
                // The stash is the solution's own file, beside it.
                std::os::unix::fs::chown(
                    solution.parent().unwrap(),
                    Some(ORDINARY_UID),
                    Some(ORDINARY_UID),
                )
                .unwrap();
            }
            let report = results.join("results.json");
            // The box off: the channel is a file every process reaches, as the page cache or a
            // timing would be with it on. Only the order of the run can keep it empty.
            let ran = ran(place
                .dlqspec()
                .args(["run", "--sandbox", "off", "--jobs", jobs, "--impl"])
                .arg(format!("python:{}", text(&solution)))
                .args(["--format", "gradescope", "--output"])
                .arg(&report)
                .arg(&specs)
                .output()
                .expect("dlqspec runs"));
            let json = std::fs::read_to_string(&report)
                .unwrap_or_else(|_| panic!("as {who:?}: {}{}", ran.stdout, ran.stderr));
            let results: serde_json::Value = serde_json::from_str(&json).unwrap();
            let tests = results["tests"].as_array().unwrap();
            assert_eq!(tests.len(), 3, "as {who:?}, --jobs {jobs}: {json}");
            for test in tests.iter().filter(|t| t["visibility"] == "visible") {
                assert!(
                    !test.to_string().contains("SECRET"),
                    "as {who:?}, --jobs {jobs}: a visible test holds the hidden spec's data: {test}"
                );
                assert!(
                    test["status"] == "passed" || test["status"] == "pass",
                    "as {who:?}, --jobs {jobs}: {test}"
                );
            }
            // The reports keep the specs' order whatever order they ran in.
            assert_eq!(
                tests[1]["name"], "a handled message is acked and process_one returns ok",
                "as {who:?}: {json}"
            );
            // Every visible spec was served before the first hidden one, by other processes.
            let stash = std::fs::read_to_string(solution.parent().unwrap().join("stash.log"))
                .unwrap_or_default();
            let lines: Vec<(&str, &str)> = stash
                .lines()
                .filter_map(|line| line.split_once(' '))
                .collect();
            let hidden: Vec<usize> = (0..lines.len())
                .filter(|&i| lines[i].1.contains("SECRET"))
                .collect();
            assert!(
                !hidden.is_empty(),
                "as {who:?}: the hidden spec ran: {stash}"
            );
            let hidden_pids: Vec<&str> = hidden.iter().map(|&i| lines[i].0).collect();
            for (at, (pid, message)) in lines.iter().enumerate() {
                if message.contains("SECRET") {
                    continue;
                }
                let visible = message.contains("order-1") || message.contains("bad-price");
                if visible {
                    assert!(
                        at < hidden[0] && !hidden_pids.contains(pid),
                        "as {who:?}, --jobs {jobs}: a visible spec ran after the hidden one, or in its process: {stash}"
                    );
                }
            }
        }
    }
}

#[test]
fn the_page_cache_is_neither_probed_nor_steered_from_the_box() {
    for who in everyone() {
        let place = Place::new(who);
        let solution = hostile(&place.path().join("alice"), "page_cache.py", &[]);
        passed(who, &run(&place, &solution, &[]));
    }
}

/// A FIFO every uid may open.
fn fifo(path: &Path) {
    let name = std::ffi::CString::new(text(path)).unwrap();
    // SAFETY: mkfifo on a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o666) }, 0);
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o666)).unwrap();
}

#[test]
fn a_folder_swapped_for_a_link_while_copied_into_the_box_is_never_followed() {
    for who in everyone() {
        let place = Place::new(who);
        // The teacher's spec folder, 0700, holding what no student may read.
        let teacher = place.path().join("teacher");
        std::fs::create_dir_all(&teacher).unwrap();
        std::fs::write(teacher.join("hidden.py"), "KEY = 'HIDDEN-4411'\n").unwrap();
        let solution = hostile(&place.path().join("alice"), "raced.py", &[]);
        let submission = solution.parent().unwrap().to_path_buf();
        std::fs::create_dir_all(submission.join("pkg")).unwrap();
        std::fs::write(submission.join("pkg/notes.txt"), "mine\n").unwrap();
        std::fs::copy(root().join(SPEC), place.path().join("spec.yaml")).unwrap();
        place.hand_over();
        std::fs::set_permissions(&teacher, std::fs::Permissions::from_mode(0o700)).unwrap();
        let pause = place.path().join("pause");
        fifo(&pause);
        // The copy stops before it opens `pkg`, after it has listed it as a folder: the moment
        // a racing process swaps it, here made certain rather than won by chance.
        let over = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let swap = {
            let (pause, submission, teacher) = (pause.clone(), submission.clone(), teacher.clone());
            let over = std::sync::Arc::clone(&over);
            std::thread::spawn(move || {
                // Opens when the copy opens the other end to wait.
                let Ok(mut go) = std::fs::OpenOptions::new().write(true).open(&pause) else {
                    return false;
                };
                if over.load(std::sync::atomic::Ordering::SeqCst) {
                    return false;
                }
                std::fs::rename(submission.join("pkg"), submission.join("pkg-was")).unwrap();
                std::os::unix::fs::symlink(&teacher, submission.join("pkg")).unwrap();
                use std::io::Write;
                let _ = go.write_all(b"go\n");
                true
            })
        };
        let mut command = place.dlqspec();
        command
            .args(["run", "--sandbox", "on", "--impl"])
            .arg(format!("python:{}", text(&solution)))
            .arg(place.path().join("spec.yaml"))
            .env("DLQSPEC_TEST_COPY_PAUSE", format!("pkg:{}", text(&pause)));
        let ran = ran(command.output().expect("dlqspec runs"));
        over.store(true, std::sync::atomic::Ordering::SeqCst);
        if !swap.is_finished() {
            // The copy never paused: open the other end, so the swapper's open returns.
            let _ = std::fs::OpenOptions::new()
                .read(true)
                .custom_flags_nonblocking()
                .open(&pause);
        }
        let swapped = swap.join().unwrap();
        assert!(
            swapped,
            "as {who:?}: the copy never paused before opening pkg:\n{}{}",
            ran.stdout, ran.stderr
        );
        let said = format!("{}{}", ran.stdout, ran.stderr);
        assert!(!said.contains("HIDDEN-4411"), "as {who:?}: {said}");
        assert!(
            !said.contains("the copy followed the link"),
            "as {who:?}: {said}"
        );
        assert!(
            said.contains("changed while it was copied into the box"),
            "as {who:?}: the run does not say why it refused: {said}"
        );
        assert_ne!(ran.code, 0, "as {who:?}: {said}");
    }
}

/// The swap of `a` and `b` (`renameat2(RENAME_EXCHANGE)`), as a racing process makes it.
fn exchange(a: &Path, b: &Path) {
    let (a, b) = (
        std::ffi::CString::new(text(a)).unwrap(),
        std::ffi::CString::new(text(b)).unwrap(),
    );
    // SAFETY: renameat2 on two NUL-terminated paths.
    let done = unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            a.as_ptr(),
            libc::AT_FDCWD,
            b.as_ptr(),
            libc::RENAME_EXCHANGE,
        )
    };
    assert_eq!(done, 0, "{}", std::io::Error::last_os_error());
}

#[test]
fn a_node_modules_folder_swapped_for_a_link_after_the_copy_is_never_bound() {
    // Nothing swapped (honest), then `pkg/node_modules` itself, then `pkg` above it: a link at
    // a part of the path that the root's plan, checking the path, would have followed.
    for who in everyone() {
        for swapped in [None, Some("pkg/node_modules"), Some("pkg")] {
            let place = Place::new(who);
            // In the teacher's 0700 folder, folders every uid could read once reached: what a
            // bind through a link would show the box.
            let teacher = place.path().join("teacher");
            let project = teacher.join("project");
            std::fs::create_dir_all(project.join("node_modules")).unwrap();
            std::fs::write(
                project.join("node_modules/hidden.py"),
                "KEY = 'HIDDEN-5523'\n",
            )
            .unwrap();
            let solution = hostile(&place.path().join("alice"), "raced_modules.py", &[]);
            let submission = solution.parent().unwrap().to_path_buf();
            let package = submission.join("pkg/node_modules/left-pad");
            std::fs::create_dir_all(&package).unwrap();
            std::fs::write(package.join("index.js"), "module.exports = 'PACKAGE-OK';\n").unwrap();
            // A folder the copy reaches after `pkg` (it walks names in byte order), where it
            // pauses: the copy has then held `pkg/node_modules`, and the box is still to bind it.
            std::fs::create_dir_all(submission.join("zz")).unwrap();
            std::fs::copy(root().join(SPEC), place.path().join("spec.yaml")).unwrap();
            place.hand_over();
            std::fs::set_permissions(&teacher, std::fs::Permissions::from_mode(0o700)).unwrap();
            let link = place.path().join("link");
            let pause = place.path().join("pause");
            fifo(&pause);
            let over = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
            let swap = {
                let (pause, link) = (pause.clone(), link.clone());
                let (submission, project) = (submission.clone(), project.clone());
                let over = std::sync::Arc::clone(&over);
                std::thread::spawn(move || {
                    let Some(swapped) = swapped else {
                        return true;
                    };
                    let Ok(mut go) = std::fs::OpenOptions::new().write(true).open(&pause) else {
                        return false;
                    };
                    if over.load(std::sync::atomic::Ordering::SeqCst) {
                        return false;
                    }
                    let inside = Path::new(swapped).strip_prefix("pkg").unwrap();
                    std::os::unix::fs::symlink(project.join(inside), &link).unwrap();
                    exchange(&submission.join(swapped), &link);
                    use std::io::Write;
                    let _ = go.write_all(b"go\n");
                    true
                })
            };
            let mut command = place.dlqspec();
            command
                .args(["run", "--sandbox", "on", "--impl"])
                .arg(format!("python:{}", text(&solution)))
                .arg(place.path().join("spec.yaml"));
            if swapped.is_some() {
                command.env("DLQSPEC_TEST_COPY_PAUSE", format!("zz:{}", text(&pause)));
            }
            let ran = ran(command.output().expect("dlqspec runs"));
            over.store(true, std::sync::atomic::Ordering::SeqCst);
            if !swap.is_finished() {
                // The copy never paused: open the other end, so the swapper's open returns.
                let _ = std::fs::OpenOptions::new()
                    .read(true)
                    .custom_flags_nonblocking()
                    .open(&pause);
            }
            assert!(
                swap.join().unwrap(),
                "as {who:?}: the copy never paused before opening zz:\n{}{}",
                ran.stdout,
                ran.stderr
            );
            let said = format!("{}{}", ran.stdout, ran.stderr);
            let case = format!("as {who:?}, {swapped:?} swapped");
            assert!(!said.contains("HIDDEN-5523"), "{case}: {said}");
            assert!(
                !said.contains("the box bound what the link leads to"),
                "{case}: {said}"
            );
            if swapped.is_none() {
                // Honest: its own package is shown, and it passes.
                passed(who, &ran);
                continue;
            }
            assert!(
                said.contains("node_modules changed while it was copied into the box"),
                "{case}: the run does not say why it refused: {said}"
            );
            assert_ne!(ran.code, 0, "{case}: {said}");
        }
    }
}

/// Opening a FIFO's read end without waiting for a writer.
trait NonBlocking {
    fn custom_flags_nonblocking(&mut self) -> &mut Self;
}

impl NonBlocking for std::fs::OpenOptions {
    fn custom_flags_nonblocking(&mut self) -> &mut Self {
        use std::os::unix::fs::OpenOptionsExt;
        self.custom_flags(libc::O_NONBLOCK)
    }
}

/// Runs `command` to its end, its output to files; what it said, and the peak resident memory
/// of it or any process it waited for (`wait4`'s `ru_maxrss`, as `/usr/bin/time -v` reads
/// it), in bytes.
fn with_peak_memory(mut command: Command, dir: &Path) -> (Ran, u64) {
    let out = dir.join("stdout");
    let err = dir.join("stderr");
    let child = command
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .expect("dlqspec starts");
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: rusage is plain data wait4 fills.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: waits for the child this test started, once; std's handle is not waited after.
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(waited, pid, "{}", std::io::Error::last_os_error());
    std::mem::forget(child);
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        -1
    };
    let timed_stdout = std::fs::read_to_string(&out).unwrap_or_default();
    let ran = Ran {
        code,
        stdout: crate::common::untimed(&timed_stdout),
        timed_stdout,
        stderr: std::fs::read_to_string(&err).unwrap_or_default(),
    };
    (ran, usage.ru_maxrss as u64 * 1024)
}

/// The most dlqspec's peak memory may grow over an honest run's, whatever the solution replies.
const MEMORY_BOUND: u64 = 100 << 20;

#[test]
fn replies_of_16_mib_keep_dlqspecs_memory_within_its_bound() {
    let place = Place::new(Who::Root);
    let specs = place.path().join("specs");
    std::fs::create_dir_all(&specs).unwrap();
    for spec in [
        "success-acks-and-returns-ok.yaml",
        "already-dead-lettered-id-sent-again.yaml",
    ] {
        std::fs::copy(
            root().join("specs/dlq-consumer").join(spec),
            specs.join(spec),
        )
        .unwrap();
    }
    let zeros = hostile(&place.path().join("class/mallory"), "zeros.py", &[]);
    let honest = place.path().join("class/bob/solution.py");
    std::fs::create_dir_all(honest.parent().unwrap()).unwrap();
    std::fs::copy(root().join("examples/python/solution.py"), &honest).unwrap();
    let run_of = |solution: &Path, dir: &str| {
        let dir = place.path().join(dir);
        std::fs::create_dir_all(&dir).unwrap();
        let mut command = dlqspec();
        command
            .args(["run", "--jobs", "1", "--impl"])
            .arg(format!("python:{}", text(solution)))
            .arg(&specs);
        with_peak_memory(command, &dir)
    };
    let (base, baseline) = run_of(&honest, "honest");
    assert_eq!(base.code, 0, "{}{}", base.stdout, base.stderr);
    let (attacked, peak) = run_of(&zeros, "zeros");
    assert_eq!(attacked.code, 1, "{}{}", attacked.stdout, attacked.stderr);
    assert!(
        peak <= baseline + MEMORY_BOUND,
        "dlqspec peaked at {} MiB against {} MiB for an honest run",
        peak >> 20,
        baseline >> 20
    );
    // Each reply over the bound is a protocol error naming it; every line said is bounded.
    assert!(
        attacked.stdout.contains("more than 100000 JSON values"),
        "{}",
        attacked.stdout
    );
    let longest = attacked.stdout.lines().map(str::len).max().unwrap_or(0);
    assert!(longest <= 64 << 10, "a line of {longest} bytes");
    assert!(
        attacked.stdout.len() < 1 << 20,
        "{} bytes said",
        attacked.stdout.len()
    );

    // grade, two at a time: the honest neighbour still passes, within the same bound.
    let grade = |class: &[&Path], dir: &str| {
        let out = place.path().join(dir);
        let mut command = dlqspec();
        command
            .args(["grade", "--jobs", "2", "--specs"])
            .arg(&specs)
            .arg("--output")
            .arg(&out)
            .args(class);
        let (ran, peak) = with_peak_memory(command, place.path());
        (ran, peak, out)
    };
    let bob = honest.parent().unwrap();
    let (_, grade_baseline, _) = grade(&[bob], "grades-honest");
    let (graded, grade_peak, out) = grade(&[zeros.parent().unwrap(), bob], "grades");
    assert!(
        grade_peak <= grade_baseline + MEMORY_BOUND,
        "grade --jobs 2 peaked at {} MiB against {} MiB for the honest class",
        grade_peak >> 20,
        grade_baseline >> 20
    );
    let csv = std::fs::read_to_string(out.join("summary.csv"))
        .unwrap_or_else(|_| panic!("{}{}", graded.stdout, graded.stderr));
    let status = |name: &str| {
        csv.lines()
            .find(|line| line.split(',').next().is_some_and(|s| s.ends_with(name)))
            .and_then(|line| line.split(',').nth(1))
            .unwrap_or_else(|| panic!("{name}: {csv}"))
            .to_owned()
    };
    assert_eq!(status("bob"), "pass", "{csv}");
    assert_eq!(status("mallory"), "fail", "{csv}");
}

/// The cells a spreadsheet reads from a CSV line when it splits on `delimiter` and honours a
/// quote only where it opens a cell, as one whose list separator is `;` does with a file
/// written for `,`.
fn cells(line: &str, delimiter: char) -> Vec<String> {
    let mut cells = vec![String::new()];
    let mut quoted = false;
    for c in line.chars() {
        let cell = cells.last_mut().unwrap();
        match c {
            '"' if cell.is_empty() && !quoted => quoted = true,
            '"' if quoted => quoted = false,
            c if c == delimiter && !quoted => cells.push(String::new()),
            c => cell.push(c),
        }
    }
    cells
}

#[test]
fn no_cell_of_summary_csv_is_a_formula_whatever_the_separator() {
    let place = Place::new(Who::Root);
    let solution = place.path().join("class/alice.py");
    std::fs::create_dir_all(solution.parent().unwrap()).unwrap();
    // A note that is a formula after every separator a spreadsheet may split on.
    std::fs::write(
        &solution,
        "raise RuntimeError('see below;=2+5;@SUM(1+9),-3+1,+A1\\t=1| =HYPERLINK(\"x\"); \"=1')\n",
    )
    .unwrap();
    std::fs::copy(root().join(SPEC), place.path().join("spec.yaml")).unwrap();
    let output = place.path().join("grades");
    let graded = ran(dlqspec()
        .args(["grade", "--specs"])
        .arg(place.path().join("spec.yaml"))
        .arg("--output")
        .arg(&output)
        .arg(&solution)
        .output()
        .expect("dlqspec grade runs"));
    let summary = std::fs::read_to_string(output.join("summary.csv"))
        .unwrap_or_else(|_| panic!("{}{}", graded.stdout, graded.stderr));
    assert!(
        summary.contains("=2+5"),
        "the note is in the summary: {summary}"
    );
    for row in summary.lines() {
        for delimiter in [',', ';', '\t', '|'] {
            for cell in cells(row, delimiter) {
                let start = cell.trim_start_matches([' ', '"']);
                assert!(
                    !start.starts_with(['=', '+', '-', '@', '\t', '\r']),
                    "split on {delimiter:?}, a cell is a formula: {cell:?} in {row}"
                );
            }
        }
    }
}
