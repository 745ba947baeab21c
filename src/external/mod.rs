//! External implementations: programs checked through the JSON-lines protocol (docs/protocol.md).

pub mod children;
#[cfg(unix)]
pub mod descriptors;
pub mod entry;
pub mod launch;
pub mod limits;
pub mod lines;
pub mod pipes;
pub mod process;
pub mod protocol;
pub mod sandbox;
pub mod seal;
pub mod shims_cache;
pub mod smoke;
pub mod supervisor;
pub mod typescript;
pub mod warm_request;
pub mod zygote;
