//! What an implementation wrote and raised while one spec ran: a format of the run record and
//! the protocol, defined by `dlqspec-formats` (`formats::captured`) and named here as before.

pub use crate::formats::captured::Captured;
pub(crate) use crate::formats::captured::{MAX_STREAM_BYTES, Stream, StreamName, Traceback};
