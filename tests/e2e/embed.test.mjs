// The embeddable widget on a third-party page: another loopback origin, hostile CSS,
// two widgets with different attributes, live attribute changes, bad attributes, a
// phone-width screen, and the iframe form sizing itself through postMessage.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { useBrowser, url, watch, screenshot, BASE_URL, cli, gib } from "./helpers.mjs";

const shared = useBrowser();
let host;
let hostUrl;

// A blog that styles everything aggressively, embeds two widgets and the iframe form.
const PAGE = `<!doctype html><html lang="es"><head><meta charset="utf-8">
<title>Un blog cualquiera</title>
<style>
  * { all: unset; }
  div, p, span, select, input, svg { display: none !important; }
  p { color: red !important; font-size: 40px !important; }
  vram-estimador { font-family: serif; }
</style>
<script type="module" src="${BASE_URL}embed/vram-estimador.js"></script>
</head><body>
<vram-estimador id="a" modelo="llama-3.1-8b" gpu="rtx-4090" contexto="8192"></vram-estimador>
<vram-estimador id="b" modelo="llama-3.1-70b" gpu="h100-sxm" gpus="4" tema="oscuro" controles="no"></vram-estimador>
</body></html>`;

const FRAME = `<!doctype html><html lang="es"><head><meta charset="utf-8"><title>Con iframe</title></head><body>
<iframe id="f" src="${BASE_URL}embed/?modelo=qwen2.5-7b&gpu=rtx-3060&lote=2" title="Estimador" width="600" height="100"></iframe>
</body></html>`;

before(async () => {
  host = createServer((req, res) => {
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
    res.end(req.url.startsWith("/iframe") ? FRAME : PAGE);
  });
  await new Promise((resolve) => host.listen(0, "127.0.0.1", resolve));
  hostUrl = `http://127.0.0.1:${host.address().port}/`;
});
after(() => new Promise((resolve) => host.close(resolve)));

// The text of a widget's total once it has rendered (inside its shadow root).
async function total(page, id) {
  const strong = page.locator(`#${id} .vw-total strong`);
  await strong.waitFor();
  return strong.innerText();
}

test("two widgets on a hostile third-party page match the CLI and follow their attributes", async () => {
  const context = await shared.browser.newContext();
  const page = await context.newPage();
  const problems = watch(page);
  await page.goto(hostUrl);
  assert.notEqual(new URL(hostUrl).origin, new URL(BASE_URL).origin);

  const a = cli(["--model", "llama-3.1-8b", "--gpu", "rtx-4090", "--seq", "8192"]);
  const b = cli(["--model", "llama-3.1-70b", "--gpu", "h100-sxm", "--gpus", "4", "--tp", "4"]);
  const ta = await total(page, "a");
  const tb = await total(page, "b");
  if (a) assert.equal(ta, gib(a.per_gpu_bytes));
  if (b) assert.equal(tb, gib(b.per_gpu_bytes));
  assert.notEqual(ta, tb);
  // The host's CSS does not reach in: the widget is a visible block with its own font.
  const box = await page.locator("#a .vw").boundingBox();
  assert.ok(box.height > 150 && box.width > 300, JSON.stringify(box));
  const font = await page.locator("#a .vw-total strong").evaluate((el) => getComputedStyle(el).fontSize);
  assert.equal(font, "24px");
  assert.equal(await page.locator("#b .vw-controls").count(), 0, "controles=no");
  assert.equal(await page.locator("#b .vw").getAttribute("data-tema"), "oscuro");

  // Changing an attribute re-renders that widget only.
  await page.evaluate(() => document.querySelector("#a").setAttribute("lote", "8"));
  const eight = cli(["--model", "llama-3.1-8b", "--gpu", "rtx-4090", "--seq", "8192", "--batch", "8"]);
  if (eight) await page.locator("#a .vw-total strong", { hasText: gib(eight.per_gpu_bytes) }).waitFor();
  assert.equal(await total(page, "b"), tb);
  // So does the reader's own control, and the link opens the estimator with it.
  await page.locator("#a select").nth(1).selectOption("rtx-3060");
  await page.locator("#a .vw-verdict", { hasText: "No cabe" }).waitFor();
  const href = await page.locator("#a .vw-link").getAttribute("href");
  assert.ok(href.startsWith(url("estimador/?modelo=llama-3.1-8b&gpu=rtx-3060")), href);

  // Bad attributes: a Spanish line in the widget, a console warning naming each one.
  await page.evaluate(() => {
    const el = document.querySelector("#b");
    el.setAttribute("modelo", "gpt-7");
    el.setAttribute("lote", "-3");
  });
  await page.locator("#b .vw-problem", { hasText: 'modelo="gpt-7": no es un modelo del catálogo' }).waitFor();
  await page.locator("#b .vw-problem", { hasText: 'lote="-3"' }).waitFor();
  assert.ok(await page.locator("#b .vw-total strong").isVisible(), "never a blank box");
  const warnings = problems.filter((p) => p.startsWith("console.warning"));
  assert.ok(warnings.some((w) => w.includes('modelo="gpt-7"')), warnings.join("\n"));
  assert.deepEqual(problems.filter((p) => !p.startsWith("console.warning")), []);

  // A phone: the widget fits 320 px without scrolling sideways.
  await page.setViewportSize({ width: 320, height: 800 });
  const scroll = await page.locator("#a .vw").evaluate((el) => el.scrollWidth <= el.clientWidth + 1);
  assert.ok(scroll, "no horizontal overflow at 320 px");
  await screenshot(page, "widget-movil");
  await context.close();
});

test("the iframe form takes its attributes from the URL and reports its height", async () => {
  const context = await shared.browser.newContext();
  const page = await context.newPage();
  const problems = watch(page);
  await page.addInitScript(() => {
    window.__heights = [];
    addEventListener("message", (e) => {
      if (e.data?.tipo === "vramlab:altura") window.__heights.push(e.data.altura);
    });
  });
  await page.goto(hostUrl + "iframe");
  const frame = page.frameLocator("#f");
  await frame.locator(".vw-total strong").waitFor();
  const want = cli(["--model", "qwen2.5-7b", "--gpu", "rtx-3060", "--batch", "2"]);
  if (want) assert.equal(await frame.locator(".vw-total strong").innerText(), gib(want.per_gpu_bytes));
  await page.waitForFunction(() => window.__heights.some((h) => h > 200));
  await screenshot(page, "widget-iframe");
  assert.deepEqual(problems, []);
  await context.close();
});
