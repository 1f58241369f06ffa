//! The reader's GPU as the browser names it through WebGPU (`GPUAdapter.info`: vendor,
//! architecture, and a description some browsers give), matched to the catalog: a card
//! when the description names one, else the cards of its architecture. Pages offer it
//! as a suggestion the reader can change; nothing here decides for them.
//!
//! Architecture names are Dawn's (Chromium's WebGPU), from its `gpu_info.json`:
//! `lovelace`, `ampere`, `turing`, `pascal`, `volta`, `blackwell` for NVIDIA, `rdna-3`,
//! `rdna-4` for AMD, `xe-2hpg` for Intel's Battlemage; Safari reports vendor `apple`.

use crate::catalog::{self, Gpu};

/// (WebGPU architecture, catalog family, how to say it).
const FAMILIES: &[(&str, &str, &str)] = &[
    ("blackwell", "blackwell", "Blackwell"),
    ("lovelace", "ada", "Ada Lovelace"),
    ("hopper", "hopper", "Hopper"),
    ("ampere", "ampere", "Ampere"),
    ("turing", "turing", "Turing"),
    ("volta", "volta", "Volta"),
    ("pascal", "pascal", "Pascal"),
    ("rdna-4", "rdna4", "RDNA 4"),
    ("rdna-3", "rdna3", "RDNA 3"),
    ("xe-2hpg", "xe2", "Xe2"),
];

/// Names of the cards a desktop or a laptop with a browser has (not a server's).
const DESKTOP: &[&str] = &[
    "GeForce",
    "NVIDIA RTX",
    "NVIDIA TITAN",
    "AMD Radeon",
    "Intel Arc",
    "Apple",
];

/// The most characters read from each of the browser's strings.
const MAX_CHARS: usize = 120;

/// What the browser's adapter says, matched to the catalog.
#[derive(Clone, Debug, PartialEq)]
pub struct Guess {
    /// The card the description names.
    pub card: Option<&'static Gpu>,
    /// The catalog's cards of that architecture (desktop ones first), when no card is
    /// named: the reader picks.
    pub family: Vec<&'static Gpu>,
    /// What the browser said, in Spanish ("una GPU NVIDIA de arquitectura Ampere").
    pub said: String,
}

fn clip(s: &str) -> String {
    s.chars()
        .take(MAX_CHARS)
        .collect::<String>()
        .trim()
        .to_owned()
}

/// The catalog's reading of `GPUAdapter.info`; `None` when it names nothing the catalog
/// has (a software renderer, an integrated GPU of an unknown family).
pub fn guess(vendor: &str, architecture: &str, description: &str) -> Option<Guess> {
    let vendor = clip(vendor).to_ascii_lowercase();
    let architecture = clip(architecture).to_ascii_lowercase();
    let description = clip(description);
    let words: Vec<String> = description
        .to_ascii_lowercase()
        .split_whitespace()
        .map(str::to_owned)
        .collect();
    if let Some((card, _)) = crate::shortcut::card(&words) {
        return Some(Guess {
            card: Some(card),
            family: Vec::new(),
            said: format!("una {description}"),
        });
    }
    let (family, name) = if vendor == "apple" {
        ("apple", "Apple")
    } else {
        let (_, family, name) = FAMILIES.iter().find(|(a, _, _)| *a == architecture)?;
        (*family, *name)
    };
    let of_family = |g: &&'static Gpu| g.family == family;
    // Desktop cards, in the order of `DESKTOP` (a GeForce before a workstation card).
    let kind = |g: &Gpu| DESKTOP.iter().position(|d| g.name.starts_with(d));
    let mut desktop: Vec<&'static Gpu> = catalog::gpus()
        .iter()
        .filter(of_family)
        .filter(|g| kind(g).is_some())
        .collect();
    desktop.sort_by_key(|g| kind(g));
    let cards = if desktop.is_empty() {
        catalog::gpus().iter().filter(of_family).collect()
    } else {
        desktop
    };
    if cards.is_empty() {
        return None;
    }
    let maker = match vendor.as_str() {
        "nvidia" => "NVIDIA ",
        "amd" => "AMD ",
        "intel" => "Intel ",
        _ => "",
    };
    Some(Guess {
        card: None,
        family: cards,
        said: if vendor == "apple" {
            "un Mac con Apple Silicon".to_owned()
        } else {
            format!("una GPU {maker}de arquitectura {name}")
        },
    })
}

/// Words of a description that names a card the catalog may have.
const MAKERS: &[&str] = &["nvidia", "geforce", "radeon", "amd", "intel", "apple"];

/// Whether `GPUAdapter.info` may name something the catalog has: an architecture it
/// knows, Apple, or a description by a maker of catalog cards. The estimator page asks
/// the engine's bundle for a [`guess`] only then, so a software renderer (SwiftShader,
/// llvmpipe) costs no download.
pub fn worth_asking(vendor: &str, architecture: &str, description: &str) -> bool {
    let architecture = clip(architecture).to_ascii_lowercase();
    let description = clip(description).to_ascii_lowercase();
    vendor.trim().eq_ignore_ascii_case("apple")
        || FAMILIES.iter().any(|(a, _, _)| *a == architecture)
        || MAKERS.iter().any(|m| description.contains(m))
}

/// A guess as the estimator page shows it, carried between the engine's bundle and the
/// page as a query string (`said`, `chosen` and `chosen-name` for a named card, then a
/// `card` and `name` pair per card of the family).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Suggestion {
    pub said: String,
    /// (id, name) of the card the description named.
    pub chosen: Option<(String, String)>,
    /// (id, name) of the architecture's cards, when no card was named.
    pub cards: Vec<(String, String)>,
}

