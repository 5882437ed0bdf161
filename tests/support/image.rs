//! Screenshots in the end-to-end suites: a decoded PNG, its colours, and what OCR reads in it.

use std::fs;
use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};

/// A decoded PNG.
pub struct Image {
    pub width: u32,
    pub height: u32,
    /// RGB triples, row-major.
    pub pixels: Vec<[u8; 3]>,
}

impl Image {
    pub fn read(path: &Path) -> Image {
        let mut bytes = Vec::new();
        fs::File::open(path)
            .and_then(|mut f| f.read_to_end(&mut bytes))
            .unwrap_or_else(|e| panic!("cannot read the screenshot {}: {e}", path.display()));
        let mut decoder = png::Decoder::new(std::io::Cursor::new(bytes));
        decoder.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
        let mut reader = decoder.read_info().expect("the screenshot is a PNG");
        let mut buf = vec![0; reader.output_buffer_size().expect("a sane PNG size")];
        let info = reader.next_frame(&mut buf).expect("the PNG decodes");
        let channels = info.color_type.samples();
        assert!(channels >= 3, "the screenshot is not in colour: {:?}", info.color_type);
        let pixels =
            buf[..info.buffer_size()].chunks_exact(channels).map(|p| [p[0], p[1], p[2]]).collect();
        Image { width: info.width, height: info.height, pixels }
    }

    pub fn distinct_colours(&self) -> usize {
        let mut colours: Vec<[u8; 3]> = self.pixels.clone();
        colours.sort_unstable();
        colours.dedup();
        colours.len()
    }

    pub fn count(&self, f: impl Fn([u8; 3]) -> bool) -> usize {
        self.pixels.iter().filter(|p| f(**p)).count()
    }

    /// Writes the image's top `rows` pixel rows scaled up `factor` times (nearest neighbour)
    /// as a PNG, which OCR reads far better than terminal-sized text.
    pub fn write_scaled(&self, path: &Path, factor: u32, rows: u32) {
        let (w, h) = (self.width * factor, rows.min(self.height) * factor);
        let mut data = Vec::with_capacity((w * h * 3) as usize);
        for y in 0..h {
            for x in 0..w {
                let p = self.pixels[((y / factor) * self.width + x / factor) as usize];
                data.extend_from_slice(&p);
            }
        }
        let file = fs::File::create(path).expect("create the scaled image");
        let mut encoder = png::Encoder::new(std::io::BufWriter::new(file), w, h);
        encoder.set_color(png::ColorType::Rgb);
        encoder.set_depth(png::BitDepth::Eight);
        let mut writer = encoder.write_header().expect("a PNG header");
        writer.write_image_data(&data).expect("write the scaled image");
    }
}

/// The distinct frames `grab` returns over `span`, grabbed every 100 ms: for something a
/// window shows only for a while (a toast, 6 s), read afterwards, so that an OCR slower than
/// its life (seconds a read on a loaded machine) cannot miss it. A frame equal to the one
/// before is not kept.
#[allow(dead_code)] // each suite includes the support module; not every suite grabs bursts
pub fn distinct_frames(mut grab: impl FnMut() -> Image, span: std::time::Duration) -> Vec<Image> {
    let end = std::time::Instant::now() + span;
    let mut frames: Vec<Image> = Vec::new();
    while std::time::Instant::now() < end {
        let frame = grab();
        if frames.last().is_none_or(|last| last.pixels != frame.pixels) {
            frames.push(frame);
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    frames
}

/// The text `tesseract` reads in the top `rows` pixel rows of `image` (scaled up first), with
/// page segmentation mode `psm` (6: a block of text, 11: sparse text).
pub fn ocr(image: &Image, dir: &Path, name: &str, rows: u32, psm: &str) -> String {
    let scaled = dir.join(format!("{name}.x3.png"));
    image.write_scaled(&scaled, 3, rows);
    let out = Command::new("timeout")
        .args(["60", "tesseract"])
        .arg(&scaled)
        .args(["stdout", "--psm", psm])
        .stdin(Stdio::null())
        .output()
        .expect("run tesseract (apt-get install tesseract-ocr)");
    assert!(out.status.success(), "tesseract failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}
