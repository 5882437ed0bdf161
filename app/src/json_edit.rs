//! Minimal edits of a JSON document's text: where each value, member and item lies (byte
//! ranges), and edits that add or take out members and items while every other byte of the
//! file stays as the user wrote it (key order, spacing, numbers too big for an `f64`).
//!
//! `berth hook install` uses it so that an install changes only the lines of Berth's own hooks
//! and an uninstall takes back exactly those. It parses only text that `serde_json` has already
//! accepted (the caller checks), and it must not reformat anything it does not add or remove.

use std::ops::Range;

use serde_json::Value;

/// One value of the document and where it lies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    /// Its bytes in the text.
    pub span: Range<usize>,
    /// What it is.
    pub kind: Kind,
}

/// What a [`Node`] is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    /// An object's members, in the file's order.
    Object(Vec<Member>),
    /// An array's items.
    Array(Vec<Node>),
    /// A string, number, `true`, `false` or `null`.
    Scalar,
}

/// One member of an object: its key and value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    /// The key, unescaped.
    pub key: String,
    /// Where the member starts (its key's opening quote).
    pub start: usize,
    /// Its value.
    pub value: Node,
}

impl Member {
    fn span(&self) -> Range<usize> {
        self.start..self.value.span.end
    }
}

impl Node {
    /// The member named `key`, if this is an object that has one.
    pub fn member(&self, key: &str) -> Option<&Member> {
        match &self.kind {
            Kind::Object(members) => members.iter().find(|m| m.key == key),
            _ => None,
        }
    }

    /// The value as `serde_json` reads it.
    pub fn value(&self, text: &str) -> Value {
        serde_json::from_str(&text[self.span.clone()]).unwrap_or(Value::Null)
    }

    /// The spans of its children (members or items), in order.
    fn children(&self) -> Vec<Range<usize>> {
        match &self.kind {
            Kind::Object(members) => members.iter().map(Member::span).collect(),
            Kind::Array(items) => items.iter().map(|i| i.span.clone()).collect(),
            Kind::Scalar => Vec::new(),
        }
    }
}

/// Parses `text` (JSON that `serde_json` accepted) into nodes with their spans.
pub fn parse(text: &str) -> Result<Node, String> {
    let mut p = Parser { b: text.as_bytes(), at: 0, text };
    p.ws();
    let node = p.value(0)?;
    p.ws();
    if p.at != p.b.len() {
        return Err(format!("unexpected text at byte {}", p.at));
    }
    Ok(node)
}

/// The deepest nesting parsed (serde_json's own limit is 128).
const MAX_DEPTH: usize = 128;

struct Parser<'a> {
    b: &'a [u8],
    at: usize,
    text: &'a str,
}

