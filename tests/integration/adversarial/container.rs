//! Attacks through what Landlock does not mediate, which the box as a container stops: the
//! kernel keyrings, Unix socket files, VM sockets, the box's process 1, mode, time and
//! attribute changes, shared memory and disk outside the limits, a flat class folder, bytes
//! that break a report, and the metadata of the teacher's files (docs/security.md). Each runs as root and, where the machine allows, as an
//! ordinary user (uid 65533 through `setpriv` when the tests run as root).

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::sandbox::{SPEC, hostile, mark, processes_marked, text};
use crate::common::{Ran, Tier, assert_all_dead, binary, dlqspec, ran, root, tier};

/// The uid the ordinary-user runs take, when the tests run as root.
pub(super) const ORDINARY_UID: u32 = 65533;

/// Who runs dlqspec.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Who {
    /// root, as an autograder runs it.
    Root,
    /// An ordinary user, as a student or a CI job runs it.
    Ordinary,
}

pub(super) fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// Everyone these tests can run dlqspec as on this machine: root and another user in the root
/// tier (`common::Tier`); else only who runs the tests (and the root tier is told skipped).
pub(super) fn everyone() -> Vec<Who> {
    match (tier(Tier::Root), is_root()) {
        (true, _) => vec![Who::Root, Who::Ordinary],
        (false, true) => vec![Who::Root],
        (false, false) => vec![Who::Ordinary],
    }
}

/// The interpreter the ordinary user runs: one every uid reaches (pyenv's lies under `/root`).
const PYTHON: &str = "/usr/bin/python3";

/// A folder every uid can read, owned by the user `who` runs as, for one attack's files.
pub(super) struct Place {
    dir: tempfile::TempDir,
    who: Who,
}

impl Place {
    pub(super) fn new(who: Who) -> Place {
        let dir = tempfile::tempdir().unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        Place { dir, who }
    }

    pub(super) fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Makes everything in the place readable by every uid, and owned by the ordinary user
    /// when it runs (its own files, as a student's are).
    pub(super) fn hand_over(&self) {
        for entry in walkdir(self.path()) {
            let meta = std::fs::symlink_metadata(&entry).unwrap();
            if meta.file_type().is_symlink() {
                continue;
            }
            let mode = if meta.is_dir() {
                0o755
            } else {
                0o644 | (meta.permissions().mode() & 0o111)
            };
            std::fs::set_permissions(&entry, std::fs::Permissions::from_mode(mode)).unwrap();
            if self.who == Who::Ordinary && is_root() {
                std::os::unix::fs::chown(&entry, Some(ORDINARY_UID), Some(ORDINARY_UID)).unwrap();
            }
        }
    }

    /// `dlqspec` as `who`, in this place.
    pub(super) fn dlqspec(&self) -> Command {
        match (self.who, is_root()) {
            (Who::Root, _) | (Who::Ordinary, false) => {
                let mut command = dlqspec();
                command.current_dir(self.path());
                command
            }
            (Who::Ordinary, true) => {
                let own = self.path().join("own");
                for folder in ["home", "cache"] {
                    std::fs::create_dir_all(own.join(folder)).unwrap();
                    std::os::unix::fs::chown(
                        own.join(folder),
                        Some(ORDINARY_UID),
                        Some(ORDINARY_UID),
                    )
                    .unwrap();
                }
                // The release build may lie under a folder no other uid passes (`/root`).
                let program = own.join("dlqspec");
                if !program.exists() {
                    std::fs::copy(binary(), &program).unwrap();
                }
                let mut command = Command::new("/usr/bin/setpriv");
                command
                    .args([
                        &format!("--reuid={ORDINARY_UID}"),
                        &format!("--regid={ORDINARY_UID}"),
                        "--clear-groups",
                        "--inh-caps=-all",
                        "--bounding-set=-all",
                        "--",
                    ])
                    .arg(&program)
                    .current_dir(self.path())
                    .env_clear()
                    .env("PATH", std::env::var_os("PATH").unwrap_or_default())
                    .env("HOME", own.join("home"))
                    .env("DLQSPEC_CACHE_DIR", own.join("cache"))
                    .env("DLQSPEC_PYTHON", PYTHON)
                    .env("NO_COLOR", "1");
                command
            }
        }
    }
}

