//! `cargo xtask bench`: what the site costs its readers and how fast its engines run.
//! The size of every shipped JavaScript, wasm, CSS and HTML file, raw and gzipped (level
//! 9, as a static host's precompression would serve it), from a release build; the
//! estimator's update time; the allocator simulator's out-of-memory path; naive versus
//! tiled attention on this machine's adapter;
//! Lighthouse scores of every page ([`crate::bench_lighthouse`]).

use anyhow::{Context, Result};
use flate2::{Compression, write::GzEncoder};
use serde::Serialize;
use std::fs;
use std::io::Write;
use std::path::Path;

use crate::build;

#[derive(Debug, Serialize)]
struct FileSize {
    file: String,
    raw_bytes: u64,
    gzip_bytes: u64,
}

/// What one page fetches for its islands.
#[derive(Debug, Serialize)]
struct PageLoad {
    page: String,
    /// The hydrate bundle's glue and wasm, the loader and the snippets, gzipped.
    at_load_gzip_bytes: u64,
    /// A second bundle fetched only when its island nears the screen, gzipped.
    later_gzip_bytes: u64,
}

/// One bundle's weight against its budget.
#[derive(Debug, Serialize)]
struct BundleSize {
    krate: &'static str,
    gzip_bytes: u64,
    budget_bytes: Option<u64>,
}

#[derive(Debug, Serialize)]
struct Report {
    files: Vec<FileSize>,
    pages: Vec<PageLoad>,
    /// Every bundle of [`bundles::ALL`], with what ships beside it, gzipped.
    bundles: Vec<BundleSize>,
    estimator_update: Vec<crate::bench_estimator::EstimatorTiming>,
    allocator: crate::bench_allocator::AllocatorBench,
    snapshot: crate::bench_snapshot::SnapshotBench,
    attention: crate::bench_attention::AttentionBench,
    lighthouse: Vec<crate::bench_lighthouse::PageScores>,
}

pub fn gzip_len(bytes: &[u8]) -> Result<u64> {
    let mut enc = GzEncoder::new(Vec::new(), Compression::best());
    enc.write_all(bytes)?;
    Ok(enc.finish()?.len() as u64)
}

fn collect(dir: &Path, dist: &Path, out: &mut Vec<FileSize>) -> Result<()> {
    let mut entries: Vec<_> = fs::read_dir(dir)?.filter_map(|e| e.ok()).collect();
    entries.sort_by_key(|e| e.path());
    for entry in entries {
        let path = entry.path();
        if path.is_dir() {
            collect(&path, dist, out)?;
            continue;
        }
        let shipped = path
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| matches!(e, "js" | "wasm" | "css" | "html" | "json"));
        if !shipped {
            continue;
        }
        let bytes = fs::read(&path)?;
        out.push(FileSize {
            file: path
                .strip_prefix(dist)
                .unwrap_or(&path)
                .display()
                .to_string(),
            raw_bytes: bytes.len() as u64,
            gzip_bytes: gzip_len(&bytes)?,
        });
    }
    Ok(())
}

/// Sums the gzipped size of files whose name starts with one of `stems` + '.'.
fn bundle(files: &[FileSize], stems: &[&str]) -> u64 {
    files
        .iter()
        .filter(|f| {
            let name = f.file.rsplit('/').next().unwrap_or("");
            f.file.starts_with("pkg/") && stems.iter().any(|s| name.starts_with(&format!("{s}.")))
        })
        .map(|f| f.gzip_bytes)
        .sum()
}

/// The value of `attr="…"` in the first tag of `html` that contains `marker`.
fn tag_attr(html: &str, marker: &str, attr: &str) -> Option<String> {
    let at = html.find(marker)?;
    let start = html[..at].rfind('<')?;
    let end = at + html[at..].find('>')?;
    let tag = &html[start..end];
    let key = format!(" {attr}=\"");
    let v = tag.find(&key)? + key.len();
    Some(tag[v..v + tag[v..].find('"')?].to_owned())
}

/// The gzipped size of the shipped file a page's `url` names (base path ignored).
fn size_of(files: &[FileSize], url: &str) -> u64 {
    files
        .iter()
        .filter(|f| url.ends_with(&format!("/{}", f.file)))
        .map(|f| f.gzip_bytes)
        .sum()
}

/// A bundle's glue and wasm and the files weighed with it, gzipped.
fn bundle_bytes(files: &[FileSize], b: &bundles::Bundle) -> u64 {
    let with: u64 = files
        .iter()
        .filter(|f| b.with.iter().any(|w| f.file.starts_with(w)))
        .map(|f| f.gzip_bytes)
        .sum();
    bundle(files, &[b.stem, &format!("{}_bg", b.stem)]) + with
}

