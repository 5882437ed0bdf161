//! The GPU side of the renderer: instance, adapter and device, the window surface or the
//! offscreen texture, and reading a texture back as PNG.
//!
//! It owns adapter selection (software first for offscreen, so images are the same on every
//! machine; the window takes what is compatible with its surface), the choice of target
//! format, and turning wgpu's failures into [`RenderError`]s of one line. It must not draw.

use std::sync::Arc;

use super::error::RenderError;

/// A device and its queue, with the adapter they came from.
pub struct Gpu {
    /// The adapter.
    pub adapter: wgpu::Adapter,
    /// The device.
    pub device: wgpu::Device,
    /// Its queue.
    pub queue: wgpu::Queue,
}

/// Remakes the window's surface after it was lost.
pub type SurfaceFactory =
    Box<dyn Fn(&wgpu::Instance) -> Result<wgpu::Surface<'static>, String> + Send + Sync>;

/// Where frames go.
pub enum Target {
    /// A texture that nobody shows (tests, screenshots without a window).
    Offscreen {
        /// The texture, `RENDER_ATTACHMENT | COPY_SRC`.
        texture: wgpu::Texture,
    },
    /// A window's surface.
    Window {
        /// The surface.
        surface: wgpu::Surface<'static>,
        /// Its configuration (size and format).
        config: wgpu::SurfaceConfiguration,
        /// Makes a new surface for the same window.
        factory: SurfaceFactory,
    },
}

/// An instance without a display connection, with backends and flags from the environment
/// (`WGPU_BACKEND`, …).
pub fn headless_instance() -> wgpu::Instance {
    wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env())
}

/// Finds an adapter (and makes a device on it). With `prefer_software`, a software adapter
/// (Mesa lavapipe or llvmpipe) is tried first, then any other; else the other way round.
pub fn request_gpu(
    instance: &wgpu::Instance,
    surface: Option<&wgpu::Surface<'_>>,
    prefer_software: bool,
) -> Result<Gpu, RenderError> {
    let order = if prefer_software { [true, false] } else { [false, true] };
    let mut failure = String::new();
    let mut adapter = None;
    for force_fallback_adapter in order {
        let options = wgpu::RequestAdapterOptions {
            power_preference: wgpu::PowerPreference::from_env().unwrap_or_default(),
            force_fallback_adapter,
            compatible_surface: surface,
            apply_limit_buckets: false,
        };
        match pollster::block_on(instance.request_adapter(&options)) {
            Ok(found) => {
                adapter = Some(found);
                break;
            }
            Err(err) => failure = err.to_string(),
        }
    }
    let Some(adapter) = adapter else {
        return Err(RenderError::NoAdapter(format!(
            "no usable GPU adapter ({}); install a Vulkan or OpenGL driver (for software \
             rendering: Mesa's libvulkan1 mesa-vulkan-drivers), or run `berth server` without a window",
            one_line(&failure)
        )));
    };
    let descriptor = wgpu::DeviceDescriptor {
        label: Some("berth"),
        required_limits: wgpu::Limits::downlevel_webgl2_defaults()
            .using_resolution(adapter.limits()),
        ..wgpu::DeviceDescriptor::default()
    };
    let (device, queue) =
        pollster::block_on(adapter.request_device(&descriptor)).map_err(|err| {
            RenderError::NoAdapter(format!(
                "the GPU adapter {} refused a device: {}",
                adapter.get_info().name,
                one_line(&err.to_string())
            ))
        })?;
    Ok(Gpu { adapter, device, queue })
}

/// The format offscreen textures use: linear 8-bit RGBA, so colours are written as given.
pub const OFFSCREEN_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Rgba8Unorm;

/// A texture to render into and copy from.
pub fn render_texture(
    device: &wgpu::Device,
    size: (u32, u32),
    format: wgpu::TextureFormat,
) -> wgpu::Texture {
    device.create_texture(&wgpu::TextureDescriptor {
        label: Some("berth frame"),
        size: wgpu::Extent3d {
            width: size.0.max(1),
            height: size.1.max(1),
            depth_or_array_layers: 1,
        },
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format,
        usage: wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC,
        view_formats: &[],
    })
}

