//! serde visitors that read a native line's fields without building a
//! JSON tree for the parts the replay only looks into (`tool_results`,
//! `meta`, the system prompt). A key given twice keeps its last value, as
//! Python's `json.loads` does.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use serde::de::value::{MapAccessDeserializer, SeqAccessDeserializer};
use serde::de::{DeserializeSeed, Deserializer, Error, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::Value as Json;

use super::prompt_cache::LinePrompt;
use super::{json_text, tool_result, LineDecoder};
use crate::model::{ToolResult, Usage};
use crate::read::sniff::ATTEMPT_KEYS;
use crate::read::{chat, usage};

/// The fields of a line, each as recorded (absent or `null` → `None`).
#[derive(Default)]
pub(super) struct Fields<'de> {
    pub trace_id: Option<Loose<'de>>,
    pub session: Option<Loose<'de>>,
    pub agent: Option<Loose<'de>>,
    /// Present and a string.
    pub system_prompt: Option<Arc<str>>,
    pub content: Option<Loose<'de>>,
    pub tool_calls: Option<Json>,
    pub output: Option<Json>,
    pub finish_reason: Option<Loose<'de>>,
    pub llm_error: Option<Loose<'de>>,
    pub tool_results: Option<ResultsField>,
    pub meta: Option<MetaFields>,
    /// `usage`'s counts, when an object that records some.
    pub usage: Option<Usage>,
    /// `duration_s`, when a number.
    pub duration_s: Option<Json>,
    /// One of [`ATTEMPT_KEYS`] is present (even as `null`).
    pub attempt_key: bool,
    /// One of [`chat::MESSAGE_KEYS`] is present.
    pub message_list_key: bool,
    /// One of [`MODEL_OUTPUT_KEYS`] is present (even as `null`).
    pub model_output_key: bool,
    /// Keys the line carries that are not read (the first few), named
    /// when the line is refused.
    pub unread_keys: Vec<String>,
}

/// The keys that carry what the model answered: a line with none of them
/// (only `tool_results`, say, its text under a key not read) is not an
/// attempt.
pub const MODEL_OUTPUT_KEYS: [&str; 5] = [
    "content",
    "tool_calls",
    "output",
    "finish_reason",
    "llm_error",
];

/// Unread keys named in a message, at most.
const UNREAD_KEYS_NAMED: usize = 8;

impl<'de> Fields<'de> {
    /// Reads the fields of one line of JSON text.
    pub fn from_line(
        text: &'de str,
        decoder: &mut LineDecoder,
    ) -> Result<Fields<'de>, serde_json::Error> {
        let mut de = serde_json::Deserializer::from_str(text);
        let fields = FieldsSeed { decoder }.deserialize(&mut de)?;
        de.end()?;
        Ok(fields)
    }

    /// Reads the fields of an already parsed line.
    pub fn from_value(
        value: Json,
        decoder: &mut LineDecoder,
    ) -> Result<Fields<'static>, serde_json::Error> {
        FieldsSeed { decoder }.deserialize(value)
    }
}

/// A value that ought to be a string.
pub(super) enum Loose<'de> {
    Str(Cow<'de, str>),
    Other(Json),
}

impl Loose<'_> {
    fn into_json(self) -> Json {
        match self {
            Loose::Str(s) => Json::String(s.into_owned()),
            Loose::Other(v) => v,
        }
    }
}

/// `tool_results` as recorded.
pub(super) enum ResultsField {
    List(Vec<ToolResult>),
    NotAList,
}

/// What the replay reads from `meta`, and the whole value when kept.
#[derive(Default)]
pub(super) struct MetaFields {
    /// `meta.model`, when a string.
    pub model: Option<Arc<str>>,
    /// `meta.max_turns`, when an integer that fits in 64 bits.
    pub max_turns: Option<i64>,
    /// `meta.success`, when a boolean.
    pub success: Option<bool>,
    /// `meta.score`, when a finite number.
    pub score: Option<f64>,
    pub whole: Option<Json>,
}

