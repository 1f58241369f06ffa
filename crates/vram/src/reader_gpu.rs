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

#[cfg(test)]
mod tests {
    use super::*;

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