/// Creates the surface of a window and configures it for `size`, preferring a linear format
/// (colours exact, glyphs blended like most toolkits) over an sRGB one.
pub fn configure_window<W>(
    instance: &wgpu::Instance,
    window: Arc<W>,
    size: (u32, u32),
) -> Result<(Gpu, Target), RenderError>
where
    W: wgpu::WindowHandle + wgpu::rwh::HasDisplayHandle + 'static,
{
    let factory: SurfaceFactory = Box::new(move |instance: &wgpu::Instance| {
        instance.create_surface(Arc::clone(&window)).map_err(|err| one_line(&err.to_string()))
    });
    let surface = factory(instance)
        .map_err(|err| RenderError::Surface(format!("cannot create a window surface: {err}")))?;
    let gpu = request_gpu(instance, Some(&surface), false)?;
    let caps = surface.get_capabilities(&gpu.adapter);
    let format = caps
        .formats
        .iter()
        .copied()
        .find(|f| matches!(f, wgpu::TextureFormat::Bgra8Unorm | wgpu::TextureFormat::Rgba8Unorm))
        .or_else(|| caps.formats.first().copied())
        .ok_or_else(|| {
            RenderError::Surface("the window surface offers no texture format".into())
        })?;
    let alpha_mode = if caps.alpha_modes.contains(&wgpu::CompositeAlphaMode::Opaque) {
        wgpu::CompositeAlphaMode::Opaque
    } else {
        caps.alpha_modes.first().copied().unwrap_or(wgpu::CompositeAlphaMode::Auto)
    };
    // Copied into when the surface allows it: frames are drawn on a canvas of the window's
    // own, only the rows that changed (`render/damage.rs`), and copied to the surface whole.
    let usage =
        wgpu::TextureUsages::RENDER_ATTACHMENT | (caps.usages & wgpu::TextureUsages::COPY_DST);
    let config = wgpu::SurfaceConfiguration {
        usage,
        format,
        width: size.0.max(1),
        height: size.1.max(1),
        present_mode: wgpu::PresentMode::Fifo,
        alpha_mode,
        view_formats: vec![],
        desired_maximum_frame_latency: 2,
        color_space: wgpu::SurfaceColorSpace::Auto,
    };
    surface.configure(&gpu.device, &config);
    Ok((gpu, Target::Window { surface, config, factory }))
}

/// Copies `texture` (8-bit RGBA or BGRA) back to memory and encodes it as an RGB PNG.
pub fn read_png(gpu: &Gpu, texture: &wgpu::Texture) -> Result<Vec<u8>, RenderError> {
    let (width, height) = (texture.width(), texture.height());
    let format = texture.format();
    let bgra =
        matches!(format, wgpu::TextureFormat::Bgra8Unorm | wgpu::TextureFormat::Bgra8UnormSrgb);
    if !bgra
        && !matches!(format, wgpu::TextureFormat::Rgba8Unorm | wgpu::TextureFormat::Rgba8UnormSrgb)
    {
        return Err(RenderError::Other(format!("cannot read back frames of format {format:?}")));
    }
    let unpadded = width * 4;
    let align = wgpu::COPY_BYTES_PER_ROW_ALIGNMENT;
    let padded = unpadded.div_ceil(align) * align;
    let buffer = gpu.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("berth readback"),
        size: u64::from(padded) * u64::from(height),
        usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::MAP_READ,
        mapped_at_creation: false,
    });
    let mut encoder = gpu
        .device
        .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("berth readback") });
    encoder.copy_texture_to_buffer(
        wgpu::TexelCopyTextureInfo {
            texture,
            mip_level: 0,
            origin: wgpu::Origin3d::ZERO,
            aspect: wgpu::TextureAspect::All,
        },
        wgpu::TexelCopyBufferInfo {
            buffer: &buffer,
            layout: wgpu::TexelCopyBufferLayout {
                offset: 0,
                bytes_per_row: Some(padded),
                rows_per_image: Some(height),
            },
        },
        wgpu::Extent3d { width, height, depth_or_array_layers: 1 },
    );
    let index = gpu.queue.submit([encoder.finish()]);
    let slice = buffer.slice(..);
    let (sender, receiver) = std::sync::mpsc::channel();
    slice.map_async(wgpu::MapMode::Read, move |result| {
        // The receiver waits below; if it is gone there is nobody to tell.
        let _ = sender.send(result);
    });
    gpu.device
        .poll(wgpu::PollType::Wait { submission_index: Some(index), timeout: None })
        .map_err(|err| RenderError::Other(format!("waiting for the GPU failed: {err}")))?;
    receiver
        .recv()
        .map_err(|_| RenderError::Other("the GPU never finished reading the frame back".into()))?
        .map_err(|err| RenderError::Other(format!("reading the frame back failed: {err}")))?;
    let mut rgb = Vec::with_capacity((width * height * 3) as usize);
    {
        let data = slice
            .get_mapped_range()
            .map_err(|err| RenderError::Other(format!("reading the frame back failed: {err}")))?;
        for row in data.chunks(padded as usize).take(height as usize) {
            for px in row[..unpadded as usize].chunks_exact(4) {
                if bgra {
                    rgb.extend_from_slice(&[px[2], px[1], px[0]]);
                } else {
                    rgb.extend_from_slice(&px[..3]);
                }
            }
        }
    }
    buffer.unmap();
    encode_png(width, height, &rgb)
}

/// Encodes 8-bit RGB pixels as a PNG.
pub fn encode_png(width: u32, height: u32, rgb: &[u8]) -> Result<Vec<u8>, RenderError> {
    let mut out = Vec::new();
    let mut encoder = png::Encoder::new(&mut out, width, height);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer =
        encoder.write_header().map_err(|err| RenderError::Other(format!("PNG: {err}")))?;
    writer.write_image_data(rgb).map_err(|err| RenderError::Other(format!("PNG: {err}")))?;
    writer.finish().map_err(|err| RenderError::Other(format!("PNG: {err}")))?;
    Ok(out)
}

/// The first line of `text`, trimmed (wgpu's messages can span lines).
fn one_line(text: &str) -> String {
    text.lines().map(str::trim).find(|line| !line.is_empty()).unwrap_or("unknown error").to_string()
}