struct FieldsSeed<'a> {
    decoder: &'a mut LineDecoder,
}

impl<'de> DeserializeSeed<'de> for FieldsSeed<'_> {
    type Value = Fields<'de>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Fields<'de>, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for FieldsSeed<'_> {
    type Value = Fields<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Fields<'de>, A::Error> {
        let mut fields = Fields::default();
        while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
            fields.attempt_key |= ATTEMPT_KEYS.contains(&&*key);
            fields.message_list_key |= chat::MESSAGE_KEYS.contains(&&*key);
            fields.model_output_key |= MODEL_OUTPUT_KEYS.contains(&&*key);
            match &*key {
                "trace_id" => fields.trace_id = map.next_value()?,
                "session" => fields.session = map.next_value()?,
                "agent" => fields.agent = map.next_value()?,
                "system_prompt" => {
                    fields.system_prompt = map.next_value_seed(PromptSeed {
                        decoder: &mut *self.decoder,
                    })?
                }
                "content" => fields.content = map.next_value()?,
                "tool_calls" => fields.tool_calls = map.next_value()?,
                "output" => fields.output = map.next_value()?,
                "finish_reason" => fields.finish_reason = map.next_value()?,
                "llm_error" => fields.llm_error = map.next_value()?,
                "tool_results" => fields.tool_results = map.next_value()?,
                "usage" => fields.usage = map.next_value::<UsageField>()?.0,
                "duration_s" => fields.duration_s = map.next_value()?,
                "meta" => {
                    fields.meta = map.next_value_seed(MetaSeed {
                        decoder: &mut *self.decoder,
                    })?
                }
                other => {
                    if fields.unread_keys.len() < UNREAD_KEYS_NAMED
                        && !chat::MESSAGE_KEYS.contains(&other)
                    {
                        fields.unread_keys.push(other.to_string());
                    }
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(fields)
    }
}

/// A line's `usage`, read without building a JSON tree: on every line of
/// a run that records usage, so only the keys [`usage::KEYS`] names are
/// kept (a key given twice keeps its last value, as in a tree).
struct UsageField(Option<Usage>);

impl<'de> Deserialize<'de> for UsageField {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct UsageVisitor;
        impl<'de> Visitor<'de> for UsageVisitor {
            type Value = UsageField;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<UsageField, A::Error> {
                let mut kept: [Option<Json>; usage::KEYS.len()] = Default::default();
                while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
                    match usage::KEYS.iter().position(|k| *k == key) {
                        Some(i) => kept[i] = Some(map.next_value()?),
                        None => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(UsageField(usage::of_fields(|k| {
                    let i = usage::KEYS.iter().position(|known| *known == k)?;
                    kept[i].as_ref()
                })))
            }
            fn visit_bool<E>(self, _: bool) -> Result<UsageField, E> {
                Ok(UsageField(None))
            }
            fn visit_i64<E>(self, _: i64) -> Result<UsageField, E> {
                Ok(UsageField(None))
            }
            fn visit_u64<E>(self, _: u64) -> Result<UsageField, E> {
                Ok(UsageField(None))
            }
            fn visit_f64<E>(self, _: f64) -> Result<UsageField, E> {
                Ok(UsageField(None))
            }
            fn visit_str<E>(self, _: &str) -> Result<UsageField, E> {
                Ok(UsageField(None))
            }
            fn visit_unit<E>(self) -> Result<UsageField, E> {
                Ok(UsageField(None))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<UsageField, A::Error> {
                IgnoredAny.visit_seq(seq).map(|_| UsageField(None))
            }
        }
        d.deserialize_any(UsageVisitor)
    }
}

/// An object key, borrowed from the line when it has no escapes.
struct Key<'de>(Cow<'de, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string key")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E>(self, v: String) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v)))
            }
        }
        d.deserialize_str(KeyVisitor)
    }
}