fn page_loads(files: &[FileSize], dist: &Path) -> Result<Vec<PageLoad>> {
    // The island loader and wasm-bindgen's snippets load beside every hydrate bundle.
    let shared: u64 = files
        .iter()
        .filter(|f| bundles::LIGHT.with.iter().any(|w| f.file.starts_with(w)))
        .map(|f| f.gzip_bytes)
        .sum();
    let mut pages = Vec::new();
    for f in files.iter().filter(|f| f.file.ends_with("index.html")) {
        let html = fs::read_to_string(dist.join(&f.file))?;
        let Some(wasm) = tag_attr(&html, "id=\"vramlab-islands\"", "data-wasm") else {
            continue;
        };
        let js = tag_attr(&html, "id=\"vramlab-hydrate-js\"", "href").unwrap_or_default();
        let later = ["data-later-js", "data-later-wasm"]
            .iter()
            .filter_map(|a| tag_attr(&html, "id=\"vramlab-islands\"", a))
            .map(|u| size_of(files, &u))
            .sum();
        pages.push(PageLoad {
            page: f.file.trim_end_matches("index.html").to_owned(),
            at_load_gzip_bytes: size_of(files, &wasm) + size_of(files, &js) + shared,
            later_gzip_bytes: later,
        });
    }
    Ok(pages)
}

/// What a release build ships, weighed: every file, every bundle, every page's load.
pub struct Weights {
    files: Vec<FileSize>,
    bundles: Vec<BundleSize>,
    pages: Vec<PageLoad>,
}

/// Weighs the release build in `dist`.
pub fn weigh(dist: &Path) -> Result<Weights> {
    let mut files = Vec::new();
    collect(dist, dist, &mut files)?;
    Ok(Weights {
        pages: page_loads(&files, dist)?,
        bundles: bundles::ALL
            .iter()
            .map(|b| BundleSize {
                krate: b.krate,
                gzip_bytes: bundle_bytes(&files, b),
                budget_bytes: b.budget,
            })
            .collect(),
        files,
    })
}

/// What fails `cargo xtask test`, one line each (empty when nothing does): a bundle or
/// page over its budget and not in [`bundles::OVER_BUDGET`], one there past its ceiling,
/// or an entry there whose bundle or page is within its budget again.
pub fn over_budget(w: &Weights) -> Vec<String> {
    let mut out = Vec::new();
    let mut weighed = |what: &str, bytes: u64, budget: u64, noun: &str| {
        let over = bundles::OVER_BUDGET.iter().find(|o| o.what == what);
        match over {
            None if bytes > budget => out.push(format!(
                "{noun} {what} pesa {bytes} bytes con gzip (presupuesto {budget})"
            )),
            Some(o) if bytes > o.ceiling => out.push(format!(
                "{noun} {what} pesa {bytes} bytes con gzip: ya pasaba de su presupuesto \
                 ({budget}) y no puede crecer más allá de {} mientras no baje",
                o.ceiling
            )),
            Some(_) if bytes <= budget => out.push(format!(
                "{noun} {what} ya cabe en su presupuesto ({bytes} ≤ {budget}): quita su \
                 entrada de bundles::OVER_BUDGET"
            )),
            _ => {}
        }
    };
    for b in &w.bundles {
        if let Some(budget) = b.budget_bytes {
            weighed(b.krate, b.gzip_bytes, budget, "el paquete");
        }
    }
    for p in &w.pages {
        weighed(
            &p.page,
            p.at_load_gzip_bytes,
            bundles::PAGE_BUDGET,
            "la página",
        );
    }
    let named = |what: &str| {
        w.bundles.iter().any(|b| b.krate == what) || w.pages.iter().any(|p| p.page == what)
    };
    for o in bundles::OVER_BUDGET.iter().filter(|o| !named(o.what)) {
        out.push(format!(
            "bundles::OVER_BUDGET nombra «{}», que no es ningún paquete ni página",
            o.what
        ));
    }
    out
}

