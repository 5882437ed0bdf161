//! Raising the window for a clicked desktop notification.
//!
//! On Wayland a client may not raise itself: it hands the compositor an xdg-activation token
//! that someone the user just interacted with (the notification server) obtained, with
//! `xdg_activation_v1.activate(token, surface)`. winit offers no call for activating an existing
//! window with a token it did not request, so this module binds `xdg_activation_v1` on winit's
//! own connection (a second event queue on the same `wl_display`) and activates the window's
//! surface. On X11, and on Wayland without a token, winit's `focus_window` (X11:
//! `_NET_ACTIVE_WINDOW`) is all there is.

use wayland_client::backend::{Backend, ObjectId};
use wayland_client::globals::{registry_queue_init, GlobalListContents};
use wayland_client::protocol::{wl_registry, wl_surface::WlSurface};
use wayland_client::{delegate_noop, Connection, Dispatch, Proxy, QueueHandle};
use wayland_protocols::xdg::activation::v1::client::xdg_activation_v1::XdgActivationV1;
use winit::raw_window_handle::{
    HasDisplayHandle as _, HasWindowHandle as _, RawDisplayHandle, RawWindowHandle,
};
use winit::window::Window;

/// Raises and focuses `window`, with the notification server's activation token when there is
/// one and the window is a Wayland client.
pub fn raise(window: &Window, token: Option<&str>) {
    window.set_minimized(false);
    if let Some(token) = token {
        match activate(window, token) {
            Ok(true) => return,
            Ok(false) => {}
            Err(e) => tracing::debug!(error = %e, "xdg-activation failed; focusing as on X11"),
        }
    }
    window.focus_window();
}

/// Activates the window's surface with `token`: `Ok(false)` when the window is not a Wayland
/// client.
fn activate(window: &Window, token: &str) -> Result<bool, String> {
    let display = window.display_handle().map_err(|e| e.to_string())?.as_raw();
    let surface = window.window_handle().map_err(|e| e.to_string())?.as_raw();
    let (RawDisplayHandle::Wayland(display), RawWindowHandle::Wayland(surface)) =
        (display, surface)
    else {
        return Ok(false);
    };
    // SAFETY: both pointers come from winit's live window and connection, which outlive this
    // call (the window is borrowed); the foreign backend does not take ownership of the
    // display, and the surface's id is used only within this call.
    let (conn, surface) = unsafe {
        let conn = Connection::from_backend(Backend::from_foreign_display(
            display.display.as_ptr().cast(),
        ));
        let id = ObjectId::from_ptr(WlSurface::interface(), surface.surface.as_ptr().cast())
            .map_err(|e| format!("the window's surface: {e}"))?;
        let surface = WlSurface::from_id(&conn, id).map_err(|e| format!("{e}"))?;
        (conn, surface)
    };
    let (globals, mut queue) =
        registry_queue_init::<Globals>(&conn).map_err(|e| format!("registry: {e}"))?;
    let activation: XdgActivationV1 = globals
        .bind(&queue.handle(), 1..=1, ())
        .map_err(|e| format!("the compositor offers no xdg-activation: {e}"))?;
    activation.activate(token.to_owned(), &surface);
    activation.destroy();
    queue.roundtrip(&mut Globals).map_err(|e| format!("roundtrip: {e}"))?;
    tracing::debug!("raised the window with the notification's activation token");
    Ok(true)
}

/// The state of the activation's own event queue (it receives nothing that matters).
struct Globals;

impl Dispatch<wl_registry::WlRegistry, GlobalListContents> for Globals {
    fn event(
        _: &mut Self,
        _: &wl_registry::WlRegistry,
        _: wl_registry::Event,
        _: &GlobalListContents,
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
    }
}

delegate_noop!(Globals: XdgActivationV1);
