//! `dlqspec watch` on the real binary: the first report, a rerun per saved change (a broken
//! and a fixed solution, a broken spec, a new spec), and Ctrl-C ending it with nothing left.
//!
//! Each wait for a line has a generous deadline: it only keeps a hung watcher from hanging
//! the test run, it measures nothing.

use std::io::BufRead;
use std::path::Path;
use std::process::{Child, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

use crate::common::{dlqspec, path_arg, root};

/// How long a line may take to come before the watcher is taken for hung.
const HANG_GUARD: Duration = Duration::from_secs(120);

/// A running `dlqspec watch`, its stdout read line by line on a thread of its own.
struct Watching {
    child: Child,
    lines: Receiver<String>,
    seen: Vec<String>,
}

impl Watching {
    fn start(args: &[&str]) -> Watching {
        let mut child = dlqspec()
            .arg("watch")
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("dlqspec starts");
        let (sender, lines) = mpsc::channel();
        for stream in [
            Box::new(child.stdout.take().expect("stdout")) as Box<dyn std::io::Read + Send>,
            Box::new(child.stderr.take().expect("stderr")),
        ] {
            let sender = sender.clone();
            std::thread::spawn(move || {
                for line in std::io::BufReader::new(stream).lines() {
                    let Ok(line) = line else { break };
                    if sender.send(line).is_err() {
                        break;
                    }
                }
            });
        }
        Watching {
            child,
            lines,
            seen: Vec::new(),
        }
    }

    /// Reads lines until one `wanted` accepts; fails, killing the watcher, when none comes.
    fn until(&mut self, what: &str, wanted: impl Fn(&str) -> bool) {
        let deadline = Instant::now() + HANG_GUARD;
        while let Some(left) = deadline.checked_duration_since(Instant::now()) {
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    let found = wanted(&line);
                    self.seen.push(line);
                    if found {
                        return;
                    }
                }
                Err(_) => break,
            }
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        panic!(
            "no line saying {what}; the watcher said:\n{}",
            self.seen.join("\n")
        );
    }

    /// Waits for the rest of a report: its closing count, then the line that watching goes on.
    fn report_ends(&mut self, counts: &str) {
        self.until(counts, |line| line.starts_with(counts));
        self.until("that it goes on watching", |line| {
            line.starts_with("watching ") && line.ends_with(" for changes (Ctrl-C stops)")
        });
    }
}

/// Replaces `from` by `to` in the file, which must hold it.
fn edit(path: &Path, from: &str, to: &str) {
    let text = std::fs::read_to_string(path).expect("read");
    assert!(text.contains(from), "{from:?} not in {}", path.display());
    std::fs::write(path, text.replacen(from, to, 1)).expect("write");
}

/// The live processes whose command line names `text`.
#[cfg(target_os = "linux")]
fn processes_naming(text: &str) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .filter(|pid| pid.chars().all(|c| c.is_ascii_digit()) && !crate::common::dead(pid))
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|line| String::from_utf8_lossy(&line).contains(text))
        })
        .collect()
}

