//! The packaging files: the desktop entry and AppStream metainfo pass their validators, every
//! icon PNG has the size its folder names, and `scripts/install` puts the built binary and all
//! the files beside it under a prefix (and takes them away again). Building the .deb itself
//! (`scripts/package-deb`) is too slow for CI and is not run here.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("app/ has a parent").to_path_buf()
}

/// Runs a validator that scripts/test installs; a missing tool fails with what to install.
fn run_tool(program: &str, package: &str, args: &[&str]) -> Output {
    match Command::new(program).args(args).current_dir(root()).output() {
        Ok(output) => output,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => panic!(
            "`{program}` is not installed: install the Debian package `{package}` \
             (scripts/test does this when run as root)"
        ),
        Err(e) => panic!("cannot run {program}: {e}"),
    }
}

fn describe(output: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        output.status.code(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

#[test]
fn desktop_entry_is_valid() {
    let out = run_tool("desktop-file-validate", "desktop-file-utils", &["packaging/berth.desktop"]);
    // desktop-file-validate exits 0 on warnings too; it prints nothing for a clean file.
    assert!(
        out.status.success() && out.stdout.is_empty() && out.stderr.is_empty(),
        "desktop-file-validate packaging/berth.desktop: {}",
        describe(&out)
    );
    let text = std::fs::read_to_string(root().join("packaging/berth.desktop")).unwrap();
    for line in [
        "Exec=berth",
        "Icon=berth",
        "Terminal=false",
        "Categories=System;TerminalEmulator;",
        // The window sets its X11 class with `with_name("berth", "berth")`.
        "StartupWMClass=berth",
    ] {
        assert!(text.lines().any(|l| l == line), "berth.desktop lacks {line:?}:\n{text}");
    }
}

#[test]
fn metainfo_is_valid() {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(root().join("packaging")).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if name.ends_with(".metainfo.xml") {
            files.push(format!("packaging/{name}"));
        }
    }
    assert_eq!(files.len(), 1, "expected one metainfo file in packaging/: {files:?}");
    let out = run_tool("appstreamcli", "appstream", &["validate", "--no-net", &files[0]]);
    assert!(
        out.status.success(),
        "appstreamcli validate --no-net {}: {}",
        files[0],
        describe(&out)
    );
    let text = std::fs::read_to_string(root().join(&files[0])).unwrap();
    assert!(text.contains(r#"<launchable type="desktop-id">berth.desktop</launchable>"#));
    assert!(text.contains("<binary>berth</binary>"));
}

/// Width and height from a PNG's IHDR chunk.
fn png_size(path: &Path) -> (u32, u32) {
    let bytes = std::fs::read(path).unwrap();
    assert!(
        bytes.len() > 24 && bytes.starts_with(b"\x89PNG\r\n\x1a\n") && &bytes[12..16] == b"IHDR",
        "{} is not a PNG",
        path.display()
    );
    let be = |at: usize| u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap());
    (be(16), be(20))
}

#[test]
fn icon_pngs_match_their_folders() {
    let hicolor = root().join("packaging/icons/hicolor");
    let mut sizes = Vec::new();
    for entry in std::fs::read_dir(&hicolor).unwrap() {
        let folder = entry.unwrap().file_name().into_string().unwrap();
        let (w, h) = folder.split_once('x').expect("folder named WxH");
        let want: (u32, u32) = (w.parse().unwrap(), h.parse().unwrap());
        let png = hicolor.join(&folder).join("apps/berth.png");
        assert_eq!(png_size(&png), want, "{}", png.display());
        sizes.push(want.0);
    }
    sizes.sort_unstable();
    assert_eq!(sizes, [16, 32, 48, 64, 128, 256]);
    assert!(root().join("packaging/icons/berth.svg").is_file());
}

/// The files `scripts/install --prefix P` owns, relative to P.
const INSTALLED: &[&str] = &[
    "bin/berth",
    "lib/systemd/user/berth-server.service",
    "share/applications/berth.desktop",
    "share/bash-completion/completions/berth",
    "share/fish/vendor_completions.d/berth.fish",
    "share/icons/hicolor/128x128/apps/berth.png",
    "share/icons/hicolor/16x16/apps/berth.png",
    "share/icons/hicolor/256x256/apps/berth.png",
    "share/icons/hicolor/32x32/apps/berth.png",
    "share/icons/hicolor/48x48/apps/berth.png",
    "share/icons/hicolor/64x64/apps/berth.png",
    "share/icons/hicolor/scalable/apps/berth.svg",
    "share/man/man1/berth.1",
    "share/metainfo/io.github.berth.Berth.metainfo.xml",
    "share/zsh/site-functions/_berth",
];

fn files_under(dir: &Path) -> Vec<String> {
    fn walk(base: &Path, dir: &Path, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(base, &path, out);
            } else {
                out.push(path.strip_prefix(base).unwrap().to_string_lossy().into_owned());
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

fn install(args: &[&str]) -> Output {
    let out = Command::new("bash")
        .arg(root().join("scripts/install"))
        .args(args)
        .current_dir(root())
        .output()
        .expect("run scripts/install");
    assert!(out.status.success(), "scripts/install {args:?}: {}", describe(&out));
    out
}

#[test]
fn install_script_installs_and_uninstalls_under_a_prefix() {
    let prefix = tempfile::tempdir().unwrap();
    let p = prefix.path().to_str().unwrap();
    let binary = env!("CARGO_BIN_EXE_berth");

    install(&["--prefix", p, "--binary", binary]);
    // Twice: idempotent, same files.
    let second = install(&["--prefix", p, "--binary", binary]);
    assert_eq!(files_under(prefix.path()), INSTALLED, "{}", describe(&second));
    assert!(String::from_utf8_lossy(&second.stdout).contains("installed "));

    let unit = std::fs::read_to_string(prefix.path().join(INSTALLED[1])).unwrap();
    let exec = format!("ExecStart={p}/bin/berth server");
    assert!(unit.lines().any(|l| l == exec), "unit does not run the installed binary:\n{unit}");
    let man = std::fs::read_to_string(prefix.path().join("share/man/man1/berth.1")).unwrap();
    assert!(man.contains(".TH"), "man page is not roff:\n{man}");
    let bash = prefix.path().join("share/bash-completion/completions/berth");
    let syntax = Command::new("bash").arg("-n").arg(&bash).output().unwrap();
    assert!(syntax.status.success(), "bash -n on the completions: {}", describe(&syntax));

    install(&["--prefix", p, "--uninstall"]);
    assert_eq!(files_under(prefix.path()), Vec::<String>::new());
}

/// The binary links no display library: X11, xcb, Wayland, xkbcommon, Vulkan and GL are all
/// opened at run time, so it starts (and runs headless, or on the other display protocol) on
/// a machine without them. `ldd` lists what the dynamic loader would have to find.
#[test]
fn the_binary_links_no_display_library() {
    let out = run_tool("ldd", "libc-bin", &[env!("CARGO_BIN_EXE_berth")]);
    assert!(out.status.success(), "{}", describe(&out));
    let linked = String::from_utf8_lossy(&out.stdout);
    for lib in ["libwayland", "libX11", "libxcb", "libxkbcommon", "libvulkan", "libGL", "libEGL"] {
        assert!(!linked.contains(lib), "berth links {lib}:\n{linked}");
    }
    assert!(linked.contains("libc.so"), "ldd lists the C library: {linked}");
}
