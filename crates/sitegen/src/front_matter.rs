//! TOML front matter between `+++` lines at the top of every page.

use serde::Deserialize;

/// What a page declares about itself.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FrontMatter {
    pub title: String,
    pub description: String,
    /// Position in the chapter list; the home page is 0.
    pub order: u32,
    /// URL segment: "" for the home page, otherwise lowercase words and hyphens.
    pub slug: String,
    /// Short title for the sidebar; defaults to `title`.
    #[serde(default)]
    pub nav_title: Option<String>,
}

/// A page split into its front matter and its Markdown body.
#[derive(Debug, Clone)]
pub struct Split<'a> {
    pub front: FrontMatter,
    pub body: &'a str,
    /// 1-based line of the file where `body` starts.
    pub body_line: usize,
}

/// Error with the 1-based line it refers to.
pub type LineError = (usize, String);

/// Splits and parses; errors carry a file line.
pub fn split(source: &str) -> Result<Split<'_>, LineError> {
    let source = source.strip_prefix('\u{feff}').unwrap_or(source);
    let rest = source
        .strip_prefix("+++\n")
        .or_else(|| source.strip_prefix("+++\r\n"))
        .ok_or((
            1,
            "la página debe empezar con front matter TOML entre líneas «+++»".to_owned(),
        ))?;
    let end = rest
        .match_indices("+++")
        .find(|(i, _)| *i == 0 || rest[..*i].ends_with('\n'))
        .map(|(i, _)| i)
        .ok_or((
            1,
            "falta la línea «+++» que cierra el front matter".to_owned(),
        ))?;
    let toml_text = &rest[..end];
    let after = &rest[end + 3..];
    let body = after
        .strip_prefix("\r\n")
        .or_else(|| after.strip_prefix('\n'))
        .unwrap_or(after);
    let front: FrontMatter = toml::from_str(toml_text).map_err(|e| {
        let line = e
            .span()
            .and_then(|s| toml_text.get(..s.start))
            .map_or(0, |before| before.matches('\n').count());
        (line + 2, format!("front matter: {}", e.message()))
    })?;
    validate_slug(&front.slug).map_err(|m| (2, m))?;
    if front.title.trim().is_empty() {
        return Err((2, "el título no puede estar vacío".into()));
    }
    let body_line = 2 + toml_text.matches('\n').count() + 1;
    Ok(Split {
        front,
        body,
        body_line,
    })
}

fn validate_slug(slug: &str) -> Result<(), String> {
    let ok = slug.split('-').all(|part| {
        !part.is_empty()
            && part
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
    });
    if slug.is_empty() || ok {
        Ok(())
    } else {
        Err(format!(
            "slug «{slug}» no válido: usa minúsculas sin acentos, dígitos y guiones"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = "+++\ntitle = \"Anatomía\"\ndescription = \"d\"\norder = 1\nslug = \"anatomia-vram\"\n+++\n# Hola\n";

    #[test]
    fn splits() {
        let s = split(GOOD).unwrap();
        assert_eq!(s.front.title, "Anatomía");
        assert_eq!(s.front.slug, "anatomia-vram");
        assert_eq!(s.body, "# Hola\n");
        assert_eq!(s.body_line, 7);
        assert_eq!(GOOD.lines().nth(s.body_line - 1), Some("# Hola"));
    }

    #[test]
    fn errors_have_lines() {
        let cases = [
            ("sin front matter", 1, "empezar"),
            ("+++\ntitle = \"x\"\n", 1, "cierra"),
            (
                "+++\ntitle = \"x\"\ndescription = 3\norder = 1\nslug = \"\"\n+++\n",
                3,
                "front matter",
            ),
            (
                "+++\ntitle = \"x\"\ndescription = \"d\"\norder = 1\nslug = \"Mal Slug\"\n+++\n",
                2,
                "slug",
            ),
            (
                "+++\ntitle = \"x\"\ndescription = \"d\"\norder = 1\nslug = \"a\"\nautor = \"y\"\n+++\n",
                6,
                "autor",
            ),
        ];
        for (src, line, want) in cases {
            let (l, msg) = split(src).unwrap_err();
            assert!(msg.contains(want), "{src}: {msg}");
            assert_eq!(l, line, "{src}: {msg}");
        }
    }
}
