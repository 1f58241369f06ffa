// The FlashAttention demo in the browser: the naive and tiled WGSL kernels through wgpu
// on Chromium's SwiftShader adapter (N ≤ 512 keeps it quick), the clean refusal of the
// naive kernel's N × N buffer under a memory limit, and the CPU fallback without WebGPU.

import { test } from "node:test";
import assert from "node:assert/strict";
import { useBrowser, url, watch, screenshot, waitForIslands } from "./helpers.mjs";

const shared = useBrowser();

async function choose(page, label, value) {
  await page.getByLabel(label).selectOption(String(value));
}

// Waits until a run or sweep has finished and returns the table rows as objects.
async function results(page) {
  await page.waitForFunction(
    () => document.querySelector(".attn-status")?.dataset.running === "false"
      && document.querySelectorAll(".attn-results tr[data-kernel]").length > 0,
    null,
    { timeout: 120_000 },
  );
  return page.$$eval(".attn-results tr[data-kernel]", (rows) =>
    rows.map((r) => ({
      kernel: r.dataset.kernel,
      state: r.dataset.state,
      cells: [...r.cells].map((c) => c.innerText.trim()),
    })),
  );
}

const num = (s) => Number(s.replace(/\s.*$/, "").replace(",", "."));

test("both kernels run on WebGPU and agree with the f64 reference", async () => {
  const page = await shared.browser.newPage();
  const problems = watch(page);
  await page.goto(url("flashattention/"));
  await waitForIslands(page);
  await choose(page, "Longitud N", 256);
  await choose(page, "Cabezas", 2);
  await page.getByLabel("Máscara causal").check();
  await page.getByRole("button", { name: "Ejecutar" }).click();
  const rows = await results(page);
  assert.equal(rows.length, 2, JSON.stringify(rows));
  for (const r of rows) {
    assert.equal(r.state, "ok", JSON.stringify(r));
    assert.equal(r.cells[0], "256");
    assert.ok(num(r.cells[5]) <= 1e-4, `error ${r.cells[5]}`);
    assert.ok(num(r.cells[2]) > 0, r.cells[2]);
  }
  // Extra memory: 2 heads × 256² × 4 B for S, 2 × 256 × 4 B of log-sum-exp.
  assert.equal(rows[0].cells[4], "512,00 KiB");
  assert.equal(rows[1].cells[4], "2,00 KiB");
  const summary = await page.locator(".attn-summary").innerText();
  assert.match(summary, /Diferencia máxima entre las salidas de ambos: /, summary);
  assert.match(await page.locator(".attn-backend").innerText(), /GPU: /);
  assert.equal(await page.locator(".attn-bars .attn-bar-row").count(), 2);
  await screenshot(page, "atencion-gpu");
  assert.deepEqual(problems, []);
  await page.close();
});

