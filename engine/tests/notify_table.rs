//! Table tests for OSC 9 / 99 / 777 notification parsing and the per-pane rate limiter.

use std::time::{Duration, Instant};

use berth_engine::notify::{
    activation_report, Admission, NotifyEvent, NotifyParser, RateLimiter, ShowWhen, Urgency,
    MAX_BODY_CHARS, MAX_PENDING_ASSEMBLIES, MAX_TITLE_CHARS,
};

/// Renders one event compactly: `show "title" "body"` plus only the non-default fields.
fn render(event: &NotifyEvent) -> String {
    match event {
        NotifyEvent::Show(n) => {
            let mut out = format!("show {:?} {:?}", n.title, n.body);
            if n.source != "osc99" {
                out += &format!(" src={}", n.source);
            }
            if let Some(id) = &n.kitty_id {
                out += &format!(" id={id}");
            }
            if n.urgency != Urgency::Normal {
                out += &format!(" u={:?}", n.urgency);
            }
            if n.only_when != ShowWhen::Always {
                out += &format!(" o={:?}", n.only_when);
            }
            if n.report_activation {
                out += " report";
            }
            if !n.focus_on_activation {
                out += " nofocus";
            }
            out
        }
        NotifyEvent::Close { kitty_id } => format!("close {kitty_id}"),
        NotifyEvent::Progress { state, percent } => match percent {
            Some(p) => format!("progress {state} {p}"),
            None => format!("progress {state} -"),
        },
        NotifyEvent::QueryReply(bytes) => format!("reply {:?}", String::from_utf8_lossy(bytes)),
    }
}

/// Feeds `steps` (OSC number, payload, milliseconds since start) to one fresh parser and
/// compares each step's rendered events (joined by " + ", "-" for none) with `expected`.
fn check(steps: &[(u16, &[u8], u64)], expected: &[&str]) {
    let t0 = Instant::now();
    let mut parser = NotifyParser::new();
    let got: Vec<String> = steps
        .iter()
        .map(|(osc, payload, ms)| {
            let events = parser.handle(*osc, payload, t0 + Duration::from_millis(*ms));
            if events.is_empty() {
                "-".to_owned()
            } else {
                events.iter().map(render).collect::<Vec<_>>().join(" + ")
            }
        })
        .collect();
    assert_eq!(got, expected, "steps: {steps:?}");
}

/// One OSC on a fresh parser.
fn check_one(cases: &[(u16, &[u8], &str)]) {
    for (osc, payload, expected) in cases {
        check(&[(*osc, payload, 0)], &[expected]);
    }
}

