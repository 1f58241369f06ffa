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

/// Budget for the hydrate bundle every text page loads (wasm + js, gzipped).
pub const HYDRATE_BUDGET: u64 = 200 * 1000;
/// Budget for the tools bundle of pages with the estimator (the island without its
/// engine, which `estimate-web` brings on the first change): every page at load within
/// 200 KB gzip (issue 20).
pub const TOOLS_BUDGET: u64 = 200 * 1000;
/// Budget for the debugging chapter's bundle (OOM explainer, snapshot viewer).
pub const DIAG_BUDGET: u64 = 200 * 1000;
/// Budget for the allocator lab's bundle, which its chapter loads only when the lab
/// nears the screen (not at load; a guard against regressions).
pub const LAB_BUDGET: u64 = 250 * 1000;
/// Budget for what every page loads at once: its hydrate bundle, the island loader and
/// the snippets (issue 20).
pub const PAGE_BUDGET: u64 = 200 * 1000;
/// Budget for the FlashAttention chapter's bundle (the light islands plus the demo;
/// the GPU code itself is the separate, lazily loaded `gpu-web` bundle).
pub const ATTENTION_BUDGET: u64 = 200 * 1000;
/// Budget for the home page's bundle (the light islands plus the explainer's and the
/// quick estimator's views): every page at load within 200 KB gzip (issue 20).
pub const HOME_BUDGET: u64 = 200 * 1000;
/// Budget for the embeddable widget (its loader script, glue and wasm, gzipped; issue
/// 20 asks for 150 KB).
pub const EMBED_BUDGET: u64 = 150 * 1000;

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

