//! An attached window's own desktop notifications: the ones a server without a desktop names
//! this window to show (`notification.desktop`).
//!
//! The rule that shows each notification at most once: the server shows a notification on
//! its own desktop whenever it can (its desktop notifications are on and the notification
//! service answered its last attempt); only when it cannot (`BERTH_DESKTOP_NOTIFY=0` there,
//! or no notification service answers it, as on a remote machine reached over ssh) does it
//! publish `notification.desktop`, naming the one attached window whose `window.view` it
//! holds (the most recently active one), and only that window shows it, here. Whether it
//! should reach a desktop at all the server decides as for its own (the policy, and a pane the
//! window shows in a focused window stays off it), from that window's own view.
//!
//! It owns a small tokio runtime (one worker, started on the first notification) for the
//! server crate's freedesktop client (`DesktopNotifier`: one session-bus connection, clicks
//! heard on it), and sends a click back as `notification.activate`, so the server focuses the
//! pane and the window raises itself as for a click on one of the server's own. It must not
//! decide what reaches the desktop: the server does.

use std::path::PathBuf;
use std::sync::Arc;

use berth_server::client::Client;
use berth_server::notifications::desktop::{DesktopConfig, DesktopNotifier, ENV_SWITCH};
use berth_server::notifications::{DesktopHandle, StoredNotification};
use berth_server::view::NotificationView;

/// The window's desktop notifier and the runtime it runs on.
pub(super) struct WindowDesktop {
    notifier: DesktopHandle,
    /// Declared after the notifier, so it is dropped after it.
    _runtime: tokio::runtime::Runtime,
}

impl WindowDesktop {
    /// Starts the notifier on this machine's session bus (`BERTH_DESKTOP_NOTIFY=0` in the
    /// window's environment turns it off: `None`). A click is sent to the server on `socket`.
    pub(super) fn start(socket: PathBuf) -> Option<WindowDesktop> {
        let config = DesktopConfig::from_env(ENV_SWITCH);
        if !config.enabled {
            tracing::info!(
                "{ENV_SWITCH}=0: the server's notifications for this window stay off the desktop"
            );
            return None;
        }
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("berth-attach-desktop")
            .enable_all()
            .build()
            .map_err(|e| tracing::warn!(error = %e, "no runtime for desktop notifications"))
            .ok()?;
        let notifier = {
            let _entered = runtime.enter();
            DesktopNotifier::spawn(
                config,
                Arc::new(move |key: String, token: Option<String>| {
                    let socket = socket.clone();
                    // The notifier's task must not wait on the server.
                    tokio::task::spawn_blocking(move || activate(&socket, &key, token));
                }),
            )
        };
        tracing::info!("showing the attached server's notifications on this desktop");
        Some(WindowDesktop { notifier: DesktopHandle(notifier), _runtime: runtime })
    }

    /// Whether this desktop's notification service has answered (so what was shown was
    /// seen): until it has, the window also shows a toast.
    pub(super) fn confirmed(&self) -> bool {
        self.notifier.0.status().service_available
    }

    /// Shows one of the server's notifications (its id is the key a click reports back).
    pub(super) fn show(&self, notification: &NotificationView) {
        self.notifier.show(&StoredNotification::from(notification), None);
    }
}

/// Tells the server a notification this window showed was clicked.
fn activate(socket: &std::path::Path, key: &str, token: Option<String>) {
    let Ok(id) = berth_engine::ids::NotificationId::parse(key) else {
        tracing::debug!(key, "a click on a notification that is not the server's");
        return;
    };
    let result = Client::connect(socket).and_then(|mut c| c.activate_notification(id, token));
    if let Err(e) = result {
        tracing::warn!(error = %e, "the server did not take the notification's click");
    }
}
