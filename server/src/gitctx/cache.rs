//! The Store's cache of git contexts by directory (`git` on panes and workspaces in the
//! view), and the way to the watcher (`watch.rs`) that fills it.

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

use tokio::sync::{mpsc, oneshot};

use super::GitContext;

/// A reason to refresh now, sent to the watcher.
#[derive(Debug)]
pub enum Kick {
    /// `workspace.refresh_git`: probe every directory again; answer how many were probed.
    All(oneshot::Sender<usize>),
    /// The directories shown may have changed (a workspace or pane made or closed, a pane's
    /// cwd changed): read them again and probe only the new ones.
    Dirs,
}

/// How many kicks may wait for the watcher. When the queue is full a [`Kick::Dirs`] is
/// dropped (any kick already waiting makes the watcher read every directory again, so it
/// loses nothing) and a [`Kick::All`] waits for room (only its own client waits).
pub const KICK_QUEUE: usize = 64;

/// The way to the watcher's inbox, shared by the Store and the panes' reader threads. Before
/// the watcher starts (and in a Store without one) a kick goes nowhere.
#[derive(Debug, Clone, Default)]
pub struct GitKicker {
    tx: Arc<OnceLock<mpsc::Sender<Kick>>>,
}

impl GitKicker {
    /// Says the directories may have changed; never blocks.
    pub fn dirs_changed(&self) {
        if let Some(tx) = self.tx.get() {
            let _ = tx.try_send(Kick::Dirs);
        }
    }

    /// The watcher's inbox, when one runs.
    pub fn sender(&self) -> Option<mpsc::Sender<Kick>> {
        self.tx.get().cloned()
    }

    /// Makes the inbox and hands its receiving end to the (one) watcher; `None` when a
    /// watcher already has it.
    pub(crate) fn open(&self) -> Option<mpsc::Receiver<Kick>> {
        let (tx, rx) = mpsc::channel(KICK_QUEUE);
        self.tx.set(tx).ok().map(|()| rx)
    }
}

/// The Store's cache of git contexts by directory, and the way to the watcher.
#[derive(Debug, Default)]
pub struct GitCache {
    pub(crate) by_dir: BTreeMap<String, GitContext>,
    pub(crate) kick: GitKicker,
}

impl GitCache {
    /// The context of `dir`, if known and in a work tree.
    pub fn get(&self, dir: &str) -> Option<GitContext> {
        self.by_dir.get(dir).cloned()
    }

    /// The watcher's inbox, when one runs.
    pub fn kicker(&self) -> Option<mpsc::Sender<Kick>> {
        self.kick.sender()
    }

    /// A handle on the watcher's inbox for a pane's reader thread.
    pub fn kick_handle(&self) -> GitKicker {
        self.kick.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kicks_go_nowhere_before_the_watcher_and_dirs_kicks_never_block() {
        let kicker = GitKicker::default();
        kicker.dirs_changed();
        let mut rx = kicker.open().expect("the first watcher gets the inbox");
        assert!(kicker.open().is_none(), "one watcher only");
        for _ in 0..KICK_QUEUE * 2 {
            kicker.dirs_changed();
        }
        let mut n = 0;
        while let Ok(kick) = rx.try_recv() {
            assert!(matches!(kick, Kick::Dirs));
            n += 1;
        }
        assert_eq!(n, KICK_QUEUE, "a full queue drops the rest");
    }
}