pub fn run(lighthouse_runs: usize) -> Result<()> {
    let built = build::build(&build::Options {
        release: true,
        base: None,
    })?;
    let Weights {
        files,
        bundles,
        pages,
    } = weigh(&built.dist)?;
    let report = Report {
        pages,
        bundles,
        estimator_update: crate::bench_estimator::run(),
        allocator: crate::bench_allocator::run(),
        snapshot: crate::bench_snapshot::run(),
        attention: crate::bench_attention::run()?,
        lighthouse: if lighthouse_runs == 0 {
            Vec::new()
        } else {
            crate::bench_lighthouse::run(&built.dist, lighthouse_runs)?
        },
        files,
    };
    let out_dir = build::target_dir().join("bench");
    fs::create_dir_all(&out_dir)?;
    fs::write(
        out_dir.join("report.json"),
        serde_json::to_string_pretty(&report)?,
    )
    .context("no se pudo escribir report.json")?;

    let mut md = String::from(
        "# vramlab bench\n\n## Sizes (release build)\n\n| file | raw bytes | gzip bytes |\n| --- | ---: | ---: |\n",
    );
    for f in &report.files {
        md.push_str(&format!(
            "| {} | {} | {} |\n",
            f.file, f.raw_bytes, f.gzip_bytes
        ));
    }
    let verdict = |bytes: u64, budget: u64| if bytes <= budget { "within" } else { "OVER" };
    md.push_str("\n## Bundles (gzip, with what ships beside each)\n\n| bundle | what | gzip bytes | budget |\n| --- | --- | ---: | --- |\n");
    for (b, size) in bundles::ALL.iter().zip(&report.bundles) {
        let budget = match b.budget {
            Some(limit) => format!("{} {limit}", verdict(size.gzip_bytes, limit)),
            None => "—".to_owned(),
        };
        md.push_str(&format!(
            "| {} | {} | {} | {budget} |\n",
            b.krate, b.what, size.gzip_bytes
        ));
    }
    md.push_str(&format!(
        "\n## What each page loads for its islands (gzip; budget {} bytes at load)\n\n| page | at load | verdict | later, when its island nears the screen |\n| --- | ---: | --- | ---: |\n",
        bundles::PAGE_BUDGET
    ));
    for p in &report.pages {
        md.push_str(&format!(
            "| /{} | {} | {} | {} |\n",
            p.page,
            p.at_load_gzip_bytes,
            verdict(p.at_load_gzip_bytes, bundles::PAGE_BUDGET),
            p.later_gzip_bytes
        ));
    }
    md.push_str("\n## Estimator update (native, median of repeats; budget 16 ms per frame)\n\n| case | median µs | min µs | max µs |\n| --- | ---: | ---: | ---: |\n");
    for t in &report.estimator_update {
        md.push_str(&format!(
            "| {} | {:.0} | {:.0} | {:.0} |\n",
            t.case, t.median_us, t.min_us, t.max_us
        ));
    }
    md.push_str(&crate::bench_allocator::markdown(&report.allocator));
    md.push_str(&crate::bench_snapshot::markdown(&report.snapshot));
    md.push_str(&crate::bench_attention::markdown(&report.attention));
    if !report.lighthouse.is_empty() {
        md.push_str(&crate::bench_lighthouse::markdown(
            &report.lighthouse,
            lighthouse_runs,
        ));
    }
    fs::write(out_dir.join("report.md"), &md)?;
    println!("{md}");
    println!("informe: {}", out_dir.join("report.json").display());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn weights(bundle: u64, page: u64) -> Weights {
        Weights {
            files: Vec::new(),
            bundles: vec![
                BundleSize {
                    krate: "hydrate-tools",
                    gzip_bytes: bundle,
                    budget_bytes: Some(200_000),
                },
                BundleSize {
                    krate: "search-web",
                    gzip_bytes: 10_000_000,
                    budget_bytes: None,
                },
            ],
            pages: vec![
                PageLoad {
                    page: "estimador/".into(),
                    at_load_gzip_bytes: page,
                    later_gzip_bytes: 10_000_000,
                },
                PageLoad {
                    page: "estimador/".into(),
                    at_load_gzip_bytes: bundles::PAGE_BUDGET + 1,
                    later_gzip_bytes: 0,
                },
            ],
        }
    }

    /// Only what has a budget counts, at the byte: equal is within; a bundle over
    /// budget may not pass its ceiling, and its entry goes once it is back under.
    #[test]
    fn budgets_fail_past_their_last_byte_and_ceilings_only_shrink() {
        let tools = bundles::OVER_BUDGET
            .iter()
            .find(|o| o.what == "hydrate-tools")
            .unwrap();
        let mut w = weights(tools.ceiling, bundles::PAGE_BUDGET);
        w.bundles[0].krate = "hydrate-tools";
        w.pages[0].page = "otra/".into();
        assert!(over_budget(&w).is_empty(), "{:?}", over_budget(&w));
        w.bundles[0].gzip_bytes = tools.ceiling + 1;
        w.pages[0].at_load_gzip_bytes = bundles::PAGE_BUDGET + 1;
        let over = over_budget(&w);
        assert_eq!(over.len(), 2, "{over:?}");
        assert!(over[0].contains("hydrate-tools") && over[0].contains("no puede crecer"));
        assert!(over[1].contains("otra/"));
        w.bundles[0].gzip_bytes = 200_000;
        w.pages[0].at_load_gzip_bytes = 1;
        let over = over_budget(&w);
        assert_eq!(over.len(), 1, "{over:?}");
        assert!(over[0].contains("quita su entrada"));
        // A bundle with no entry fails past its budget.
        w.bundles[0].krate = "hydrate-diag";
        w.bundles[0].gzip_bytes = 200_001;
        let over = over_budget(&w);
        assert_eq!(over.len(), 2, "{over:?}");
        // hydrate-tools is weighed no more: its entry names nothing.
        assert!(over[1].contains("«hydrate-tools»"), "{over:?}");
    }
}
