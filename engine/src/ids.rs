//! Identifiers of Berth's objects and the one validator for ids that reach a path.
//!
//! Every id is a prefixed UUIDv4 (`ws_…`, `tab_…`, `pane_…`, `notif_…`, `dec_…`), opaque to
//! clients. Ids arriving from outside (socket, snapshot) go through [`validate_path_safe`]
//! before they are used, because a pane id names its history file on disk.

use std::fmt;

/// Why a string is not an acceptable id.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IdError {
    /// The id is empty.
    #[error("id is empty")]
    Empty,
    /// The id is longer than [`MAX_ID_LEN`].
    #[error("id is longer than {MAX_ID_LEN} bytes")]
    TooLong,
    /// The id is `.` or `..`, or starts with `-`.
    #[error("id {0:?} is not allowed (it could be read as a path or an option)")]
    Reserved(String),
    /// The id holds a character outside `[A-Za-z0-9_-]`.
    #[error("id {0:?} holds a character outside [A-Za-z0-9_-]")]
    BadChar(String),
    /// The id does not start with the prefix its kind requires.
    #[error("id {id:?} is not a {kind} id (expected the prefix {prefix:?})")]
    WrongKind {
        /// The offending id.
        id: String,
        /// The kind that was expected, e.g. "pane".
        kind: &'static str,
        /// The prefix that was expected, e.g. "pane_".
        prefix: &'static str,
    },
}

/// The longest id accepted from outside; generated ids are far shorter.
pub const MAX_ID_LEN: usize = 128;

/// Checks that `s` can safely be used as one path component or command-line word:
/// `[A-Za-z0-9_-]+`, at most [`MAX_ID_LEN`] bytes, not `.`/`..`, not starting with `-`.
pub fn validate_path_safe(s: &str) -> Result<(), IdError> {
    if s.is_empty() {
        return Err(IdError::Empty);
    }
    if s.len() > MAX_ID_LEN {
        return Err(IdError::TooLong);
    }
    if s == "." || s == ".." || s.starts_with('-') {
        return Err(IdError::Reserved(s.to_owned()));
    }
    if !s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-') {
        return Err(IdError::BadChar(s.to_owned()));
    }
    Ok(())
}

macro_rules! define_id {
    ($(#[$doc:meta])* $name:ident, $prefix:literal, $kind:literal) => {
        $(#[$doc])*
        #[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(String);

        impl $name {
            /// The prefix every id of this kind starts with.
            pub const PREFIX: &'static str = $prefix;

            /// A fresh random id.
            #[allow(clippy::new_without_default)]
            pub fn new() -> Self {
                Self(format!("{}{}", $prefix, uuid::Uuid::new_v4().simple()))
            }

            /// Accepts an id from outside after checking it is path-safe and of this kind.
            pub fn parse(s: &str) -> Result<Self, IdError> {
                validate_path_safe(s)?;
                if !s.starts_with($prefix) || s.len() == $prefix.len() {
                    return Err(IdError::WrongKind { id: s.to_owned(), kind: $kind, prefix: $prefix });
                }
                Ok(Self(s.to_owned()))
            }

            /// The id as text.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl std::str::FromStr for $name {
            type Err = IdError;
            fn from_str(s: &str) -> Result<Self, IdError> {
                Self::parse(s)
            }
        }
    };
}

define_id!(
    /// A workspace: a repo, project or task holding tabs.
    WorkspaceId, "ws_", "workspace"
);
define_id!(
    /// A tab: one binary split layout of panes.
    TabId, "tab_", "tab"
);
define_id!(
    /// A pane: one terminal and, while live, one PTY and child process.
    PaneId, "pane_", "pane"
);
define_id!(
    /// A stored notification.
    NotificationId, "notif_", "notification"
);
define_id!(
    /// A permission request an agent waits on (`berth hook` keeps its connection meanwhile).
    DecisionId, "dec_", "decision"
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_ids_are_path_safe_and_parse_back() {
        let id = PaneId::new();
        assert!(id.as_str().starts_with("pane_"));
        validate_path_safe(id.as_str()).unwrap();
        assert_eq!(PaneId::parse(id.as_str()).unwrap(), id);
        assert_ne!(PaneId::new(), id);
    }

    #[test]
    fn hostile_ids_are_refused() {
        type Check = fn(&IdError) -> bool;
        let cases: &[(&str, Check)] = &[
            ("", |e| matches!(e, IdError::Empty)),
            (".", |e| matches!(e, IdError::Reserved(_))),
            ("..", |e| matches!(e, IdError::Reserved(_))),
            ("-rf", |e| matches!(e, IdError::Reserved(_))),
            ("../x", |e| matches!(e, IdError::BadChar(_))),
            ("pane_a/b", |e| matches!(e, IdError::BadChar(_))),
            ("pane_\0", |e| matches!(e, IdError::BadChar(_))),
            ("pane_é", |e| matches!(e, IdError::BadChar(_))),
        ];
        for (input, check) in cases {
            let err = validate_path_safe(input).unwrap_err();
            assert!(check(&err), "{input:?} gave {err:?}");
        }
        assert!(matches!(validate_path_safe(&"a".repeat(MAX_ID_LEN + 1)), Err(IdError::TooLong)));
    }

    #[test]
    fn kinds_are_not_interchangeable() {
        assert!(matches!(PaneId::parse("tab_abc"), Err(IdError::WrongKind { .. })));
        assert!(matches!(PaneId::parse("pane_"), Err(IdError::WrongKind { .. })));
        assert!(TabId::parse("tab_abc").is_ok());
        assert!(WorkspaceId::parse("ws_1").is_ok());
        assert!(NotificationId::parse("notif_1").is_ok());
    }
}
