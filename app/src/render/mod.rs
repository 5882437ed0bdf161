//! The GPU renderer: draws a [`Scene`] (panes, headers, dividers) with wgpu and glyphon, to a
//! window's surface or to an offscreen texture that can be read back as PNG.
//!
//! It owns the device, the quad pipeline (`render/quads.rs`, `shaders/quads.wgsl`), the text
//! pipeline (glyphon, fed by `render/text.rs`), and the frame layout (`render/frame.rs`).
//! It must not hold state the server owns or read terminals itself beyond
//! [`extract`]: the window builds a scene, the renderer draws it.
//!
//! Colours: scenes carry sRGB values. Targets are linear 8-bit formats where possible (the
//! offscreen texture always is), so colours reach the pixels exactly and glyphs blend in
//! sRGB space as in most terminals (glyphon's `ColorMode::Web`). When a surface offers only
//! sRGB formats, the quad shader and glyphon (`ColorMode::Accurate`) convert to linear, and
//! the clear colour is converted here.

mod card;
mod chrome;
mod damage;
mod extract;
pub mod fallback;
mod frame;
mod gpu;
mod inbox;
mod marks;
mod palette;
mod place;
mod quads;
mod review;
pub mod scene;
mod sidebar;
mod text;

use std::sync::Arc;
use std::time::{Duration, Instant};

use glyphon::{
    Cache, ColorMode, Resolution, TextArea, TextAtlas, TextBounds, TextRenderer, Viewport,
};

pub use self::card::{card_hit, card_layout, CardHit, CardLayout, MAX_DETAIL_ROWS};
pub use self::chrome::overlay_rows;
mod error;
pub use self::error::RenderError;
pub use self::extract::{extract, extract_styled_lines, screen_of_frame};
use self::gpu::{Gpu, Target};
pub use self::palette::{Palette, Rgb, MIN_CONTRAST};
pub use self::place::{ellipsize, str_width};
use self::quads::QuadPipeline;
pub use self::scene::{
    Badge, ButtonTone, CardButton, CellRectU16, CellSpan, CellStyle, CellView, CursorShape,
    CursorView, DecisionCard, HeaderScene, InboxScene, PaneScene, Progress, ProgressKind,
    ReviewButton, ReviewFileRow, ReviewLine, ReviewLineKind, ReviewScene, ReviewSpan, Ring, Scene,
    ScreenCells, SearchScene, SelectionSpan, SidebarButton, SidebarLine, SidebarScene,
    SidebarStyle, SwitcherEntry, SwitcherScene, SyntaxClass, TabBarScene, TabLabel, ToastScene,
    TombstoneOverlay, UnderlineStyle,
};
use self::text::TextSystem;
pub use self::text::FONT_FAMILY;

/// Default font size in logical pixels.
pub const DEFAULT_FONT_SIZE: f32 = 15.0;

/// What the renderer draws with.
#[derive(Debug, Clone, PartialEq)]
pub struct RenderConfig {
    /// Font size in logical pixels (default 15).
    pub font_size_px: f32,
    /// HiDPI scale factor: physical pixels per logical pixel.
    pub scale: f32,
    /// Colours.
    pub palette: Palette,
    /// Whether the system's fonts are loaded as fallback for characters the bundled font
    /// lacks (CJK, emoji). Golden-image tests turn this off so that their output does not
    /// depend on the fonts a machine has.
    pub system_fonts: bool,
    /// The font family (the bundled [`FONT_FAMILY`] unless a system family is named).
    pub font_family: String,
    /// Cell height as a multiple of the font's (1.0 is the font's own).
    pub line_height: f32,
    /// Whether ligatures are drawn.
    pub ligatures: bool,
}

impl Default for RenderConfig {
    fn default() -> Self {
        Self {
            font_size_px: DEFAULT_FONT_SIZE,
            scale: 1.0,
            palette: Palette::dark(),
            system_fonts: true,
            font_family: FONT_FAMILY.to_owned(),
            line_height: 1.0,
            ligatures: false,
        }
    }
}

