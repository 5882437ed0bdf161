//! A pane's turns: when its agent (or a shell's command) started working and when it stopped,
//! the last message the agent reported at a turn's end, how the current lifecycle was learned,
//! and the hook events that say an agent's hooks are wired and a prompt was taken.
//!
//! Owns [`TurnLog`], kept in a pane's metadata. It reads and sends nothing: the hook path,
//! the reader thread (OSC 133 marks, the exit), Berth's own interrupt and the Store's process
//! probe report lifecycle changes to it.

use berth_engine::model::Lifecycle;

/// How a pane's lifecycle was learned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LifecycleSource {
    /// An agent's hook or plugin event (`berth hook`).
    Hook,
    /// A shell's prompt marks (OSC 133).
    Osc133,
    /// The process: its output, its foreground job, its exit (the heuristic of last resort).
    Process,
    /// Berth sent an interrupt (Escape or Ctrl-C through `pane.send` or the window) while the
    /// agent was working; claude fires no hook then, so Berth ends the turn itself.
    Interrupt,
}

impl LifecycleSource {
    /// Every value.
    pub const ALL: [Self; 4] = [Self::Hook, Self::Osc133, Self::Process, Self::Interrupt];

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Hook => "hook",
            Self::Osc133 => "osc133",
            Self::Process => "process",
            Self::Interrupt => "interrupt",
        }
    }

    /// The value of a wire name.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.as_str() == name)
    }
}

/// The longest last message kept, in characters.
pub const MAX_LAST_MESSAGE_CHARS: usize = 16 * 1024;

/// One finished turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnRecord {
    /// When it started, ms since the epoch; `None` when Berth did not see it start (the
    /// agent's hooks reported only its end).
    pub started_at: Option<u64>,
    /// When it ended, ms since the epoch.
    pub ended_at: u64,
    /// The lifecycle it ended in (`idle`, `done` or `exited`).
    pub ended_as: Lifecycle,
    /// How its end was learned.
    pub learned_from: LifecycleSource,
    /// The agent's last message (claude's and codex's `last_assistant_message`), if it sent one.
    pub last_message: Option<String>,
}

impl TurnRecord {
    /// How long the turn took, in ms, when its start is known.
    pub fn duration_ms(&self) -> Option<u64> {
        Some(self.ended_at.saturating_sub(self.started_at?))
    }
}

/// What a pane's metadata keeps about its turns.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TurnLog {
    /// Hook events received from the pane's agent since its program started: any at all means
    /// its hooks are wired, and `pane.submit` waits for the prompt's acknowledgement.
    pub hook_events: u64,
    /// Acknowledged prompts (the adapter's `ack_event` moving the pane to `working`).
    pub prompt_acks: u64,
    /// The last acknowledged prompt as the agent received it, when its event says.
    pub acked_prompt: Option<String>,
    /// When the running turn started, ms since the epoch; `None` between turns.
    pub started_at: Option<u64>,
    /// The last finished turn.
    pub last: Option<TurnRecord>,
    /// How the current lifecycle was learned.
    pub source: Option<LifecycleSource>,
    /// A `pane.submit` is writing to the pane (one at a time).
    pub submitting: bool,
}

impl TurnLog {
    /// Notes that the lifecycle became `to` at `now`, learned from `source`, with the agent's
    /// last message if the event carried one. `working` or `blocked` starts a turn (if none
    /// runs); `idle`, `done` or `exited` ends the running one. A message that comes with no
    /// running turn belongs to a turn whose start Berth did not see, unless it only repeats
    /// the last turn's end (codex's `notify` after its `Stop` hook).
    pub fn note(
        &mut self,
        to: Lifecycle,
        source: LifecycleSource,
        now: u64,
        message: Option<String>,
    ) {
        self.source = Some(source);
        let message = message.map(|m| bounded(&m));
        match to {
            Lifecycle::Working | Lifecycle::Blocked => {
                self.started_at.get_or_insert(now);
            }
            Lifecycle::Idle | Lifecycle::Done | Lifecycle::Exited => match self.started_at.take() {
                Some(start) => {
                    self.last = Some(TurnRecord {
                        started_at: Some(start),
                        ended_at: now,
                        ended_as: to,
                        learned_from: source,
                        last_message: message,
                    });
                }
                None => match (&mut self.last, message) {
                    (_, None) => {}
                    (Some(last), Some(message)) if last.last_message.is_none() => {
                        last.last_message = Some(message);
                    }
                    (Some(last), Some(message)) if last.last_message.as_ref() == Some(&message) => {
                    }
                    (last, Some(message)) => {
                        *last = Some(TurnRecord {
                            started_at: None,
                            ended_at: now,
                            ended_as: to,
                            learned_from: source,
                            last_message: Some(message),
                        });
                    }
                },
            },
            Lifecycle::Starting => {}
        }
    }

    /// Notes what the process heuristic (a plain program's foreground job) says now, when it
    /// starts or ends a turn.
    pub fn probe(&mut self, lifecycle: Lifecycle, now: u64) {
        let running = self.started_at.is_some();
        let changes = match lifecycle {
            Lifecycle::Working | Lifecycle::Blocked => !running,
            Lifecycle::Idle | Lifecycle::Done | Lifecycle::Exited => running,
            Lifecycle::Starting => false,
        };
        if changes || self.source.is_none() {
            self.note(lifecycle, LifecycleSource::Process, now, None);
        }
    }

