//! Many servers in one window: [`ServerSet`], the window's links (`server_link.rs`) as one.
//!
//! The first member is the window's own server (the embedded one, or the one `berth attach`
//! named); the others come from `servers = [...]` in config.toml and `berth attach --add`:
//! a socket path, or `ssh://[user@]host[:port]` forwarded as `berth attach ssh://` does
//! (`ssh_attach.rs`). The set is itself a [`ServerLink`], so the window draws, types, searches
//! and answers through it as through one link:
//!
//! - its state is the members' workspaces one after the other, the focused workspace being the
//!   one of the member the person last acted in ([`ServerSet::view`]);
//! - a command, input, a frame or a search for a pane, tab or workspace goes to the member
//!   whose state holds it, and nowhere else (ids stay per server: an id no member holds goes
//!   to the first, which answers `NO_SUCH_PANE`); a command that names none goes to the focused
//!   workspace's member; the notification and decision lists are every member's;
//! - each member keeps its own connection threads, so a slow or lost one delays no other's
//!   frames or input; a lost one keeps its last state and screens, and [`ServerSet::tick`]
//!   connects it again with backoff from a probe thread (the window's thread never waits on a
//!   server that does not answer), as its sidebar group header says (`reconnecting in 4 s`).
//!
//! Only the first member's loss closes the window. It must not draw.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use alacritty_terminal::term::TermMode;
use berth_engine::ids::{NotificationId, PaneId, TabId, WorkspaceId};
use berth_engine::model::RestoreState;
use berth_server::commands::{Command, Reply, WorkspaceSelector};
use berth_server::pane_search::{SearchReply, SearchRequest, WireMatch};
use berth_server::persist::task_record::TaskRecord;
use berth_server::screen::PaneFrame;
use berth_server::store::WindowView;
use berth_server::view::{NotificationView, StateView};
use berth_server::UiRequest;

use super::keys::KeyModes;
use super::server_link::{LinkSettings, ServerLink};
use super::view::TabView;
use crate::config::ServerAddress;
use crate::ssh_attach;

/// The most servers one window links to besides its own (as many as `servers` may name).
const MAX_EXTRA_SERVERS: usize = crate::config::MAX_SERVERS;

/// The first wait before connecting to a lost server again; it doubles up to [`BACKOFF_MAX`].
const BACKOFF_FIRST: Duration = Duration::from_secs(1);

/// The longest wait between two tries.
const BACKOFF_MAX: Duration = Duration::from_secs(30);

/// How long a probe may take before the try counts as failed (an ssh forward may take most
/// of it).
const PROBE_LIMIT: Duration = Duration::from_secs(40);

/// How long one call of a probe may wait on a local socket.
const PROBE_CALL: Duration = Duration::from_secs(5);

/// Opens a link to the server answering on a socket (the window's threads, its header rows,
/// its waker and raise).
pub(super) type Connector = Box<dyn Fn(&Path) -> Result<Box<dyn ServerLink>, String>>;

/// How a member's link stands, as its group header says.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum LinkStatus {
    /// The link answers.
    Connected,
    /// A try is under way.
    Connecting,
    /// The link was lost; the next try is at `retry_at`.
    Reconnecting {
        /// When the next try starts.
        retry_at: Instant,
    },
    /// The last try failed for `reason`; the next is at `retry_at`.
    Unreachable {
        /// What failed.
        reason: String,
        /// When the next try starts.
        retry_at: Instant,
    },
}

impl LinkStatus {
    /// The words the sidebar shows: `connected`, `reconnecting in 4 s`, `unreachable: …`.
    pub fn describe(&self, now: Instant) -> String {
        let secs = |at: &Instant| at.saturating_duration_since(now).as_secs_f32().ceil() as u64;
        match self {
            LinkStatus::Connected => "connected".to_owned(),
            LinkStatus::Connecting => "connecting…".to_owned(),
            LinkStatus::Reconnecting { retry_at } => {
                format!("reconnecting in {} s", secs(retry_at))
            }
            LinkStatus::Unreachable { reason, retry_at } => {
                format!("unreachable: {reason} (retry in {} s)", secs(retry_at))
            }
        }
    }
}

