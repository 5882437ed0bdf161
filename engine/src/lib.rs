//! Berth's engine: the I/O-free core shared by the server and the window.
//!
//! It owns ids, the layout tree, one pane's terminal and the PTY module. It must not use
//! tokio, sockets, wgpu or any file of the state dir.

pub mod agents;
pub mod ids;
pub mod keys;
pub mod layout;
pub mod limits;
pub mod model;
pub mod notify;
pub mod osc;
pub mod procfs;
pub mod pty;
pub mod terminal;
pub mod text;
pub mod xcms;
