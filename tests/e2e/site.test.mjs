// Every page: loads cleanly, reads well at desktop and phone widths, and has the
// metadata a static site needs.

import { test } from "node:test";
import assert from "node:assert/strict";
import { useBrowser, url, sitePaths, watch, screenshot, waitForIslands, VIEWPORTS } from "./helpers.mjs";

const shared = useBrowser();

test("every page loads with no console error and no failed request", async () => {
  const paths = await sitePaths();
  assert.ok(paths.length >= 3, `solo ${paths.length} páginas`);
  for (const path of paths) {
    for (const [label, viewport] of Object.entries(VIEWPORTS)) {
      const context = await shared.browser.newContext({ viewport });
      const page = await context.newPage();
      const problems = watch(page);
      // "domcontentloaded", then the islands: the `load` event has occasionally never
      // arrived on the CI machine although the page was served (see the issue notes).
      const res = await page.goto(url(path), { waitUntil: "domcontentloaded" });
      assert.equal(res.status(), 200, path);
      if (await page.locator("leptos-island").count()) {
        await waitForIslands(page);
      }
      // Give late requests a moment to finish or fail (failures are recorded above).
      await page.waitForLoadState("networkidle", { timeout: 10_000 }).catch(() => {});
      assert.deepEqual(problems, [], `${path} (${label})`);

      // Metadata.
      assert.equal(await page.getAttribute("html", "lang"), "es");
      const title = await page.title();
      assert.ok(title.includes("vramlab"), title);
      const description = await page.getAttribute('meta[name="description"]', "content");
      assert.ok(description && description.length > 40, `${path}: descripción`);
      const canonical = await page.getAttribute('link[rel="canonical"]', "href");
      assert.ok(canonical?.startsWith("https://"), `${path}: canonical ${canonical}`);
      assert.equal(await page.locator("h1").count(), 1, `${path}: un solo h1`);
      const og = await page.getAttribute('meta[property="og:url"]', "content");
      assert.equal(og, canonical, `${path}: og:url`);
      const ogTitle = await page.getAttribute('meta[property="og:title"]', "content");
      assert.ok(ogTitle && title.startsWith(ogTitle), `${path}: og:title ${ogTitle}`);

      // Nothing overflows sideways on a phone.
      const overflow = await page.evaluate(
        () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
      );
      assert.ok(overflow <= 0, `${path} (${label}) se desborda ${overflow}px`);

      const name = (path.replace(/\/$/, "") || "inicio").replaceAll("/", "_");
      await screenshot(page, `${name}-${label}`);
      await context.close();
    }
  }
});

test("unknown addresses get the 404 page", async () => {
  const page = await shared.browser.newPage();
  const res = await page.goto(url("no-existe/"));
  assert.equal(res.status(), 404);
  assert.match(await page.locator("h1").innerText(), /no encontrada/i);
  await page.close();
});

test("headers: wasm MIME type and a Content-Security-Policy", async () => {
  const page = await shared.browser.newPage();
  const res = await page.goto(url("anatomia-vram/"));
  const csp = res.headers()["content-security-policy"];
  assert.match(csp, /'wasm-unsafe-eval'/);
  assert.doesNotMatch(csp, /'unsafe-inline'/);
  const wasmHref = await page.getAttribute("#vramlab-islands", "data-wasm");
  const wasm = await fetch(new URL(wasmHref, url()));
  assert.equal(wasm.headers.get("content-type"), "application/wasm");
  // The body is not needed: an unread one would hold its connection, and node, open.
  await wasm.body?.cancel();
  await page.close();
});

test("sitemap and robots are served", async () => {
  const robots = await (await fetch(url("robots.txt"))).text();
  assert.match(robots, /Sitemap: https:\/\/.+\/sitemap\.xml/);
  const paths = await sitePaths();
  assert.ok(paths.includes("anatomia-vram/"), paths.join(","));
});