/// What a probe thread brings back: the socket to connect to (and the ssh forward that
/// answers on it, to keep while the link lives), or why there is none.
type ProbeResult = Result<(PathBuf, Option<ssh_attach::Forward>), String>;

/// One server of the window.
struct Member {
    /// The name its group goes by (unique in the set).
    name: String,
    /// Where it is (`None`: the window's own server, which is never connected again).
    address: Option<ServerAddress>,
    /// The link; kept after it is lost for the last state and screens.
    link: Option<Box<dyn ServerLink>>,
    /// The SSH forward the link rides on, ended with it.
    forward: Option<ssh_attach::Forward>,
    status: LinkStatus,
    /// Failed tries in a row (the backoff doubles with each).
    failures: u32,
    /// The probe under way: its answer and when it started.
    probe: Option<(mpsc::Receiver<ProbeResult>, Instant)>,
    /// The state last read while connected (shown through an outage).
    last_view: RefCell<StateView>,
}

impl Member {
    fn connected(&self) -> bool {
        self.status == LinkStatus::Connected
    }

    /// The member's state: its link's while connected, else the last one read.
    fn view(&self) -> StateView {
        match (&self.link, self.connected()) {
            (Some(link), true) => {
                let view = link.view();
                self.last_view.replace(view.clone());
                view
            }
            _ => self.last_view.borrow().clone(),
        }
    }
}

/// Where each id of the merged state is (rebuilt with every [`ServerSet::view`]).
#[derive(Default)]
struct Owners {
    panes: HashMap<PaneId, usize>,
    tabs: HashMap<TabId, usize>,
    workspaces: HashMap<WorkspaceId, usize>,
}

/// A server group as the sidebar heads it: its name, how its link stands, and where its
/// workspaces start in the merged state.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct ServerGroup {
    /// The server's name.
    pub name: String,
    /// How its link stands.
    pub status: LinkStatus,
    /// The index in [`StateView::workspaces`] of its first workspace.
    pub first: usize,
}

/// The window's servers as one link.
pub(super) struct ServerSet {
    members: Vec<Member>,
    /// The member the person last acted in: the focused workspace is its.
    active: Cell<usize>,
    owners: RefCell<Owners>,
    /// Which member listed each notification (marking one read goes there).
    notes: RefCell<HashMap<NotificationId, usize>>,
    connector: Option<Connector>,
    /// The settings last applied (a member connected later gets them too).
    settings: RefCell<Option<LinkSettings>>,
    refresh_mhz: Cell<Option<u32>>,
    /// The member whose workspace the last [`ServerSet::view`] showed focused (keys ask on
    /// every press, so this is not read again each time).
    shown: Cell<usize>,
    /// When a countdown was last drawn.
    countdown_drawn: Cell<Option<Instant>>,
    /// Each member's focused pane as the last [`ServerSet::view`] found it: focus moved on a
    /// server by anything but this window (`berth focus`) brings the window to that server.
    focus_seen: RefCell<Vec<Option<PaneId>>>,
}

impl Default for ServerSet {
    fn default() -> Self {
        Self {
            members: Vec::new(),
            active: Cell::new(0),
            owners: RefCell::default(),
            notes: RefCell::default(),
            connector: None,
            settings: RefCell::new(None),
            refresh_mhz: Cell::new(None),
            shown: Cell::new(0),
            countdown_drawn: Cell::new(None),
            focus_seen: RefCell::default(),
        }
    }
}

impl ServerSet {
    /// Whether the window's own server is linked yet.
    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    /// Sets the window's own server (the first member).
    pub fn set_own(&mut self, link: Box<dyn ServerLink>, name: &str) {
        let member = Member {
            name: name.to_owned(),
            address: None,
            link: Some(link),
            forward: None,
            status: LinkStatus::Connected,
            failures: 0,
            probe: None,
            last_view: RefCell::default(),
        };
        self.members.insert(0, member);
    }

