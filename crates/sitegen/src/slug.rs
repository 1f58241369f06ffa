//! Heading anchors: "Memoria asignada vs. reservada" → `memoria-asignada-vs-reservada`.

/// Folds Spanish (and common Latin) accents to ASCII: á→a, ñ→n, ü→u.
pub fn fold_accents(c: char) -> char {
    match c {
        'á' | 'à' | 'ä' | 'â' | 'Á' | 'À' | 'Ä' | 'Â' => 'a',
        'é' | 'è' | 'ë' | 'ê' | 'É' | 'È' | 'Ë' | 'Ê' => 'e',
        'í' | 'ì' | 'ï' | 'î' | 'Í' | 'Ì' | 'Ï' | 'Î' => 'i',
        'ó' | 'ò' | 'ö' | 'ô' | 'Ó' | 'Ò' | 'Ö' | 'Ô' => 'o',
        'ú' | 'ù' | 'ü' | 'û' | 'Ú' | 'Ù' | 'Ü' | 'Û' => 'u',
        'ñ' | 'Ñ' => 'n',
        'ç' | 'Ç' => 'c',
        other => other,
    }
}

/// Lowercase ASCII letters and digits joined by single hyphens.
pub fn slugify(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut pending_dash = false;
    for c in text.chars().map(fold_accents) {
        if c.is_ascii_alphanumeric() {
            if pending_dash && !out.is_empty() {
                out.push('-');
            }
            pending_dash = false;
            out.push(c.to_ascii_lowercase());
        } else {
            pending_dash = true;
        }
    }
    if out.is_empty() {
        out.push_str("seccion");
    }
    out
}

/// Hands out unique ids within one page: a second "Ejemplo" becomes `ejemplo-2`.
#[derive(Debug, Default)]
pub struct IdAllocator {
    used: std::collections::HashSet<String>,
}

impl IdAllocator {
    pub fn claim(&mut self, wanted: &str) -> String {
        let mut id = wanted.to_owned();
        let mut n = 2;
        while self.used.contains(&id) {
            id = format!("{wanted}-{n}");
            n += 1;
        }
        self.used.insert(id.clone());
        id
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs() {
        let cases = [
            (
                "Memoria asignada vs. reservada",
                "memoria-asignada-vs-reservada",
            ),
            ("¿Qué ocupa la VRAM?", "que-ocupa-la-vram"),
            ("Tamaño en GiB", "tamano-en-gib"),
            ("  --  ", "seccion"),
            ("KV cache (inferencia)", "kv-cache-inferencia"),
            ("Pingüino 7B", "pinguino-7b"),
        ];
        for (text, want) in cases {
            assert_eq!(slugify(text), want, "{text}");
        }
    }

    #[test]
    fn unique_ids() {
        let mut ids = IdAllocator::default();
        assert_eq!(ids.claim("a"), "a");
        assert_eq!(ids.claim("a"), "a-2");
        assert_eq!(ids.claim("a"), "a-3");
        assert_eq!(ids.claim("a-2"), "a-2-2");
    }
}
