//! Which display protocol the window speaks: X11 or Wayland, chosen at run time.
//!
//! Wayland when `WAYLAND_DISPLAY` is set, X11 otherwise; `BERTH_BACKEND=x11|wayland` forces
//! one. Both client libraries are opened with dlopen, so one binary runs on either kind of
//! desktop and starts where the other library is missing. A pure function of the
//! environment, so `berth doctor` says exactly what the window would do.

use std::ffi::OsString;

/// The variable that forces a backend.
pub const ENV_BACKEND: &str = "BERTH_BACKEND";

/// A display protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// X11 (or XWayland), through `DISPLAY`.
    X11,
    /// A native Wayland client, through `WAYLAND_DISPLAY`.
    Wayland,
}

impl Backend {
    /// Its name, as `BERTH_BACKEND` spells it.
    pub fn name(self) -> &'static str {
        match self {
            Backend::X11 => "x11",
            Backend::Wayland => "wayland",
        }
    }

    /// The variable naming this backend's display.
    pub fn display_var(self) -> &'static str {
        match self {
            Backend::X11 => "DISPLAY",
            Backend::Wayland => "WAYLAND_DISPLAY",
        }
    }
}

/// What the environment asks for, with the reason (for the log and `berth doctor`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    /// The backend.
    pub backend: Backend,
    /// Its display, as the environment names it.
    pub display: String,
    /// Why this one: forced, or which variable was set.
    pub why: &'static str,
}

/// Why no backend can run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NoBackend {
    /// Neither display variable is set.
    #[error(
        "no display (DISPLAY/WAYLAND_DISPLAY unset); run `berth server` for the headless server"
    )]
    NoDisplay,
    /// `BERTH_BACKEND` names something else.
    #[error("BERTH_BACKEND={0:?} is not a backend (x11 or wayland)")]
    Unknown(String),
    /// `BERTH_BACKEND` forces a backend whose display variable is unset.
    #[error("BERTH_BACKEND={} but {} is unset; run `berth server` for the headless server", .0.name(), .0.display_var())]
    Unavailable(Backend),
}

/// Chooses the backend from the environment (`var` returns a variable's non-empty value).
pub fn choose(var: &impl Fn(&str) -> Option<OsString>) -> Result<Choice, NoBackend> {
    let display =
        |backend: Backend| var(backend.display_var()).map(|d| d.to_string_lossy().into_owned());
    if let Some(forced) = var(ENV_BACKEND) {
        let forced = forced.to_string_lossy().trim().to_ascii_lowercase();
        let backend = match forced.as_str() {
            "x11" => Backend::X11,
            "wayland" => Backend::Wayland,
            _ => return Err(NoBackend::Unknown(forced)),
        };
        let display = display(backend).ok_or(NoBackend::Unavailable(backend))?;
        return Ok(Choice { backend, display, why: "forced by BERTH_BACKEND" });
    }
    if let Some(display) = display(Backend::Wayland) {
        return Ok(Choice { backend: Backend::Wayland, display, why: "WAYLAND_DISPLAY is set" });
    }
    if let Some(display) = display(Backend::X11) {
        return Ok(Choice {
            backend: Backend::X11,
            display,
            why: "DISPLAY is set, WAYLAND_DISPLAY is not",
        });
    }
    Err(NoBackend::NoDisplay)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<OsString> + 'a {
        move |name| {
            pairs.iter().find(|(k, v)| *k == name && !v.is_empty()).map(|(_, v)| OsString::from(v))
        }
    }

    /// Variables set, and the choice they make.
    type Case<'a> = (&'a [(&'a str, &'a str)], Result<Backend, NoBackend>);

    #[test]
    fn the_environment_chooses_and_berth_backend_forces() {
        let cases: &[Case<'_>] = &[
            (&[("DISPLAY", ":1")], Ok(Backend::X11)),
            (&[("WAYLAND_DISPLAY", "wayland-1")], Ok(Backend::Wayland)),
            (&[("DISPLAY", ":1"), ("WAYLAND_DISPLAY", "wayland-1")], Ok(Backend::Wayland)),
            (&[("DISPLAY", ":1"), ("WAYLAND_DISPLAY", "")], Ok(Backend::X11)),
            (
                &[("DISPLAY", ":1"), ("WAYLAND_DISPLAY", "w"), (ENV_BACKEND, "x11")],
                Ok(Backend::X11),
            ),
            (
                &[("DISPLAY", ":1"), (ENV_BACKEND, " Wayland ")],
                Err(NoBackend::Unavailable(Backend::Wayland)),
            ),
            (&[("WAYLAND_DISPLAY", "w"), (ENV_BACKEND, "wayland")], Ok(Backend::Wayland)),
            (
                &[("WAYLAND_DISPLAY", "w"), (ENV_BACKEND, "x11")],
                Err(NoBackend::Unavailable(Backend::X11)),
            ),
            (&[("DISPLAY", ":1"), (ENV_BACKEND, "gtk")], Err(NoBackend::Unknown("gtk".into()))),
            (&[], Err(NoBackend::NoDisplay)),
            (&[(ENV_BACKEND, "x11")], Err(NoBackend::Unavailable(Backend::X11))),
        ];
        for (vars, want) in cases {
            let got = choose(&env(vars)).map(|c| c.backend);
            assert_eq!(&got, want, "{vars:?}");
        }
        let choice = choose(&env(&[("WAYLAND_DISPLAY", "wayland-7")])).unwrap();
        assert_eq!(choice.display, "wayland-7");
    }
}