/// How long a frame took.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FrameStats {
    /// CPU time: layout, shaping, glyph preparation, encoding and submission.
    pub cpu: Duration,
    /// Until the GPU finished the frame (the renderer waits for it).
    pub total: Duration,
    /// Rows shaped this frame (the others came from the cache).
    pub shaped_rows: usize,
}

/// Draws scenes.
pub struct Renderer {
    instance: wgpu::Instance,
    gpu: Gpu,
    target: Target,
    format: wgpu::TextureFormat,
    size: (u32, u32),
    config: RenderConfig,
    quads: QuadPipeline,
    text: TextSystem,
    atlas: TextAtlas,
    viewport: Viewport,
    text_renderer: TextRenderer,
    /// Draws the modal layer's text (decision cards, the switcher), after everything else.
    modal_text_renderer: TextRenderer,
    /// The texture a window renderer draws screenshots into (same size and format).
    screenshot_texture: Option<wgpu::Texture>,
    /// A window renderer's canvas (when its surface can be copied into): frames are drawn
    /// here, only the rows that changed, and copied to the surface whole.
    canvas: Option<wgpu::Texture>,
    /// The scene the canvas shows (`None`: nothing yet, or it must be drawn again whole).
    canvas_scene: Option<Scene>,
}

/// A band of the target to redraw: x, y, width, height in pixels.
type Scissor = (u32, u32, u32, u32);

impl Renderer {
    /// An offscreen renderer (tests, `berth screenshot`): a texture of `width × height`
    /// pixels. A software adapter (Mesa lavapipe) is preferred so images match across
    /// machines; `WGPU_BACKEND` selects the backend.
    pub fn offscreen(
        width: u32,
        height: u32,
        config: RenderConfig,
    ) -> Result<Renderer, RenderError> {
        let instance = gpu::headless_instance();
        let gpu = gpu::request_gpu(&instance, None, true)?;
        let size = (width.max(1), height.max(1));
        let texture = gpu::render_texture(&gpu.device, size, gpu::OFFSCREEN_FORMAT);
        Self::new(instance, gpu, Target::Offscreen { texture }, gpu::OFFSCREEN_FORMAT, size, config)
    }

    /// The wgpu instance a window renderer needs: connected to the display (pass
    /// `event_loop.owned_display_handle()`), backends and flags from the environment.
    pub fn instance_for<D>(display: D) -> wgpu::Instance
    where
        D: wgpu::rwh::HasDisplayHandle + std::fmt::Debug + Send + Sync + 'static,
    {
        wgpu::Instance::new(wgpu::InstanceDescriptor::new_with_display_handle_from_env(Box::new(
            display,
        )))
    }

    /// A renderer drawing to `window` (an `Arc<winit::window::Window>`) whose inner size is
    /// `width × height` physical pixels, on an instance from [`Renderer::instance_for`].
    pub fn for_window<W>(
        instance: wgpu::Instance,
        window: Arc<W>,
        width: u32,
        height: u32,
        config: RenderConfig,
    ) -> Result<Renderer, RenderError>
    where
        W: wgpu::WindowHandle + wgpu::rwh::HasDisplayHandle + 'static,
    {
        let size = (width.max(1), height.max(1));
        let (gpu, target) = gpu::configure_window(&instance, window, size)?;
        let format = match &target {
            Target::Window { config, .. } => config.format,
            Target::Offscreen { texture } => texture.format(),
        };
        Self::new(instance, gpu, target, format, size, config)
    }

