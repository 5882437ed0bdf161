//! The review view's state machine: files, hunks, paging, errors.

use super::*;