fn walkdir(dir: &Path) -> Vec<PathBuf> {
    let mut found = vec![dir.to_path_buf()];
    let mut at = 0;
    while at < found.len() {
        let path = found[at].clone();
        at += 1;
        if std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir()) {
            for entry in std::fs::read_dir(&path).unwrap() {
                found.push(entry.unwrap().path());
            }
        }
    }
    found
}

/// Runs the hostile Python solution at `solution` against the small spec, in the box.
pub(super) fn run(place: &Place, solution: &Path, extra: &[&str]) -> Ran {
    let spec = place.path().join("spec.yaml");
    if !spec.exists() {
        std::fs::copy(root().join(SPEC), &spec).unwrap();
    }
    place.hand_over();
    let mut command = place.dlqspec();
    command
        .args(["run", "--sandbox", "on", "--impl"])
        .arg(format!("python:{}", text(solution)))
        .args(extra)
        .arg(&spec);
    ran(command.output().expect("dlqspec runs"))
}

pub(super) fn passed(who: Who, ran: &Ran) {
    assert_eq!(ran.code, 0, "as {who:?}:\n{}{}", ran.stdout, ran.stderr);
    assert!(
        ran.stdout.contains("1 passed, 0 failed"),
        "as {who:?}:\n{}",
        ran.stdout
    );
}

/// A kernel key of the test process's own, in its session keyring (which dlqspec and, without
/// a keyring of its own, every box it starts inherit): its serial.
fn add_session_key(description: &str, payload: &[u8]) -> i64 {
    let kind = c"user";
    let description = std::ffi::CString::new(description).unwrap();
    // SAFETY: add_key reads the strings and the payload it is given.
    let serial = unsafe {
        libc::syscall(
            libc::SYS_add_key,
            kind.as_ptr(),
            description.as_ptr(),
            payload.as_ptr(),
            payload.len(),
            -3i32, // KEY_SPEC_SESSION_KEYRING
        )
    };
    assert!(serial >= 0, "add_key: {}", std::io::Error::last_os_error());
    serial
}

fn revoke_key(serial: i64) {
    // SAFETY: KEYCTL_REVOKE (3) on a key this test made.
    unsafe {
        libc::syscall(libc::SYS_keyctl, 3, serial);
    }
}

#[test]
fn a_solution_reaches_no_kernel_keyring() {
    for who in everyone() {
        let mark = mark("keyring");
        // A token as a grader keeps one, readable by whoever holds its session keyring.
        let token = add_session_key(&format!("{mark}-token"), b"grader-secret");
        let place = Place::new(who);
        let solution = hostile(
            &place.path().join("alice"),
            "keyring.py",
            &[("@MARK@", &mark)],
        );
        let ran = run(&place, &solution, &[]);
        revoke_key(token);
        passed(who, &ran);
    }
}

#[test]
fn a_solution_connects_to_no_unix_socket_file() {
    for who in everyone() {
        let place = Place::new(who);
        let socket = place.path().join("grader.sock");
        let listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
        listener.set_nonblocking(true).unwrap();
        // As open as a socket file gets: any uid may connect.
        std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o666)).unwrap();
        let solution = hostile(
            &place.path().join("alice"),
            "socket_file.py",
            &[("@SOCKET@", text(&socket))],
        );
        passed(who, &run(&place, &solution, &[]));
        // node:net too, from a JavaScript solution.
        let node = place.path().join("bob");
        std::fs::create_dir_all(&node).unwrap();
        let script = std::fs::read_to_string(root().join("tests/hostile/socket_file.mjs"))
            .unwrap()
            .replace("@SOCKET@", text(&socket));
        std::fs::write(node.join("solution.mjs"), script).unwrap();
        std::fs::copy(
            root().join("examples/javascript/solution.mjs"),
            node.join("honest.mjs"),
        )
        .unwrap();
        place.hand_over();
        let ran = ran(place
            .dlqspec()
            .args(["run", "--sandbox", "on", "--impl"])
            .arg(format!("node:{}", text(&node.join("solution.mjs"))))
            .arg(place.path().join("spec.yaml"))
            .output()
            .expect("dlqspec runs"));
        passed(who, &ran);
        match listener.accept() {
            Err(error) if error.kind() == std::io::ErrorKind::WouldBlock => {}
            Ok(_) => panic!("as {who:?}: a solution connected to the socket file"),
            Err(error) => panic!("accept failed: {error}"),
        }
    }
}