#[derive(Debug, Serialize)]
struct Report {
    files: Vec<FileSize>,
    pages: Vec<PageLoad>,
    hydrate_bundle_gzip_bytes: u64,
    hydrate_budget_bytes: u64,
    /// The bundle of pages with heavy islands (the estimator).
    tools_bundle_gzip_bytes: u64,
    /// The debugging chapter's bundle (explainer, snapshot viewer).
    diag_bundle_gzip_bytes: u64,
    /// The allocator lab's bundle, loaded when the lab nears the screen.
    lab_bundle_gzip_bytes: u64,
    /// The bundle of the FlashAttention chapter (the attention demo).
    attention_bundle_gzip_bytes: u64,
    /// The home page's bundle (explainer and quick estimator; their work is the
    /// worker's, loaded on the first paste, and `estimate-web`'s, on the first change).
    home_bundle_gzip_bytes: u64,
    gpu_bundle_gzip_bytes: u64,
    /// The search engine and its index, loaded when the search box is first focused.
    search_bundle_gzip_bytes: u64,
    search_index_gzip_bytes: u64,
    /// The model importer (Hub fetches, weights-file headers), loaded on the first import.
    import_bundle_gzip_bytes: u64,
    /// The estimators' engine and answers (`estimate-web`), loaded on an estimator's
    /// first change: the first answer is in the page's HTML.
    estimate_bundle_gzip_bytes: u64,
    /// The diagnostics worker (its loader, glue and wasm), started on the first file a
    /// reader opens in the snapshot viewer or the allocator lab.
    worker_bundle_gzip_bytes: u64,
    /// The embeddable widget: `embed/vram-estimador.js` plus its glue and wasm.
    embed_bundle_gzip_bytes: u64,
    estimator_update: Vec<crate::bench_estimator::EstimatorTiming>,
    allocator: crate::bench_allocator::AllocatorBench,
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

/// The island loader and wasm-bindgen's snippets, which every page with islands loads
/// beside its bundle, gzipped.
fn loader_bytes(files: &[FileSize]) -> u64 {
    files
        .iter()
        .filter(|f| f.file.starts_with("pkg/snippets/") || f.file.contains("/islands."))
        .map(|f| f.gzip_bytes)
        .sum()
}

/// What each page with islands loads at once, and later.
fn page_loads(files: &[FileSize], dist: &Path) -> Result<Vec<PageLoad>> {
    let shared = loader_bytes(files);
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

pub fn run(lighthouse_runs: usize) -> Result<()> {
    let built = build::build(&build::Options {
        release: true,
        base: None,
    })?;
    let mut files = Vec::new();
    collect(&built.dist, &built.dist, &mut files)?;
    let report = Report {
        pages: page_loads(&files, &built.dist)?,
        tools_bundle_gzip_bytes: bundle(&files, &["hydrate_tools", "hydrate_tools_bg"]),
        diag_bundle_gzip_bytes: bundle(&files, &["hydrate_diag", "hydrate_diag_bg"]),
        lab_bundle_gzip_bytes: bundle(&files, &["hydrate_lab", "hydrate_lab_bg"]),
        attention_bundle_gzip_bytes: bundle(&files, &["hydrate_attention", "hydrate_attention_bg"]),
        home_bundle_gzip_bytes: bundle(&files, &["hydrate_home", "hydrate_home_bg"]),
        hydrate_bundle_gzip_bytes: bundle(&files, &["hydrate", "hydrate_bg"])
            + loader_bytes(&files),
        hydrate_budget_bytes: HYDRATE_BUDGET,
        gpu_bundle_gzip_bytes: bundle(&files, &["gpu_web", "gpu_web_bg"]),
        search_bundle_gzip_bytes: bundle(&files, &["search_web", "search_web_bg"]),
        search_index_gzip_bytes: files
            .iter()
            .filter(|f| f.file.contains("search-index."))
            .map(|f| f.gzip_bytes)
            .sum(),
        import_bundle_gzip_bytes: bundle(&files, &["import_web", "import_web_bg"]),
        estimate_bundle_gzip_bytes: bundle(&files, &["estimate_web", "estimate_web_bg"]),
        worker_bundle_gzip_bytes: bundle(&files, &["worker_web", "worker_web_bg"])
            + files
                .iter()
                .filter(|f| f.file.starts_with("assets/worker."))
                .map(|f| f.gzip_bytes)
                .sum::<u64>(),
        embed_bundle_gzip_bytes: bundle(&files, &["embed", "embed_bg"])
            + files
                .iter()
                .filter(|f| f.file == "embed/vram-estimador.js")
                .map(|f| f.gzip_bytes)
                .sum::<u64>(),
        estimator_update: crate::bench_estimator::run(),
        allocator: crate::bench_allocator::run(),
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
    md.push_str(&format!(
        "\nHydrate bundle (wasm + js + loader + snippets), gzipped: **{} bytes** ({} the {} byte budget).\n\
         Tools bundle (the estimator: its page at load, the VRAM anatomy chapter later; wasm + js), gzipped: {} bytes ({} the {} byte budget).\n\
         Debugging bundle (OOM explainer, snapshot viewer; wasm + js), gzipped: {} bytes ({} the {} byte budget).\n\
         Lab bundle (allocator lab, loaded when it nears the screen; wasm + js), gzipped: {} bytes ({} the {} byte budget).\n\
         Attention bundle (FlashAttention chapter: light islands + demo; wasm + js), gzipped: {} bytes ({} the {} byte budget).\n\
         Home bundle (home page: light islands + explainer and quick estimator views; wasm + js), gzipped: {} bytes ({} the {} byte budget).\n\
         GPU bundle (loaded on demand), gzipped: {} bytes.\n\
         Search engine (loaded on the search box's first focus), gzipped: {} bytes, plus its index: {} bytes.\n\
         Model importer (loaded on the estimator's first import), gzipped: {} bytes.\n\
         Estimator engine (estimate-web: loaded on an estimator's first change, on its page, in the VRAM anatomy chapter or on the home page; the first answer is in the HTML), gzipped: {} bytes.\n\
         Diagnostics worker (loader + glue + wasm; started on the first paste explained or file opened), gzipped: {} bytes.\n\
         Embeddable widget (loader + glue + wasm), gzipped: {} bytes ({} the {} byte budget).\n",
        report.hydrate_bundle_gzip_bytes,
        verdict(report.hydrate_bundle_gzip_bytes, HYDRATE_BUDGET),
        HYDRATE_BUDGET,
        report.tools_bundle_gzip_bytes,
        verdict(report.tools_bundle_gzip_bytes, TOOLS_BUDGET),
        TOOLS_BUDGET,
        report.diag_bundle_gzip_bytes,
        verdict(report.diag_bundle_gzip_bytes, DIAG_BUDGET),
        DIAG_BUDGET,
        report.lab_bundle_gzip_bytes,
        verdict(report.lab_bundle_gzip_bytes, LAB_BUDGET),
        LAB_BUDGET,
        report.attention_bundle_gzip_bytes,
        verdict(report.attention_bundle_gzip_bytes, ATTENTION_BUDGET),
        ATTENTION_BUDGET,
        report.home_bundle_gzip_bytes,
        verdict(report.home_bundle_gzip_bytes, HOME_BUDGET),
        HOME_BUDGET,
        report.gpu_bundle_gzip_bytes,
        report.search_bundle_gzip_bytes,
        report.search_index_gzip_bytes,
        report.import_bundle_gzip_bytes,
        report.estimate_bundle_gzip_bytes,
        report.worker_bundle_gzip_bytes,
        report.embed_bundle_gzip_bytes,
        verdict(report.embed_bundle_gzip_bytes, EMBED_BUDGET),
        EMBED_BUDGET
    ));
    md.push_str(&format!(
        "\n## What each page loads for its islands (gzip; budget {PAGE_BUDGET} bytes at load)\n\n| page | at load | verdict | later, when its island nears the screen |\n| --- | ---: | --- | ---: |\n"
    ));
    for p in &report.pages {
        md.push_str(&format!(
            "| /{} | {} | {} | {} |\n",
            p.page,
            p.at_load_gzip_bytes,
            verdict(p.at_load_gzip_bytes, PAGE_BUDGET),
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
