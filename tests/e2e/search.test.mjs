// The search box in the header: Spanish full-text search over the guide, with the
// index built by sitegen. Accented and unaccented queries must find the same
// chapter, the keyboard must reach and open results, and bad luck (a missing index)
// must read as a Spanish message, not a dead box.

import { test } from "node:test";
import assert from "node:assert/strict";
import { useBrowser, url, watch, screenshot, waitForIslands, VIEWPORTS } from "./helpers.mjs";

const shared = useBrowser();

async function open(path, viewport = VIEWPORTS.escritorio) {
  const context = await shared.browser.newContext({ viewport });
  const page = await context.newPage();
  const problems = watch(page);
  await page.goto(url(path), { waitUntil: "domcontentloaded" });
  if (await page.evaluate(() => !!document.querySelector("leptos-island"))) await waitForIslands(page);
  // search.js enables the box when it runs.
  await page.locator("#buscar:enabled").waitFor();
  return { context, page, problems };
}

const resultLinks = (page) =>
  page.locator("#buscar-lista a").evaluateAll((as) => as.map((a) => a.getAttribute("href")));

test("accented and unaccented queries find the same chapter", async () => {
  const { context, page, problems } = await open("");
  const box = page.locator("#buscar");
  await box.waitFor({ state: "visible" });
  // Nothing of the engine is fetched before the reader uses the box.
  const early = await page.evaluate(() =>
    performance.getEntriesByType("resource").some((r) => /search_web|search-index/.test(r.name)),
  );
  assert.equal(early, false, "el motor de búsqueda se descargó antes de usar la caja");
  for (const q of ["fragmentación", "fragmentacion", "FRAGMENTACION"]) {
    await box.fill(q);
    await page.locator("#buscar-lista a").first().waitFor();
    const links = await resultLinks(page);
    assert.ok(
      links.some((h) => h.startsWith("/memoria-reservada/")),
      `«${q}» no encuentra el capítulo de memoria reservada: ${links}`,
    );
  }
  const status = await page.locator("#buscar-estado").textContent();
  assert.match(status, /resultado/);
  // Stemming: an accented plural finds the singular; the row names page and section.
  await box.fill("cachés");
  await page.locator("#buscar-lista a").first().waitFor();
  const plural = await resultLinks(page);
  assert.ok(
    plural.length >= 3 && plural.some((h) => h.startsWith("/inferencia/")),
    `«cachés» no encuentra la caché KV de inferencia: ${plural}`,
  );
  const place = await page.locator("#buscar-lista .search-place").first().textContent();
  assert.ok(place.length > 3, place);
  await screenshot(page, "busqueda-escritorio");

  await box.fill("zzzzqqq");
  await page.locator("#buscar-estado", { hasText: "Nada coincide" }).waitFor();
  assert.equal(await page.locator("#buscar-lista a").count(), 0);
  assert.deepEqual(problems, []);
  await context.close();
});

// Issue 41: the header's box understands sizes, cards, engines and models, and leads to
// the estimator with them; the guide's own results stay below.
test("a question about a card or a model leads to the estimator with it", async () => {
  const { context, page, problems } = await open("");
  const box = page.locator("#buscar");
  for (const [q, query, label] of [
    ["cabe en 24GB", "gpu=rtx-4090", /GPU de 24 GB \(GeForce RTX 4090\)/],
    ["vllm l4", "gpu=l4&motor=vllm", /NVIDIA L4 con vLLM/],
    ["gpt-oss", "modelo=gpt-oss-20b", /gpt-oss.?20b/i],
    ["qwen 7b", "modelo=qwen2.5-7b", /Qwen2\.5 7B/],
  ]) {
    await box.fill(q);
    const first = page.locator("#buscar-lista a").first();
    await first.filter({ hasText: "Estimador de VRAM" }).waitFor();
    assert.equal(await first.getAttribute("href"), `/estimador/?${query}`, q);
    assert.match(await first.innerText(), label, q);
  }
  // A question about the guide gets no estimator link.
  await box.fill("fragmentación");
  await page.locator("#buscar-lista a").first().waitFor();
  assert.ok((await resultLinks(page)).every((h) => !h.startsWith("/estimador/?")));
  // Enter opens the estimator with that model.
  await box.fill("qwen 7b");
  await page.locator("#buscar-lista a").first().filter({ hasText: "Estimador de VRAM" }).waitFor();
  await box.press("Enter");
  await page.waitForURL(/\/estimador\/\?modelo=qwen2\.5-7b/);
  await waitForIslands(page);
  await page.waitForFunction(() => document.querySelector(".estimator select[name=modelo]")?.value === "qwen2.5-7b");
  assert.deepEqual(problems, []);
  await context.close();
});