impl Guess {
    /// The page's form of this guess.
    pub fn to_query(&self) -> String {
        let mut q = form_urlencoded::Serializer::new(String::new());
        q.append_pair("said", &self.said);
        if let Some(c) = self.card {
            q.append_pair("chosen", &c.id);
            q.append_pair("chosen-name", &c.name);
        }
        for g in &self.family {
            q.append_pair("card", &g.id);
            q.append_pair("name", &g.name);
        }
        q.finish()
    }
}

impl Suggestion {
    /// What the page says under its GPU picker: the card chosen and that it can be
    /// changed, or what the browser said and a question.
    pub fn sentence(said: &str, chosen: Option<&str>) -> String {
        match chosen {
            Some(name) => format!(
                "GPU elegida por lo que dice tu navegador (WebGPU): {said}, {name}. Cámbiala arriba si no es la tuya."
            ),
            None => format!("Tu navegador (WebGPU) indica {said}. ¿Cuál es la tuya?"),
        }
    }

    /// Reads [`Guess::to_query`]; `None` without `said`. At most 64 cards.
    pub fn from_query(query: &str) -> Option<Suggestion> {
        let mut said = None;
        let (mut chosen, mut chosen_name) = (None, None);
        let mut cards = Vec::new();
        let mut id = None;
        for (k, v) in form_urlencoded::parse(query.as_bytes()).take(2 * 64 + 3) {
            if cards.len() == 64 {
                break;
            }
            match &*k {
                "said" => said = Some(v.into_owned()),
                "chosen" => chosen = Some(v.into_owned()),
                "chosen-name" => chosen_name = Some(v.into_owned()),
                "card" => id = Some(v.into_owned()),
                "name" => {
                    if let Some(id) = id.take() {
                        cards.push((id, v.into_owned()));
                    }
                }
                _ => {}
            }
        }
        Some(Suggestion {
            said: said?,
            chosen: chosen.zip(chosen_name),
            cards,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the engine's bundle writes is what the page reads.
    #[test]
    fn suggestions_travel_intact() {
        for (vendor, arch, desc) in [
            ("nvidia", "lovelace", "NVIDIA GeForce RTX 4070 Ti"),
            ("nvidia", "ampere", ""),
            ("apple", "", ""),
        ] {
            let g = guess(vendor, arch, desc).unwrap();
            let s = Suggestion::from_query(&g.to_query()).unwrap();
            assert_eq!(s.said, g.said);
            assert_eq!(s.chosen, g.card.map(|c| (c.id.clone(), c.name.clone())));
            let cards: Vec<(String, String)> = g
                .family
                .iter()
                .map(|c| (c.id.clone(), c.name.clone()))
                .collect();
            assert_eq!(s.cards, cards);
        }
        assert_eq!(Suggestion::from_query("card=x&name=y"), None);
        let many = "said=a&".to_owned() + &"card=x&name=y&".repeat(1000);
        assert!(Suggestion::from_query(&many).unwrap().cards.len() <= 64);
    }

    #[test]
    fn only_adapters_that_may_name_a_card_are_asked_about() {
        for (vendor, arch, desc, want) in [
            ("nvidia", "lovelace", "", true),
            ("apple", "", "", true),
            ("", "", "NVIDIA GeForce RTX 3060", true),
            ("google", "swiftshader", "", false),
            ("mesa", "", "llvmpipe (LLVM 19.1.7, 256 bits)", false),
            ("mesa", "", "llvmpipe", false),
            ("", "", "", false),
        ] {
            assert_eq!(
                worth_asking(vendor, arch, desc),
                want,
                "{vendor} {arch} {desc}"
            );
        }
    }

    fn ids(g: &Guess) -> Vec<&str> {
        g.family.iter().map(|g| g.id.as_str()).collect()
    }

    #[test]
    fn a_description_names_the_card() {
        let g = guess("nvidia", "lovelace", "NVIDIA GeForce RTX 4070 Ti").unwrap();
        assert_eq!(g.card.map(|c| c.id.as_str()), Some("rtx-4070-ti"));
        assert_eq!(g.said, "una NVIDIA GeForce RTX 4070 Ti");
    }

    #[test]
    fn an_architecture_offers_its_desktop_cards() {
        let g = guess("nvidia", "lovelace", "").unwrap();
        assert_eq!(g.card, None);
        assert_eq!(ids(&g)[0], "rtx-4090");
        assert!(ids(&g).contains(&"rtx-4060-ti-16gb") && ids(&g).contains(&"rtx-6000-ada"));
        assert!(!ids(&g).contains(&"l4"), "{:?}", ids(&g));
        assert_eq!(g.said, "una GPU NVIDIA de arquitectura Ada Lovelace");
        let g = guess("amd", "rdna-3", "").unwrap();
        assert!(ids(&g).contains(&"rx-7900-xtx"));
        let g = guess("apple", "metal-3", "").unwrap();
        assert!(
            ids(&g).iter().all(|id| id.starts_with('m')),
            "{:?}",
            ids(&g)
        );
    }

    #[test]
    fn software_and_unknown_adapters_say_nothing() {
        assert_eq!(guess("google", "swiftshader", ""), None);
        assert_eq!(guess("mesa", "", "llvmpipe (LLVM 19.1.7, 256 bits)"), None);
        assert_eq!(guess("intel", "gen-12lp", ""), None);
        assert_eq!(
            guess(
                &"x".repeat(1 << 20),
                &"y".repeat(1 << 20),
                &"4090 ".repeat(1 << 18)
            )
            .map(|g| g.card.is_some()),
            Some(true)
        );
    }
}