    /// How links to other servers are opened.
    pub fn set_connector(&mut self, connector: Connector) {
        self.connector = Some(connector);
    }

    /// Adds another server; its first connection is tried at the next [`Self::tick`].
    /// Returns the name it goes by.
    pub fn add(&mut self, address: ServerAddress) -> Result<String, String> {
        if self.members.iter().any(|m| m.address.as_ref() == Some(&address)) {
            return Err(format!("{} is already in this window", address.to_text()));
        }
        if self.members.len().saturating_sub(1) >= MAX_EXTRA_SERVERS {
            return Err(format!("a window links to at most {MAX_EXTRA_SERVERS} other servers"));
        }
        let base = address.name();
        let mut name = base.clone();
        let mut n = 2;
        while self.members.iter().any(|m| m.name == name) {
            name = format!("{base}-{n}");
            n += 1;
        }
        self.members.push(Member {
            name: name.clone(),
            address: Some(address),
            link: None,
            forward: None,
            status: LinkStatus::Unreachable {
                reason: "not connected yet".to_owned(),
                retry_at: Instant::now(),
            },
            failures: 0,
            probe: None,
            last_view: RefCell::default(),
        });
        Ok(name)
    }

    /// Drops the server named `name` (never the window's own); its panes go on there.
    pub fn remove(&mut self, name: &str) -> Result<(), String> {
        let Some(i) = self.members.iter().position(|m| m.name == name) else {
            let names: Vec<&str> = self.members.iter().skip(1).map(|m| m.name.as_str()).collect();
            return Err(format!(
                "no server {name:?} in this window (it has: {})",
                names.join(", ")
            ));
        };
        if i == 0 {
            return Err("the window's own server cannot be removed".to_owned());
        }
        let member = self.members.remove(i);
        if let Some(link) = member.link {
            link.shutdown();
        }
        drop(member.forward);
        if self.active.get() >= i {
            self.active.set(self.active.get().saturating_sub(1));
        }
        Ok(())
    }

    /// The names of the servers and how their links stand (the window's own first).
    pub fn members(&self) -> Vec<(String, Option<String>, LinkStatus)> {
        self.members
            .iter()
            .map(|m| (m.name.clone(), m.address.as_ref().map(|a| a.to_text()), m.status.clone()))
            .collect()
    }

    /// The groups the sidebar heads, when the window has more than its own server.
    pub fn groups(&self, list: &StateView) -> Vec<ServerGroup> {
        if self.members.len() < 2 {
            return Vec::new();
        }
        let owners = self.owners.borrow();
        let mut groups = Vec::new();
        for (i, member) in self.members.iter().enumerate() {
            let first = list
                .workspaces
                .iter()
                .position(|w| owners.workspaces.get(&w.id) == Some(&i))
                .unwrap_or_else(|| {
                    // No workspace: the header goes where its workspaces would.
                    list.workspaces
                        .iter()
                        .position(|w| owners.workspaces.get(&w.id).is_some_and(|&o| o > i))
                        .unwrap_or(list.workspaces.len())
                });
            groups.push(ServerGroup {
                name: member.name.clone(),
                status: member.status.clone(),
                first,
            });
        }
        groups
    }

    /// The name and link status of the server that holds `pane`, when the window has more
    /// than its own.
    pub fn server_of(&self, pane: &PaneId) -> Option<(String, LinkStatus)> {
        if self.members.len() < 2 {
            return None;
        }
        let i = *self.owners.borrow().panes.get(pane)?;
        self.members.get(i).map(|m| (m.name.clone(), m.status.clone()))
    }

    /// Notices lost links and connects the others again when their wait is over; whether a
    /// member's status changed (the window then draws again). Never waits on a server.
    pub fn tick(&mut self, now: Instant) -> bool {
        let mut changed = false;
        for i in 1..self.members.len() {
            changed |= self.tick_member(i, now);
        }
        changed
    }

