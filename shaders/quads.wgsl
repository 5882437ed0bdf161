// Instanced quads: cell backgrounds, selection, cursors, dividers, header bars, badges,
// underlines and strikethrough. One instance is one rectangle in physical pixels with a
// colour and a kind; the kind decides which of its pixels are painted.
//
// Colours arrive as sRGB values. On an sRGB render target they are converted to linear here,
// so that the hardware's encoding gives back the exact sRGB value.

struct Globals {
    // Target size in pixels.
    viewport: vec2<f32>,
    // 1 when the target is an sRGB format (colours must be written linear).
    srgb_target: u32,
    _pad: u32,
};

@group(0) @binding(0)
var<uniform> globals: Globals;

struct Instance {
    // x, y, width, height in pixels (y grows downwards).
    @location(0) rect: vec4<f32>,
    // sRGB colour and alpha, 0–1.
    @location(1) color: vec4<f32>,
    // 0 fill, 1 outline, 2 wavy line, 3 dotted line, 4 dashed line.
    @location(2) kind: u32,
    // Line thickness in pixels (outline, wavy, dotted, dashed).
    @location(3) thickness: f32,
};

struct VertexOutput {
    @builtin(position) position: vec4<f32>,
    @location(0) color: vec4<f32>,
    // Position within the quad, in pixels from its top-left corner.
    @location(1) local: vec2<f32>,
    @location(2) @interpolate(flat) size: vec2<f32>,
    @location(3) @interpolate(flat) kind: u32,
    @location(4) @interpolate(flat) thickness: f32,
};

fn srgb_to_linear(c: f32) -> f32 {
    if c <= 0.04045 {
        return c / 12.92;
    }
    return pow((c + 0.055) / 1.055, 2.4);
}

@vertex
fn vs_main(@builtin(vertex_index) vertex: u32, instance: Instance) -> VertexOutput {
    // A triangle strip of four vertices: (0,0), (1,0), (0,1), (1,1).
    let corner = vec2<f32>(f32(vertex & 1u), f32((vertex >> 1u) & 1u));
    let local = corner * instance.rect.zw;
    let pixel = instance.rect.xy + local;
    let ndc = vec2<f32>(
        pixel.x / globals.viewport.x * 2.0 - 1.0,
        1.0 - pixel.y / globals.viewport.y * 2.0,
    );

    var out: VertexOutput;
    out.position = vec4<f32>(ndc, 0.0, 1.0);
    var color = instance.color;
    if globals.srgb_target == 1u {
        color = vec4<f32>(srgb_to_linear(color.r), srgb_to_linear(color.g), srgb_to_linear(color.b), color.a);
    }
    out.color = color;
    out.local = local;
    out.size = instance.rect.zw;
    out.kind = instance.kind;
    out.thickness = instance.thickness;
    return out;
}

@fragment
fn fs_main(in: VertexOutput) -> @location(0) vec4<f32> {
    let t = max(in.thickness, 1.0);
    var coverage = 1.0;
    switch in.kind {
        case 1u: {
            // Outline: only pixels within `t` of an edge.
            let edge = min(min(in.local.x, in.size.x - in.local.x), min(in.local.y, in.size.y - in.local.y));
            if edge > t {
                discard;
            }
        }
        case 2u: {
            // Wavy line: a sine wave filling the quad's height, one period per quad height × 2.
            let amplitude = max((in.size.y - t) / 2.0, 0.0);
            let period = max(in.size.y * 2.0, 4.0);
            let centre = in.size.y / 2.0 + amplitude * cos(in.local.x / period * 6.2831853);
            let distance = abs(in.local.y - centre);
            coverage = clamp(t / 2.0 + 0.5 - distance, 0.0, 1.0);
            if coverage <= 0.0 {
                discard;
            }
        }
        case 3u: {
            // Dotted line: dots and gaps of the line's thickness.
            if (u32(floor(in.local.x / t)) & 1u) == 1u {
                discard;
            }
        }
        case 4u: {
            // Dashed line: dashes three times as long as the gaps.
            let dash = max(t * 3.0, 3.0);
            if in.local.x - floor(in.local.x / (dash * 4.0 / 3.0)) * (dash * 4.0 / 3.0) > dash {
                discard;
            }
        }
        default: {}
    }
    return vec4<f32>(in.color.rgb, in.color.a * coverage);
}