#[test]
fn notify_osc9_table() {
    check_one(&[
        (9, b"hello", r#"show "hello" "" src=osc9"#),
        (9, b"build done", r#"show "build done" "" src=osc9"#),
        (9, b"semi;colons;kept", r#"show "semi;colons;kept" "" src=osc9"#),
        (9, b"  spaced\nout\t ", r#"show "spaced out" "" src=osc9"#),
        (9, b"\x1b[31mred\x07", r#"show "[31mred" "" src=osc9"#),
        (9, b"v2 is out", r#"show "v2 is out" "" src=osc9"#),
        (9, b"2024 was a year", r#"show "2024 was a year" "" src=osc9"#),
        (9, b"", "-"),
        (9, b"   ", "-"),
        (9, b"\x1b\x07\x00", "-"),
        (9, b";", r#"show ";" "" src=osc9"#),
        (9, b"\xff\xfe garbage \xc3", "show \"\u{fffd}\u{fffd} garbage \u{fffd}\" \"\" src=osc9"),
        // ConEmu commands: progress, or nothing.
        (9, b"4;1;50", "progress 1 50"),
        (9, b"4;2;100", "progress 2 100"),
        (9, b"4;4;7", "progress 4 7"),
        (9, b"4;1;250", "progress 1 100"),
        (9, b"4;1;99999999999999999999", "progress 1 100"),
        (9, b"4;1", "progress 1 -"),
        (9, b"4;1;", "progress 1 -"),
        (9, b"4;1;x", "progress 1 -"),
        (9, b"4;0;50", "progress 0 -"),
        (9, b"4;0", "progress 0 -"),
        (9, b"4;3;40", "progress 3 -"),
        (9, b"4;5;50", "-"),
        (9, b"4;12;50", "-"),
        (9, b"4;", "-"),
        (9, b"4", "-"),
        (9, b"9;/home/u/code", "-"),
        (9, b"12", "-"),
        (9, b"5", "-"),
        (9, b"123;anything", "-"),
    ]);
}

#[test]
fn notify_osc777_table() {
    check_one(&[
        (777, b"notify;T;B", r#"show "T" "B" src=osc777"#),
        (777, b"notify;Build;all 3 passed", r#"show "Build" "all 3 passed" src=osc777"#),
        (
            777,
            b"notify;Title;body;with;semicolons",
            r#"show "Title" "body;with;semicolons" src=osc777"#,
        ),
        (777, b"notify;Title", r#"show "Title" "" src=osc777"#),
        (777, b"notify;Title;", r#"show "Title" "" src=osc777"#),
        (777, b"notify;;only body", r#"show "only body" "" src=osc777"#),
        (777, b"notify;;", "-"),
        (777, b"notify;", "-"),
        (777, b"notify", "-"),
        (777, b";;;", "-"),
        (777, b"", "-"),
        (777, b"notify;multi\nline;b1\r\nb2", r#"show "multi line" "b1\nb2" src=osc777"#),
        (777, b"notify;\x1b]0;x\x07T;\x9bbody", "show \"]0\" \"xT;\u{fffd}body\" src=osc777"),
        (777, b"notify;\x1b[1mT\x1b[0m;\x07b", r#"show "[1mT[0m" "b" src=osc777"#),
        (777, b"precmd", "-"),
        (777, b"preexec;ls", "-"),
        (777, b"NOTIFY;T;B", "-"),
        (777, b"notifyx;T;B", "-"),
    ]);
}

#[test]
fn notify_osc99_single_chunk_table() {
    check_one(&[
        (99, b";Hello world", r#"show "Hello world" """#),
        (99, b"i=1:d=0;Title", "-"),
        (99, b"i=1;Title", r#"show "Title" "" id=1"#),
        (99, b"i=1:p=body;Only body", r#"show "Only body" "" id=1"#),
        (99, b"i=x:e=1;SGVsbG8gd29ybGQ=", r#"show "Hello world" "" id=x"#),
        (99, b"e=1;SGVsbG8", r#"show "Hello" """#),
        (99, b"e=0;SGVsbG8=", r#"show "SGVsbG8=" """#),
        (99, b"e=1;SGVsbG8!", "-"),
        (99, b"e=1;S", "-"),
        (99, b"e=1;/w==", "show \"\u{fffd}\" \"\""),
        (99, b"e=1;//79", "show \"\u{fffd}\u{fffd}\u{fffd}\" \"\""),
        (99, b"u=0;low", r#"show "low" "" u=Low"#),
        (99, b"u=1;normal", r#"show "normal" """#),
        (99, b"u=2;crit", r#"show "crit" "" u=Critical"#),
        (99, b"u=7;weird", r#"show "weird" """#),
        (99, b"o=unfocused;x", r#"show "x" "" o=Unfocused"#),
        (99, b"o=invisible;x", r#"show "x" "" o=Invisible"#),
        (99, b"o=always;x", r#"show "x" """#),
        (99, b"o=sometimes;x", r#"show "x" """#),
        (99, b"a=report;x", r#"show "x" "" report"#),
        (99, b"a=focus,report;x", r#"show "x" "" report"#),
        (99, b"a=-focus;x", r#"show "x" "" nofocus"#),
        (99, b"a=-focus,report;x", r#"show "x" "" report nofocus"#),
        (99, b"a=-report,+focus,dance;x", r#"show "x" """#),
        (99, b"i=a/b c\x1b;x", r#"show "x" "" id=abc"#),
        (99, b"i=***;x", r#"show "x" """#),
        (99, b"i=A-z_0.9+;x", r#"show "x" "" id=A-z_0.9+"#),
        (99, b"z=9:Q=1;unknown keys", r#"show "unknown keys" """#),
        (99, b"::;empty parts", r#"show "empty parts" """#),
        (99, b"i=1:p=icon;iVBORw0KGgo=", "-"),
        (99, b"i=1:p=buttons;Yes", "-"),
        (99, b"i=1:p=alive;", "-"),
        (99, b"p=title;semi;colon", r#"show "semi;colon" """#),
        (99, b"d=1;multi\nline", r#"show "multi line" """#),
        // Malformed: metadata without '=', no payload, nothing at all.
        (99, b"Hello", "-"),
        (99, b"i=1:broken;x", "-"),
        (99, b"", "-"),
        (99, b";", "-"),
        (99, b";;", r#"show ";" """#),
        (99, b"i=1", "-"),
        (99, b"\xff\x00\x1b;\xff", "-"),
        (99, b"i=g;\xff\x00\x1bok\x9b", "show \"\u{fffd}ok\u{fffd}\" \"\" id=g"),
        // Close and query.
        (99, b"i=7:p=close;", "close 7"),
        (99, b"i=7:p=close", "close 7"),
        (99, b"p=close;", "-"),
        (
            99,
            b"i=q1:p=?;",
            r#"reply "\u{1b}]99;i=q1:p=?;a=focus,report:o=always,unfocused,invisible:u=0,1,2:p=title,body,?,close\u{1b}\\""#,
        ),
        (
            99,
            b"p=?;",
            r#"reply "\u{1b}]99;i=0:p=?;a=focus,report:o=always,unfocused,invisible:u=0,1,2:p=title,body,?,close\u{1b}\\""#,
        ),
        (
            99,
            b"i=\x1b]evil\x07:p=?;",
            r#"reply "\u{1b}]99;i=evil:p=?;a=focus,report:o=always,unfocused,invisible:u=0,1,2:p=title,body,?,close\u{1b}\\""#,
        ),
    ]);
}

#[test]
fn notify_osc99_chunked_table() {
    // kitty's own example: title, then body with the same id.
    check(
        &[(99, b"i=1:d=0;Hello world", 0), (99, b"i=1:d=1:p=body;This is cool", 10)],
        &["-", r#"show "Hello world" "This is cool" id=1"#],
    );
    // d defaults to 1; title parts concatenate; body parts concatenate.
    check(
        &[
            (99, b"i=1:d=0;Hello ", 0),
            (99, b"i=1:d=0:p=body;line ", 1),
            (99, b"i=1:d=0;world", 2),
            (99, b"i=1:p=body;two", 3),
        ],
        &["-", "-", "-", r#"show "Hello world" "line two" id=1"#],
    );
    // base64 split inside a quantum across chunks, mixed with plain text.
    check(
        &[(99, b"i=b:d=0:e=1;SGVsb", 0), (99, b"i=b:d=0:e=1;G8g", 1), (99, b"i=b;world", 2)],
        &["-", "-", r#"show "Hello world" "" id=b"#],
    );
    // Invalid base64 in any chunk drops the whole notification, including later chunks.
    check(
        &[(99, b"i=1:d=0;Title", 0), (99, b"i=1:d=0:e=1;!!!!", 1), (99, b"i=1:p=body;Body", 2)],
        &["-", "-", "-"],
    );
    // Metadata from later chunks wins; earlier settings persist.
    check(
        &[(99, b"i=m:d=0:u=2:a=report;T", 0), (99, b"i=m:o=unfocused:a=-focus:p=body;B", 1)],
        &["-", r#"show "T" "B" id=m u=Critical o=Unfocused report nofocus"#],
    );
    // Interleaved ids assemble independently.
    check(
        &[
            (99, b"i=a:d=0;Alpha", 0),
            (99, b"i=b:d=0;Beta", 1),
            (99, b"i=a:p=body;one", 2),
            (99, b"i=b:p=body;two", 3),
        ],
        &["-", "-", r#"show "Alpha" "one" id=a"#, r#"show "Beta" "two" id=b"#],
    );
    // The anonymous slot chunks too.
    check(&[(99, b"d=0;Anon", 0), (99, b"p=body;ymous", 1)], &["-", r#"show "Anon" "ymous""#]);
    // After done, the same id starts afresh: an update the caller applies by kitty_id.
    check(
        &[(99, b"i=u;First", 0), (99, b"i=u;Second", 1000)],
        &[r#"show "First" "" id=u"#, r#"show "Second" "" id=u"#],
    );
    // An unknown payload type still counts for d and metadata; its payload is ignored.
    check(
        &[(99, b"i=1:d=0;Title", 0), (99, b"i=1:p=icon:u=0;iVBORw0KGgo=", 1)],
        &["-", r#"show "Title" "" id=1 u=Low"#],
    );
    // close drops a pending assembly; its later chunks start a new one.
    check(
        &[(99, b"i=c:d=0;Old", 0), (99, b"i=c:p=close;", 1), (99, b"i=c:p=body;New", 2)],
        &["-", "close c", r#"show "New" "" id=c"#],
    );
    // A query in the middle of an assembly does not disturb it.
    check(
        &[(99, b"i=1:d=0;Title", 0), (99, b"i=2:p=?;", 1), (99, b"i=1:p=body;Body", 2)],
        &[
            "-",
            r#"reply "\u{1b}]99;i=2:p=?;a=focus,report:o=always,unfocused,invisible:u=0,1,2:p=title,body,?,close\u{1b}\\""#,
            r#"show "Title" "Body" id=1"#,
        ],
    );
    // A malformed chunk is ignored and leaves the assembly alone.
    check(
        &[(99, b"i=1:d=0;Title", 0), (99, b"i=1:oops;junk", 1), (99, b"i=1:p=body;Body", 2)],
        &["-", "-", r#"show "Title" "Body" id=1"#],
    );
}

#[test]
fn notify_osc99_abandoned_assembly_expires() {
    // 29.999 s after the last chunk the assembly is alive; 30 s after, it is gone, and the
    // late body chunk becomes a notification on its own (the body promoted to the title).
    check(
        &[(99, b"i=1:d=0;Title", 0), (99, b"i=1:d=0;!", 29_999), (99, b"i=1:p=body;Body", 59_998)],
        &["-", "-", r#"show "Title!" "Body" id=1"#],
    );
    check(
        &[(99, b"i=1:d=0;Title", 0), (99, b"i=1:p=body;Body", 30_000)],
        &["-", r#"show "Body" "" id=1"#],
    );
    // Expiry happens on any call, so abandoned assemblies do not pile up.
    let t0 = Instant::now();
    let mut parser = NotifyParser::new();
    for i in 0..10 {
        parser.handle(99, format!("i={i}:d=0;x").as_bytes(), t0);
    }
    assert_eq!(parser.pending_assemblies(), 10);
    parser.handle(9, b"unrelated", t0 + Duration::from_secs(31));
    assert_eq!(parser.pending_assemblies(), 0);
}

#[test]
fn notify_osc99_pending_ids_are_bounded() {
    let t0 = Instant::now();
    let at = |ms: u64| t0 + Duration::from_millis(ms);
    let mut parser = NotifyParser::new();
    for i in 0..=MAX_PENDING_ASSEMBLIES as u64 {
        let events = parser.handle(99, format!("i=id{i}:d=0;Title {i}").as_bytes(), at(i));
        assert!(events.is_empty());
    }
    assert_eq!(parser.pending_assemblies(), MAX_PENDING_ASSEMBLIES);
    // id0, the least recently updated, was evicted: its body arrives alone.
    let events = parser.handle(99, b"i=id0:p=body;Body 0", at(100));
    assert_eq!(events.iter().map(render).collect::<Vec<_>>(), [r#"show "Body 0" "" id=id0"#]);
    // id1 is still assembled.
    let events = parser.handle(99, b"i=id1:p=body;Body 1", at(101));
    assert_eq!(
        events.iter().map(render).collect::<Vec<_>>(),
        [r#"show "Title 1" "Body 1" id=id1"#]
    );
    // Thousands of distinct ids never grow the state past the bound.
    for i in 0..5000u64 {
        parser.handle(99, format!("i=flood{i}:d=0;x").as_bytes(), at(200 + i));
    }
    assert_eq!(parser.pending_assemblies(), MAX_PENDING_ASSEMBLIES);
}

#[test]
fn notify_osc99_oversized_assembly_is_dropped() {
    let t0 = Instant::now();
    let mut parser = NotifyParser::new();
    let chunk = format!("i=big:d=0;{}", "x".repeat(4096));
    // 16 chunks of 4 KiB fill 64 KiB exactly; the 17th crosses the bound.
    for _ in 0..17 {
        assert!(parser.handle(99, chunk.as_bytes(), t0).is_empty());
    }
    // The rest of the notification is swallowed, and the end of it shows nothing.
    assert!(parser.handle(99, b"i=big:p=body;tail", t0).is_empty());
    assert_eq!(parser.pending_assemblies(), 0);
    // Exactly at the bound it is still shown, title cut to its limit.
    for _ in 0..15 {
        parser.handle(99, chunk.as_bytes(), t0);
    }
    let last = format!("i=big;{}", "x".repeat(4096));
    let events = parser.handle(99, last.as_bytes(), t0);
    let [NotifyEvent::Show(n)] = events.as_slice() else { panic!("expected one Show: {events:?}") };
    assert_eq!(n.title.chars().count(), MAX_TITLE_CHARS);
    assert!(n.title.ends_with('…'));
}

#[test]
fn notify_huge_and_garbage_payloads_are_bounded() {
    let t0 = Instant::now();
    let mut parser = NotifyParser::new();
    // Over the payload bound: dropped whole.
    let huge = "x".repeat(9 * 1024);
    for osc in [9, 99, 777] {
        let payload = if osc == 777 { format!("notify;{huge}") } else { huge.clone() };
        assert!(parser.handle(osc, payload.as_bytes(), t0).is_empty(), "osc {osc}");
    }
    // Under it: bounded by characters.
    let long_title = "é".repeat(4000);
    let events = parser.handle(9, long_title.as_bytes(), t0);
    let [NotifyEvent::Show(n)] = events.as_slice() else { panic!("{events:?}") };
    assert_eq!(n.title.chars().count(), MAX_TITLE_CHARS);
    let long_body = format!("notify;T;{}", "b".repeat(8000));
    let events = parser.handle(777, long_body.as_bytes(), t0);
    let [NotifyEvent::Show(n)] = events.as_slice() else { panic!("{events:?}") };
    assert_eq!(n.body.chars().count(), MAX_BODY_CHARS);
    // Other OSC numbers are not ours.
    assert!(parser.handle(0, b"title", t0).is_empty());
    assert!(parser.handle(7, b"file:///tmp", t0).is_empty());
}

#[test]
fn notify_activation_report_bytes() {
    assert_eq!(activation_report(Some("abc")), b"\x1b]99;i=abc;\x1b\\");
    assert_eq!(activation_report(None), b"\x1b]99;i=0;\x1b\\");
    assert_eq!(activation_report(Some("\x1b]x")), b"\x1b]99;i=x;\x1b\\");
    assert_eq!(activation_report(Some("")), b"\x1b]99;i=0;\x1b\\");
}

#[test]
fn notify_flood_is_rate_limited_to_a_burst_and_one_summary() {
    let t0 = Instant::now();
    let mut parser = NotifyParser::new();
    let mut limiter = RateLimiter::default();
    let (mut shown, mut summaries) = (0u64, Vec::new());
    // 5000 OSC 9 within one simulated second; the caller checks for a summary after each.
    for i in 0..5000u64 {
        let now = t0 + Duration::from_micros(i * 200);
        for event in parser.handle(9, format!("message {i}").as_bytes(), now) {
            assert!(matches!(event, NotifyEvent::Show(_)));
            if limiter.admit(now) == Admission::Allow {
                shown += 1;
            }
        }
        summaries.extend(limiter.take_suppressed_summary(now));
    }
    assert_eq!(shown, 5);
    assert!(summaries.is_empty(), "no summary while the flood is young: {summaries:?}");
    // The flood stopped: a summary is due after the quiet period, exactly once.
    let due = limiter.next_summary_due().expect("a summary is pending");
    assert_eq!(limiter.take_suppressed_summary(due - Duration::from_millis(1)), None);
    assert_eq!(limiter.take_suppressed_summary(due), Some(4995));
    assert_eq!(limiter.take_suppressed_summary(due + Duration::from_secs(60)), None);
    assert_eq!(limiter.next_summary_due(), None);
    // After quiet, the bucket is full again.
    let later = due + Duration::from_secs(10);
    let allowed = (0..10).filter(|_| limiter.admit(later) == Admission::Allow).count();
    assert_eq!(allowed, 5);
}

#[test]
fn notify_sustained_flood_summarises_every_few_seconds() {
    let t0 = Instant::now();
    let mut limiter = RateLimiter::default();
    let (mut shown, mut summaries) = (0u64, Vec::new());
    // 100 notifications a second for 20 seconds.
    for i in 0..2000u64 {
        let now = t0 + Duration::from_millis(i * 10);
        if limiter.admit(now) == Admission::Allow {
            shown += 1;
        }
        summaries.extend(limiter.take_suppressed_summary(now));
    }
    // Burst plus one per 2 s; a summary every 5 s of flood.
    assert!((5..=15).contains(&shown), "shown {shown}");
    assert!((3..=4).contains(&summaries.len()), "summaries {summaries:?}");
    let end = t0 + Duration::from_secs(30);
    summaries.extend(limiter.take_suppressed_summary(end));
    assert_eq!(summaries.iter().sum::<u64>() + shown, 2000);
}

mod never_panics {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn notify_arbitrary_payloads_never_panic(
            steps in proptest::collection::vec(
                (prop_oneof![Just(9u16), Just(99u16), Just(777u16)],
                 proptest::collection::vec(any::<u8>(), 0..300),
                 0u64..40_000),
                1..20)
        ) {
            let t0 = Instant::now();
            let mut parser = NotifyParser::new();
            for (osc, payload, ms) in steps {
                for event in parser.handle(osc, &payload, t0 + Duration::from_millis(ms)) {
                    if let NotifyEvent::Show(n) = event {
                        prop_assert!(!n.title.is_empty());
                        prop_assert!(n.title.chars().count() <= MAX_TITLE_CHARS);
                        prop_assert!(n.body.chars().count() <= MAX_BODY_CHARS);
                        prop_assert!(!n.title.chars().any(|c| c.is_control()));
                        prop_assert!(!n.body.chars().any(|c| c.is_control() && c != '\n'));
                    }
                }
                prop_assert!(parser.pending_assemblies() <= MAX_PENDING_ASSEMBLIES);
            }
        }

        #[test]
        fn notify_kitty_like_payloads_never_panic(
            meta in "([a-zA-Z]=[a-zA-Z0-9?,+\\-=]{0,8}:?){0,6}",
            payload in "[ -~\\x1b\\x07\u{80}-\u{3ff}]{0,200}",
        ) {
            let mut parser = NotifyParser::new();
            let raw = format!("{meta};{payload}");
            let _ = parser.handle(99, raw.as_bytes(), Instant::now());
        }
    }
}