    fn new(
        instance: wgpu::Instance,
        gpu: Gpu,
        target: Target,
        format: wgpu::TextureFormat,
        size: (u32, u32),
        config: RenderConfig,
    ) -> Result<Renderer, RenderError> {
        let scale = valid_scale(config.scale);
        let mut text = TextSystem::new(config.font_size_px * scale, config.system_fonts)
            .map_err(RenderError::Other)?;
        text.set_ligatures(config.ligatures);
        if (config.line_height - 1.0).abs() > f32::EPSILON {
            text.set_line_height(config.line_height).map_err(RenderError::Other)?;
        }
        if let Err(warning) = text.set_family(&config.font_family) {
            tracing::warn!("{warning}");
        }
        let quads = QuadPipeline::new(&gpu.device, format);
        let cache = Cache::new(&gpu.device);
        let viewport = Viewport::new(&gpu.device, &cache);
        let color_mode = if format.is_srgb() { ColorMode::Accurate } else { ColorMode::Web };
        let mut atlas =
            TextAtlas::with_color_mode(&gpu.device, &gpu.queue, &cache, format, color_mode);
        let text_renderer =
            TextRenderer::new(&mut atlas, &gpu.device, wgpu::MultisampleState::default(), None);
        let modal_text_renderer =
            TextRenderer::new(&mut atlas, &gpu.device, wgpu::MultisampleState::default(), None);
        Ok(Renderer {
            instance,
            gpu,
            target,
            format,
            size,
            config: RenderConfig { scale, ..config },
            quads,
            text,
            atlas,
            viewport,
            text_renderer,
            modal_text_renderer,
            screenshot_texture: None,
            canvas: None,
            canvas_scene: None,
        })
    }

    /// Resizes the target to `width × height` physical pixels.
    pub fn resize(&mut self, width: u32, height: u32) {
        let size = (width.max(1), height.max(1));
        if size == self.size {
            return;
        }
        self.size = size;
        match &mut self.target {
            Target::Offscreen { texture } => {
                *texture = gpu::render_texture(&self.gpu.device, size, self.format)
            }
            Target::Window { surface, config, .. } => {
                config.width = size.0;
                config.height = size.1;
                surface.configure(&self.gpu.device, config);
            }
        }
        self.screenshot_texture = None;
        self.canvas = None;
        self.canvas_scene = None;
    }

    /// The size of one cell in physical pixels, from the font metrics.
    pub fn cell_size(&self) -> (f32, f32) {
        let m = self.text.metrics();
        (m.cell_w, m.cell_h)
    }

    /// Changes the font size (logical pixels; zoom). [`Renderer::cell_size`] changes with it.
    /// Sizes below 1 pixel are ignored.
    pub fn set_font_size(&mut self, px: f32) {
        self.canvas_scene = None;
        if self.text.set_font_size(px * self.config.scale).is_ok() {
            self.config.font_size_px = px;
        }
    }

    /// Uses the font family `name`; when it is not installed the bundled font stays in use
    /// and the error says so (a warning for the user). [`Renderer::cell_size`] follows.
    pub fn set_font_family(&mut self, name: &str) -> Result<(), String> {
        self.canvas_scene = None;
        let result = self.text.set_family(name);
        self.config.font_family = self.text.family().to_owned();
        result
    }

    /// Sets the cell height as a multiple of the font's; values that are not positive are
    /// refused.
    pub fn set_line_height(&mut self, line_height: f32) -> Result<(), String> {
        self.canvas_scene = None;
        self.text.set_line_height(line_height)?;
        self.config.line_height = line_height;
        Ok(())
    }

    /// Turns ligatures on or off.
    pub fn set_ligatures(&mut self, on: bool) {
        self.canvas_scene = None;
        self.text.set_ligatures(on);
        self.config.ligatures = on;
    }

    /// Draws with other colours from the next frame on.
    pub fn set_palette(&mut self, palette: Palette) {
        self.canvas_scene = None;
        self.config.palette = palette;
    }

    /// Changes the HiDPI scale factor (the window moved to another monitor).
    pub fn set_scale(&mut self, scale: f32) {
        self.canvas_scene = None;
        let scale = valid_scale(scale);
        if self.text.set_font_size(self.config.font_size_px * scale).is_ok() {
            self.config.scale = scale;
        }
    }

    /// The current configuration.
    pub fn config(&self) -> &RenderConfig {
        &self.config
    }

    /// The adapter's name and backend, for logs and `berth doctor`.
    pub fn adapter_info(&self) -> String {
        let info = self.gpu.adapter.get_info();
        format!("{} ({:?}, {:?})", info.name, info.backend, info.device_type)
    }

