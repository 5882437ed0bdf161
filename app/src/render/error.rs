//! Why the renderer could not start or draw: one error type for the device, the surface and
//! reading frames back. It must not carry anything but a message a user can act on.

/// Why the renderer could not start or draw.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RenderError {
    /// No GPU adapter (or device) is usable; the message is one line saying what to do.
    #[error("{0}")]
    NoAdapter(String),
    /// The window surface could not be created, or this frame could not get a texture from
    /// it (it was resized, hidden or lost): draw again on the next redraw.
    #[error("window surface: {0}")]
    Surface(String),
    /// Anything else.
    #[error("renderer: {0}")]
    Other(String),
}