#[test]
fn a_solution_opens_no_socket_of_a_family_its_network_namespace_does_not_hold() {
    // A VM socket reaches the hypervisor from a virtual machine, whatever the box's network
    // namespace: on a machine with no VM sockets the attack has nothing to open, and passes.
    for who in everyone() {
        let place = Place::new(who);
        let solution = hostile(&place.path().join("alice"), "vm_socket.py", &[]);
        passed(who, &run(&place, &solution, &[]));
    }
}

#[test]
fn a_solution_reaches_nothing_of_the_boxs_process_one() {
    // Process 1 is a copy of dlqspec holding the whole suite: as an ordinary user it has the
    // box's uid, so only its being not dumpable keeps it apart where Landlock is missing.
    for who in everyone() {
        let place = Place::new(who);
        let solution = hostile(&place.path().join("alice"), "process_one.py", &[]);
        passed(who, &run(&place, &solution, &[]));
    }
}

/// `count` processes of uid `uid` outside any box, held until dropped: what a classmate's box
/// or the user's own programs are to a box of the same uid.
struct Crowd(std::process::Child);

impl Crowd {
    fn hold(uid: u32, count: usize) -> Crowd {
        use std::io::BufRead as _;
        use std::os::unix::process::CommandExt as _;
        // Each process waits for the end of its stdin, which only the test holds open.
        const HOLDER: &str = "import os, sys\n\
            for _ in range(int(sys.argv[1])):\n    \
                if os.fork() == 0:\n        sys.stdin.buffer.read()\n        os._exit(0)\n\
            print('ready', flush=True)\nsys.stdin.buffer.read()\n";
        let mut command = if is_root() {
            let mut command = Command::new("/usr/bin/setpriv");
            command.args([
                &format!("--reuid={uid}"),
                &format!("--regid={uid}"),
                "--clear-groups",
                "--",
                PYTHON,
            ]);
            command
        } else {
            Command::new(PYTHON)
        };
        command
            .args(["-c", HOLDER, &count.to_string()])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .process_group(0);
        let mut child = command.spawn().expect("the crowd starts");
        let mut ready = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut ready)
            .unwrap();
        assert_eq!(ready.trim(), "ready", "the crowd did not start");
        Crowd(child)
    }
}

impl Drop for Crowd {
    fn drop(&mut self) {
        drop(self.0.stdin.take());
        // SAFETY: kill of the process group this test made.
        unsafe {
            libc::kill(-(self.0.id() as libc::pid_t), libc::SIGKILL);
        }
        let _ = self.0.wait();
    }
}

#[test]
fn processes_of_the_same_uid_outside_the_box_do_not_count_against_it() {
    // As an ordinary user every box has the user's uid: a process limit the kernel counted
    // across them would let one submission starve a classmate graded beside it.
    for who in everyone() {
        let uid = match who {
            Who::Root => 65534,
            Who::Ordinary if is_root() => ORDINARY_UID,
            // SAFETY: getuid has no preconditions.
            Who::Ordinary => unsafe { libc::getuid() },
        };
        let crowd = Crowd::hold(uid, 200);
        let place = Place::new(who);
        let solution = hostile(
            &place.path().join("alice"),
            "crowded.py",
            &[("@COUNT@", "100")],
        );
        let ran = run(&place, &solution, &[]);
        drop(crowd);
        passed(who, &ran);
    }
}

/// The cpu cgroup process `pid` (a number, or `self`) is counted in, as `/proc/PID/cgroup`
/// says: the v1 `cpu` line, else the v2 one; `None` without a cpu controller.
fn cpu_cgroup(pid: &str) -> Option<String> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).ok()?;
    let line = |wanted: &dyn Fn(&str) -> bool| {
        text.lines().find_map(|line| {
            let mut fields = line.splitn(3, ':');
            let (_, controllers, path) = (fields.next()?, fields.next()?, fields.next()?);
            wanted(controllers).then(|| path.to_owned())
        })
    };
    line(&|controllers| controllers.split(',').any(|c| c == "cpu")).or_else(|| {
        let v2 = std::fs::read_to_string("/sys/fs/cgroup/cgroup.controllers").ok()?;
        v2.split_whitespace()
            .any(|c| c == "cpu")
            .then(|| line(&str::is_empty))
            .flatten()
    })
}