    /// Draws a scene to the window surface (or the offscreen texture) and waits for the GPU.
    ///
    /// A [`RenderError::Surface`] from a window renderer means this frame was skipped (the
    /// surface was outdated, lost, hidden or timed out) and has been reconfigured where that
    /// helps: request another redraw.
    pub fn render(&mut self, scene: &Scene) -> Result<FrameStats, RenderError> {
        let start = Instant::now();
        match &self.target {
            Target::Offscreen { texture } => {
                let view = texture.create_view(&wgpu::TextureViewDescriptor::default());
                self.draw(scene, &view, None, start)
            }
            Target::Window { surface, .. } => {
                let frame = match surface.get_current_texture() {
                    wgpu::CurrentSurfaceTexture::Success(frame) => frame,
                    wgpu::CurrentSurfaceTexture::Suboptimal(frame) => {
                        // Draw this one; the next frame gets a reconfigured surface.
                        let view =
                            frame.texture.create_view(&wgpu::TextureViewDescriptor::default());
                        self.canvas_scene = None;
                        let stats = self.draw(scene, &view, None, start)?;
                        self.gpu.queue.present(frame);
                        self.reconfigure();
                        return Ok(stats);
                    }
                    wgpu::CurrentSurfaceTexture::Timeout => {
                        return Err(RenderError::Surface("timed out".into()))
                    }
                    wgpu::CurrentSurfaceTexture::Occluded => {
                        return Err(RenderError::Surface("hidden".into()))
                    }
                    wgpu::CurrentSurfaceTexture::Outdated => {
                        self.reconfigure();
                        return Err(RenderError::Surface("outdated; reconfigured".into()));
                    }
                    wgpu::CurrentSurfaceTexture::Lost => {
                        self.recreate_surface()?;
                        return Err(RenderError::Surface("lost; recreated".into()));
                    }
                    wgpu::CurrentSurfaceTexture::Validation => {
                        return Err(RenderError::Surface(
                            "wgpu reported a validation error".into(),
                        ));
                    }
                };
                let stats = self.draw_window(scene, &frame.texture, start);
                if stats.is_err() {
                    self.canvas_scene = None;
                }
                self.gpu.queue.present(frame);
                stats
            }
        }
    }

    /// Draws a scene offscreen and returns PNG bytes. A window renderer draws into an extra
    /// texture of the window's size; the window itself is not touched.
    pub fn screenshot_png(&mut self, scene: &Scene) -> Result<Vec<u8>, RenderError> {
        let start = Instant::now();
        let texture = match &self.target {
            Target::Offscreen { texture } => texture.clone(),
            Target::Window { .. } => {
                let texture = self.screenshot_texture.get_or_insert_with(|| {
                    gpu::render_texture(&self.gpu.device, self.size, self.format)
                });
                texture.clone()
            }
        };
        let view = texture.create_view(&wgpu::TextureViewDescriptor::default());
        self.draw(scene, &view, None, start)?;
        gpu::read_png(&self.gpu, &texture)
    }

