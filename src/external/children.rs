//! Child processes that must not outlive their part of the run, nor dlqspec.
//!
//! An implementation may start processes of its own (`subprocess.Popen`, `spawn`, a `cmd:`
//! wrapper's child), and some leave its process group (`setsid`, `detached`). So each child:
//! - runs in its own process group, killed as a whole;
//! - carries `DLQSPEC_TREE=<dlqspec pid>-<n>` in its environment, which its descendants
//!   inherit, so that one reparented to dlqspec can be told apart;
//! - gets `PR_SET_PDEATHSIG` (SIGKILL) before exec on Linux: if dlqspec is killed outright,
//!   the child dies with it (the signal follows the thread that started the child, which in
//!   dlqspec is the thread that owns and ends it);
//! - gets its memory and CPU limits (`setrlimit`, see `limits`).
//!
//! On Linux dlqspec is a child subreaper (`PR_SET_CHILD_SUBREAPER`): a descendant whose
//! parent exits is reparented to dlqspec, not to init. When an implementation's part ends,
//! its child's whole tree (found through `/proc`) and every reparented process with its mark
//! is killed and reaped; when dlqspec ends, and when it is interrupted (`crate::files::interrupts`),
//! every descendant left is.

use std::collections::{BTreeMap, BTreeSet};
use std::io;
use std::process::{Child, Command, ExitStatus};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use super::limits::Limits;
use super::sandbox::PreparedBox;

/// The environment variable that marks an implementation's process tree.
pub(crate) const TREE_VARIABLE: &str = "DLQSPEC_TREE";

/// Running implementations: their process id (also their group id) and their tree's mark.
/// Held while spawning too, so that a sweep never reaps a child before it is registered.
static RUNNING: Mutex<BTreeMap<i32, String>> = Mutex::new(BTreeMap::new());
static NEXT_TREE: AtomicU64 = AtomicU64::new(1);

/// The longest inherited mark a new one extends (nesting is a few levels deep at most).
const MAX_OUTER_MARK: usize = 256;

/// A running implementation's registration: its group and tree, ended on interrupt.
pub(crate) struct Guard {
    pid: Option<i32>,
    tree: String,
}

impl Guard {
    /// The mark of this implementation's tree.
    pub(crate) fn tree(&self) -> &str {
        &self.tree
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        if let (Some(pid), Ok(mut running)) = (self.pid, RUNNING.lock()) {
            running.remove(&pid);
        }
    }
}

/// Starts `command` as an implementation process: its own group, its tree's mark, its
/// limits, dying with dlqspec. The child is registered before anyone can sweep it.
pub(crate) fn spawn(command: &mut Command, limits: &Limits) -> io::Result<(Child, Guard)> {
    spawn_boxed(command, limits, None)
}

/// `spawn`, entering the box `entry` describes before exec (see `sandbox`).
pub(crate) fn spawn_boxed(
    command: &mut Command,
    limits: &Limits,
    entry: Option<&PreparedBox>,
) -> io::Result<(Child, Guard)> {
    let own = format!(
        "{}-{}",
        std::process::id(),
        NEXT_TREE.fetch_add(1, Ordering::SeqCst)
    );
    // Under a dlqspec that marked this one's tree (`grade` runs `dlqspec run`), the mark
    // extends the outer one, so the outer dlqspec still knows the inner one's descendants.
    let tree = match std::env::var(TREE_VARIABLE) {
        Ok(outer) if !outer.is_empty() && outer.len() <= MAX_OUTER_MARK => {
            format!("{outer}/{own}")
        }
        _ => own,
    };
    command.env(TREE_VARIABLE, &tree);
    configure(command, limits, entry);
    spawn_registered(command, tree)
}

