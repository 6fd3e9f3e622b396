//! A completion log line decoded once, without what the reader does not
//! use: the request's `tools` and `kwargs` (their keys kept, their values
//! skipped unbuilt) and, of the request's `messages`, all but each
//! message's `role` and a system message's `content`. A log repeats the
//! whole conversation so far and the tool schemas with every call, so
//! building them as values cost more than everything else the reading does.

use std::fmt;

use serde::de::{Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::{Map, Value as Json};

/// The line as an object with only what is read filled in; `None` when it
/// is not an object of that shape (it is then parsed whole).
pub(super) fn decode(text: &str) -> Option<Map<String, Json>> {
    serde_json::from_str::<Slim>(text).ok().map(|s| s.0)
}

/// Keys whose values the reader never looks at.
const UNREAD: [&str; 2] = ["tools", "kwargs"];

struct Slim(Map<String, Json>);

impl<'de> Deserialize<'de> for Slim {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Slim, D::Error> {
        d.deserialize_map(SlimVisitor)
    }
}

struct SlimVisitor;

impl<'de> Visitor<'de> for SlimVisitor {
    type Value = Slim;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a completion log")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Slim, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let value = if UNREAD.contains(&key.as_str()) {
                map.next_value::<IgnoredAny>()?;
                Json::Null
            } else if key == "messages" {
                Json::Array(map.next_value::<Messages>()?.0)
            } else {
                map.next_value::<Json>()?
            };
            out.insert(key, value);
        }
        Ok(Slim(out))
    }
}

/// The request's messages, each as `{role}` (a system message with its
/// `content`).
struct Messages(Vec<Json>);

impl<'de> Deserialize<'de> for Messages {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Messages, D::Error> {
        struct Seq;
        impl<'de> Visitor<'de> for Seq {
            type Value = Messages;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a list of messages")
            }
            fn visit_seq<S: SeqAccess<'de>>(self, mut seq: S) -> Result<Messages, S::Error> {
                let mut out = Vec::new();
                while let Some(Message(m)) = seq.next_element::<Message>()? {
                    out.push(Json::Object(m));
                }
                Ok(Messages(out))
            }
        }
        d.deserialize_seq(Seq)
    }
}

struct Message(Map<String, Json>);

impl<'de> Deserialize<'de> for Message {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Message, D::Error> {
        struct Fields;
        impl<'de> Visitor<'de> for Fields {
            type Value = Message;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a message")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Message, A::Error> {
                let mut out = Map::new();
                while let Some(key) = map.next_key::<String>()? {
                    // The content is built only when it may be a system
                    // prompt: its role is `system` or not known yet.
                    let keep = key == "role"
                        || (key == "content"
                            && out.get("role").is_none_or(|r| r.as_str() == Some("system")));
                    if keep {
                        let value = map.next_value::<Json>()?;
                        out.insert(key, value);
                    } else {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
                Ok(Message(out))
            }
        }
        d.deserialize_map(Fields)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_what_is_read_is_built() {
        // A user message's content after its role is not built; a
        // content before the role is (it may be the system prompt's).
        let line = r#"{"messages": [
                {"content": "first", "role": "system"},
                {"role": "user", "content": [{"type": "text", "text": "long history"}], "name": "u"},
                {"content": "early", "role": "user"}],
            "tools": [{"type": "function"}], "kwargs": {"temperature": 0},
            "response": {"choices": [{"message": {"content": "hi"}}]}, "id": "x"}"#;
        let slim = decode(line).unwrap();
        assert_eq!(
            Json::Object(slim),
            json!({"messages": [{"content": "first", "role": "system"}, {"role": "user"},
                    {"content": "early", "role": "user"}],
                "tools": null, "kwargs": null,
                "response": {"choices": [{"message": {"content": "hi"}}]}, "id": "x"})
        );
        // Not that shape: parsed whole instead.
        assert!(decode(r#"{"messages": {"a": 1}}"#).is_none());
        assert!(decode(r#"{"messages": ["text"]}"#).is_none());
        assert!(decode("[1]").is_none());
    }
}