impl Parser<'_> {
    fn ws(&mut self) {
        while self.b.get(self.at).is_some_and(|c| matches!(c, b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    fn eat(&mut self, c: u8) -> Result<(), String> {
        if self.b.get(self.at) == Some(&c) {
            self.at += 1;
            Ok(())
        } else {
            Err(format!("expected {:?} at byte {}", c as char, self.at))
        }
    }

    fn string(&mut self) -> Result<Range<usize>, String> {
        let start = self.at;
        self.eat(b'"')?;
        loop {
            match self.b.get(self.at) {
                None => return Err("unterminated string".into()),
                Some(b'\\') => self.at += 2,
                Some(b'"') => {
                    self.at += 1;
                    return Ok(start..self.at);
                }
                Some(_) => self.at += 1,
            }
        }
    }

    fn value(&mut self, depth: usize) -> Result<Node, String> {
        if depth > MAX_DEPTH {
            return Err("nested too deeply".into());
        }
        let start = self.at;
        match self.b.get(self.at) {
            Some(b'{') => {
                self.at += 1;
                let mut members = Vec::new();
                self.ws();
                if self.b.get(self.at) != Some(&b'}') {
                    loop {
                        self.ws();
                        let key = self.string()?;
                        let key_text: String = serde_json::from_str(&self.text[key.clone()])
                            .map_err(|e| e.to_string())?;
                        self.ws();
                        self.eat(b':')?;
                        self.ws();
                        let value = self.value(depth + 1)?;
                        members.push(Member { key: key_text, start: key.start, value });
                        self.ws();
                        if self.b.get(self.at) == Some(&b',') {
                            self.at += 1;
                            continue;
                        }
                        break;
                    }
                }
                self.eat(b'}')?;
                Ok(Node { span: start..self.at, kind: Kind::Object(members) })
            }
            Some(b'[') => {
                self.at += 1;
                let mut items = Vec::new();
                self.ws();
                if self.b.get(self.at) != Some(&b']') {
                    loop {
                        self.ws();
                        items.push(self.value(depth + 1)?);
                        self.ws();
                        if self.b.get(self.at) == Some(&b',') {
                            self.at += 1;
                            continue;
                        }
                        break;
                    }
                }
                self.eat(b']')?;
                Ok(Node { span: start..self.at, kind: Kind::Array(items) })
            }
            Some(b'"') => Ok(Node { span: self.string()?, kind: Kind::Scalar }),
            Some(_) => {
                while self.b.get(self.at).is_some_and(|c| {
                    !matches!(c, b',' | b']' | b'}' | b' ' | b'\t' | b'\n' | b'\r')
                }) {
                    self.at += 1;
                }
                if self.at == start {
                    return Err(format!("a value was expected at byte {start}"));
                }
                Ok(Node { span: start..self.at, kind: Kind::Scalar })
            }
            None => Err("the text ended where a value was expected".into()),
        }
    }
}

/// Edits of one text: byte ranges and what replaces them, applied together.
#[derive(Debug, Default)]
pub struct Edits(Vec<(Range<usize>, String)>);

impl Edits {
    /// The text with every edit applied; an error when two overlap.
    pub fn apply(mut self, text: &str) -> Result<String, String> {
        self.0.sort_by_key(|(r, _)| (r.start, r.end));
        let mut out = String::with_capacity(text.len() + 256);
        let mut at = 0;
        for (range, with) in &self.0 {
            if range.start < at {
                return Err("two edits overlap".into());
            }
            out.push_str(&text[at..range.start]);
            out.push_str(with);
            at = range.end;
        }
        out.push_str(&text[at..]);
        Ok(out)
    }

    /// Adds `items` (already written, one child each: `"key": value` for an object) at the end
    /// of `container`, laid out like its other children: one per line at their indent, or on
    /// the same line when they share the container's line.
    pub fn append(&mut self, text: &str, container: &Node, items: &[Child]) {
        if items.is_empty() {
            return;
        }
        let children = container.children();
        let unit = indent_unit(text);
        match children.last() {
            Some(last) if on_own_line(text, children[0].start) => {
                let indent = line_indent(text, children[0].start);
                let mut add = String::new();
                for item in items {
                    add.push_str(",\n");
                    add.push_str(&indent);
                    add.push_str(&item.render(Some(&indent), &unit));
                }
                self.0.push((last.end..last.end, add));
            }
            Some(last) => {
                let mut add = String::new();
                for item in items {
                    add.push_str(", ");
                    add.push_str(&item.render(None, &unit));
                }
                self.0.push((last.end..last.end, add));
            }
            None => {
                let outer = line_indent(text, container.span.start);
                let indent = format!("{outer}{unit}");
                let rendered: Vec<String> =
                    items.iter().map(|i| i.render(Some(&indent), &unit)).collect();
                let inner = container.span.start + 1..container.span.end - 1;
                let body = format!("\n{indent}{}\n{outer}", rendered.join(&format!(",\n{indent}")));
                self.0.push((inner, body));
            }
        }
    }

    /// Takes the children at `indices` (sorted, distinct) out of `container`, with the comma
    /// and spacing that went with each; every other byte stays.
    pub fn remove(&mut self, container: &Node, indices: &[usize]) {
        let children = container.children();
        if indices.is_empty() {
            return;
        }
        if indices.len() >= children.len() {
            self.0.push((container.span.start + 1..container.span.end - 1, String::new()));
            return;
        }
        for &i in indices {
            let kept_before = (0..i).any(|k| !indices.contains(&k));
            let range = if kept_before {
                children[i - 1].end..children[i].end
            } else {
                children[i].start..children[i + 1].start
            };
            self.0.push((range, String::new()));
        }
    }
}

/// A child to add: an object's member (`key` and value) or an array's item, its value either
/// JSON or an ordered object of further children.
#[derive(Debug, Clone)]
pub struct Child {
    /// The member's key; `None` for an array's item.
    pub key: Option<String>,
    /// Its value.
    pub value: ChildValue,
}

/// The value of a [`Child`].
#[derive(Debug, Clone)]
pub enum ChildValue {
    /// Plain JSON (written by serde_json).
    Json(Value),
    /// An object whose members keep this order.
    Object(Vec<Child>),
}

impl Child {
    /// A member `key: value`.
    pub fn member(key: &str, value: ChildValue) -> Self {
        Child { key: Some(key.to_owned()), value }
    }

    /// An array's item.
    pub fn item(value: Value) -> Self {
        Child { key: None, value: ChildValue::Json(value) }
    }

    /// The child's text at `indent` (`None`: on one line).
    fn render(&self, indent: Option<&str>, unit: &str) -> String {
        let key = self.key.as_ref().map(|k| format!("{}: ", Value::from(k.as_str())));
        let value = match &self.value {
            ChildValue::Json(v) => match indent {
                Some(indent) => pretty(v, unit).replace('\n', &format!("\n{indent}")),
                None => v.to_string(),
            },
            ChildValue::Object(children) if children.is_empty() => "{}".to_owned(),
            ChildValue::Object(children) => match indent {
                Some(indent) => {
                    let inner = format!("{indent}{unit}");
                    let parts: Vec<String> =
                        children.iter().map(|c| c.render(Some(&inner), unit)).collect();
                    format!("{{\n{inner}{}\n{indent}}}", parts.join(&format!(",\n{inner}")))
                }
                None => {
                    let parts: Vec<String> =
                        children.iter().map(|c| c.render(None, unit)).collect();
                    format!("{{ {} }}", parts.join(", "))
                }
            },
        };
        format!("{}{value}", key.unwrap_or_default())
    }
}

fn pretty(value: &Value, unit: &str) -> String {
    use serde::Serialize;
    let mut out = Vec::new();
    let fmt = serde_json::ser::PrettyFormatter::with_indent(unit.as_bytes());
    let mut ser = serde_json::Serializer::with_formatter(&mut out, fmt);
    if value.serialize(&mut ser).is_err() {
        return value.to_string();
    }
    String::from_utf8(out).unwrap_or_else(|_| value.to_string())
}

/// Whether the byte at `at` is the first non-blank of its line.
fn on_own_line(text: &str, at: usize) -> bool {
    text[..at].rsplit('\n').next().is_some_and(|before| before.trim().is_empty())
        && text[..at].contains('\n')
}

/// The blanks that open the line holding byte `at`.
fn line_indent(text: &str, at: usize) -> String {
    let line = text[..at].rsplit('\n').next().unwrap_or("");
    line.chars().take_while(|c| *c == ' ' || *c == '\t').collect()
}

/// The file's indent step: the blanks opening its first indented line, else two spaces.
fn indent_unit(text: &str) -> String {
    text.lines()
        .map(|l| l.chars().take_while(|c| *c == ' ' || *c == '\t').collect::<String>())
        .find(|blanks| !blanks.is_empty())
        .unwrap_or_else(|| "  ".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn spans_name_each_member_and_item() {
        let text = r#" { "a" : [1, {"b\"c": true}], "n": 123456789012345678901234567890 } "#;
        let root = parse(text).unwrap();
        let a = root.member("a").unwrap();
        assert_eq!(&text[a.value.span.clone()], r#"[1, {"b\"c": true}]"#);
        let Kind::Array(items) = &a.value.kind else { panic!("an array") };
        assert_eq!(items[1].member("b\"c").map(|m| &text[m.value.span.clone()]), Some("true"));
        assert_eq!(
            &text[root.member("n").unwrap().value.span.clone()],
            "123456789012345678901234567890"
        );
    }

    #[test]
    fn appending_then_removing_gives_the_same_bytes_back() {
        let cases = [
            "{}",
            "{\n}\n",
            "{\n  \"z\": 1,\n  \"a\": [\n    1\n  ]\n}\n",
            "{\n\t\"z\": 1\n}",
            "{ \"z\": 1, \"a\": [1, 2] }",
        ];
        for text in cases {
            let root = parse(text).unwrap();
            let mut edits = Edits::default();
            let member = Child::member("hooks", ChildValue::Json(json!({"Stop": [{"x": 1}]})));
            edits.append(text, &root, &[member]);
            let added = edits.apply(text).unwrap();
            let value: Value =
                serde_json::from_str(&added).unwrap_or_else(|e| panic!("{e}: {added}"));
            assert_eq!(value["hooks"]["Stop"][0]["x"], 1, "{added}");
            let root2 = parse(&added).unwrap();
            let Kind::Object(members) = &root2.kind else { panic!() };
            let at = members.iter().position(|m| m.key == "hooks").unwrap();
            let mut edits = Edits::default();
            edits.remove(&root2, &[at]);
            let back = edits.apply(&added).unwrap();
            if text.split_whitespace().collect::<String>() == "{}" {
                assert_eq!(back.split_whitespace().collect::<String>(), "{}", "{text:?}");
            } else {
                assert_eq!(back, text, "{added}");
            }
        }
    }

    #[test]
    fn removing_any_set_of_items_keeps_valid_json_and_the_rest() {
        let text = "[\n  1,\n  2,\n  3,\n  4\n]";
        let root = parse(text).unwrap();
        for mask in 0u32..16 {
            let gone: Vec<usize> = (0..4).filter(|i| mask & (1 << i) != 0).collect();
            let mut edits = Edits::default();
            edits.remove(&root, &gone);
            let out = edits.apply(text).unwrap();
            let value: Vec<u32> =
                serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
            let want: Vec<u32> = (1..=4).filter(|v| !gone.contains(&(*v as usize - 1))).collect();
            assert_eq!(value, want, "{out}");
        }
    }
}