/// Builds `Self` from any JSON value: strings one way, everything else as
/// the `serde_json::Value` serde_json itself would build.
trait FromAnyJson<'de>: Sized {
    fn from_str(s: Cow<'de, str>) -> Self;
    fn from_json(v: Json) -> Self;
}

/// A visitor for any value that hands it to `T`.
struct AnyJson<T>(std::marker::PhantomData<T>);

impl<T> AnyJson<T> {
    fn new() -> Self {
        AnyJson(std::marker::PhantomData)
    }
}

impl<'de, T: FromAnyJson<'de>> Visitor<'de> for AnyJson<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<T, E> {
        Ok(T::from_str(Cow::Borrowed(v)))
    }
    fn visit_str<E>(self, v: &str) -> Result<T, E> {
        Ok(T::from_str(Cow::Owned(v.to_owned())))
    }
    fn visit_string<E>(self, v: String) -> Result<T, E> {
        Ok(T::from_str(Cow::Owned(v)))
    }
    fn visit_bool<E>(self, v: bool) -> Result<T, E> {
        Ok(T::from_json(Json::Bool(v)))
    }
    fn visit_i64<E>(self, v: i64) -> Result<T, E> {
        Ok(T::from_json(Json::from(v)))
    }
    fn visit_u64<E>(self, v: u64) -> Result<T, E> {
        Ok(T::from_json(Json::from(v)))
    }
    fn visit_f64<E>(self, v: f64) -> Result<T, E> {
        Ok(T::from_json(
            serde_json::Number::from_f64(v).map_or(Json::Null, Json::Number),
        ))
    }
    fn visit_unit<E>(self) -> Result<T, E> {
        Ok(T::from_json(Json::Null))
    }
    fn visit_none<E>(self) -> Result<T, E> {
        Ok(T::from_json(Json::Null))
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<T, D::Error> {
        d.deserialize_any(self)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<T, A::Error> {
        Json::deserialize(SeqAccessDeserializer::new(seq)).map(T::from_json)
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
        Json::deserialize(MapAccessDeserializer::new(map)).map(T::from_json)
    }
}

impl<'de> FromAnyJson<'de> for Loose<'de> {
    fn from_str(s: Cow<'de, str>) -> Self {
        Loose::Str(s)
    }
    fn from_json(v: Json) -> Self {
        Loose::Other(v)
    }
}

impl<'de> Deserialize<'de> for Loose<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(AnyJson::new())
    }
}

/// The system prompt, shared with earlier lines' when equal.
struct PromptSeed<'a> {
    decoder: &'a mut LineDecoder,
}

impl<'de> DeserializeSeed<'de> for PromptSeed<'_> {
    type Value = Option<Arc<str>>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        let raw = match self.decoder.take_line_prompt() {
            LinePrompt::Known { text, .. } => {
                // Its token was left out of the text serde reads.
                IgnoredAny::deserialize(d)?;
                return Ok(Some(text));
            }
            LinePrompt::Fresh(raw) => Some(raw),
            LinePrompt::Unknown => None,
        };
        d.deserialize_any(PromptText {
            decoder: self.decoder,
            raw,
        })
    }
}

/// Reads a prompt's text (other values mean no prompt).
struct PromptText<'a> {
    decoder: &'a mut LineDecoder,
    raw: Option<Box<[u8]>>,
}

impl<'de> Visitor<'de> for PromptText<'_> {
    type Value = Option<Arc<str>>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    // Escaped text arrives here in serde_json's scratch buffer: no copy
    // is made unless the prompt is new.
    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Some(self.decoder.prompt(v, self.raw)))
    }
    fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        IgnoredAny.visit_seq(seq).map(|_| None)
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        IgnoredAny.visit_map(map).map(|_| None)
    }
}