#[test]
fn each_box_has_a_cpu_share_of_its_own() {
    if !is_root() {
        eprintln!("the box's cpu cgroup could not be checked here: not root");
        return;
    }
    let Some(own) = cpu_cgroup("self") else {
        eprintln!("the box's cpu cgroup could not be checked here: no cpu controller");
        return;
    };
    let mark = mark("cpu");
    let place = Place::new(Who::Root);
    let solution = hostile(
        &place.path().join(&mark),
        "cpu_hog.py",
        &[("@SPINNERS@", "1"), ("@HOLD@", "600")],
    );
    let spec = place.path().join("spec.yaml");
    std::fs::copy(root().join(SPEC), &spec).unwrap();
    place.hand_over();
    let mut command = place.dlqspec();
    command
        .args(["run", "--sandbox", "on", "--timeout", "600", "--impl"])
        .arg(format!("python:{}", text(&solution)))
        .arg(&spec)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let mut run = command.spawn().expect("dlqspec runs");
    // The implementation and its spinner, seen from here (a hang-guard only).
    let until = std::time::Instant::now() + std::time::Duration::from_secs(120);
    let boxed = loop {
        let boxed: Vec<String> = processes_marked(&mark)
            .into_iter()
            .filter(|pid| {
                std::fs::read_to_string(format!("/proc/{pid}/comm"))
                    .is_ok_and(|comm| comm.starts_with("python"))
            })
            .collect();
        if boxed.len() >= 2 || std::time::Instant::now() > until {
            break boxed;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let places: Vec<Option<String>> = boxed.iter().map(|pid| cpu_cgroup(pid)).collect();
    // SAFETY: kill(2) of the run this test started, which ends its box.
    unsafe {
        libc::kill(run.id() as libc::pid_t, libc::SIGTERM);
    }
    let _ = run.wait();
    assert_all_dead(&boxed, "the cpu hog");
    assert!(boxed.len() >= 2, "the hog's processes were never seen");
    for (pid, place) in boxed.iter().zip(&places) {
        let place = place.as_deref().unwrap_or_default();
        assert!(
            place != own && place.contains("dlqspec"),
            "process {pid} shares the CPU as one of dlqspec's ({own}), not in a box's cgroup: {place}"
        );
    }
}

/// What a file looks like, for telling whether anything changed it: mode, times, owner and
/// its extended attributes.
fn looks(path: &Path) -> (u32, i64, u32, Vec<u8>) {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::symlink_metadata(path).unwrap();
    let name = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    let mut attributes = vec![0u8; 4096];
    // SAFETY: llistxattr writes at most the buffer's length.
    let got = unsafe {
        libc::llistxattr(
            name.as_ptr(),
            attributes.as_mut_ptr().cast(),
            attributes.len(),
        )
    };
    attributes.truncate(got.max(0) as usize);
    (meta.mode(), meta.mtime(), meta.uid(), attributes)
}

#[test]
fn a_solution_changes_no_mode_time_or_attribute_of_what_it_sees() {
    if !Path::new(PYTHON).is_file() {
        assert!(
            std::env::var_os("CI").is_none(),
            "{PYTHON} is missing: .ci/run installs it"
        );
        eprintln!("mode changes were not tried here: no {PYTHON}");
        return;
    }
    for who in everyone() {
        let place = Place::new(who);
        std::fs::copy(root().join(SPEC), place.path().join("spec.yaml")).unwrap();
        // An interpreter's install prefix, under a folder other uids cannot pass (as pyenv's
        // under a 0700 /root): a wrapper of the reachable Python and a program beside it.
        let hidden = place.path().join("hidden");
        let prefix = hidden.join("prefix");
        std::fs::create_dir_all(prefix.join("bin")).unwrap();
        std::fs::create_dir_all(prefix.join("lib")).unwrap();
        let interpreter = prefix.join("bin/python3");
        std::fs::write(&interpreter, format!("#!/bin/sh\nexec {PYTHON} \"$@\"\n")).unwrap();
        let program = prefix.join("lib/program");
        std::fs::write(&program, "#!/bin/sh\n").unwrap();
        let spec_folder = place.path().join("teacher");
        std::fs::create_dir_all(&spec_folder).unwrap();
        let spec = spec_folder.join("hidden.yaml");
        std::fs::copy(root().join(SPEC), &spec).unwrap();
        let other = place.path().join("class/bob");
        std::fs::create_dir_all(&other).unwrap();
        let solution = hostile(
            &place.path().join("class/alice"),
            "changer.py",
            &[
                ("@PROGRAM@", text(&program)),
                ("@INTERPRETER@", text(&interpreter)),
                ("@SPEC@", text(&spec)),
                ("@OTHER@", text(&other)),
            ],
        );
        place.hand_over();
        std::fs::set_permissions(&interpreter, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::set_permissions(&hidden, std::fs::Permissions::from_mode(0o700)).unwrap();
        let watched = [&program, &interpreter, &spec, &other, &solution];
        let before: Vec<_> = watched.iter().map(|path| looks(path)).collect();
        let mut command = place.dlqspec();
        command
            .env("DLQSPEC_PYTHON", &interpreter)
            .args(["run", "--sandbox", "on", "--impl"])
            .arg(format!("python:{}", text(&solution)))
            .arg(place.path().join("spec.yaml"));
        let ran = ran(command.output().expect("dlqspec runs"));
        let after: Vec<_> = watched.iter().map(|path| looks(path)).collect();
        passed(who, &ran);
        for ((path, before), after) in watched.iter().zip(&before).zip(&after) {
            assert_eq!(before, after, "as {who:?}: {} changed", path.display());
        }
    }
}

#[test]
fn shared_memory_and_disk_count_against_the_limits() {
    for who in everyone() {
        let mark = mark("hoarder");
        let place = Place::new(who);
        let solution = hostile(
            &place.path().join("alice"),
            "hoarder.py",
            &[("@MARK@", &mark), ("@BYTES@", &(256u64 << 20).to_string())],
        );
        // Filling 256 MiB against a memory cgroup's reclaim can take long on a busy machine:
        // a wide --timeout (which widens the wait for `hello` too) so that only the limits
        // decide the outcome, never the machine's speed.
        let ran = run(
            &place,
            &solution,
            &["--memory", "64M", "--disk", "16M", "--timeout", "600"],
        );
        // The limits held: every write refused (and the solution went on honestly), or the box
        // killed for its memory, which the report says.
        let refused = ran.code == 0 && ran.stdout.contains("1 passed, 0 failed");
        let killed = ran.code == 1
            && ran.stdout.contains("ran out of memory")
            && !ran.stdout.contains("hoarder:");
        assert!(
            refused || killed,
            "as {who:?}:\n{}{}",
            ran.stdout,
            ran.stderr
        );
        assert!(
            !Path::new("/dev/shm").join(&mark).exists(),
            "as {who:?}: the machine's /dev/shm holds the hoarder's file"
        );
    }
}

#[test]
fn a_lone_file_of_a_flat_class_folder_sees_no_classmate() {
    for who in everyone() {
        let place = Place::new(who);
        let class = place.path().join("class");
        std::fs::create_dir_all(&class).unwrap();
        std::fs::copy(
            root().join("tests/hostile/classmate.py"),
            class.join("alice.py"),
        )
        .unwrap();
        std::fs::copy(
            root().join("examples/python/solution.py"),
            class.join("bob.py"),
        )
        .unwrap();
        std::fs::copy(root().join(SPEC), place.path().join("spec.yaml")).unwrap();
        place.hand_over();
        let output = place.path().join("grades");
        let mut command = place.dlqspec();
        command
            .args(["grade", "--sandbox", "on", "--specs"])
            .arg(place.path().join("spec.yaml"))
            .arg("--output")
            .arg(&output)
            .arg(class.join("alice.py"))
            .arg(class.join("bob.py"));
        if who == Who::Ordinary && is_root() {
            std::fs::create_dir_all(&output).unwrap();
            std::os::unix::fs::chown(&output, Some(ORDINARY_UID), Some(ORDINARY_UID)).unwrap();
        }
        let graded = ran(command.output().expect("dlqspec grade runs"));
        let summary = std::fs::read_to_string(output.join("summary.csv"))
            .unwrap_or_else(|e| panic!("as {who:?}: {e}\n{}{}", graded.stdout, graded.stderr));
        let row = |name: &str| {
            summary
                .lines()
                .find(|line| line.starts_with(text(&class.join(format!("{name}.py")))))
                .unwrap_or_else(|| panic!("no row of {name}: {summary}"))
                .to_owned()
        };
        assert!(row("bob").contains(",pass,"), "as {who:?}: {summary}");
        assert!(!row("alice").contains(",pass,"), "as {who:?}: {summary}");
    }
}

#[test]
fn a_solution_learns_nothing_of_the_teachers_files_by_their_names() {
    for who in everyone() {
        let place = Place::new(who);
        let teacher = place.path().join("teacher");
        std::fs::create_dir_all(&teacher).unwrap();
        let spec = teacher.join("hidden.yaml");
        std::fs::copy(root().join(SPEC), &spec).unwrap();
        let solution = hostile(
            &place.path().join("alice"),
            "metadata.py",
            &[("@SPEC@", text(&spec)), ("@SPECS@", text(&teacher))],
        );
        passed(who, &run(&place, &solution, &[]));
    }
}

#[test]
fn a_students_bytes_break_no_report() {
    for who in everyone() {
        let place = Place::new(who);
        let solution = hostile(&place.path().join("alice"), "unprintable.py", &[]);
        let junit = place.path().join("out");
        std::fs::create_dir_all(&junit).unwrap();
        if who == Who::Ordinary && is_root() {
            std::os::unix::fs::chown(&junit, Some(ORDINARY_UID), Some(ORDINARY_UID)).unwrap();
        }
        let report = junit.join("results.xml");
        let ran = run(
            &place,
            &solution,
            &["--format", "junit", "--output", text(&report)],
        );
        assert_eq!(ran.code, 1, "as {who:?}:\n{}{}", ran.stdout, ran.stderr);
        let xml = std::fs::read_to_string(&report).unwrap();
        if let Err(error) = roxmltree::Document::parse(&xml) {
            panic!("as {who:?}: the JUnit report does not parse: {error}\n{xml}");
        }
        assert!(xml.contains("\\u{fffe}"), "as {who:?}: {xml}");
    }
    // The grade summary: the note is no formula, whatever delimiter a spreadsheet splits on.
    let place = Place::new(Who::Root);
    let solution = hostile(&place.path().join("alice"), "unprintable.py", &[]);
    std::fs::copy(root().join(SPEC), place.path().join("spec.yaml")).unwrap();
    let output = place.path().join("grades");
    ran(dlqspec()
        .args(["grade", "--specs"])
        .arg(place.path().join("spec.yaml"))
        .arg("--output")
        .arg(&output)
        .arg(solution.parent().unwrap())
        .output()
        .expect("dlqspec grade runs"));
    let summary = std::fs::read_to_string(output.join("summary.csv")).unwrap();
    let row = summary.lines().nth(1).expect("alice's row");
    for delimiter in [',', ';', '\t', '|'] {
        for cell in split_csv(row, delimiter) {
            assert!(
                !cell.starts_with(['=', '+', '-', '@']),
                "split on {delimiter:?}, a cell is a formula: {cell:?} in {row}"
            );
        }
    }
}

/// The cells a spreadsheet splitting on `delimiter` reads from a CSV line: quoted text is one
/// cell whatever it holds.
fn split_csv(line: &str, delimiter: char) -> Vec<String> {
    let mut cells = vec![String::new()];
    let mut quoted = false;
    for c in line.chars() {
        match c {
            '"' => quoted = !quoted,
            c if c == delimiter && !quoted => cells.push(String::new()),
            c => cells.last_mut().unwrap().push(c),
        }
    }
    cells
}

#[test]
fn smoke_as_root_reports_an_unprivileged_uid_with_pyenvs_python() {
    if !tier(Tier::Root) {
        return;
    }
    let smoke = ran(dlqspec()
        .args(["smoke", "--impl", "python:examples/python/solution.py"])
        .output()
        .expect("dlqspec smoke runs"));
    assert_eq!(smoke.code, 0, "{}{}", smoke.stdout, smoke.stderr);
    assert!(
        smoke
            .stdout
            .contains("✓ user: the implementation ran as uid 65534, unprivileged"),
        "{}",
        smoke.stdout
    );
    for wall in ["root:", "changes:", "system calls:", "memory:", "disk:"] {
        assert!(
            smoke.stdout.contains(&format!("✓ {wall}")),
            "{wall} {}",
            smoke.stdout
        );
    }
    // Where python3 is pyenv's (this machine's default as root), its interpreter lies under a
    // 0700 /root: the box reaches it all the same.
    let pyenv = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .any(|dir| dir.ends_with(".pyenv/shims") && dir.join("python3").exists());
    if pyenv {
        assert!(smoke.stdout.contains(".pyenv") || smoke.stdout.contains("python3"));
    }
}