/// `spawn`, for `grade`'s zygote (`zygote`): then it enters its own box (`sandbox::ZygoteBox`).
#[cfg(target_os = "linux")]
pub(crate) fn spawn_zygote(
    command: &mut Command,
    limits: &Limits,
    boxed: &super::sandbox::ZygoteBox,
) -> io::Result<(Child, Guard)> {
    let tree = format!(
        "{}-{}",
        std::process::id(),
        NEXT_TREE.fetch_add(1, Ordering::SeqCst)
    );
    command.env(TREE_VARIABLE, &tree);
    configure(command, limits, None);
    let entry = boxed.entry();
    {
        use std::os::unix::process::CommandExt;
        // SAFETY: raw system calls only (see `sandbox::enter_zygote`), after `configure`'s.
        unsafe {
            command.pre_exec(move || super::sandbox::enter_zygote(&entry));
        }
    }
    spawn_registered(command, tree)
}

/// Spawns `command` and registers it before anyone can sweep it.
fn spawn_registered(command: &mut Command, tree: String) -> io::Result<(Child, Guard)> {
    let mut running = RUNNING
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let child = command.spawn()?;
    let pid = i32::try_from(child.id()).ok();
    if let Some(pid) = pid {
        running.insert(pid, tree.clone());
    }
    Ok((child, Guard { pid, tree }))
}

/// Its own process group, and on Unix what the child sets on itself before exec.
fn configure(command: &mut Command, limits: &Limits, prepared: Option<&PreparedBox>) {
    #[cfg(target_os = "linux")]
    let mut entry = prepared.map(PreparedBox::entry);
    #[cfg(unix)]
    let rlimits = rlimits(limits, prepared.is_some());
    // A warm start (`zygote`): the same box, entered by a child of grade's zygote.
    #[cfg(target_os = "linux")]
    let warm = prepared.and_then(|prepared| {
        let wanted: Vec<(i64, libc::rlimit)> = rlimits
            .iter()
            .map(|(resource, limit)| (*resource as i64, *limit))
            .collect();
        super::warm_request::request_for(command, prepared, &wanted)
    });
    #[cfg(not(target_os = "linux"))]
    let _ = prepared;
    // A box sets its process count itself, once its first process has a user namespace of
    // its own: set before, it would bound every process of the user together.
    #[cfg(target_os = "linux")]
    let rlimits: Vec<(Resource, libc::rlimit)> = match entry.as_mut() {
        Some(entry) => {
            let (processes, rest): (Vec<_>, Vec<_>) = rlimits
                .into_iter()
                .partition(|(resource, _)| *resource == libc::RLIMIT_NPROC as Resource);
            entry.limit_processes(processes.first().map(|(_, limit)| *limit));
            rest
        }
        None => rlimits,
    };
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        command.process_group(0);
        become_subreaper();
        let parent = std::process::id() as libc::pid_t;
        // SAFETY: the closure runs in the child between fork and exec, and only makes
        // async-signal-safe system calls (prctl, getppid, setrlimit, and the box's: see
        // `sandbox::enter`) on values computed before.
        unsafe {
            command.pre_exec(move || {
                #[cfg(target_os = "linux")]
                {
                    if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                        return Err(io::Error::last_os_error());
                    }
                    // dlqspec died before the line above: nothing will kill us later.
                    if libc::getppid() != parent {
                        // A raw error: building a message would allocate after fork.
                        return Err(io::Error::from_raw_os_error(libc::ESRCH));
                    }
                }
                #[cfg(not(target_os = "linux"))]
                let _ = parent;
                for (resource, limit) in &rlimits {
                    if libc::setrlimit(*resource, limit) != 0 {
                        return Err(io::Error::last_os_error());
                    }
                }
                // Given a zygote, the box's process 1 asks it for the implementation; where
                // it cannot, the start is cold in the same box.
                #[cfg(target_os = "linux")]
                if let Some(entry) = &entry {
                    super::sandbox::enter(entry, warm.as_ref())?;
                }
                Ok(())
            });
        }
    }
    #[cfg(not(unix))]
    let _ = (command, limits, prepared);
}

