//! External implementations: programs checked through the JSON-lines protocol (docs/protocol.md).

pub(crate) mod children;
#[cfg(unix)]
pub(crate) mod descriptors;
pub mod entry;
pub(crate) mod hardening;
pub mod launch;
pub(crate) mod limits;
pub(crate) mod lines;
pub(crate) mod pipes;
pub(crate) mod process;
pub(crate) mod protocol;
pub(crate) mod sandbox;
pub(crate) mod shims_cache;
pub(crate) mod smoke;
pub(crate) mod supervisor;
pub(crate) mod typescript;
pub(crate) mod warm_request;
pub(crate) mod zygote;
