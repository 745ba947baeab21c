//! Attacks on the box: reading, writing and signalling outside the submission's own folder.
