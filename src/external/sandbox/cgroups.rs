//! The cgroups a box is counted in (root only): a pids cgroup for `--processes`, a memory
//! cgroup for `--memory` that counts everything the box holds in memory, shared memory and the
//! pages of its tmpfs folders included, and a cpu cgroup of the default weight, so that boxes
//! share the CPU as boxes, not by how many processes each runs. cgroup v1 (one hierarchy per
//! controller) or v2 (one folder with all), found once; each box gets a folder of its own, emptied and removed when
//! the box is dropped, or by the next dlqspec if this one was killed outright.

use std::ffi::CString;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Where this dlqspec may make one cgroup per box, for each controller.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Hierarchies {
    /// The pids controller's folder (v1 `pids`, or v2 with `pids` enabled for children).
    pub(crate) pids: Option<PathBuf>,
    /// The memory controller's folder (v1 `memory`, or v2 with `memory` enabled).
    pub(crate) memory: Option<PathBuf>,
    /// The cpu controller's folder (v1 `cpu`, or v2 with `cpu` enabled).
    pub(crate) cpu: Option<PathBuf>,
}

/// The cgroups of one box (or of the zygote): their folders, and the `cgroup.procs` files its
/// first process writes itself into, made before fork.
pub(crate) struct BoxCgroups {
    folders: Vec<PathBuf>,
    /// The memory cgroup's folder, for telling whether its limit killed a process.
    memory: Option<PathBuf>,
    pub(crate) procs: Vec<CString>,
}

static NEXT: AtomicU64 = AtomicU64::new(1);

/// Finds, as root, where a box's cgroups can be made.
#[cfg(target_os = "linux")]
pub(crate) fn probe() -> Hierarchies {
    let own = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    let mut found = Hierarchies::default();
    for line in own.lines() {
        let mut fields = line.splitn(3, ':');
        let (Some(_), Some(controllers), Some(path)) =
            (fields.next(), fields.next(), fields.next())
        else {
            continue;
        };
        let path = path.trim_start_matches('/');
        for (controller, slot) in [("pids", 0), ("memory", 1), ("cpu", 2)] {
            let candidate = if controllers.split(',').any(|c| c == controller) {
                Some(Path::new("/sys/fs/cgroup").join(controller).join(path))
            } else if controllers.is_empty() {
                ["/sys/fs/cgroup/unified", "/sys/fs/cgroup"]
                    .iter()
                    .map(|root| Path::new(root).join(path))
                    .find(|dir| {
                        std::fs::read_to_string(dir.join("cgroup.subtree_control"))
                            .is_ok_and(|text| text.split_whitespace().any(|c| c == controller))
                    })
            } else {
                None
            };
            let control = if controller == "pids" {
                "pids.max"
            } else if controller == "cpu" {
                if candidate
                    .as_ref()
                    .is_some_and(|dir| dir.join("cpu.shares").exists())
                {
                    "cpu.shares"
                } else {
                    "cpu.weight"
                }
            } else if candidate
                .as_ref()
                .is_some_and(|dir| dir.join("memory.limit_in_bytes").exists())
            {
                "memory.limit_in_bytes"
            } else {
                "memory.max"
            };
            let usable = candidate.filter(|dir| usable(dir, control));
            let place = match slot {
                0 => &mut found.pids,
                1 => &mut found.memory,
                _ => &mut found.cpu,
            };
            if place.is_none() {
                *place = usable;
            }
        }
    }
    found
}

/// Whether a cgroup with `control` can be made in `dir` (tried, then removed).
#[expect(
    clippy::disallowed_methods,
    reason = "writes a file: removes the trial cgroup it just made"
)]
fn usable(dir: &Path, control: &str) -> bool {
    let trial = dir.join(format!("dlqspec-probe-{}", std::process::id()));
    let made = std::fs::create_dir(&trial).is_ok();
    let usable = made && trial.join(control).exists();
    if made {
        let _ = std::fs::remove_dir(&trial);
    }
    usable
}

