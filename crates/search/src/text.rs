//! Words: splitting text into tokens, folding accents, stemming, stop words.

use rust_stemmers::{Algorithm, Stemmer};

/// Longest token kept; longer runs (hashes, base64) are noise for a reader's search.
pub const MAX_TOKEN_CHARS: usize = 40;

/// Spanish function words that carry no meaning on their own (folded, so "más" is
/// listed as "mas"). A query made only of them still searches for them.
const STOP_WORDS: &[&str] = &[
    "a", "al", "algo", "ante", "asi", "aun", "bajo", "cada", "como", "con", "cual", "cuando", "de",
    "del", "desde", "donde", "dos", "e", "el", "ella", "ellas", "ellos", "en", "entre", "era",
    "es", "esa", "ese", "eso", "esta", "estan", "este", "esto", "estos", "fue", "ha", "hace",
    "han", "hasta", "hay", "la", "las", "le", "les", "lo", "los", "mas", "me", "mi", "muy", "ni",
    "no", "nos", "o", "otra", "otro", "para", "pero", "poco", "por", "porque", "que", "se", "sea",
    "segun", "ser", "si", "sin", "sino", "sobre", "son", "su", "sus", "tambien", "tan", "te",
    "tiene", "todo", "tu", "u", "un", "una", "uno", "unos", "y", "ya", "yo",
];

/// Lowercases and removes diacritics from the letters Spanish (and its loanwords) use:
/// "Atención" → "atencion", "Ñandú" → "nandu". Other characters are lowercased only.
pub fn fold(word: &str) -> String {
    word.chars()
        .flat_map(char::to_lowercase)
        .map(fold_char)
        .collect()
}

fn fold_char(c: char) -> char {
    match c {
        'á' | 'à' | 'â' | 'ä' | 'ã' | 'å' => 'a',
        'é' | 'è' | 'ê' | 'ë' => 'e',
        'í' | 'ì' | 'î' | 'ï' => 'i',
        'ó' | 'ò' | 'ô' | 'ö' | 'õ' => 'o',
        'ú' | 'ù' | 'û' | 'ü' => 'u',
        'ñ' => 'n',
        'ç' => 'c',
        'ý' | 'ÿ' => 'y',
        other => other,
    }
}

/// Whether a folded token is a stop word.
pub fn is_stop_word(folded: &str) -> bool {
    STOP_WORDS.binary_search(&folded).is_ok()
}

/// The lowercase words of `text`, in order: runs of letters and digits. Identifiers
/// split at `_` and `.` ("max_split_size_mb" gives four words), so code and prose
/// meet. Tokens longer than [`MAX_TOKEN_CHARS`] are dropped.
pub fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty() && w.chars().count() <= MAX_TOKEN_CHARS)
        .map(|w| w.chars().flat_map(char::to_lowercase).collect())
}

/// The forms a word is indexed and looked up under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Forms {
    /// The word folded: "asignación" → "asignacion".
    pub surface: String,
    /// Its Spanish stem, folded: "asignación" → "asign".
    pub stem: String,
    /// The stem of the folded word. Snowball's rules expect accents, so "cachés"
    /// stems to "caches" but "caches" to "cach"; indexing and querying both stems
    /// lets accented and plain spellings meet.
    pub plain_stem: String,
}

impl Forms {
    /// The distinct forms, surface first.
    pub fn distinct(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::with_capacity(3);
        for f in [&self.surface, &self.stem, &self.plain_stem] {
            if !f.is_empty() && !out.contains(&f.as_str()) {
                out.push(f);
            }
        }
        out
    }
}

/// Turns lowercase words into [`Forms`], reusing one stemmer.
pub struct Analyzer {
    stemmer: Stemmer,
}

impl std::fmt::Debug for Analyzer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Analyzer(es)")
    }
}

impl Default for Analyzer {
    fn default() -> Self {
        Self {
            stemmer: Stemmer::create(Algorithm::Spanish),
        }
    }
}

impl Analyzer {
    /// The forms of one lowercase word. The stemmer sees the accented word (Snowball's
    /// Spanish rules are written for it) and its output is folded afterwards.
    pub fn forms(&self, word: &str) -> Forms {
        let surface = fold(word);
        Forms {
            stem: fold(&self.stemmer.stem(word)),
            plain_stem: self.stemmer.stem(&surface).into_owned(),
            surface,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_words_are_sorted_and_folded() {
        let mut sorted = STOP_WORDS.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted, STOP_WORDS);
        for w in STOP_WORDS {
            assert_eq!(&fold(w), w);
        }
        assert!(is_stop_word("mas"));
        assert!(!is_stop_word("memoria"));
    }

    #[test]
    fn folding() {
        for (input, folded) in [
            ("Atención", "atencion"),
            ("CACHÉ", "cache"),
            ("Ñandú", "nandu"),
            ("pingüino", "pinguino"),
            ("déjà", "deja"),
            ("bf16", "bf16"),
            ("Σ", "σ"),
        ] {
            assert_eq!(fold(input), folded, "{input}");
        }
    }

    #[test]
    fn splitting() {
        let cases: &[(&str, &[&str])] = &[
            (
                "Memoria asignada, reservada.",
                &["memoria", "asignada", "reservada"],
            ),
            (
                "max_split_size_mb:128",
                &["max", "split", "size", "mb", "128"],
            ),
            (
                "torch.cuda.OutOfMemoryError",
                &["torch", "cuda", "outofmemoryerror"],
            ),
            ("¿Qué es la caché KV?", &["qué", "es", "la", "caché", "kv"]),
            ("", &[]),
            ("  —  ", &[]),
        ];
        for (text, want) in cases {
            let got: Vec<String> = words(text).collect();
            assert_eq!(got, *want, "{text}");
        }
        let long = "a".repeat(MAX_TOKEN_CHARS + 1);
        assert_eq!(words(&long).count(), 0);
    }
}
