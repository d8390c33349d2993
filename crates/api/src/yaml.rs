//! Every YAML call of the crate goes through here, so the YAML library can be swapped in one place
//! (serde_yaml is archived upstream).
use serde::Serialize;
use serde::de::DeserializeOwned;

/// A YAML parse or print failure.
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct Error(#[from] serde_yaml::Error);

impl Error {
    /// Where the parser stopped: 1-based line and column within the text it was given.
    #[must_use]
    pub fn location(&self) -> Option<(usize, usize)> {
        self.0.location().map(|l| (l.line(), l.column()))
    }

    /// The message without its trailing ` at line L column C`.
    #[must_use]
    pub fn message(&self) -> String {
        let text = self.0.to_string();
        match text.rfind(" at line ") {
            Some(at) => text[..at].to_string(),
            None => text,
        }
    }
}

/// Parses one YAML document.
pub fn from_str<T: DeserializeOwned>(text: &str) -> Result<T, Error> {
    Ok(serde_yaml::from_str(text)?)
}

/// Parses every document of a multi-document YAML stream, skipping empty ones.
pub fn from_str_multi(text: &str) -> Result<Vec<serde_json::Value>, Error> {
    let mut docs = Vec::new();
    for doc in serde_yaml::Deserializer::from_str(text) {
        let value = serde_json::Value::deserialize_from(doc)?;
        if !value.is_null() {
            docs.push(value);
        }
    }
    Ok(docs)
}

/// Prints a value as one YAML document.
pub fn to_string<T: Serialize>(value: &T) -> Result<String, Error> {
    Ok(serde_yaml::to_string(value)?)
}

/// `Deserialize::deserialize` named for readability at the call site.
trait DeserializeFrom: Sized {
    fn deserialize_from(doc: serde_yaml::Deserializer<'_>) -> Result<Self, serde_yaml::Error>;
}

impl DeserializeFrom for serde_json::Value {
    fn deserialize_from(doc: serde_yaml::Deserializer<'_>) -> Result<Self, serde_yaml::Error> {
        serde::Deserialize::deserialize(doc)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multi_document_skips_empty_documents() {
        let docs = from_str_multi("a: 1\n---\n---\nb: 2\n").unwrap();
        assert_eq!(
            docs,
            vec![serde_json::json!({"a": 1}), serde_json::json!({"b": 2})]
        );
    }

    #[test]
    fn malformed_yaml_is_an_error() {
        assert!(from_str_multi("a: [1, 2\n").is_err());
    }
}
