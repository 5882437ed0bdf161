//! The Store's cache of git contexts by directory (`git` on panes and workspaces in the
//! view), and the way to the watcher (`watch.rs`) that fills it.

use std::collections::BTreeMap;

use tokio::sync::{mpsc, oneshot};

use super::GitContext;

/// A reason to refresh now, sent to the watcher.
#[derive(Debug)]
pub enum Kick {
    /// `workspace.refresh_git`: probe every directory again; answer how many were probed.
    All(oneshot::Sender<usize>),
}

/// The Store's cache of git contexts by directory, and the way to the watcher.
#[derive(Debug, Default)]
pub struct GitCache {
    pub(crate) by_dir: BTreeMap<String, GitContext>,
    pub(crate) kick: Option<mpsc::UnboundedSender<Kick>>,
}

impl GitCache {
    /// The context of `dir`, if known and in a work tree.
    pub fn get(&self, dir: &str) -> Option<GitContext> {
        self.by_dir.get(dir).cloned()
    }

    /// The watcher's inbox, when one runs.
    pub fn kicker(&self) -> Option<mpsc::UnboundedSender<Kick>> {
        self.kick.clone()
    }
}