    /// Whether a member's status shows a countdown that has not been drawn this second (the
    /// window draws again then).
    pub fn countdown_due(&self, now: Instant) -> bool {
        let counting = self.members.iter().any(|m| {
            matches!(m.status, LinkStatus::Reconnecting { .. } | LinkStatus::Unreachable { .. })
        });
        let due = counting
            && self
                .countdown_drawn
                .get()
                .is_none_or(|at| now.duration_since(at) >= Duration::from_secs(1));
        if due {
            self.countdown_drawn.set(Some(now));
        }
        due
    }

    fn tick_member(&mut self, i: usize, now: Instant) -> bool {
        let member = &mut self.members[i];
        match &member.status {
            LinkStatus::Connected => {
                let lost = member.link.as_ref().and_then(|l| l.gone());
                if lost.is_none() {
                    return false;
                }
                tracing::info!(server = %member.name, "the link to the server was lost");
                member.failures = 0;
                member.forward = None;
                member.status = LinkStatus::Reconnecting { retry_at: now + BACKOFF_FIRST };
                true
            }
            LinkStatus::Reconnecting { retry_at } | LinkStatus::Unreachable { retry_at, .. } => {
                if now < *retry_at {
                    return false;
                }
                let Some(address) = member.address.clone() else { return false };
                let (tx, rx) = mpsc::channel();
                let ordinal = i;
                let spawned = std::thread::Builder::new().name("berth-server-probe".into()).spawn(
                    move || {
                        let _ = tx.send(probe(&address, ordinal));
                    },
                );
                match spawned {
                    Ok(_) => {
                        member.probe = Some((rx, now));
                        member.status = LinkStatus::Connecting;
                    }
                    Err(e) => {
                        member.status = LinkStatus::Unreachable {
                            reason: format!("cannot start a thread: {e}"),
                            retry_at: now + BACKOFF_MAX,
                        };
                    }
                }
                true
            }
            LinkStatus::Connecting => {
                let Some((rx, started)) = &member.probe else {
                    member.status =
                        LinkStatus::Unreachable { reason: "no probe".into(), retry_at: now };
                    return true;
                };
                let outcome = match rx.try_recv() {
                    Ok(result) => result,
                    Err(mpsc::TryRecvError::Empty)
                        if now.duration_since(*started) < PROBE_LIMIT =>
                    {
                        return false
                    }
                    Err(mpsc::TryRecvError::Empty) => {
                        Err(format!("no answer within {} s", PROBE_LIMIT.as_secs()))
                    }
                    Err(mpsc::TryRecvError::Disconnected) => Err("the probe ended".to_owned()),
                };
                member.probe = None;
                let outcome = outcome.and_then(|(socket, forward)| {
                    let connector = self.connector.as_ref().ok_or("the window is not open")?;
                    connector(&socket).map(|link| (link, forward))
                });
                let member = &mut self.members[i];
                match outcome {
                    Ok((link, forward)) => {
                        if let Some(settings) = self.settings.borrow().as_ref() {
                            link.apply_settings(settings);
                        }
                        if let Some(mhz) = self.refresh_mhz.get() {
                            link.set_refresh(mhz);
                        }
                        if let Some(old) = member.link.replace(link) {
                            old.shutdown();
                        }
                        member.forward = forward;
                        member.failures = 0;
                        member.status = LinkStatus::Connected;
                        tracing::info!(server = %member.name, "linked to the server");
                    }
                    Err(reason) => {
                        member.failures = member.failures.saturating_add(1);
                        let wait = backoff(member.failures);
                        tracing::debug!(server = %member.name, %reason, "cannot link to the server");
                        member.status = LinkStatus::Unreachable { reason, retry_at: now + wait };
                    }
                }
                true
            }
        }
    }

    /// The member that holds a pane (the first when none does: it answers `NO_SUCH_PANE`).
    fn pane_owner(&self, pane: &PaneId) -> usize {
        self.lookup(|o| o.panes.get(pane).copied())
    }