/// `tool_results`: a list of entries, each turned into a [`ToolResult`].
impl<'de> Deserialize<'de> for ResultsField {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct ResultsVisitor;
        impl<'de> Visitor<'de> for ResultsVisitor {
            type Value = ResultsField;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<ResultsField, A::Error> {
                let mut results = Vec::with_capacity(seq.size_hint().unwrap_or(1));
                while let Some(Entry(result)) = seq.next_element::<Entry>()? {
                    results.push(result);
                }
                Ok(ResultsField::List(results))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<ResultsField, A::Error> {
                IgnoredAny.visit_map(map).map(|_| ResultsField::NotAList)
            }
            fn visit_str<E>(self, _: &str) -> Result<ResultsField, E> {
                Ok(ResultsField::NotAList)
            }
            fn visit_bool<E>(self, _: bool) -> Result<ResultsField, E> {
                Ok(ResultsField::NotAList)
            }
            fn visit_i64<E>(self, _: i64) -> Result<ResultsField, E> {
                Ok(ResultsField::NotAList)
            }
            fn visit_u64<E>(self, _: u64) -> Result<ResultsField, E> {
                Ok(ResultsField::NotAList)
            }
            fn visit_f64<E>(self, _: f64) -> Result<ResultsField, E> {
                Ok(ResultsField::NotAList)
            }
            fn visit_unit<E>(self) -> Result<ResultsField, E> {
                Ok(ResultsField::NotAList)
            }
        }
        d.deserialize_any(ResultsVisitor)
    }
}

/// One `tool_results` entry.
struct Entry(ToolResult);

impl<'de> FromAnyJson<'de> for Entry {
    // A non-object entry stands for its own JSON text.
    fn from_str(s: Cow<'de, str>) -> Self {
        Entry::from_json(Json::String(s.into_owned()))
    }
    fn from_json(v: Json) -> Self {
        match v {
            Json::Object(mut map) => Entry(tool_result(map.remove("result"), map.remove("error"))),
            other => Entry(ToolResult {
                result: json_text(other),
                error: None,
                failed: false,
            }),
        }
    }
}

impl<'de> Deserialize<'de> for Entry {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct EntryVisitor;
        impl<'de> Visitor<'de> for EntryVisitor {
            type Value = Entry;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            // The usual case, `{"result": ..., "error": ...}`, without a map.
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Entry, A::Error> {
                let (mut result, mut error) = (None, None);
                while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
                    match &*key {
                        "result" => result = Some(map.next_value::<Loose<'de>>()?.into_json()),
                        "error" => error = Some(map.next_value::<Loose<'de>>()?.into_json()),
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(Entry(tool_result(result, error)))
            }
            fn visit_borrowed_str<E: Error>(self, v: &'de str) -> Result<Entry, E> {
                AnyJson::new().visit_borrowed_str(v)
            }
            fn visit_str<E: Error>(self, v: &str) -> Result<Entry, E> {
                AnyJson::new().visit_str(v)
            }
            fn visit_string<E: Error>(self, v: String) -> Result<Entry, E> {
                AnyJson::new().visit_string(v)
            }
            fn visit_bool<E: Error>(self, v: bool) -> Result<Entry, E> {
                AnyJson::new().visit_bool(v)
            }
            fn visit_i64<E: Error>(self, v: i64) -> Result<Entry, E> {
                AnyJson::new().visit_i64(v)
            }
            fn visit_u64<E: Error>(self, v: u64) -> Result<Entry, E> {
                AnyJson::new().visit_u64(v)
            }
            fn visit_f64<E: Error>(self, v: f64) -> Result<Entry, E> {
                AnyJson::new().visit_f64(v)
            }
            fn visit_unit<E: Error>(self) -> Result<Entry, E> {
                AnyJson::new().visit_unit()
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Entry, A::Error> {
                AnyJson::new().visit_seq(seq)
            }
        }
        d.deserialize_any(EntryVisitor)
    }
}

/// `meta`: whole when the decoder keeps it, else only `model` and `max_turns`.
struct MetaSeed<'a> {
    decoder: &'a mut LineDecoder,
}

impl<'de> DeserializeSeed<'de> for MetaSeed<'_> {
    type Value = Option<MetaFields>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        if self.decoder.keeps_meta() {
            let Some(whole) = Option::<Json>::deserialize(d)? else {
                return Ok(None);
            };
            let model = whole.get("model").and_then(Json::as_str);
            return Ok(Some(MetaFields {
                model: model.map(|m| self.decoder.model(m)),
                max_turns: whole.get("max_turns").and_then(Json::as_i64),
                success: whole.get("success").and_then(Json::as_bool),
                score: whole.get("score").and_then(finite),
                whole: Some(whole),
            }));
        }
        d.deserialize_option(self)
    }
}

