//! Lighthouse on every page of the release site, served by [`crate::serve`] (with
//! gzip and the production headers) and audited by npm's `lighthouse` 12.2.3 driving
//! Debian's Chromium. Lighthouse's default is a mid-range phone on a throttled
//! network (simulated), the strictest of its presets. The goals come from issue 6:
//! performance ≥ 95, accessibility 100, best practices ≥ 95, SEO 100.

use anyhow::{Context, Result, bail};
use serde::Serialize;
use serde_json::Value;
use std::fs;
use std::path::Path;
use std::process::Command;

use crate::{build, cmd, root, serve, system};

/// (Lighthouse category id, label in the report, lowest passing score 0–1).
pub const GOALS: [(&str, &str, f64); 4] = [
    ("performance", "performance", 0.95),
    ("accessibility", "accessibility", 1.0),
    ("best-practices", "best practices", 0.95),
    ("seo", "SEO", 1.0),
];

/// One page's result (the median of the runs, category by category).
#[derive(Debug, Clone, Serialize)]
pub struct PageScores {
    pub path: String,
    /// Scores 0–100 in the order of [`GOALS`]; `None` when Lighthouse gave none.
    pub scores: Vec<Option<f64>>,
    pub lcp_ms: Option<f64>,
    pub tbt_ms: Option<f64>,
    pub cls: Option<f64>,
    /// Audits that cost points in a category below its goal ("category: audit-id").
    pub failing: Vec<String>,
}

impl PageScores {
    pub fn meets_goals(&self) -> bool {
        self.scores
            .iter()
            .zip(GOALS)
            .all(|(s, (_, _, min))| s.is_some_and(|s| s + 1e-9 >= min * 100.0))
    }
}

/// Installs Lighthouse from the lock file the first time.
fn ensure_installed(dir: &Path) -> Result<()> {
    if dir.join("node_modules/lighthouse/cli/index.js").is_file() {
        return Ok(());
    }
    cmd::run(
        Command::new("npm")
            .args(["ci", "--no-audit", "--no-fund"])
            .current_dir(dir),
    )
}

/// The paths listed in `dist/sitemap.xml` ("" for the home page).
fn sitemap_paths(dist: &Path) -> Result<Vec<String>> {
    let xml = fs::read_to_string(dist.join("sitemap.xml")).context("falta dist/sitemap.xml")?;
    let paths: Vec<String> = xml
        .split("<loc>")
        .skip(1)
        .filter_map(|rest| rest.split("</loc>").next())
        .map(|loc| {
            let after_scheme = loc.split_once("://").map_or(loc, |(_, r)| r);
            let path = after_scheme.find('/').map_or("", |i| &after_scheme[i..]);
            path.trim_start_matches('/').to_owned()
        })
        .collect();
    if paths.is_empty() {
        bail!("sitemap.xml no lista ninguna página");
    }
    Ok(paths)
}

/// Runs Lighthouse `runs` times on every page of `dist` and keeps the medians.
pub fn run(dist: &Path, runs: usize) -> Result<Vec<PageScores>> {
    system::ensure_packages(true)?;
    let tool = root().join("tools").join("lighthouse");
    ensure_installed(&tool)?;
    let out_dir = build::target_dir().join("bench").join("lighthouse");
    fs::create_dir_all(&out_dir)?;
    let server = serve::start(dist, 0, None, true)?;
    let mut pages = Vec::new();
    for path in sitemap_paths(dist)? {
        let mut reports = Vec::new();
        for i in 0..runs.max(1) {
            let name = if path.is_empty() {
                "portada"
            } else {
                path.trim_end_matches('/')
            };
            let file = out_dir.join(format!("{}-{i}.json", name.replace('/', "_")));
            let url = format!("{}{path}", server.url);
            cmd::run(
                Command::new("node")
                    .arg(tool.join("node_modules/lighthouse/cli/index.js"))
                    .arg(&url)
                    .args([
                        "--output=json",
                        "--quiet",
                        "--only-categories=performance,accessibility,best-practices,seo",
                        "--chrome-flags=--headless=new --no-sandbox --disable-dev-shm-usage \
                         --disable-background-networking --disable-component-update \
                         --no-first-run --disable-sync",
                    ])
                    .arg(format!("--output-path={}", file.display()))
                    .env("CHROME_PATH", system::CHROMIUM),
            )?;
            let text = fs::read_to_string(&file)
                .with_context(|| format!("Lighthouse no escribió {}", file.display()))?;
            reports.push(serde_json::from_str::<Value>(&text)?);
        }
        pages.push(summarize(&path, &reports));
    }
    Ok(pages)
}

fn median(mut xs: Vec<f64>) -> Option<f64> {
    if xs.is_empty() {
        return None;
    }
    xs.sort_by(f64::total_cmp);
    xs.get(xs.len() / 2).copied()
}