#[cfg(all(unix, not(target_os = "linux")))]
type Resource = libc::c_int;
#[cfg(target_os = "linux")]
type Resource = libc::__rlimit_resource_t;

/// The limits to set in the child, each kept under the hard limit dlqspec itself has (which
/// it could not raise): data memory, CPU time (SIGXCPU at the limit, SIGKILL 5 s later) and
/// no core dumps (a child killed for its limits must not leave a core file in the folder);
/// in the box, the size of any file it writes (`--disk`) and the process count of its uid (which binds once the box has dropped root, or in
/// its own user namespace; root's is bounded by the box's pids cgroup).
#[cfg(unix)]
fn rlimits(limits: &Limits, boxed: bool) -> Vec<(Resource, libc::rlimit)> {
    let current = |resource: Resource| {
        let mut limit = libc::rlimit {
            rlim_cur: libc::RLIM_INFINITY,
            rlim_max: libc::RLIM_INFINITY,
        };
        // SAFETY: getrlimit fills the struct it is given.
        unsafe { libc::getrlimit(resource, &mut limit) };
        limit.rlim_max
    };
    let capped = |resource: Resource, soft: u64, hard: u64| {
        let max = current(resource);
        let cap = |value: u64| {
            let value = value as libc::rlim_t;
            if max == libc::RLIM_INFINITY {
                value
            } else {
                value.min(max)
            }
        };
        (
            resource,
            libc::rlimit {
                rlim_cur: cap(soft),
                rlim_max: cap(hard),
            },
        )
    };
    let mut set = vec![capped(libc::RLIMIT_CORE as Resource, 0, 0)];
    if let Some(bytes) = limits.memory {
        set.push(capped(libc::RLIMIT_DATA as Resource, bytes, bytes));
    }
    if let Some(seconds) = limits.cpu_seconds {
        set.push(capped(libc::RLIMIT_CPU as Resource, seconds, seconds + 5));
    }
    if let Some(processes) = limits.processes.filter(|_| boxed) {
        set.push(capped(libc::RLIMIT_NPROC as Resource, processes, processes));
    }
    // No file a box writes grows past --disk, memory-backed or not (a tmpfs bounds the sum).
    if let Some(bytes) = limits.disk.filter(|_| boxed) {
        set.push(capped(libc::RLIMIT_FSIZE as Resource, bytes, bytes));
    }
    set
}

/// Makes dlqspec the reaper of its orphaned descendants (once; Linux only).
fn become_subreaper() {
    #[cfg(target_os = "linux")]
    {
        static ONCE: std::sync::Once = std::sync::Once::new();
        // SAFETY: prctl with integer arguments.
        ONCE.call_once(|| unsafe {
            libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1);
        });
    }
}

/// Ends an implementation's part: kills its child's group and whole tree, reaps the child
/// (unless `reaped` says it was), then kills and reaps what was reparented to dlqspec with the
/// tree's mark. The child's exit status, when it was reaped here.
pub(crate) fn end(child: &mut Child, reaped: bool, tree: &str) -> Option<ExitStatus> {
    let mut status = None;
    if !reaped && let Ok(pid) = i32::try_from(child.id()) {
        // Found while the child lives: its descendants, whatever their group.
        let tree_pids = descendants_of(&[pid]);
        #[cfg(unix)]
        // SAFETY: kill(2) has no memory-safety preconditions. The group id is the child's pid:
        // valid while the child is unreaped (alive or zombie).
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
            for descendant in &tree_pids {
                libc::kill(*descendant, libc::SIGKILL);
            }
        }
        let _ = child.kill();
        status = child.wait().ok();
        reap_killed(&tree_pids);
    }
    sweep(Some(tree));
    status
}