    /// The pane's program starts again (a resume): its hooks must prove themselves anew and no
    /// turn runs; the last finished turn is kept.
    pub fn restart(&mut self) {
        self.hook_events = 0;
        self.started_at = None;
        self.source = None;
    }
}

/// What a pane's view shows of its turns (`PaneInfo::turn`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TurnInfo {
    /// How the current lifecycle was learned, when known.
    pub learned_from: Option<LifecycleSource>,
    /// When the running turn started, ms since the epoch; `None` between turns.
    pub running_since: Option<u64>,
    /// The last finished turn.
    pub last: Option<TurnRecord>,
    /// Whether the agent's hooks are wired (a hook event arrived since its program started).
    pub hooks_wired: bool,
}

impl TurnLog {
    /// The view of this log.
    pub fn info(&self) -> TurnInfo {
        TurnInfo {
            learned_from: self.source,
            running_since: self.started_at,
            last: self.last.clone(),
            hooks_wired: self.hook_events > 0,
        }
    }
}

fn bounded(message: &str) -> String {
    message.chars().filter(|c| !c.is_control() || *c == '\n').take(MAX_LAST_MESSAGE_CHARS).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use LifecycleSource::{Hook, Interrupt, Osc133};

    /// One step: the lifecycle reached, its source, the time, a message.
    type Step = (Lifecycle, LifecycleSource, u64, Option<&'static str>);

    /// A finished turn as (start, end, ended as, source, message).
    type Turn = (Option<u64>, u64, Lifecycle, LifecycleSource, Option<String>);

    /// Runs steps on a fresh log and returns the last turn and whether a turn is running.
    fn run(steps: &[Step]) -> (Option<Turn>, bool) {
        let mut log = TurnLog::default();
        for (to, source, now, message) in steps {
            log.note(*to, *source, *now, message.map(str::to_owned));
        }
        let last = log
            .last
            .map(|t| (t.started_at, t.ended_at, t.ended_as, t.learned_from, t.last_message));
        (last, log.started_at.is_some())
    }

    #[test]
    fn turns_start_and_end_with_the_lifecycle() {
        use Lifecycle::{Blocked, Done, Exited, Idle, Working};
        let rows: Vec<(&str, Vec<Step>, Option<Turn>, bool)> = vec![
            (
                "prompt then stop",
                vec![
                    (Idle, Hook, 1, None),
                    (Working, Hook, 10, None),
                    (Done, Hook, 50, Some("hi")),
                ],
                Some((Some(10), 50, Done, Hook, Some("hi".into()))),
                false,
            ),
            (
                "a tool call keeps the turn",
                vec![
                    (Working, Hook, 10, None),
                    (Working, Hook, 20, None),
                    (Blocked, Hook, 30, None),
                    (Working, Hook, 40, None),
                    (Done, Hook, 90, None),
                ],
                Some((Some(10), 90, Done, Hook, None)),
                false,
            ),
            (
                "interrupted",
                vec![(Working, Hook, 10, None), (Idle, Interrupt, 15, None)],
                Some((Some(10), 15, Idle, Interrupt, None)),
                false,
            ),
            (
                "shell command",
                vec![(Working, Osc133, 5, None), (Idle, Osc133, 7, None)],
                Some((Some(5), 7, Idle, Osc133, None)),
                false,
            ),
            ("running", vec![(Working, Hook, 10, None)], None, true),
            (
                "exit ends it",
                vec![(Working, Hook, 10, None), (Exited, LifecycleSource::Process, 12, None)],
                Some((Some(10), 12, Exited, LifecycleSource::Process, None)),
                false,
            ),
            (
                "stop without a seen start",
                vec![(Done, Hook, 50, Some("m"))],
                Some((None, 50, Done, Hook, Some("m".into()))),
                false,
            ),
            (
                "notify after stop repeats the message",
                vec![
                    (Working, Hook, 10, None),
                    (Done, Hook, 50, Some("m")),
                    (Done, Hook, 51, Some("m")),
                ],
                Some((Some(10), 50, Done, Hook, Some("m".into()))),
                false,
            ),
            (
                "a later message joins a turn that ended without one",
                vec![
                    (Working, Hook, 10, None),
                    (Done, Hook, 50, None),
                    (Done, Hook, 51, Some("m")),
                ],
                Some((Some(10), 50, Done, Hook, Some("m".into()))),
                false,
            ),
            (
                "idle between turns changes nothing",
                vec![(Working, Hook, 10, None), (Done, Hook, 50, None), (Idle, Hook, 60, None)],
                Some((Some(10), 50, Done, Hook, None)),
                false,
            ),
        ];
        for (name, steps, want, running) in rows {
            assert_eq!(run(&steps), (want, running), "{name}");
        }
    }

    #[test]
    fn messages_are_bounded_and_sources_round_trip() {
        let mut log = TurnLog::default();
        log.note(Lifecycle::Done, Hook, 1, Some("x\u{1b}[31m".repeat(MAX_LAST_MESSAGE_CHARS)));
        let message = log.last.unwrap().last_message.unwrap();
        assert_eq!(message.chars().count(), MAX_LAST_MESSAGE_CHARS);
        assert!(!message.contains('\u{1b}'));
        for source in LifecycleSource::ALL {
            assert_eq!(LifecycleSource::parse(source.as_str()), Some(source));
        }
        assert_eq!(LifecycleSource::parse("screen"), None);
    }
}