    /// Draws a window frame into `surface`: straight into it when it cannot be copied into,
    /// else on the canvas, only the rows of the grid that changed since the canvas was last
    /// drawn (`damage.rs`; all of them after a resize or a change of font, palette or scale),
    /// and then the whole canvas copied to `surface`.
    fn draw_window(
        &mut self,
        scene: &Scene,
        surface: &wgpu::Texture,
        start: Instant,
    ) -> Result<FrameStats, RenderError> {
        if !surface.usage().contains(wgpu::TextureUsages::COPY_DST) {
            let view = surface.create_view(&wgpu::TextureViewDescriptor::default());
            return self.draw(scene, &view, None, start);
        }
        let canvas = match &self.canvas {
            Some(canvas) => canvas.clone(),
            None => {
                self.canvas_scene = None;
                let canvas = gpu::render_texture(&self.gpu.device, self.size, self.format);
                self.canvas = Some(canvas.clone());
                canvas
            }
        };
        let scissor = match damage::between(self.canvas_scene.as_ref(), scene) {
            damage::Damage::Full => None,
            damage::Damage::Rows(rows) => {
                let m = self.text.metrics();
                let (width, height) = self.size;
                // Whole pixels around the rows (cell heights need not be integers).
                let top = (place::row_y(m, rows.start).floor().max(0.0) as u32).min(height);
                let bottom = (place::row_y(m, rows.end).ceil().max(0.0) as u32).min(height);
                Some((0, top, width, bottom.saturating_sub(top)))
            }
        };
        let view = canvas.create_view(&wgpu::TextureViewDescriptor::default());
        let stats = self.draw(scene, &view, scissor, start)?;
        self.canvas_scene = Some(scene.clone());
        let mut encoder = self.gpu.device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("canvas to surface"),
        });
        encoder.copy_texture_to_texture(
            canvas.as_image_copy(),
            surface.as_image_copy(),
            wgpu::Extent3d {
                width: self.size.0.min(surface.width()),
                height: self.size.1.min(surface.height()),
                depth_or_array_layers: 1,
            },
        );
        let index = self.gpu.queue.submit([encoder.finish()]);
        // The copy is done before the surface is presented (a software presenter reads the
        // surface's memory as soon as it is handed over).
        self.gpu
            .device
            .poll(wgpu::PollType::Wait { submission_index: Some(index), timeout: None })
            .map_err(|err| RenderError::Other(format!("waiting for the GPU failed: {err}")))?;
        Ok(FrameStats { total: start.elapsed(), ..stats })
    }

    /// Lays out, prepares and draws one frame into `view`, then waits for the GPU. With a
    /// `scissor`, only that band is drawn again (over what `view` holds), else all of it.
    fn draw(
        &mut self,
        scene: &Scene,
        view: &wgpu::TextureView,
        scissor: Option<Scissor>,
        start: Instant,
    ) -> Result<FrameStats, RenderError> {
        self.text.begin_frame();
        let mut frame =
            frame::build(scene, &self.config.palette, &mut self.text, self.config.scale);
        if let Some((x, y, w, h)) = scissor {
            // What the clear does for a whole frame: the band starts as the background.
            let band = quads::Quad::fill(x as f32, y as f32, w as f32, h as f32, scene.background);
            frame.quads.insert(0, band);
            frame.under += 1;
            frame.modal += 1;
        }
        let shaped_rows = self.text.shaped_this_frame();
        let (width, height) = self.size;
        let Gpu { device, queue, .. } = &self.gpu;

        self.viewport.update(queue, Resolution { width, height });
        let cell_w = self.text.metrics().cell_w;
        let fallback_color =
            glyphon::Color::rgb(scene.background.r, scene.background.g, scene.background.b);
        let (fonts, swash, rows) = self.text.parts();
        self.text_renderer
            .prepare(
                device,
                queue,
                fonts,
                &mut self.atlas,
                &self.viewport,
                text_areas(&frame.texts, rows, cell_w, fallback_color),
                swash,
            )
            .map_err(|err| RenderError::Other(format!("preparing glyphs: {err}")))?;
        self.modal_text_renderer
            .prepare(
                device,
                queue,
                fonts,
                &mut self.atlas,
                &self.viewport,
                text_areas(&frame.modal_texts, rows, cell_w, fallback_color),
                swash,
            )
            .map_err(|err| RenderError::Other(format!("preparing glyphs: {err}")))?;
        self.quads.upload(device, queue, self.size, &frame.quads);

        let mut encoder = device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("berth frame") });
        {
            let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
                label: Some("berth frame"),
                color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                    view,
                    depth_slice: None,
                    resolve_target: None,
                    ops: wgpu::Operations {
                        load: match scissor {
                            Some(_) => wgpu::LoadOp::Load,
                            None => wgpu::LoadOp::Clear(clear_color(
                                scene.background,
                                self.format.is_srgb(),
                            )),
                        },
                        store: wgpu::StoreOp::Store,
                    },
                })],
                depth_stencil_attachment: None,
                timestamp_writes: None,
                occlusion_query_set: None,
                multiview_mask: None,
            });
            if let Some((x, y, w, h)) = scissor {
                if w == 0 || h == 0 {
                    // Nothing changed: the canvas is already this frame.
                    drop(pass);
                    return self.finish_frame(encoder, start, shaped_rows);
                }
                pass.set_scissor_rect(x, y, w, h);
            }
            // Quad counts fit in u32: a frame has a few per cell at most.
            let (under, modal, all) =
                (frame.under as u32, frame.modal as u32, frame.quads.len() as u32);
            self.quads.draw(&mut pass, 0..under);
            self.text_renderer
                .render(&self.atlas, &self.viewport, &mut pass)
                .map_err(|err| RenderError::Other(format!("drawing glyphs: {err}")))?;
            self.quads.draw(&mut pass, under..modal);
            if !frame.modal_texts.is_empty() || modal < all {
                self.quads.draw(&mut pass, modal..all);
                self.modal_text_renderer
                    .render(&self.atlas, &self.viewport, &mut pass)
                    .map_err(|err| RenderError::Other(format!("drawing glyphs: {err}")))?;
            }
        }
        self.finish_frame(encoder, start, shaped_rows)
    }

    /// Submits a frame's commands and waits for the GPU.
    fn finish_frame(
        &mut self,
        encoder: wgpu::CommandEncoder,
        start: Instant,
        shaped_rows: usize,
    ) -> Result<FrameStats, RenderError> {
        let Gpu { device, queue, .. } = &self.gpu;
        let index = queue.submit([encoder.finish()]);
        let cpu = start.elapsed();
        device
            .poll(wgpu::PollType::Wait { submission_index: Some(index), timeout: None })
            .map_err(|err| RenderError::Other(format!("waiting for the GPU failed: {err}")))?;
        self.atlas.trim();
        self.text.end_frame();
        Ok(FrameStats { cpu, total: start.elapsed(), shaped_rows })
    }

    /// Configures the window surface again with the current size.
    fn reconfigure(&mut self) {
        if let Target::Window { surface, config, .. } = &self.target {
            surface.configure(&self.gpu.device, config);
        }
    }

    /// Makes a new surface for the window after the old one was lost.
    fn recreate_surface(&mut self) -> Result<(), RenderError> {
        if let Target::Window { surface, config, factory } = &mut self.target {
            *surface = factory(&self.instance).map_err(RenderError::Surface)?;
            surface.configure(&self.gpu.device, config);
        }
        Ok(())
    }
}