/// Reaps the killed processes of a tree that come to dlqspec (its subreaper): a boxed
/// implementation's namespace, whose processes carry no mark in their environment. Bounded:
/// a process that is not dlqspec's to reap is left to its own parent.
fn reap_killed(pids: &[i32]) {
    #[cfg(target_os = "linux")]
    {
        let mut left: Vec<i32> = pids.to_vec();
        for _ in 0..200 {
            left.retain(|pid| {
                let mut status = 0;
                // SAFETY: waitpid on a pid of the tree just killed; WNOHANG never blocks.
                let reaped = unsafe { libc::waitpid(*pid, &mut status, libc::WNOHANG) };
                // Not (yet) dlqspec's child: it is reparented here, or reaped by its parent.
                reaped == 0
                    || (reaped < 0 && std::path::Path::new(&format!("/proc/{pid}")).exists())
            });
            if left.is_empty() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = pids;
}

/// Kills what was reparented to dlqspec and bears `tree`'s mark (any mark, for `None`), and
/// everything below it, and reaps it; with `None`, also reaps every zombie among dlqspec's
/// children that is no running implementation.
pub(crate) fn sweep(tree: Option<&str>) {
    #[cfg(target_os = "linux")]
    {
        // No child, no zombie: nothing was reparented here, nothing to reap.
        if any_child() == Some(false) {
            return;
        }
        let me = std::process::id() as i32;
        let mut killed = BTreeSet::new();
        // Reparenting takes a moment: what a dying process had started comes next round.
        for _ in 0..16 {
            let running = RUNNING
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            let table = process_table();
            let mine: Vec<&ProcessTableRow> = table
                .iter()
                .filter(|entry| entry.parent == me && !running.contains_key(&entry.pid))
                .collect();
            let marked: Vec<i32> = mine
                .iter()
                .filter(|entry| {
                    !entry.zombie && tree.is_none_or(|tree| marked_with(entry.pid, tree))
                })
                .map(|entry| entry.pid)
                .collect();
            let victims: Vec<i32> = descendants_in(&table, &marked)
                .into_iter()
                .chain(marked.iter().copied())
                .collect();
            for pid in &victims {
                // SAFETY: kill(2) has no memory-safety preconditions.
                unsafe {
                    libc::kill(*pid, libc::SIGKILL);
                }
                killed.insert(*pid);
            }
            let mut reaped_any = false;
            for entry in &mine {
                // A zombie of unknown origin is reaped only by a sweep of everything: it may be
                // a child another part of dlqspec started and will wait for itself.
                if killed.contains(&entry.pid) || (entry.zombie && tree.is_none()) {
                    let mut status = 0;
                    // SAFETY: waitpid on one child of ours that no Child value owns.
                    let flags = if entry.zombie { libc::WNOHANG } else { 0 };
                    reaped_any |= unsafe { libc::waitpid(entry.pid, &mut status, flags) } > 0;
                }
            }
            drop(running);
            if victims.is_empty() && !reaped_any {
                break;
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = tree;
}

/// Kills every descendant of dlqspec and every implementation's group: dlqspec is being
/// interrupted and dies next.
pub(crate) fn kill_everything() {
    #[cfg(unix)]
    {
        let running: Vec<i32> = RUNNING
            .lock()
            .map(|running| running.keys().copied().collect())
            .unwrap_or_default();
        let me = std::process::id() as i32;
        let everyone = descendants_of(&[me]);
        // SAFETY: kill(2) has no memory-safety preconditions.
        unsafe {
            for pid in &running {
                libc::kill(-pid, libc::SIGKILL);
            }
            for pid in &everyone {
                libc::kill(*pid, libc::SIGKILL);
            }
        }
    }
}

/// Kills and reaps every process dlqspec still has below it: its run is over. Called when a
/// command returns, after every implementation has been ended.
pub(crate) fn end_all() {
    #[cfg(target_os = "linux")]
    {
        // The common case, told without reading every process's `/proc` entry.
        if any_child() == Some(false) {
            return;
        }
        let me = std::process::id() as i32;
        let everyone = descendants_of(&[me]);
        if everyone.is_empty() {
            return;
        }
        kill_everything();
        sweep(None);
    }
}

/// Whether dlqspec has a child process (a zombie counts), from its threads' `children`
/// lists: none means no descendant either, since a descendant whose parent exits is
/// reparented to dlqspec (its subreaper) before that parent becomes a zombie. `None` when the
/// kernel does not say (built without `CONFIG_PROC_CHILDREN`): then the process table is read.
#[cfg(target_os = "linux")]
fn any_child() -> Option<bool> {
    any_child_of(std::path::Path::new("/proc/self/task"))
}

/// `any_child` for the process whose thread folders are in `tasks` (`/proc/PID/task`).
#[cfg(target_os = "linux")]
fn any_child_of(tasks: &std::path::Path) -> Option<bool> {
    use std::io::Read;
    for task in std::fs::read_dir(tasks).ok()? {
        let mut children = std::fs::File::open(task.ok()?.path().join("children")).ok()?;
        // One pid is enough to know: the list is not read further.
        let mut start = [0u8; 16];
        if children.read(&mut start).ok()? > 0 {
            return Some(true);
        }
    }
    Some(false)
}

/// One line of the process table.
#[cfg(target_os = "linux")]
struct ProcessTableRow {
    pid: i32,
    parent: i32,
    zombie: bool,
}

/// Every process, with its parent, from `/proc/PID/stat`.
#[cfg(target_os = "linux")]
fn process_table() -> Vec<ProcessTableRow> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| {
            let pid: i32 = entry.file_name().to_str()?.parse().ok()?;
            let stat = read_stat(pid)?;
            // `pid (comm) state ppid ...`; comm may hold spaces and parentheses.
            let (_, rest) = stat.rsplit_once(')')?;
            let mut fields = rest.split_whitespace();
            let state = fields.next()?;
            let parent = fields.next()?.parse().ok()?;
            Some(ProcessTableRow {
                pid,
                parent,
                zombie: state == "Z" || state == "X",
            })
        })
        .collect()
}

/// The start of `/proc/PID/stat`, in one read: the pid, name, state and parent come first,
/// and a whole-file read costs a size query and a read per doubling of its buffer, for each
/// of the hundreds of processes a sweep reads.
#[cfg(target_os = "linux")]
fn read_stat(pid: i32) -> Option<String> {
    use std::io::Read;
    let mut file = std::fs::File::open(format!("/proc/{pid}/stat")).ok()?;
    let mut start = [0u8; 512];
    let read = file.read(&mut start).ok()?;
    Some(String::from_utf8_lossy(&start[..read]).into_owned())
}

/// Every process below `roots` (not the roots themselves).
fn descendants_of(roots: &[i32]) -> Vec<i32> {
    #[cfg(target_os = "linux")]
    {
        descendants_in(&process_table(), roots)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = roots;
        Vec::new()
    }
}

#[cfg(target_os = "linux")]
fn descendants_in(table: &[ProcessTableRow], roots: &[i32]) -> Vec<i32> {
    let mut children: BTreeMap<i32, Vec<i32>> = BTreeMap::new();
    for entry in table {
        children.entry(entry.parent).or_default().push(entry.pid);
    }
    let mut found = Vec::new();
    let mut seen: BTreeSet<i32> = roots.iter().copied().collect();
    let mut stack: Vec<i32> = roots.to_vec();
    while let Some(pid) = stack.pop() {
        for child in children.get(&pid).into_iter().flatten() {
            if seen.insert(*child) {
                found.push(*child);
                stack.push(*child);
            }
        }
    }
    found
}

/// Whether a process's environment carries `tree`'s mark.
#[cfg(target_os = "linux")]
/// Whether `pid` bears `tree`'s mark, or the mark of a tree nested in it.
fn marked_with(pid: i32, tree: &str) -> bool {
    let wanted = format!("{TREE_VARIABLE}={tree}");
    std::fs::read(format!("/proc/{pid}/environ")).is_ok_and(|environ| {
        environ.split(|&b| b == 0).any(|entry| {
            entry
                .strip_prefix(wanted.as_bytes())
                .is_some_and(|rest| rest.is_empty() || rest.starts_with(b"/"))
        })
    })
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    /// Starts `script` under `sh` as an implementation would be, reads the pid it prints,
    /// ends its tree, and says whether that pid is gone (a zombie awaiting its reaper counts).
    fn ended(script: &str) -> bool {
        let mut command = Command::new("sh");
        command
            .args(["-c", script])
            .stdout(std::process::Stdio::piped());
        let (mut child, guard) = spawn(&mut command, &Limits::default()).unwrap();
        let mut line = String::new();
        let read = std::io::BufRead::read_line(
            &mut std::io::BufReader::new(child.stdout.take().unwrap()),
            &mut line,
        );
        end(&mut child, false, guard.tree());
        drop(guard);
        read.unwrap();
        let pid: i32 = line.trim().parse().unwrap();
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => true,
            Ok(stat) => stat
                .rsplit_once(')')
                .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
        }
    }

    /// The pids in the `children` lists of `pid`'s threads.
    fn children_of(pid: u32) -> Vec<i32> {
        let tasks = format!("/proc/{pid}/task/{pid}/children");
        std::fs::read_to_string(tasks)
            .unwrap_or_default()
            .split_whitespace()
            .filter_map(|pid| pid.parse().ok())
            .collect()
    }

    #[test]
    fn a_process_with_a_child_or_a_zombie_has_one_and_one_without_none() {
        let tasks = |child: &Child| std::path::PathBuf::from(format!("/proc/{}/task", child.id()));
        // Each shell starts its child and becomes a `sleep` that never reaps it: the second's
        // child exits at once and stays a zombie.
        let mut running = Command::new("sh")
            .args(["-c", "sleep 600 & exec sleep 600"])
            .spawn()
            .unwrap();
        let mut zombie = Command::new("sh")
            .args(["-c", "true & exec sleep 600"])
            .spawn()
            .unwrap();
        let mut lone = Command::new("sleep").arg("600").spawn().unwrap();
        let is_zombie = |pid: i32| {
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|stat| Some(stat.rsplit_once(')')?.1.trim_start().starts_with('Z')))
                .unwrap_or(false)
        };
        // Until each shell has started its child and exec'd (a hang-guard bounds the wait).
        for _ in 0..2_000 {
            let ready = |child: &Child| {
                std::fs::read_to_string(format!("/proc/{}/comm", child.id()))
                    .is_ok_and(|comm| comm.trim() == "sleep")
            };
            let dead = children_of(zombie.id())
                .first()
                .copied()
                .is_some_and(is_zombie);
            if ready(&running) && ready(&zombie) && dead && !children_of(running.id()).is_empty() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert_eq!(any_child_of(&tasks(&running)), Some(true));
        assert_eq!(any_child_of(&tasks(&zombie)), Some(true));
        assert_eq!(any_child_of(&tasks(&lone)), Some(false));
        assert_eq!(
            any_child_of(std::path::Path::new("/proc/no-such-process/task")),
            None
        );
        for pid in children_of(running.id()) {
            // SAFETY: kill(2) has no memory-safety preconditions.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
            }
        }
        for child in [&mut running, &mut zombie, &mut lone] {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    #[test]
    fn a_descendant_in_a_session_of_its_own_ends_with_its_tree() {
        assert!(ended("setsid sleep 600 >/dev/null 2>&1 & echo $!; wait"));
    }

    #[test]
    fn an_orphan_reparented_to_dlqspec_ends_with_the_tree_it_came_from() {
        // The inner shell starts the sleeper and exits: the sleeper is an orphan.
        assert!(ended(
            "sh -c 'setsid sleep 600 >/dev/null 2>&1 & echo $!'; sleep 600 >/dev/null"
        ));
    }
}