test("the keyboard focuses the box, walks the results and opens one", async () => {
  const { context, page, problems } = await open("glosario/");
  await page.keyboard.press("/");
  assert.equal(await page.evaluate(() => document.activeElement?.id), "buscar");
  await page.keyboard.type("atencion por bloques");
  await page.locator("#buscar-lista a").first().waitFor();
  const links = await resultLinks(page);
  assert.ok(links.length >= 1);
  await page.keyboard.press("ArrowDown");
  assert.equal(await page.evaluate(() => document.activeElement?.id), "buscar-r0");
  if (links.length > 1) {
    await page.keyboard.press("ArrowDown");
    assert.equal(await page.evaluate(() => document.activeElement?.id), "buscar-r1");
    await page.keyboard.press("ArrowUp");
  }
  await page.keyboard.press("ArrowUp");
  assert.equal(await page.evaluate(() => document.activeElement?.id), "buscar");
  // Escape closes the panel, a second one clears the box.
  await page.keyboard.press("Escape");
  assert.equal(await page.locator(".search-panel").isHidden(), true);
  await page.keyboard.press("Escape");
  assert.equal(await page.locator("#buscar").inputValue(), "");

  // Ctrl+K from the page body, then Enter opens the first result.
  await page.locator("main").click();
  await page.keyboard.press("Control+k");
  assert.equal(await page.evaluate(() => document.activeElement?.id), "buscar");
  await page.keyboard.type("flashattention");
  await page.locator("#buscar-lista a").first().waitFor();
  const first = (await resultLinks(page))[0];
  await Promise.all([page.waitForURL((u) => u.href === url(first.replace(/^\//, ""))), page.keyboard.press("Enter")]);
  assert.deepEqual(problems, []);
  await context.close();
});

test("on a phone the box spans the header and results fit the screen", async () => {
  const { context, page, problems } = await open("anatomia-vram/", VIEWPORTS.movil);
  const box = page.locator("#buscar");
  await box.fill("kv");
  await page.locator("#buscar-lista a").first().waitFor();
  const panel = await page.locator(".search-panel").boundingBox();
  assert.ok(panel.x >= 0 && panel.x + panel.width <= VIEWPORTS.movil.width + 1, JSON.stringify(panel));
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth);
  assert.equal(overflow, false, "la página se desborda a lo ancho");
  await screenshot(page, "busqueda-movil");
  assert.deepEqual(problems, []);
  await context.close();
});

test("a missing index reads as a Spanish message", async () => {
  const context = await shared.browser.newContext();
  const page = await context.newPage();
  await context.route(/search-index\..*\.json$/, (route) => route.fulfill({ status: 404, body: "no" }));
  await page.goto(url(""), { waitUntil: "domcontentloaded" });
  await page.locator("#buscar:enabled").waitFor();
  await page.locator("#buscar").fill("memoria");
  await page.locator("#buscar-estado", { hasText: "No se pudo cargar el índice" }).waitFor();
  assert.match(await page.locator("#buscar-estado").textContent(), /404/);
  await context.close();
});

test("without JavaScript the box is disabled, not a dead end", async () => {
  const context = await shared.browser.newContext({ javaScriptEnabled: false });
  const page = await context.newPage();
  await page.goto(url("glosario/"), { waitUntil: "domcontentloaded" });
  assert.equal(await page.locator("#buscar").isDisabled(), true);
  // The chapter list is still there to navigate by.
  assert.ok((await page.locator("#capitulos a").count()) >= 10);
  await context.close();
});
