//! Reporters: they render runner events and outcomes, and decide nothing.

pub mod human;
pub mod matrix;
pub mod render;
pub mod smoke;
pub mod style;

pub use human::HumanReporter;
pub use style::Palette;