#[cfg(target_os = "linux")]
#[test]
fn watch_reruns_on_each_save_survives_a_broken_spec_and_leaves_nothing_on_ctrl_c() {
    let dir = tempfile::tempdir().expect("temp dir");
    let spec = root().join("specs/dlq-consumer/success-acks-and-returns-ok.yaml");
    std::fs::copy(spec, dir.path().join("ok.yaml")).expect("copy spec");
    let solution = dir.path().join("solution.py");
    std::fs::copy(root().join("examples/python/solution.py"), &solution).expect("copy solution");
    let implementation = format!("python:{}", solution.display());
    // Outside the box: the hanging solution writes its host pid for the test.
    let mut watching = Watching::start(&[
        path_arg(dir.path()),
        "--sandbox",
        "off",
        "--impl",
        &implementation,
        "--timeout",
        "600",
    ]);

    watching.report_ends("1 passed, 0 failed");

    // A broken solution: every spec runs again and fails.
    edit(&solution, "return \"ok\"\n", "return \"dead\"  # broken\n");
    watching.until("that the solution changed", |line| {
        line.starts_with("watch: ")
            && line.ends_with("solution.py changed: running every selected spec")
    });
    watching.until("FAIL", |line| {
        line.starts_with("FAIL  ") && line.contains("ok.yaml")
    });
    watching.report_ends("0 passed, 1 failed");

    // Fixed again: it passes.
    edit(&solution, "return \"dead\"  # broken\n", "return \"ok\"\n");
    watching.until("PASS", |line| {
        line.starts_with("PASS  ") && line.contains("ok.yaml")
    });
    watching.report_ends("1 passed, 0 failed");

    // A spec saved half-written: its error is shown, alone, and watching goes on.
    std::fs::write(
        dir.path().join("broken.yaml"),
        "contract: dlq-consumer\nname: [unclosed\n",
    )
    .expect("write spec");
    watching.until("that the new spec changed", |line| {
        line.starts_with("watch: ") && line.ends_with("broken.yaml changed")
    });
    watching.until("the spec error", |line| {
        line.starts_with("SPEC  ") && line.ends_with("broken.yaml")
    });
    watching.until("where the error is", |line| {
        line.trim_start().starts_with("2 | name: [unclosed")
    });
    watching.report_ends("0 passed, 1 failed");

    // A solution that hangs in process_one, saying its pid: Ctrl-C while it hangs.
    let pidfile = dir.path().join("hang.pid");
    edit(
        &solution,
        "    def process_one(self):\n",
        &format!(
            "    def process_one(self):\n        import os, time\n        open({:?}, \"w\").write(str(os.getpid()))\n        time.sleep(600)\n",
            pidfile.display().to_string()
        ),
    );
    let deadline = Instant::now() + HANG_GUARD;
    while std::fs::read_to_string(&pidfile).map_or(true, |pid| pid.is_empty())
        && Instant::now() < deadline
    {
        std::thread::sleep(Duration::from_millis(20));
    }
    let pid = std::fs::read_to_string(&pidfile).expect("the hanging solution wrote its pid");
    assert!(
        !crate::common::dead(&pid),
        "the solution should hang, not end"
    );
    // SAFETY: kill(2) has no memory-safety preconditions.
    unsafe {
        libc::kill(
            i32::try_from(watching.child.id()).expect("pid"),
            libc::SIGINT,
        );
    }
    let status = watching.child.wait().expect("dlqspec ends");
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(status.signal(), Some(libc::SIGINT), "{status:?}");
    // The solution, and anything else still running from the watched folder, must end.
    let folder = dir.path().display().to_string();
    let mut pids = vec![pid.trim().to_owned()];
    pids.extend(processes_naming(&folder));
    crate::common::assert_all_dead(&pids, "after Ctrl-C");
    // Piped, the screen is never cleared: every report stays.
    assert!(
        !watching.seen.iter().any(|line| line.contains('\u{1b}')),
        "{:?}",
        watching.seen
    );
}

#[test]
fn watch_picks_up_a_new_spec_in_a_watched_folder_and_can_stop_after_k_reruns() {
    let dir = tempfile::tempdir().expect("temp dir");
    let text =
        std::fs::read_to_string(root().join("specs/dlq-consumer/success-acks-and-returns-ok.yaml"))
            .expect("bundled spec");
    std::fs::write(dir.path().join("a.yaml"), &text).expect("write spec");
    let mut watching = Watching::start(&[path_arg(dir.path()), "--max-reruns", "1"]);
    watching.report_ends("1 passed, 0 failed");
    let named = text.replace("name: a handled", "name: new, a handled");
    let before = watching.seen.len();
    std::fs::write(dir.path().join("b.yaml"), named).expect("write spec");
    watching.until("the new spec passing", |line| {
        line.starts_with("PASS  ")
            && line.ends_with("b.yaml  new, a handled message is acked and process_one returns ok")
    });
    watching.report_ends("1 passed, 0 failed");
    let status = watching.child.wait().expect("dlqspec ends");
    assert_eq!(
        status.code(),
        Some(0),
        "{status:?}\n{}",
        watching.seen.join("\n")
    );
    assert!(
        !watching.seen[before..]
            .iter()
            .any(|line| line.contains("a.yaml ")),
        "only the new spec reruns: {}",
        watching.seen.join("\n")
    );
}

#[test]
fn watch_shows_every_error_of_a_broken_spec_in_one_report() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("broken.yaml");
    std::fs::write(
        &path,
        "contract: dlq-consumer\nname: two mistakes\nmessages:\n  - {id: a, bdy: x}\nsteps:\n  - procss: ok\n",
    )
    .expect("write spec");
    let mut watching = Watching::start(&[path_arg(&path), "--max-reruns", "1"]);
    watching.until("the count of the errors", |line| {
        line.trim() == format!("2 errors in {}", path.display())
    });
    watching.until("the first error", |line| {
        line.trim() == "error: unknown field `bdy` (did you mean `body`?), expected one of id, body"
    });
    watching.until("the second error", |line| {
        line.trim()
            .starts_with("error: unknown value `procss` (did you mean `process`?)")
    });
    watching.report_ends("0 passed, 1 failed");
    let status = {
        std::fs::write(
            &path,
            "contract: dlq-consumer\nname: fixed\nmessages:\n  - {id: a, body: x}\nhandler:\n  a: [ok]\nsteps:\n  - process: ok\n",
        )
        .expect("write spec");
        watching.report_ends("1 passed, 0 failed");
        watching.child.wait().expect("dlqspec ends")
    };
    assert_eq!(status.code(), Some(0), "{}", watching.seen.join("\n"));
}
