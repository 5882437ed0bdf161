//! Tasks: one agent working on one contract in its own git worktree, cut from a recorded base
//! SHA on its own branch (`../shared/DESIGN.md` §10).
//!
//! [`model`]: states, the one transition function, the contract and its checks, the composed
//! prompt, the typed `Task`. [`request`]: what the `task.*` methods ask (wire DTOs, checked
//! before anything runs); [`reply`]: what they answer (wire DTOs). [`op`]: `TaskOp`, the changes to tasks (an `Internal` op); [`ops`]:
//! the Store's side of each (through `Store::execute`) and the reads. [`git`]: git run as a
//! program, without a shell, with a timeout, one repo's worktree changes at a time.
//! [`start`], [`finish`]: the slow requests, run as tasks of their own off the Store's lock.
//! [`watch`]: a working task's worker pane watched (turn without report, silence, death).
//! [`serve`]: each request turned into the socket's deferred answer. [`checkpoint`]: the
//! worktree recorded at each turn's end on private refs, a turn's revert. [`conflicts`]: which
//! unfinished tasks of a repo would conflict with each other or their target (`merge-tree`).
//! Review comments are kept on the task and sent to its worker as one prompt (`serve`).

pub mod checkpoint;
pub mod conflicts;
pub mod finish;
pub mod git;
pub mod model;
pub mod op;
pub mod ops;
pub mod reply;
pub mod request;
pub mod serve;
pub mod start;
pub mod watch;

#[cfg(test)]
mod ops_tests;