/// Medians of several Lighthouse JSON reports of one page.
pub fn summarize(path: &str, reports: &[Value]) -> PageScores {
    let metric = |audit: &str| {
        median(
            reports
                .iter()
                .filter_map(|r| r["audits"][audit]["numericValue"].as_f64())
                .collect(),
        )
    };
    let scores: Vec<Option<f64>> = GOALS
        .iter()
        .map(|(id, _, _)| {
            median(
                reports
                    .iter()
                    .filter_map(|r| r["categories"][id]["score"].as_f64())
                    .map(|s| (s * 100.0).round())
                    .collect(),
            )
        })
        .collect();
    let mut failing = Vec::new();
    for ((id, _, min), score) in GOALS.iter().zip(&scores) {
        if score.is_some_and(|s| s + 1e-9 >= min * 100.0) {
            continue;
        }
        for report in reports {
            let refs = report["categories"][id]["auditRefs"].as_array();
            for r in refs.into_iter().flatten() {
                let weight = r["weight"].as_f64().unwrap_or(0.0);
                let audit_id = r["id"].as_str().unwrap_or("");
                let audit_score = report["audits"][audit_id]["score"].as_f64();
                if weight > 0.0 && audit_score.is_some_and(|s| s < 0.9) {
                    let entry = format!("{id}: {audit_id}");
                    if !failing.contains(&entry) {
                        failing.push(entry);
                    }
                }
            }
        }
    }
    PageScores {
        path: format!("/{path}"),
        scores,
        lcp_ms: metric("largest-contentful-paint"),
        tbt_ms: metric("total-blocking-time"),
        cls: metric("cumulative-layout-shift"),
        failing,
    }
}

/// The report's Lighthouse section.
pub fn markdown(pages: &[PageScores], runs: usize) -> String {
    let mut md = format!(
        "\n## Lighthouse 12.2.3 (mobile preset, simulated throttling; median of {runs} run(s) per page)\n\n\
         Goals: performance ≥ 95, accessibility 100, best practices ≥ 95, SEO 100.\n\n\
         | page | performance | accessibility | best practices | SEO | LCP ms | TBT ms | CLS | goals |\n\
         | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n"
    );
    let num =
        |x: Option<f64>, digits: usize| x.map_or("–".to_owned(), |v| format!("{v:.digits$}"));
    for p in pages {
        let scores: Vec<String> = p.scores.iter().map(|s| num(*s, 0)).collect();
        md.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} |\n",
            p.path,
            scores.join(" | "),
            num(p.lcp_ms, 0),
            num(p.tbt_ms, 0),
            num(p.cls, 3),
            if p.meets_goals() { "met" } else { "MISSED" }
        ));
    }
    let missed: Vec<&PageScores> = pages.iter().filter(|p| !p.meets_goals()).collect();
    if missed.is_empty() {
        md.push_str("\nEvery page meets every goal.\n");
    } else {
        md.push_str("\nAudits that cost points:\n\n");
        for p in missed {
            md.push_str(&format!("- {}: {}\n", p.path, p.failing.join(", ")));
        }
    }
    md
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(perf: f64, a11y: f64) -> Value {
        serde_json::json!({
            "categories": {
                "performance": {"score": perf, "auditRefs": [{"id": "total-blocking-time", "weight": 30}]},
                "accessibility": {"score": a11y, "auditRefs": [{"id": "color-contrast", "weight": 7}, {"id": "unused", "weight": 0}]},
                "best-practices": {"score": 1.0, "auditRefs": []},
                "seo": {"score": 1.0, "auditRefs": []}
            },
            "audits": {
                "total-blocking-time": {"score": 0.5, "numericValue": 420.0},
                "color-contrast": {"score": 0.0},
                "unused": {"score": 0.0},
                "largest-contentful-paint": {"numericValue": 1800.0},
                "cumulative-layout-shift": {"numericValue": 0.0}
            }
        })
    }

    #[test]
    fn medians_and_failing_audits() {
        let reports = [report(0.90, 0.96), report(0.99, 0.96), report(0.97, 0.96)];
        let p = summarize("anatomia-vram/", &reports);
        assert_eq!(p.path, "/anatomia-vram/");
        assert_eq!(p.scores, [Some(97.0), Some(96.0), Some(100.0), Some(100.0)]);
        assert!(!p.meets_goals());
        // Accessibility misses its goal: its failing audit with weight is named; the
        // weightless one and performance (97 ≥ 95) are not.
        assert_eq!(p.failing, ["accessibility: color-contrast"]);
        assert_eq!(p.tbt_ms, Some(420.0));
        let md = markdown(&[p], 3);
        assert!(
            md.contains("| /anatomia-vram/ | 97 | 96 | 100 | 100 | 1800 | 420 | 0.000 | MISSED |"),
            "{md}"
        );

        let good = summarize("", &[report(0.99, 1.0)]);
        assert!(good.meets_goals());
        assert!(good.failing.is_empty());
    }

    #[test]
    fn reads_the_sitemap() {
        let dir = std::env::temp_dir().join(format!("xtask-lh-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap_or_default();
        fs::write(
            dir.join("sitemap.xml"),
            "<urlset><url><loc>https://vramlab.dev/</loc></url><url><loc>https://vramlab.dev/glosario/</loc></url></urlset>",
        )
        .unwrap_or_default();
        let paths = sitemap_paths(&dir).unwrap_or_default();
        assert_eq!(paths, ["", "glosario/"]);
        fs::write(dir.join("sitemap.xml"), "<urlset></urlset>").unwrap_or_default();
        assert!(sitemap_paths(&dir).is_err());
        let _ = fs::remove_dir_all(&dir);
    }
}
