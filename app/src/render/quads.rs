//! The quad pipeline: instanced rectangles from `shaders/quads.wgsl` for everything that is not
//! a glyph (backgrounds, selection, cursors, dividers, header bars, badges, underlines).
//!
//! It owns the WGSL pipeline, its uniform and its instance buffer. It must not know about
//! cells or panes: `render/frame.rs` turns a scene into [`Quad`]s.

use bytemuck::{Pod, Zeroable};
use wgpu::util::DeviceExt as _;

use super::palette::Rgb;

/// The WGSL source, compiled into the binary.
const SHADER: &str = include_str!("../../../shaders/quads.wgsl");

/// Instances the buffer starts with; it doubles when a frame needs more.
const INITIAL_CAPACITY: usize = 4096;

/// What part of a quad is painted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum QuadKind {
    /// The whole rectangle.
    Fill = 0,
    /// A border of the given thickness (hollow cursor).
    Outline = 1,
    /// A wavy line (curly underline).
    Wave = 2,
    /// A dotted line.
    Dotted = 3,
    /// A dashed line.
    Dashed = 4,
}

/// One rectangle, as the shader reads it.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Pod, Zeroable)]
pub struct Quad {
    /// x, y, width, height in physical pixels.
    pub rect: [f32; 4],
    /// sRGB colour and alpha, 0–1.
    pub color: [f32; 4],
    /// A [`QuadKind`].
    pub kind: u32,
    /// Line thickness in pixels.
    pub thickness: f32,
}

impl Quad {
    /// A filled rectangle.
    pub fn fill(x: f32, y: f32, w: f32, h: f32, color: Rgb) -> Self {
        Self::new(QuadKind::Fill, x, y, w, h, color, 0.0)
    }

    /// A filled rectangle of `color` at `alpha` (0–1) over what is drawn before it.
    pub fn fill_alpha(x: f32, y: f32, w: f32, h: f32, color: Rgb, alpha: f32) -> Self {
        let mut quad = Self::fill(x, y, w, h, color);
        quad.color[3] = alpha.clamp(0.0, 1.0);
        quad
    }

    /// A rectangle of `kind` with line `thickness`.
    pub fn new(kind: QuadKind, x: f32, y: f32, w: f32, h: f32, color: Rgb, thickness: f32) -> Self {
        let c = |v: u8| f32::from(v) / 255.0;
        Self {
            rect: [x, y, w, h],
            color: [c(color.r), c(color.g), c(color.b), 1.0],
            kind: kind as u32,
            thickness,
        }
    }
}

/// The shader's uniform.
#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable)]
struct Globals {
    viewport: [f32; 2],
    srgb_target: u32,
    _pad: u32,
}

/// The compiled pipeline and its buffers.
pub struct QuadPipeline {
    pipeline: wgpu::RenderPipeline,
    globals: wgpu::Buffer,
    bind_group: wgpu::BindGroup,
    instances: wgpu::Buffer,
    capacity: usize,
    srgb_target: bool,
}

impl QuadPipeline {
    /// Compiles the pipeline for targets of `format`.
    pub fn new(device: &wgpu::Device, format: wgpu::TextureFormat) -> Self {
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("berth quads"),
            source: wgpu::ShaderSource::Wgsl(SHADER.into()),
        });
        let globals = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("berth quad globals"),
            contents: bytemuck::bytes_of(&Globals {
                viewport: [1.0, 1.0],
                srgb_target: 0,
                _pad: 0,
            }),
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
        });
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("berth quad globals"),
            entries: &[wgpu::BindGroupLayoutEntry {
                binding: 0,
                visibility: wgpu::ShaderStages::VERTEX_FRAGMENT,
                ty: wgpu::BindingType::Buffer {
                    ty: wgpu::BufferBindingType::Uniform,
                    has_dynamic_offset: false,
                    min_binding_size: None,
                },
                count: None,
            }],
        });
        let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("berth quad globals"),
            layout: &layout,
            entries: &[wgpu::BindGroupEntry { binding: 0, resource: globals.as_entire_binding() }],
        });
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("berth quads"),
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
        let attributes =
            wgpu::vertex_attr_array![0 => Float32x4, 1 => Float32x4, 2 => Uint32, 3 => Float32];
        let pipeline = device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
            label: Some("berth quads"),
            layout: Some(&pipeline_layout),
            vertex: wgpu::VertexState {
                module: &module,
                entry_point: Some("vs_main"),
                compilation_options: wgpu::PipelineCompilationOptions::default(),
                buffers: &[Some(wgpu::VertexBufferLayout {
                    array_stride: std::mem::size_of::<Quad>() as wgpu::BufferAddress,
                    step_mode: wgpu::VertexStepMode::Instance,
                    attributes: &attributes,
                })],
            },
            primitive: wgpu::PrimitiveState {
                topology: wgpu::PrimitiveTopology::TriangleStrip,
                ..wgpu::PrimitiveState::default()
            },
            depth_stencil: None,
            multisample: wgpu::MultisampleState::default(),
            fragment: Some(wgpu::FragmentState {
                module: &module,
                entry_point: Some("fs_main"),
                compilation_options: wgpu::PipelineCompilationOptions::default(),
                targets: &[Some(wgpu::ColorTargetState {
                    format,
                    blend: Some(wgpu::BlendState::ALPHA_BLENDING),
                    write_mask: wgpu::ColorWrites::ALL,
                })],
            }),
            multiview_mask: None,
            cache: None,
        });
        let capacity = INITIAL_CAPACITY;
        let instances = create_instance_buffer(device, capacity);
        Self { pipeline, globals, bind_group, instances, capacity, srgb_target: format.is_srgb() }
    }

    /// Uploads this frame's quads and the target size.
    pub fn upload(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        size: (u32, u32),
        quads: &[Quad],
    ) {
        let globals = Globals {
            viewport: [size.0.max(1) as f32, size.1.max(1) as f32],
            srgb_target: u32::from(self.srgb_target),
            _pad: 0,
        };
        queue.write_buffer(&self.globals, 0, bytemuck::bytes_of(&globals));
        if quads.len() > self.capacity {
            self.capacity = quads.len().next_power_of_two();
            self.instances = create_instance_buffer(device, self.capacity);
        }
        if !quads.is_empty() {
            queue.write_buffer(&self.instances, 0, bytemuck::cast_slice(quads));
        }
    }

    /// Draws the uploaded quads `range` (indices into the slice given to
    /// [`QuadPipeline::upload`]).
    pub fn draw(&self, pass: &mut wgpu::RenderPass<'_>, range: std::ops::Range<u32>) {
        if range.is_empty() {
            return;
        }
        pass.set_pipeline(&self.pipeline);
        pass.set_bind_group(0, &self.bind_group, &[]);
        pass.set_vertex_buffer(0, self.instances.slice(..));
        pass.draw(0..4, range);
    }
}

/// An instance buffer for `capacity` quads.
fn create_instance_buffer(device: &wgpu::Device, capacity: usize) -> wgpu::Buffer {
    device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("berth quad instances"),
        size: (capacity * std::mem::size_of::<Quad>()) as wgpu::BufferAddress,
        usage: wgpu::BufferUsages::VERTEX | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    })
}