    fn tab_owner(&self, tab: &TabId) -> usize {
        self.lookup(|o| o.tabs.get(tab).copied())
    }

    fn workspace_owner(&self, ws: &WorkspaceId) -> usize {
        self.lookup(|o| o.workspaces.get(ws).copied())
    }

    /// Looks an id up in the owners, reading the state again once if it is not there (a pane
    /// made since the last frame).
    fn lookup(&self, find: impl Fn(&Owners) -> Option<usize>) -> usize {
        if self.members.len() < 2 {
            return 0;
        }
        if let Some(i) = find(&self.owners.borrow()) {
            return i;
        }
        let _ = self.view();
        find(&self.owners.borrow()).unwrap_or(0)
    }

    /// The member whose workspace is focused: the one last acted in while it has a tab, else
    /// the first that has one.
    fn active_member(&self, views: &[StateView]) -> usize {
        let has_tab = |v: &StateView| v.workspaces.iter().any(|w| !w.tabs.is_empty());
        let active = self.active.get();
        if views.get(active).is_some_and(has_tab) {
            return active;
        }
        views.iter().position(has_tab).unwrap_or(0)
    }

    /// Makes the member where focus moved since the last reading the active one, when the
    /// pane that had it is still there (a closed pane's focus moving on does not count).
    fn follow_focus(&self, views: &[StateView]) {
        let focused: Vec<Option<PaneId>> =
            views.iter().map(|v| TabView::active(v).map(|t| t.active_pane)).collect();
        let mut seen = self.focus_seen.borrow_mut();
        if seen.len() == focused.len() {
            for (i, (before, now)) in seen.iter().zip(&focused).enumerate() {
                let (Some(before), Some(now)) = (before, now) else { continue };
                let still_there = views[i]
                    .workspaces
                    .iter()
                    .flat_map(|w| &w.tabs)
                    .any(|t| t.panes.iter().any(|p| &p.id == before));
                if before != now && still_there && i != self.active.get() {
                    self.active.set(i);
                }
            }
        }
        *seen = focused;
    }

    /// The link of member `i`, if it is connected.
    fn live(&self, i: usize) -> Option<&dyn ServerLink> {
        let member = self.members.get(i)?;
        member.connected().then_some(())?;
        member.link.as_deref()
    }

    /// The link of member `i`, connected or not (a lost one still has its last screens).
    fn any(&self, i: usize) -> Option<&dyn ServerLink> {
        self.members.get(i)?.link.as_deref()
    }

    /// Runs a command on member `i`.
    fn run(&self, i: usize, cmd: Command) -> Result<Reply, String> {
        match self.live(i) {
            Some(link) => link.execute(cmd),
            None => {
                let name = self.members.get(i).map_or("?", |m| m.name.as_str());
                Err(format!("the server {name} is not connected"))
            }
        }
    }

    /// The member a command goes to; `None`: every member (the lists).
    fn route(&self, cmd: &Command) -> Option<usize> {
        let selector = |s: &WorkspaceSelector| match s {
            WorkspaceSelector::Id(ws) => self.workspace_owner(ws),
            _ => self.focused_member(),
        };
        Some(match cmd {
            Command::NotificationsList { .. } | Command::Decisions => return None,
            Command::NotificationsMarkRead { pane: Some(pane), .. } => self.pane_owner(pane),
            Command::NotificationsMarkRead { .. } => return None,
            Command::ServerInfo | Command::WorkspaceList => 0,
            Command::WorkspaceCreate { .. } => self.focused_member(),
            Command::WorkspaceRename { workspace, .. }
            | Command::WorkspaceClose { workspace }
            | Command::WorkspaceSetAutoResume { workspace, .. }
            | Command::WorkspaceSetAgentDrive { workspace, .. } => self.workspace_owner(workspace),
            Command::TabCreate { workspace, .. } | Command::PaneSpawn { workspace, .. } => {
                selector(workspace)
            }
            Command::TabClose { tab }
            | Command::TabRename { tab, .. }
            | Command::TabMove { tab, .. }
            | Command::TabSetRatio { tab, .. }
            | Command::TabSetLayout { tab, .. }
            | Command::TabResize { tab, .. } => self.tab_owner(tab),
            Command::PaneSplit { pane, .. }
            | Command::PaneClose { pane }
            | Command::PaneSend { pane, .. }
            | Command::PaneInput { pane, .. }
            | Command::PaneRead { pane, .. }
            | Command::PaneResize { pane, .. }
            | Command::PaneFocus { pane }
            | Command::PaneResume { pane }
            | Command::SessionReport { pane, .. }
            | Command::PaneClearAttention { pane }
            | Command::HookEvent { pane, .. }
            | Command::PaneFocusDirection { pane, .. }
            | Command::Decide { pane, .. } => self.pane_owner(pane),
            Command::Notify { pane: Some(pane), .. } => self.pane_owner(pane),
            Command::Notify { pane: None, .. } => 0,
        })
    }

