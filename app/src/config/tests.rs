//! Tests of the config file: defaults, every value, every kind of error and its line.

use super::keymap::Chord;
use super::*;
use winit::keyboard::{Key, ModifiersState};

fn ok(text: &str) -> Config {
    parse(text, "config.toml").unwrap_or_else(|e| panic!("{text:?}: {e}"))
}

fn err(text: &str) -> String {
    match parse(text, "config.toml") {
        Ok(_) => panic!("{text:?} parsed"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn an_empty_file_and_a_missing_file_are_the_defaults() {
    assert_eq!(ok(""), Config::default());
    assert_eq!(ok("# nothing\n\n"), Config::default());
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(load(&dir.path().join("absent.toml")).unwrap(), Config::default());
}

#[test]
fn the_defaults_are_todays_behaviour() {
    let c = Config::default();
    assert_eq!(c.font_family, "JetBrains Mono");
    assert_eq!(c.font_size, 15.0);
    assert_eq!(c.line_height, 1.0);
    assert!(!c.ligatures);
    assert_eq!(c.palette, Palette::dark());
    assert_eq!(c.scrollback_lines, berth_engine::terminal::DEFAULT_SCROLLBACK);
    assert_eq!(c.cursor_style, CursorStyle::Block);
    assert!(!c.cursor_blink);
    assert_eq!(c.keymap, Keymap::default());
    assert_eq!(c.notifications.policy(), berth_server::notifications::DesktopPolicy::AsAsked);
}

#[test]
fn the_default_file_parses_to_the_defaults_and_names_every_key() {
    let text = default_file();
    assert_eq!(ok(&text), Config::default());
    for key in [
        "font_family",
        "font_size",
        "line_height",
        "ligatures",
        "theme",
        "scrollback_lines",
        "cursor_style",
        "cursor_blink",
        "[colors]",
        "[notifications]",
        "desktop",
        "when",
        "[keybindings]",
    ] {
        assert!(text.contains(key), "the default file does not mention {key}");
    }
    for action in Action::ALL {
        assert!(text.contains(&format!("\"{}\"", action.name())), "{} missing", action.name());
    }
    // Uncommenting the listed bindings changes nothing but their order.
    let uncommented: String = text
        .lines()
        .map(|l| if l.starts_with("# \"") { &l[2..] } else { l })
        .collect::<Vec<_>>()
        .join("\n");
    let c = ok(&uncommented);
    for b in DEFAULT_BINDINGS {
        let chord = Chord { mods: b.mods, key: b.key };
        assert!(c.keymap.chords_of(b.action).contains(&chord), "{}", b.label);
    }
}

#[test]
fn every_value_is_read() {
    let c = ok(r##"
font_family = "DejaVu Sans Mono"
font_size = 24
line_height = 1.25
ligatures = true
theme = "light"
scrollback_lines = 20000
cursor_style = "beam"
cursor_blink = true

[colors]
background = "#101010"
red = "#ff1234"
bright_white = "#fefefe"

[notifications]
desktop = true
when = "always"

[keybindings]
"ctrl+shift+e" = "split_down"
"alt+s" = "split_right"
"ctrl+shift+w" = "none"
"##);
    assert_eq!(c.font_family, "DejaVu Sans Mono");
    assert_eq!(c.font_size, 24.0);
    assert_eq!(c.line_height, 1.25);
    assert!(c.ligatures);
    assert_eq!(c.theme, Theme::Light);
    let light = Palette::light();
    assert_eq!(c.palette.fg, light.fg);
    assert_eq!(c.palette.bg, Rgb::hex(0x101010));
    assert_eq!(c.palette.ansi[1], Rgb::hex(0xff1234));
    assert_eq!(c.palette.ansi[15], Rgb::hex(0xfefefe));
    assert_eq!(c.palette.ansi[2], light.ansi[2]);
    assert_eq!(c.scrollback_lines, 20000);
    assert_eq!(c.cursor_style, CursorStyle::Beam);
    assert!(c.cursor_blink);
    assert_eq!(c.notifications.policy(), berth_server::notifications::DesktopPolicy::Always);
    let cs = ModifiersState::CONTROL | ModifiersState::SHIFT;
    assert_eq!(c.keymap.action_for(Key::Character("E"), cs), Some(Action::SplitDown));
    assert_eq!(
        c.keymap.action_for(Key::Character("s"), ModifiersState::ALT),
        Some(Action::SplitRight)
    );
    assert_eq!(c.keymap.action_for(Key::Character("W"), cs), None);
    assert_eq!(ok("font_size = 14.5").font_size, 14.5);
    let off = ok("[notifications]\ndesktop = false\nwhen = \"always\"");
    assert_eq!(off.notifications.policy(), berth_server::notifications::DesktopPolicy::Off);
}

#[test]
fn the_ansi_list_sets_all_sixteen_and_names_win_over_it() {
    let list: Vec<String> = (0..16).map(|i| format!("\"#0000{i:02x}\"")).collect();
    let c = ok(&format!("[colors]\nansi = [{}]\nblue = \"#abcdef\"\n", list.join(", ")));
    assert_eq!(c.palette.ansi[0], Rgb::hex(0x000000));
    assert_eq!(c.palette.ansi[15], Rgb::hex(0x00000f));
    assert_eq!(c.palette.ansi[4], Rgb::hex(0xabcdef));
}

/// Each bad file, and what its one-line error must say (line first).
#[test]
fn every_error_names_its_line_and_key() {
    let cases: &[(&str, &str)] = &[
        ("font_size = 15\nfonts_size = 16\n", "config.toml line 2: unknown field `fonts_size`"),
        ("font_size = \"big\"\n", "config.toml line 1: font_size: invalid type"),
        ("\n\nfont_size = 200\n", "config.toml line 3: font_size: 200 is out of range"),
        ("font_size = 3\n", "line 1: font_size: 3 is out of range"),
        ("line_height = 5.0\n", "line 1: line_height: 5 is out of range"),
        ("scrollback_lines = -1\n", "line 1: scrollback_lines: -1 is out of range"),
        ("scrollback_lines = 1000001\n", "line 1: scrollback_lines: 1000001 is out of range"),
        ("theme = \"blue\"\n", "line 1: theme: unknown variant `blue`"),
        ("cursor_style = \"box\"\n", "line 1: cursor_style: unknown variant `box`"),
        ("ligatures = 1\n", "line 1: ligatures: invalid type"),
        ("[colors]\nbackground = \"#12345\"\n", "line 2: background: \"#12345\" is not a colour"),
        ("[colors]\n\nred = \"red\"\n", "line 3: red: \"red\" is not a colour"),
        ("[colors]\npurple = \"#123456\"\n", "line 2: unknown field `purple`"),
        ("[colors]\nansi = [\"#000000\"]\n", "line 2: ansi: expected 16 colours, found 1"),
        ("[notifications]\nwhen = \"sometimes\"\n", "line 2: when: unknown variant `sometimes`"),
        (
            "[keybindings]\n\"ctrl+shift+e\" = \"explode\"\n",
            "line 2: \"ctrl+shift+e\": unknown action \"explode\"",
        ),
        (
            "[keybindings]\n\"hyper+e\" = \"copy\"\n",
            "line 2: \"hyper+e\": chord \"hyper+e\": unknown modifier",
        ),
        ("[keybindings]\n\"ctrl+e\" = \"copy\"\n\"Ctrl+E\" = \"paste\"\n", "is bound twice"),
        ("font_size = 15\nfont_size = 16\n", "config.toml line 2: "),
        ("font_size = \n", "config.toml line 1: "),
        ("[colors\n", "config.toml line 1: "),
    ];
    for (text, want) in cases {
        let got = err(text);
        assert!(got.contains(want), "{text:?}\n  got:  {got}\n  want: {want}");
        assert!(!got.contains('\n'), "{text:?}: not one line: {got}");
        assert!(got.starts_with("config.toml line "), "{text:?}: no line: {got}");
    }
}

#[test]
fn the_path_honours_berth_config() {
    // Only checks the rule through a pure helper-free path: BERTH_CONFIG is read by `path()`,
    // which tests cannot set safely in a threaded harness; the e2e test covers it. Here the
    // load of an unreadable path (a directory) is a clear error without a line.
    let dir = tempfile::tempdir().unwrap();
    let e = load(dir.path()).unwrap_err();
    assert_eq!(e.line, None);
    assert!(e.to_string().contains("cannot read"), "{e}");
}

/// `servers`: socket paths and ssh addresses; a bad one, a repeat or too many is an error
/// naming the key and its line.
#[test]
fn servers_name_sockets_and_ssh_hosts() {
    let c = ok("servers = [\"/run/b/berth.sock\", \"ssh://me@devbox:2222\"]\n");
    assert_eq!(
        c.servers,
        vec![
            ServerAddress::Socket("/run/b/berth.sock".into()),
            ServerAddress::parse("ssh://me@devbox:2222").unwrap(),
        ]
    );
    let e = err("font_size = 15\nservers = [\"relative.sock\"]\n");
    assert!(e.contains("line 2") && e.contains("servers") && e.contains("absolute"), "{e}");
    let e = err("servers = [\"/a.sock\", \"/a.sock\"]\n");
    assert!(e.contains("named twice"), "{e}");
    let many: Vec<String> = (0..17).map(|i| format!("\"/s{i}.sock\"")).collect();
    let e = err(&format!("servers = [{}]\n", many.join(", ")));
    assert!(e.contains("at most 16"), "{e}");
    assert!(err("servers = \"/a.sock\"\n").contains("servers"));
}
