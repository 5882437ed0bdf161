//! Tests of the protocol's hardening (issue 13): size limits, request ids, and a bounded fuzz
//! of the decoder. In a file of their own so `protocol.rs` stays about the protocol.

use super::*;

/// Decodes a whole line and reports the error code, or "ok".
fn check(line: &str) -> String {
    match decode_request(line.as_bytes()) {
        Err((_, e)) => e.code().to_owned(),
        Ok(req) => match decode_method(&req.method, req.params) {
            Ok(_) => "ok".into(),
            Err(e) => e.code().to_owned(),
        },
    }
}

/// Regression: `pane.resize` to 65535×65535 was accepted and allocated until the server
/// aborted; sizes beyond the limits are refused with a message naming them.
#[test]
fn oversized_resizes_are_refused_naming_the_limit() {
    for method in ["pane.resize", "tab.resize"] {
        let key = if method == "pane.resize" { "pane_id" } else { "tab_id" };
        let id = if method == "pane.resize" { "pane_a" } else { "tab_a" };
        for (cols, rows, want) in [
            (65535u64, 65535u64, "BAD_REQUEST"),
            (70000, 24, "BAD_REQUEST"),
            (4001, 10, "BAD_REQUEST"),
            (2000, 1001, "BAD_REQUEST"),
            (1920, 540, "ok"),
            (80, 24, "ok"),
        ] {
            let line = json!({"jsonrpc":"2.0","id":1,"method":method,
                "params":{key:id,"cols":cols,"rows":rows}})
            .to_string();
            assert_eq!(check(&line), want, "{line}");
        }
    }
    let err = decode_method("pane.resize", json!({"pane_id":"pane_a","cols":65535,"rows":65535}))
        .unwrap_err();
    assert!(err.to_string().contains("at most 4000 cols, 2000 rows and 2000000 cells"), "{err}");
}

/// Regression: an integer id beyond 64 bits was echoed as a float (`1e20`), which the
/// client could not match to its request; it is refused, and 64-bit ids echo exactly.
#[test]
fn ids_beyond_64_bits_are_refused_and_64_bit_ids_echo_exactly() {
    let line = r#"{"jsonrpc":"2.0","id":100000000000000000000,"method":"server.info"}"#;
    match decode_request(line.as_bytes()) {
        Err((None, e @ CommandError::InvalidRequest(_))) => {
            assert!(e.to_string().contains("at most 64 bits"), "{e}")
        }
        other => panic!("{other:?}"),
    }
    for id in ["18446744073709551615", "-9223372036854775808", "1.5", "\"x\""] {
        let line = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"server.info"}}"#);
        let req = decode_request(line.as_bytes()).expect("decodes");
        let answer = encode_result(req.id.as_ref().unwrap(), json!({}));
        assert!(answer.contains(&format!(r#""id":{id}"#)), "{answer}");
    }
}

mod fuzz {
    use super::*;
    use crate::commands::Command;
    use proptest::prelude::*;

    /// Method names a client may send (the protocol's own table), and a few it may not.
    fn methods() -> Vec<&'static str> {
        super::super::METHODS.iter().copied().chain(["nope", ""]).collect()
    }

    /// A JSON value of hostile shapes: huge and negative numbers, long and odd strings,
    /// nesting.
    fn hostile_json() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            any::<f64>().prop_map(|f| json!(f)),
            Just(json!(65535)),
            Just(json!(0)),
            Just(json!(1e300)),
            "[a-z_]{0,12}".prop_map(Value::from),
            "(pane|tab|ws|notif)_[a-z0-9./-]{0,10}".prop_map(Value::from),
            ".{0,40}".prop_map(Value::from),
        ];
        leaf.prop_recursive(4, 48, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Value::from),
                prop::collection::btree_map(
                    prop_oneof![
                        Just("pane_id".to_owned()),
                        Just("tab_id".to_owned()),
                        Just("cols".to_owned()),
                        Just("rows".to_owned()),
                        Just("argv".to_owned()),
                        Just("ratio".to_owned()),
                        Just("layout".to_owned()),
                        Just("split".to_owned()),
                        Just("last".to_owned()),
                        Just("since".to_owned()),
                        Just("resume_argv".to_owned()),
                        Just("title".to_owned()),
                        "[a-z_]{1,8}",
                    ],
                    inner,
                    0..6,
                )
                .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, failure_persistence: None, ..ProptestConfig::default() })]

        /// Any bytes: an answer or an error with a stable code, never a panic.
        #[test]
        fn arbitrary_lines_never_panic_the_decoder(line in prop::collection::vec(any::<u8>(), 0..300)) {
            let _ = check(&String::from_utf8_lossy(&line));
            let _ = decode_request(&line);
        }

        /// Request-shaped lines with hostile params: decoding either succeeds or says what
        /// is wrong; a decoded size is always within the limits.
        #[test]
        fn hostile_params_decode_or_are_refused(
            method in prop::sample::select(methods()),
            params in hostile_json(),
            id in hostile_json(),
        ) {
            let line = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params })
                .to_string();
            match decode_request(line.as_bytes()) {
                Err((_, e)) => prop_assert!(!e.code().is_empty()),
                Ok(req) => match decode_method(&req.method, req.params) {
                    Err(e) => prop_assert!(!e.to_string().is_empty()),
                    Ok(Decoded::Command(Command::PaneResize { size, .. } | Command::TabResize { size, .. })) => {
                        prop_assert!(berth_engine::limits::check_size(u32::from(size.cols), u32::from(size.rows)).is_ok());
                    }
                    Ok(_) => {}
                },
            }
        }
    }
}