    /// The member whose workspace is focused: as the last [`ServerSet::view`] found it.
    fn focused_member(&self) -> usize {
        self.shown.get()
    }

    /// A command for every member, the answers merged.
    fn run_everywhere(&self, cmd: Command) -> Result<Reply, String> {
        let mut first_error = None;
        let mut notes = Vec::new();
        let mut decisions = Vec::new();
        let mut marked = 0;
        let mut owners = HashMap::new();
        for i in 0..self.members.len() {
            if self.live(i).is_none() {
                continue;
            }
            let cmd = match &cmd {
                // Ids go where they were listed.
                Command::NotificationsMarkRead { ids, pane } if !ids.is_empty() => {
                    let known = self.notes.borrow();
                    let mine: Vec<NotificationId> = ids
                        .iter()
                        .filter(|id| known.get(id).copied().unwrap_or(0) == i)
                        .cloned()
                        .collect();
                    if mine.is_empty() {
                        continue;
                    }
                    Command::NotificationsMarkRead { ids: mine, pane: pane.clone() }
                }
                other => other.clone(),
            };
            match self.run(i, cmd) {
                Ok(Reply::Notifications(list)) => {
                    for note in &list {
                        if let Ok(id) = NotificationId::parse(&note.id) {
                            owners.insert(id, i);
                        }
                    }
                    notes.extend(list);
                }
                Ok(Reply::Decisions(list)) => decisions.extend(list),
                Ok(Reply::Marked { count }) => marked += count,
                Ok(_) => {}
                Err(e) if i == 0 => first_error = Some(e),
                Err(e) => tracing::debug!(error = %e, "a server did not answer a list"),
            }
        }
        if let Some(e) = first_error {
            return Err(e);
        }
        Ok(match cmd {
            Command::NotificationsList { .. } => {
                // Newest first, as each server lists them.
                notes.sort_by_key(|n| std::cmp::Reverse(n.created_at));
                *self.notes.borrow_mut() = owners;
                Reply::Notifications(notes)
            }
            Command::Decisions => Reply::Decisions(decisions),
            _ => Reply::Marked { count: marked },
        })
    }
}

/// The wait after `failures` failed tries in a row.
fn backoff(failures: u32) -> Duration {
    let doubled = BACKOFF_FIRST.saturating_mul(1 << failures.saturating_sub(1).min(6));
    doubled.min(BACKOFF_MAX)
}

/// Finds out whether a server answers (on a probe thread): its socket, with the SSH forward
/// made for it.
fn probe(address: &ServerAddress, ordinal: usize) -> ProbeResult {
    let (socket, forward) = match address {
        ServerAddress::Socket(path) => (path.clone(), None),
        ServerAddress::Ssh(target) => {
            let (local, forward) =
                ssh_attach::forward(target, ordinal).map_err(|e| format!("{e:#}"))?;
            (local, Some(forward))
        }
    };
    let mut client = berth_server::client::Client::connect_with_timeout(&socket, PROBE_CALL)
        .map_err(|e| short_error(&e.to_string()))?;
    client.execute(Command::ServerInfo).map_err(|e| short_error(&e.to_string()))?;
    Ok((socket, forward))
}

