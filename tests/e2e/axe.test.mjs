// Accessibility: axe-core on every page of the sitemap, at desktop and phone width,
// after the islands have hydrated. Any violation fails, with its rule, impact and
// the offending elements.

import { test } from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { useBrowser, url, sitePaths, VIEWPORTS, waitForIslands } from "./helpers.mjs";

const require = createRequire(import.meta.url);
const AXE = require.resolve("axe-core/axe.min.js");
const shared = useBrowser();

test("every page passes axe with zero violations", async () => {
  const paths = await sitePaths();
  assert.ok(paths.length >= 10, `el sitemap solo lista ${paths.length} páginas`);
  const failures = [];
  // Every viewport in the light theme, plus the desktop in the dark one (contrast
  // is checked against the colours actually painted).
  const runs = [
    ...Object.entries(VIEWPORTS).map(([name, viewport]) => [name, viewport, "light"]),
    ["escritorio-oscuro", VIEWPORTS.escritorio, "dark"],
  ];
  for (const [name, viewport, colorScheme] of runs) {
    // axe is injected as a script; the site's CSP (rightly) refuses inline scripts.
    const context = await shared.browser.newContext({ viewport, colorScheme, bypassCSP: true });
    const page = await context.newPage();
    for (const path of paths) {
      await page.goto(url(path), { waitUntil: "domcontentloaded" });
      const hasIslands = await page.evaluate(() => !!document.querySelector("leptos-island"));
      if (hasIslands) await waitForIslands(page);
      await page.addScriptTag({ path: AXE });
      const violations = await page.evaluate(async () => {
        const result = await window.axe.run(document, {
          runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"] },
        });
        return result.violations.map((v) => ({
          id: v.id,
          impact: v.impact,
          nodes: v.nodes.slice(0, 5).map((n) => n.target.join(" ")),
        }));
      });
      for (const v of violations) {
        failures.push(`${name} /${path}: ${v.id} (${v.impact}) en ${v.nodes.join(", ")}`);
      }
    }
    await context.close();
  }
  assert.deepEqual(failures, []);
});