impl<'de> Visitor<'de> for MetaSeed<'_> {
    type Value = Option<MetaFields>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_none<E>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(MetaObject {
            decoder: self.decoder,
        })
        .map(Some)
    }
}

/// The inside of a non-null `meta`.
struct MetaObject<'a> {
    decoder: &'a mut LineDecoder,
}

impl<'de> Visitor<'de> for MetaObject<'_> {
    type Value = MetaFields;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<MetaFields, A::Error> {
        let mut meta = MetaFields::default();
        while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
            match &*key {
                "model" => {
                    meta.model = match map.next_value::<Loose<'de>>()? {
                        Loose::Str(m) => Some(self.decoder.model(&m)),
                        Loose::Other(_) => None,
                    }
                }
                "max_turns" => {
                    meta.max_turns = map.next_value::<Loose<'de>>()?.into_json().as_i64();
                }
                "success" => {
                    meta.success = map.next_value::<Loose<'de>>()?.into_json().as_bool();
                }
                "score" => meta.score = finite(&map.next_value::<Loose<'de>>()?.into_json()),
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(meta)
    }
    fn visit_str<E>(self, _: &str) -> Result<MetaFields, E> {
        Ok(MetaFields::default())
    }
    fn visit_bool<E>(self, _: bool) -> Result<MetaFields, E> {
        Ok(MetaFields::default())
    }
    fn visit_i64<E>(self, _: i64) -> Result<MetaFields, E> {
        Ok(MetaFields::default())
    }
    fn visit_u64<E>(self, _: u64) -> Result<MetaFields, E> {
        Ok(MetaFields::default())
    }
    fn visit_f64<E>(self, _: f64) -> Result<MetaFields, E> {
        Ok(MetaFields::default())
    }
    fn visit_unit<E>(self) -> Result<MetaFields, E> {
        Ok(MetaFields::default())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<MetaFields, A::Error> {
        IgnoredAny.visit_seq(seq).map(|_| MetaFields::default())
    }
}

/// A finite number's value.
pub(super) fn finite(v: &Json) -> Option<f64> {
    v.as_f64().filter(|x| x.is_finite())
}

/// A duration in seconds: a finite, non-negative number.
pub(super) fn seconds_of(v: &Json) -> Option<f64> {
    finite(v).filter(|s| *s >= 0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The streamed `usage` gives what the tree-based reading gives.
    #[test]
    fn usage_field_reads_as_the_tree_does() {
        for text in [
            r#"{"input_tokens": 7, "output_tokens": 3, "cached_input_tokens": 2}"#,
            r#"{"prompt_tokens": 9, "completion_tokens": 1.0, "prompt_tokens_details": {"cached_tokens": 4}}"#,
            r#"{"input_tokens": 1, "input_tokens": 5, "other": [1, {"a": 2}]}"#,
            r#"{"input_tokens": -1, "output_tokens": "3"}"#,
            r#"{"total": 5}"#,
            r#"[1, 2]"#,
            r#""12""#,
            r#"null"#,
            r#"12"#,
        ] {
            let streamed = serde_json::from_str::<UsageField>(text).expect("decodes").0;
            let tree: Json = serde_json::from_str(text).expect("json");
            assert_eq!(streamed, usage::of(&tree), "{text}");
        }
        let last = serde_json::from_str::<UsageField>(r#"{"input_tokens": 1, "input_tokens": 5}"#)
            .expect("decodes")
            .0;
        assert_eq!(last.and_then(|u| u.input_tokens), Some(5));
    }
}