impl BoxCgroups {
    /// Makes a box's cgroups under `hierarchies`, named `PREFIXN`: at most `processes`
    /// processes and threads, at most `memory` bytes of memory (`None`: no limit there, and no
    /// cgroup for it), and a CPU share of the default weight, the same as every other box's
    /// however many processes it runs (a box of 100 spinning processes would otherwise take
    /// 100 shares from a classmate's one, and time it out).
    #[expect(
        clippy::disallowed_methods,
        reason = "writes a file: the `pids.max` and `memory.max` of the cgroups it made for one box (kernel control files)"
    )]
    pub(crate) fn make(
        hierarchies: &Hierarchies,
        prefix: &str,
        processes: Option<u64>,
        memory: Option<u64>,
    ) -> io::Result<BoxCgroups> {
        let name = format!("{prefix}{}", NEXT.fetch_add(1, Ordering::SeqCst));
        let mut made = BoxCgroups {
            folders: Vec::new(),
            memory: None,
            procs: Vec::new(),
        };
        let mut wanted: Vec<(&Path, Vec<(&str, String)>)> = Vec::new();
        if let (Some(limit), Some(dir)) = (processes, &hierarchies.pids) {
            wanted.push((dir, vec![("pids.max", limit.to_string())]));
        }
        if let (Some(bytes), Some(dir)) = (memory, &hierarchies.memory) {
            let v1 = dir.join("memory.limit_in_bytes").exists();
            let mut controls = vec![(
                if v1 {
                    "memory.limit_in_bytes"
                } else {
                    "memory.max"
                },
                bytes.to_string(),
            )];
            if !v1 {
                controls.push(("memory.swap.max", "0".to_owned()));
            }
            match wanted.iter_mut().find(|(other, _)| *other == dir.as_path()) {
                // cgroup v2: one folder holds both controllers.
                Some((_, existing)) => existing.extend(controls),
                None => wanted.push((dir, controls)),
            }
        }
        if let Some(dir) = &hierarchies.cpu
            && !wanted.iter().any(|(other, _)| *other == dir.as_path())
        {
            wanted.push((dir, Vec::new()));
        }
        for (parent, controls) in wanted {
            let folder = parent.join(&name);
            std::fs::create_dir(&folder)?;
            made.folders.push(folder.clone());
            for (control, value) in controls {
                let path = folder.join(control);
                // memory.swap.max is absent where swap is not accounted: nothing to bound.
                if control == "memory.swap.max" && !path.exists() {
                    continue;
                }
                std::fs::write(&path, value)?;
                if control.starts_with("memory.") {
                    made.memory = Some(folder.clone());
                }
            }
            made.procs.push(
                CString::new(folder.join("cgroup.procs").as_os_str().as_encoded_bytes())
                    .unwrap_or_default(),
            );
        }
        Ok(made)
    }

    /// The folders, for the record of live boxes an interrupted dlqspec removes.
    pub(crate) fn folders(&self) -> &[PathBuf] {
        &self.folders
    }

    /// Whether the memory cgroup's limit killed a process of the box.
    pub(crate) fn killed_for_memory(&self) -> bool {
        let Some(folder) = &self.memory else {
            return false;
        };
        // v2: memory.events; v1: memory.oom_control (`oom_kill N` since Linux 4.13).
        ["memory.events", "memory.oom_control"].iter().any(|file| {
            std::fs::read_to_string(folder.join(file)).is_ok_and(|text| {
                text.lines().any(|line| {
                    line.strip_prefix("oom_kill ")
                        .and_then(|n| n.trim().parse::<u64>().ok())
                        .is_some_and(|n| n > 0)
                })
            })
        })
    }
}

impl Drop for BoxCgroups {
    fn drop(&mut self) {
        for folder in &self.folders {
            remove(folder);
        }
    }
}

/// Removes a cgroup, which empties once its last process is reaped: that may take a moment.
/// Whatever is still in it is killed first (a warm child's processes are no descendants of
/// dlqspec's: the cgroup is how every one of them is found).
#[expect(
    clippy::disallowed_methods,
    reason = "writes a file: removes a cgroup it made for one box"
)]
pub(crate) fn remove(cgroup: &Path) {
    kill_members(cgroup);
    for _ in 0..200 {
        match std::fs::remove_dir(cgroup) {
            Err(error) if error.raw_os_error() == Some(libc::EBUSY) => {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            _ => break,
        }
    }
}

/// Kills every process of a cgroup until none is left (bounded: a process that cannot be
/// killed is left to the removal's own wait).
fn kill_members(cgroup: &Path) {
    let procs = cgroup.join("cgroup.procs");
    for _ in 0..200 {
        let Ok(text) = std::fs::read_to_string(&procs) else {
            return;
        };
        let members: Vec<libc::pid_t> =
            text.lines().filter_map(|l| l.trim().parse().ok()).collect();
        if members.is_empty() {
            return;
        }
        for pid in members {
            // SAFETY: kill(2) has no memory-safety preconditions.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
}