/// glyphon's text areas for placed rows: one per shaped segment.
fn text_areas<'a>(
    placements: &'a [place::Placement],
    rows: &'a std::collections::HashMap<u64, text::CachedRow>,
    cell_w: f32,
    fallback_color: glyphon::Color,
) -> impl Iterator<Item = TextArea<'a>> + 'a {
    placements.iter().flat_map(move |placement| {
        let segments = rows.get(&placement.key).map_or(&[][..], |row| row.segments());
        segments.iter().map(move |segment| TextArea {
            buffer: &segment.buffer,
            left: placement.x + f32::from(segment.col) * cell_w + segment.x_offset,
            top: placement.y,
            scale: 1.0,
            bounds: TextBounds {
                left: placement.clip[0],
                top: placement.clip[1],
                right: placement.clip[2],
                bottom: placement.clip[3],
            },
            default_color: fallback_color,
            custom_glyphs: &[],
        })
    })
}

/// `scale` if it is a usable scale factor, else 1.
fn valid_scale(scale: f32) -> f32 {
    if scale.is_finite() && scale > 0.0 {
        scale
    } else {
        1.0
    }
}

/// The clear colour for `rgb`: as is on a linear target, converted to linear on an sRGB one
/// (the hardware encodes it back).
fn clear_color(rgb: Rgb, srgb_target: bool) -> wgpu::Color {
    let channel = |c: u8| {
        let c = f64::from(c) / 255.0;
        if !srgb_target {
            c
        } else if c <= 0.04045 {
            c / 12.92
        } else {
            ((c + 0.055) / 1.055).powf(2.4)
        }
    };
    wgpu::Color { r: channel(rgb.r), g: channel(rgb.g), b: channel(rgb.b), a: 1.0 }
}