/// An error's first line, cut to what a sidebar row holds.
fn short_error(text: &str) -> String {
    let line = text.lines().next().unwrap_or_default();
    // "cannot connect to /path: Connection refused (os error 111)" → the OS's words.
    let words = line.rsplit(": ").next().unwrap_or(line);
    words.split(" (os error").next().unwrap_or(words).to_owned()
}

impl ServerLink for ServerSet {
    fn view(&self) -> StateView {
        if let [only] = self.members.as_slice() {
            // One server: its state as it is (no ids to map).
            return only.view();
        }
        let views: Vec<StateView> = self.members.iter().map(Member::view).collect();
        self.follow_focus(&views);
        let active = self.active_member(&views);
        self.shown.set(active);
        let mut owners = Owners::default();
        let mut merged = StateView::default();
        for (i, view) in views.into_iter().enumerate() {
            if i == active {
                merged.active_workspace = view.active_workspace.clone();
            }
            for ws in view.workspaces {
                owners.workspaces.entry(ws.id.clone()).or_insert(i);
                for tab in &ws.tabs {
                    owners.tabs.entry(tab.id.clone()).or_insert(i);
                    for pane in &tab.panes {
                        owners.panes.entry(pane.id.clone()).or_insert(i);
                    }
                }
                merged.workspaces.push(ws);
            }
        }
        *self.owners.borrow_mut() = owners;
        merged
    }

    fn focused_pane(&self) -> Option<PaneId> {
        self.any(self.focused_member())?.focused_pane()
    }

    fn pane_state(&self, pane: &PaneId) -> Option<RestoreState> {
        let i = self.pane_owner(pane);
        match self.live(i) {
            Some(link) => link.pane_state(pane),
            None => self
                .members
                .get(i)?
                .last_view
                .borrow()
                .workspaces
                .iter()
                .flat_map(|w| w.tabs.iter())
                .flat_map(|t| t.panes.iter())
                .find(|p| &p.id == pane)
                .map(|p| p.state),
        }
    }

    fn tail_len(&self, pane: &PaneId) -> Option<usize> {
        self.live(self.pane_owner(pane))?.tail_len(pane)
    }

    fn tail(&self, pane: &PaneId) -> Option<Vec<String>> {
        self.live(self.pane_owner(pane))?.tail(pane)
    }

    fn frame(&self, pane: &PaneId) -> Option<PaneFrame> {
        // A lost link still has the last screen.
        self.any(self.pane_owner(pane))?.frame(pane)
    }

    fn modes(&self, pane: &PaneId) -> Option<TermMode> {
        self.any(self.pane_owner(pane))?.modes(pane)
    }

    fn key_modes(&self, pane: &PaneId) -> Option<KeyModes> {
        self.any(self.pane_owner(pane))?.key_modes(pane)
    }

    fn execute(&self, cmd: Command) -> Result<Reply, String> {
        let Some(i) = self.route(&cmd) else { return self.run_everywhere(cmd) };
        let focuses = matches!(
            cmd,
            Command::PaneFocus { .. }
                | Command::PaneFocusDirection { .. }
                | Command::WorkspaceCreate { .. }
                | Command::TabCreate { .. }
                | Command::PaneSpawn { .. }
                | Command::PaneSplit { .. }
        );
        let reply = self.run(i, cmd)?;
        if focuses {
            self.active.set(i);
            self.shown.set(i);
        }
        Ok(reply)
    }

    fn send_input(&self, pane: &PaneId, bytes: Vec<u8>) {
        if let Some(link) = self.live(self.pane_owner(pane)) {
            link.send_input(pane, bytes);
        }
    }

    fn scroll(&self, pane: &PaneId, lines: i32) {
        if let Some(link) = self.live(self.pane_owner(pane)) {
            link.scroll(pane, lines);
        }
    }

