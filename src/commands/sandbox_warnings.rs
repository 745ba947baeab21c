//! Telling, once per dlqspec process, what the box around implementations lacks on this
//! machine (or that it is off), before the first external implementation starts.

use std::io::Write;

use crate::external::launch::Target;
use crate::external::sandbox::{self, Sandbox};
use crate::report::sanitize;

/// Prints the box's warnings on stderr the first time an external implementation is about
/// to run; the built-in runs in dlqspec itself and needs no box.
pub(crate) fn warn_once(target: &Target) {
    if let Target::External(launch) = target {
        warn_once_for(launch.limits.sandbox);
    }
}

/// The same for a setting that applies to processes started later (`grade`'s runs).
pub(crate) fn warn_once_for(setting: Sandbox) {
    static WARNED: std::sync::Once = std::sync::Once::new();
    WARNED.call_once(|| {
        let mut err = sanitize::stderr();
        for warning in sandbox::warnings(setting) {
            let _ = writeln!(err, "warning: {warning}");
        }
    });
}
