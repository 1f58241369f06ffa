//! Widget shortcodes in Markdown: `{{< pesos parametros="7B" formato="bf16" >}}`.
//!
//! A shortcode stands alone in its paragraph. Attribute values are double-quoted and
//! may not contain a double quote; there are no escapes, so what an author reads is
//! exactly what the widget gets.

use vram::units::clip;

/// A parsed shortcode: its name and attributes in source order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shortcode {
    pub name: String,
    pub attrs: Vec<(String, String)>,
}

impl Shortcode {
    pub fn attr(&self, key: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

pub const OPEN: &str = "{{<";
pub const CLOSE: &str = ">}}";

fn is_ident_char(c: char) -> bool {
    c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_'
}

/// Parses one shortcode; `text` must start with `{{<` and end with `>}}`.
pub fn parse(text: &str) -> Result<Shortcode, String> {
    let inner = text
        .trim()
        .strip_prefix(OPEN)
        .and_then(|t| t.strip_suffix(CLOSE))
        .ok_or_else(|| {
            format!("un shortcode empieza con «{OPEN}» y termina con «{CLOSE}» en el mismo párrafo")
        })?;
    let mut rest = inner.trim_start();
    let name_len = rest.find(|c: char| !is_ident_char(c)).unwrap_or(rest.len());
    let (name, after) = rest.split_at(name_len);
    if name.is_empty() {
        return Err("falta el nombre del shortcode".into());
    }
    rest = after;
    let mut attrs: Vec<(String, String)> = Vec::new();
    loop {
        let trimmed = rest.trim_start();
        if trimmed.is_empty() {
            break;
        }
        if trimmed.len() == rest.len() {
            return Err(format!(
                "se esperaba un espacio antes de «{}»",
                clip(trimmed)
            ));
        }
        rest = trimmed;
        let key_len = rest.find(|c: char| !is_ident_char(c)).unwrap_or(rest.len());
        let (key, after) = rest.split_at(key_len);
        if key.is_empty() {
            return Err(format!("atributo no válido: «{}»", clip(rest)));
        }
        let after = after.strip_prefix("=\"").ok_or_else(|| {
            format!("el atributo «{key}» necesita un valor entre comillas: {key}=\"…\"")
        })?;
        let end = after
            .find('"')
            .ok_or_else(|| format!("falta la comilla que cierra el valor de «{key}»"))?;
        let (value, after) = after.split_at(end);
        if attrs.iter().any(|(k, _)| k == key) {
            return Err(format!("el atributo «{key}» aparece dos veces"));
        }
        attrs.push((key.to_owned(), value.to_owned()));
        rest = &after[1..];
    }
    Ok(Shortcode {
        name: name.to_owned(),
        attrs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid() {
        let sc = parse(r#"{{< pesos parametros="7B" formato="bf16" >}}"#).unwrap();
        assert_eq!(sc.name, "pesos");
        assert_eq!(sc.attr("parametros"), Some("7B"));
        assert_eq!(sc.attr("formato"), Some("bf16"));
        assert_eq!(sc.attr("otro"), None);

        let bare = parse("{{<prueba-webgpu>}}").unwrap();
        assert_eq!(bare.name, "prueba-webgpu");
        assert!(bare.attrs.is_empty());

        let spaced = parse("  {{<  pesos   a=\"x y\"  >}}  ").unwrap();
        assert_eq!(spaced.attr("a"), Some("x y"));

        let empty_value = parse(r#"{{< pesos a="" >}}"#).unwrap();
        assert_eq!(empty_value.attr("a"), Some(""));
    }

    #[test]
    fn invalid() {
        let cases = [
            ("{{< >}}", "nombre"),
            ("{{< pesos a >}}", "comillas"),
            (r#"{{< pesos a="x >}}"#, "cierra"),
            (r#"{{< pesos a="1" a="2" >}}"#, "dos veces"),
            (r#"{{< pesos a="1"b="2" >}}"#, "espacio"),
            (r#"{{< pesos ="1" >}}"#, "no válido"),
            ("{{< pesos", "termina"),
            (r#"{{< Pesos >}}"#, "nombre"),
        ];
        for (input, want) in cases {
            let err = parse(input).unwrap_err();
            assert!(err.contains(want), "{input}: {err}");
        }
    }

    proptest::proptest! {
        #[test]
        fn never_panics(s in "\\PC{0,80}") {
            let _ = parse(&format!("{{{{< {s} >}}}}"));
            let _ = parse(&s);
        }
    }
}