    fn scroll_to(&self, pane: &PaneId, offset: u32) {
        if let Some(link) = self.live(self.pane_owner(pane)) {
            link.scroll_to(pane, offset);
        }
    }

    fn offset(&self, pane: &PaneId) -> u32 {
        self.any(self.pane_owner(pane)).map_or(0, |l| l.offset(pane))
    }

    fn set_search(&self, pane: &PaneId, query: Option<&str>) {
        if let Some(link) = self.live(self.pane_owner(pane)) {
            link.set_search(pane, query);
        }
    }

    fn view_matches(&self, pane: &PaneId) -> Vec<WireMatch> {
        self.any(self.pane_owner(pane)).map(|l| l.view_matches(pane)).unwrap_or_default()
    }

    fn search(&self, request: SearchRequest) -> Result<SearchReply, String> {
        let i = PaneId::parse(&request.pane_id).map_or(0, |pane| self.pane_owner(&pane));
        self.live(i).ok_or("the pane's server is not connected")?.search(request)
    }

    fn read_lines(&self, pane: &PaneId, since: u64) -> Option<(u64, Vec<String>)> {
        self.live(self.pane_owner(pane))?.read_lines(pane, since)
    }

    fn show(&self, view: WindowView) {
        let owners: Vec<usize> = view.visible.iter().map(|p| self.pane_owner(p)).collect();
        let focused = view.focused_pane.as_ref().map(|p| self.pane_owner(p));
        for i in 0..self.members.len() {
            let Some(link) = self.live(i) else { continue };
            let visible = view
                .visible
                .iter()
                .zip(&owners)
                .filter(|(_, &o)| o == i)
                .map(|(p, _)| p.clone())
                .collect();
            let focused_pane = (focused == Some(i)).then(|| view.focused_pane.clone()).flatten();
            link.show(WindowView { visible, focused_pane, window_focused: view.window_focused });
        }
    }

    fn tasks(&self) -> Vec<TaskRecord> {
        (0..self.members.len()).filter_map(|i| self.any(i)).flat_map(|l| l.tasks()).collect()
    }

    fn take_review_request(&self) -> Option<String> {
        (0..self.members.len()).filter_map(|i| self.live(i)).find_map(|l| l.take_review_request())
    }

    fn apply_settings(&self, settings: &LinkSettings) {
        self.settings.replace(Some(settings.clone()));
        for i in 0..self.members.len() {
            if let Some(link) = self.any(i) {
                link.apply_settings(settings);
            }
        }
    }

    fn shared_with_other_windows(&self) -> bool {
        self.any(self.focused_member()).is_some_and(|l| l.shared_with_other_windows())
    }

    fn set_refresh(&self, millihertz: u32) {
        self.refresh_mhz.set(Some(millihertz));
        for i in 0..self.members.len() {
            if let Some(link) = self.any(i) {
                link.set_refresh(millihertz);
            }
        }
    }

    fn events_seen(&self) -> u64 {
        (0..self.members.len())
            .filter_map(|i| self.any(i))
            .fold(0u64, |sum, l| sum.wrapping_add(l.events_seen()))
            // A member joining or leaving changes the lists too.
            .wrapping_add(self.members.len() as u64 * 1_000_003)
    }

    fn toasts_for_new_notifications(&self) -> bool {
        self.any(0).is_some_and(|l| l.toasts_for_new_notifications())
    }

    fn take_toasts(&self) -> Vec<NotificationView> {
        (0..self.members.len()).filter_map(|i| self.any(i)).flat_map(|l| l.take_toasts()).collect()
    }

    fn gone(&self) -> Option<&'static str> {
        self.any(0)?.gone()
    }

    fn ui_requests(&self) -> Vec<UiRequest> {
        self.any(0).map(|l| l.ui_requests()).unwrap_or_default()
    }

    fn shutdown(self: Box<Self>) {
        let this = *self;
        for member in this.members {
            if let Some(link) = member.link {
                link.shutdown();
            }
            drop(member.forward);
        }
    }
}