test("under a memory limit the naive kernel is refused and the tiled one carries on", async () => {
  const page = await shared.browser.newPage();
  const problems = watch(page);
  await page.goto(url("flashattention/"));
  await waitForIslands(page);
  // N = 512, 2 heads: 1 MiB of Q, K, V, O plus 2 MiB of S > 2 MiB; tiled needs ~1 MiB.
  await choose(page, "Longitud N", 512);
  await choose(page, "Cabezas", 2);
  await choose(page, "Memoria permitida", 2 << 20);
  await page.getByRole("button", { name: /Barrer/ }).click();
  const rows = await results(page);
  const at = (n, k) => rows.find((r) => r.cells[0] === String(n) && r.kernel === k);
  assert.equal(rows.length, 6, JSON.stringify(rows)); // 128, 256, 512 × 2 kernels
  assert.equal(at(256, "ingenuo").state, "ok");
  const refused = at(512, "ingenuo");
  assert.equal(refused.state, "oom", JSON.stringify(refused));
  assert.match(refused.cells[2], /^sin memoria: el kernel ingenuo necesita 3,00 MiB en total y el límite indicado es 2,00 MiB/);
  assert.equal(at(512, "por bloques").state, "ok");
  // The chart marks the refusal; the bars show the limit.
  assert.equal(await page.locator(".attn-oom-mark").count(), 1);
  assert.match(await page.locator(".attn-bars figcaption").innerText(), /necesitaba 3,00 MiB en total y la memoria permitida es 2,00 MiB/);
  await screenshot(page, "atencion-limite");
  await page.setViewportSize({ width: 390, height: 844 });
  await screenshot(page, "atencion-limite-movil");
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth);
  assert.equal(overflow, false, "the page scrolls sideways at phone width");
  // Each run is a card: no column behind a sideways scroll, the caption whole.
  const table = page.locator(".attn-results");
  const spill = await table.evaluate((t) => t.scrollWidth - t.clientWidth);
  assert.ok(spill <= 1, `the results scroll ${spill} px sideways at 390 px`);
  const label = await table.locator("tr[data-kernel] td[data-label]").first().evaluate((td) => getComputedStyle(td, "::before").content);
  assert.equal(label, '"Tiempo"');
  assert.deepEqual(problems, []);
  await page.close();
});

test("a large N on a software adapter is announced, and Cancelar acts between passes", async () => {
  const page = await shared.browser.newPage();
  const problems = watch(page);
  await page.goto(url("flashattention/"));
  await waitForIslands(page);
  // A first small run connects to the adapter (SwiftShader here: a software one).
  await choose(page, "Longitud N", 128);
  await page.getByRole("button", { name: "Ejecutar" }).click();
  await results(page);
  await choose(page, "Longitud N", 4096);
  await page.locator(".attn-warning", { hasText: "adaptador WebGPU es de software" }).waitFor();
  await page.getByRole("button", { name: "Ejecutar" }).click();
  await page.locator(".attn-status", { hasText: "N = 4096" }).waitFor();
  await page.getByRole("button", { name: "Cancelar" }).click();
  // Said at once, done after the pass in flight (it used to wait for the whole run).
  assert.match(await page.locator(".attn-status").innerText(), /Cancelando/);
  await page.waitForFunction(
    () => document.querySelector(".attn-status")?.dataset.running === "false",
    null,
    { timeout: 45_000 },
  );
  assert.equal(await page.locator(".attn-status").innerText(), "Cancelado.");
  assert.equal(await page.locator(".attn-results tr[data-kernel]").count(), 0);
  assert.deepEqual(problems, []);
  await page.close();
});

test("without WebGPU the lesson runs on the CPU and says how to enable WebGPU", async () => {
  const context = await shared.browser.newContext();
  await context.addInitScript(() => {
    delete Navigator.prototype.gpu;
  });
  const page = await context.newPage();
  const problems = watch(page);
  await page.goto(url("flashattention/"));
  await waitForIslands(page);
  await choose(page, "Longitud N", 256);
  await page.getByRole("button", { name: "Ejecutar" }).click();
  const rows = await results(page);
  assert.equal(rows.length, 2, JSON.stringify(rows));
  for (const r of rows) {
    assert.equal(r.state, "ok", JSON.stringify(r));
    assert.ok(num(r.cells[5]) <= 1e-4, r.cells[5]);
  }
  const note = await page.locator(".attn-fallback").innerText();
  assert.match(note, /Sin WebGPU/);
  assert.match(note, /chrome:\/\/flags/);
  // Sizes the CPU cannot take quickly stop with an explanation instead of freezing.
  await choose(page, "Longitud N", 4096);
  await page.getByRole("button", { name: "Ejecutar" }).click();
  await page.waitForFunction(() => /CPU se detiene/.test(document.querySelector(".attn-status")?.innerText ?? ""));
  await screenshot(page, "atencion-cpu");
  assert.deepEqual(problems, []);
  await context.close();
});
