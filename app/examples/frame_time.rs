//! Frame times of the renderer for a 200×50 terminal (plus its header line), offscreen, on
//! whatever adapter the offscreen renderer picks (Mesa lavapipe where installed):
//!
//! ```text
//! cargo run --release -p berth --example frame_time
//! ```
//!
//! It prints the CPU time (layout, shaping, glyph preparation, submission) and the total
//! (until the GPU finished) for a full redraw where every row changed, a redraw where one
//! line changed, and a redraw of an unchanged scene.

// The renderer lives in the `berth` binary; the example compiles the same source.
#[allow(dead_code, unused_imports)]
#[path = "../src/render/mod.rs"]
mod render;

use std::time::Duration;

use berth_engine::terminal::{PaneTerminal, TermSize};
use render::{
    extract, Badge, CellRectU16, HeaderScene, Palette, PaneScene, RenderConfig, Renderer, Scene,
};

const COLS: u16 = 200;
const ROWS: u16 = 50;
const FRAMES: usize = 30;

/// A full screen of coloured text; `seed` changes every row, `line` changes only the last.
fn screen_bytes(seed: usize, line: usize) -> Vec<u8> {
    let words = [
        "fn",
        "main()",
        "{",
        "let",
        "mut",
        "renderer",
        "=",
        "Renderer::offscreen(200,",
        "50);",
        "}",
        "//",
        "ok",
    ];
    let mut out = Vec::new();
    for row in 0..ROWS as usize - 1 {
        let mut text = String::new();
        let mut i = row + seed;
        while text.len() < COLS as usize - 20 {
            let word = words[i % words.len()];
            text.push_str(&format!("\x1b[{}m{word}\x1b[0m ", 31 + i % 7));
            i += 1;
        }
        out.extend_from_slice(format!("{row:03} {text}\r\n").as_bytes());
    }
    out.extend_from_slice(format!("$ one changing line: {line}").as_bytes());
    out
}

fn scene(bytes: &[u8]) -> Scene {
    let mut term = PaneTerminal::new(TermSize { cols: COLS, rows: ROWS }, 1000);
    term.feed(bytes);
    let palette = Palette::dark();
    Scene {
        grid_cols: COLS,
        grid_rows: ROWS + 1,
        panes: vec![PaneScene {
            rect: CellRectU16::new(0, 0, COLS, ROWS + 1),
            header: HeaderScene {
                title: "frame time".into(),
                badge: Badge::Live,
                focused: true,
                attention: false,
                lifecycle: None,
                progress: None,
            },
            screen: extract(&term, &palette, true),
            focused: true,
            selection: None,
            ..PaneScene::default()
        }],
        dividers: Vec::new(),
        background: palette.bg,
        ..Scene::default()
    }
}

/// Median and mean of `samples`.
fn summary(samples: &mut [Duration]) -> String {
    samples.sort();
    let median = samples[samples.len() / 2];
    let mean = samples.iter().sum::<Duration>() / samples.len() as u32;
    format!(
        "median {:>7.2} ms, mean {:>7.2} ms",
        median.as_secs_f64() * 1e3,
        mean.as_secs_f64() * 1e3
    )
}

fn measure(
    renderer: &mut Renderer,
    label: &str,
    scenes: &[Scene],
) -> Result<(), render::RenderError> {
    let (mut cpu, mut total, mut shaped) = (Vec::new(), Vec::new(), 0);
    for scene in scenes {
        let stats = renderer.render(scene)?;
        cpu.push(stats.cpu);
        total.push(stats.total);
        shaped += stats.shaped_rows;
    }
    println!(
        "{label:<24} cpu {} | total {} | rows shaped per frame {:.1}",
        summary(&mut cpu),
        summary(&mut total),
        shaped as f64 / scenes.len() as f64
    );
    Ok(())
}

fn main() -> Result<(), render::RenderError> {
    let probe = Renderer::offscreen(1, 1, RenderConfig::default())?;
    let (cw, ch) = probe.cell_size();
    drop(probe);
    let (width, height) = ((f32::from(COLS) * cw) as u32, (f32::from(ROWS + 1) * ch) as u32);
    let mut renderer = Renderer::offscreen(width, height, RenderConfig::default())?;
    println!("adapter: {}", renderer.adapter_info());
    println!(
        "target: {width}×{height} px, {COLS}×{ROWS} cells of {cw}×{ch} px, {FRAMES} frames each"
    );

    // Warm up: the glyph atlas fills, pipelines are compiled.
    let first = renderer.render(&scene(&screen_bytes(0, 0)))?;
    println!(
        "first frame (cold)       cpu {:.2} ms | total {:.2} ms",
        first.cpu.as_secs_f64() * 1e3,
        first.total.as_secs_f64() * 1e3
    );

    let full: Vec<Scene> = (1..=FRAMES).map(|i| scene(&screen_bytes(i * 13, 0))).collect();
    measure(&mut renderer, "full redraw (all rows)", &full)?;
    let one: Vec<Scene> = (1..=FRAMES).map(|i| scene(&screen_bytes(0, i))).collect();
    measure(&mut renderer, "one-line change", &one)?;
    let same = vec![scene(&screen_bytes(0, 0)); FRAMES];
    measure(&mut renderer, "unchanged redraw", &same)?;
    Ok(())
}
