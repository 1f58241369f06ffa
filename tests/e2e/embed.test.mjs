// The embeddable widget on a third-party page: another loopback origin, hostile CSS,
// two widgets with different attributes, live attribute changes, bad attributes, a
// phone-width screen, the iframe form sizing itself through postMessage, and models
// outside the catalog (from a stand-in Hub, typed by the reader, or a shared
// architecture).

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { mkdtempSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { useBrowser, url, watch, screenshot, waitForIslands, BASE_URL, cli, gib } from "./helpers.mjs";
import { startHub } from "./hub-fixture.mjs";
import { TINY_CONFIG, tinySafetensors } from "./model-files.mjs";

const shared = useBrowser();
let host;
let hostUrl;
let hub;

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

// The same settings as a link's query and as a widget's attributes (one vocabulary).
const SETTINGS = { modo: "qlora", gpu: "rtx-3060", contexto: "1k", optimizador: "paged-adamw8bit", rango: "64" };
const SETTINGS_PAGE = `<!doctype html><html lang="es"><head><meta charset="utf-8"><title>Ajustes</title>
<script type="module" src="${BASE_URL}embed/vram-estimador.js"></script>
</head><body>
<vram-estimador id="q" ${Object.entries(SETTINGS).map(([k, v]) => `${k}="${v}"`).join(" ")}></vram-estimador>
</body></html>`;

// A model card whose widgets import from the Hub (the fixture, on a third origin).
const hubPage = (hubUrl) => `<!doctype html><html lang="es"><head><meta charset="utf-8">
<title>Una ficha de modelo</title>
<script type="module" src="${BASE_URL}embed/vram-estimador.js"></script>
</head><body>
<vram-estimador id="s" hf="sharded/llama" hub="${hubUrl}" gpu="rtx-4090" contexto="8192"></vram-estimador>
<vram-estimador id="t" hf="ok/tiny" hub="${hubUrl}" nombre="Tiny"></vram-estimador>
<vram-estimador id="t2" hf="ok/tiny" hub="${hubUrl}" gpu="rtx-3060"></vram-estimador>
<vram-estimador id="g" hf="gated/llama" hub="${hubUrl}" modelo="qwen2.5-7b"></vram-estimador>
<vram-estimador id="r" hub="${hubUrl}"></vram-estimador>
</body></html>`;

before(async () => {
  hub = await startHub();
  host = createServer((req, res) => {
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
    if (req.url.startsWith("/hub")) return res.end(hubPage(hub.url));
    if (req.url.startsWith("/ajustes")) return res.end(SETTINGS_PAGE);
    res.end(req.url.startsWith("/iframe") ? FRAME : PAGE);
  });
  await new Promise((resolve) => host.listen(0, "127.0.0.1", resolve));
  hostUrl = `http://127.0.0.1:${host.address().port}/`;
});
after(async () => {
  await hub?.close();
  await new Promise((resolve) => host.close(resolve));
});

// Whether the page has fetched the model importer's bundle.
const importerLoaded = (page) =>
  page.evaluate(() => performance.getEntriesByType("resource").some((e) => e.name.includes("import_web")));

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
  // Catalog models need nothing else from the network.
  assert.equal(await importerLoaded(page), false);

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
  // A keyboard reader stays where they are: the result changes, the controls do not.
  const gpuSelect = page.locator("#a select[name=gpu]");
  await gpuSelect.focus();
  await page.keyboard.press("ArrowDown");
  await page.locator("#a .vw-title", { hasText: /en (?!GeForce RTX 3060 12GB)/ }).waitFor();
  const focused = await page.locator("#a").evaluate((el) => el.shadowRoot.activeElement?.getAttribute("name"));
  assert.equal(focused, "gpu");
  await gpuSelect.selectOption("rtx-3060");
  await page.locator("#a .vw-verdict", { hasText: "No cabe" }).waitFor();

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

  // An engine with a command line: the widget shows it when it fits, as the CLI's.
  await page.evaluate(() => {
    const el = document.querySelector("#a");
    el.setAttribute("gpu", "h100-sxm");
    el.setAttribute("motor", "vllm");
  });
  const launch = page.locator("#a .vw-launch code");
  await launch.waitFor();
  assert.match(await launch.innerText(), /^vllm serve meta-llama\/Llama-3\.1-8B \\\n  --max-model-len 8192/);

  // A phone: the widget fits 320 px without scrolling sideways.
  await page.setViewportSize({ width: 320, height: 800 });
  const scroll = await page.locator("#a .vw").evaluate((el) => el.scrollWidth <= el.clientWidth + 1);
  assert.ok(scroll, "no horizontal overflow at 320 px");
  await screenshot(page, "widget-movil");
  await context.close();
});

test("the CLI, the estimator page and the widget agree on the same settings", async () => {
  const want = cli(["--model", "llama-3.1-8b", "--mode", "qlora", "--gpu", "rtx-3060", "--seq", "1k", "--optimizer", "paged-adamw8bit", "--lora-rank", "64"]);
  const context = await shared.browser.newContext();
  const page = await context.newPage();
  const problems = watch(page);
  await page.goto(url(`estimador/?${new URLSearchParams(SETTINGS)}`));
  await waitForIslands(page);
  const est = page.locator(".estimator");
  await page.waitForFunction(() => document.querySelector(".estimator select[name=optimizador]").value === "paged-adamw8bit");
  // QLoRA's defaults are visible: NF4 with double quantisation and checkpointing.
  assert.equal(await est.locator("select[name=formato]").inputValue(), "nf4-dq");
  assert.equal(await est.locator("input[name=checkpointing]").isChecked(), true);
  const pageTotal = want
    ? (await est.locator(".est-total").filter({ hasText: gib(want.per_gpu_bytes) }).waitFor(), gib(want.per_gpu_bytes))
    : await est.locator(".est-total").innerText();
  const widget = await context.newPage();
  const widgetProblems = watch(widget);
  await widget.goto(hostUrl + "ajustes");
  assert.equal(await total(widget, "q"), pageTotal);
  assert.match(await widget.locator("#q .vw-title").innerText(), /QLoRA/);
  // One palette: each category has the same colour on the page and in the widget.
  const colour = (locator) => locator.evaluate((el) => getComputedStyle(el).backgroundColor);
  for (const name of ["Pesos", "Activaciones", "Sobrecarga"]) {
    const onPage = await colour(est.locator("tr", { hasText: name }).locator(".swatch").first());
    const inWidget = await colour(widget.locator("#q .vw-legend li", { hasText: name }).locator(".vw-sw"));
    assert.equal(inWidget, onPage, name);
    assert.notEqual(onPage, "rgba(0, 0, 0, 0)", name);
  }
  // Bad values say what the setting is and its bounds, on both surfaces.
  await widget.evaluate(() => document.querySelector("#q").setAttribute("lote", "2.5"));
  await widget.locator("#q .vw-problem", { hasText: "El lote debe ser un entero entre 1 y" }).waitFor();
  await page.evaluate(() => document.querySelectorAll(".estimator details.est-group").forEach((d) => (d.open = true)));
  await est.locator("input[name=lote]").fill("-4");
  await est.locator("label:has(input[name=lote]) .field-error", { hasText: "El lote debe ser un entero entre 1 y" }).waitFor();
  assert.deepEqual(problems, []);
  assert.deepEqual(widgetProblems.filter((p) => !p.startsWith("console.warning")), []);
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

test("widgets import Hub models only when asked, fall back when they cannot, and fetch each once", async () => {
  const context = await shared.browser.newContext();
  const page = await context.newPage();
  const problems = watch(page);
  await page.goto(hostUrl + "hub");

  // A sharded repository: config.json plus the index's exact bytes, which equal the
  // catalog's Llama 3.1 8B in BF16.
  const s = await total(page, "s");
  const preset = cli(["--model", "llama-3.1-8b", "--gpu", "rtx-4090", "--seq", "8192"]);
  if (preset) assert.equal(s, gib(preset.per_gpu_bytes));
  assert.match(await page.locator("#s .vw-title").innerText(), /^sharded\/llama en GeForce RTX 4090/);
  const href = await page.locator("#s .vw-link").getAttribute("href");
  assert.ok(href.includes("modelo=propio") && href.includes("hf=sharded%2Fllama"), href);
  assert.equal(await importerLoaded(page), true);

  // A single-file repository: the safetensors header by Range, named by `nombre`.
  const dir = mkdtempSync(join(tmpdir(), "vramlab-embed-"));
  const config = join(dir, "config.json");
  const weights = join(dir, "tiny.safetensors");
  writeFileSync(config, JSON.stringify(TINY_CONFIG));
  writeFileSync(weights, tinySafetensors().bytes);
  const tiny = cli(["--model", config, "--weights-file", weights, "--gpu", "rtx-4090"]);
  const t = await total(page, "t");
  if (tiny) assert.equal(t, gib(tiny.per_gpu_bytes));
  assert.match(await page.locator("#t .vw-title").innerText(), /^Tiny en/);
  // A second widget with the same model, on the page from the start.
  await page.locator("#t2 .vw-title", { hasText: "ok/tiny en GeForce RTX 3060" }).waitFor();

  // A gated repository: the reason, then the catalog model, never a blank box.
  await page.locator("#g .vw-problem", { hasText: 'hf="gated/llama"' }).waitFor();
  const gated = await page.locator("#g .vw-problem").first().innerText();
  assert.match(gated, /privado o restringido.*Se usa Qwen2\.5 7B\./, gated);
  assert.equal(await page.locator("#g select").first().inputValue(), "qwen2.5-7b");
  assert.ok(problems.some((p) => p.startsWith("console.warning") && p.includes('hf="gated/llama"')), problems.join("\n"));
  // Its link opens the model it shows; entering the same id again retries the import.
  const gatedHref = await page.locator("#g .vw-link").getAttribute("href");
  assert.ok(gatedHref.includes("modelo=qwen2.5-7b") && !gatedHref.includes("hf="), gatedHref);
  const gatedGets = () => hub.requests.filter((r) => r.path === "/gated/llama/resolve/main/config.json").length;
  const tries = gatedGets();
  await page.locator("#g .vw-hub input").dispatchEvent("change");
  await page.locator("#g .vw-problem", { hasText: 'hf="gated/llama"' }).waitFor();
  for (let i = 0; i < 50 && gatedGets() === tries; i++) await page.waitForTimeout(100);
  assert.equal(gatedGets(), tries + 1);
  const qwen = cli(["--model", "qwen2.5-7b", "--gpu", "rtx-4090"]);
  if (qwen) assert.equal(await total(page, "g"), gib(qwen.per_gpu_bytes));

  // The reader types a Hub id into a catalog widget; a bad one is a message. The
  // model arrived already for #t and #t2 (one fetch for both), so it is not fetched
  // again.
  const field = page.locator("#r .vw-hub input");
  await field.fill("no vale!");
  await field.press("Enter");
  await page.locator("#r .vw-problem", { hasText: "no es un id del Hub" }).waitFor();
  await field.fill("ok/tiny");
  await field.press("Enter");
  await page.locator("#r .vw-title", { hasText: "ok/tiny en" }).waitFor();
  if (tiny) assert.equal(await total(page, "r"), gib(tiny.per_gpu_bytes));
  assert.equal(await page.locator("#r .vw-problem").count(), 0);
  const fetched = hub.requests.filter((r) => r.path === "/ok/tiny/resolve/main/config.json" && r.method === "GET");
  assert.equal(fetched.length, 1);
  // Back to a catalog model, and to the imported one, from the model picker.
  const picker = page.locator("#r select").first();
  await picker.selectOption("llama-3.1-8b");
  await page.locator("#r .vw-title", { hasText: "Llama 3.1 8B en" }).waitFor();
  await picker.selectOption("propio");
  await page.locator("#r .vw-title", { hasText: "ok/tiny en" }).waitFor();
  await screenshot(page, "widget-hub");
  const real = problems.filter(
    (p) => !p.includes(hub.url) && !p.includes("Failed to load resource") && !p.includes('hf="gated/llama"'),
  );
  assert.deepEqual(real, []);
  await context.close();
});

test("the docs page's shared-architecture widget needs no network and matches the CLI", async () => {
  const context = await shared.browser.newContext();
  const page = await context.newPage();
  const problems = watch(page);
  await page.goto(url("widget/"));
  const strong = page.locator("#widget-propio .vw-total strong");
  await strong.waitFor();
  const gpt2 = cli(["--model", "gpt2", "--gpu", "rtx-3060", "--batch", "8", "--seq", "1024"]);
  if (gpt2) assert.equal(await strong.innerText(), gib(gpt2.per_gpu_bytes));
  assert.match(await page.locator("#widget-propio .vw-title").innerText(), /^Mi GPT-2 en/);
  assert.equal(await importerLoaded(page), false);
  // The snippets, written by shortcodes, get the copy buttons too, above the code.
  assert.ok((await page.locator("div.code button.copy").count()) >= 5);
  const overlap = await page.locator("div.code").first().evaluate((block) => {
    const button = block.querySelector("button.copy").getBoundingClientRect();
    const line = block.querySelector("pre code").getBoundingClientRect();
    return button.bottom > line.top + 2;
  });
  assert.equal(overlap, false, "el botón Copiar tapa la primera línea");
  // Opened on its own, the widget's page names its icon (no request for a missing
  // /favicon.ico), and the icon is there.
  await page.goto(url("embed/"));
  const icon = await page.locator("link[rel=icon]").getAttribute("href");
  const iconUrl = new URL(icon, page.url()).href;
  assert.equal((await page.request.get(iconUrl)).status(), 200, iconUrl);
  assert.deepEqual(problems, []);
  await context.close();
});

test("the estimator's embed code, pasted on another site, shows the same numbers for an imported model", async () => {
  const context = await shared.browser.newContext();
  await context.addInitScript((h) => localStorage.setItem("vramlab.hub", `v2 ${h}`), hub.url);
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: new URL(BASE_URL).origin });
  const page = await context.newPage();
  const problems = watch(page);
  await page.goto(url("estimador/?hf=sharded/llama&gpu=rtx-3060&lote=2&contexto=2048"));
  await waitForIslands(page);
  await page.locator(".est-imported", { hasText: "Importado de sharded/llama" }).waitFor();
  const want = cli(["--model", "llama-3.1-8b", "--gpu", "rtx-3060", "--batch", "2", "--seq", "2048"]);
  if (want) await page.locator(".est-total").filter({ hasText: gib(want.per_gpu_bytes) }).waitFor();

  await page.locator(".est-embed summary").click();
  const code = await page.locator(".est-embed-code").innerText();
  const [script, ...element] = code.split("\n");
  assert.equal(script, '<script type="module" src="https://vramlab.dev/embed/vram-estimador.js"></script>');
  assert.match(code, /arquitectura="a1:[0-9.,-]+:llama"/);
  assert.match(code, /gpu="rtx-3060"[\s\S]*lote="2"[\s\S]*contexto="2k"[\s\S]*pesos="16060522496"/);
  // The site's copy button copies what the block shows now, not what it first showed.
  await page.locator(".est-embed button.copy").click();
  await page.locator(".est-embed button.copy", { hasText: "Copiado" }).waitFor();
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), code);
  await page.setViewportSize({ width: 360, height: 900 });
  await page.locator(".est-embed").scrollIntoViewIfNeeded();
  await screenshot(page, "estimador-insertar");
  assert.deepEqual(problems.filter((p) => !p.includes(hub.url)), []);

  // The element on the hostile third-party page (with this server's script), offline
  // from the Hub: the architecture and the exact bytes travel in the attributes.
  const before = hub.requests.length;
  const other = await context.newPage();
  const otherProblems = watch(other);
  await other.goto(hostUrl);
  await other.evaluate((markup) => {
    document.body.innerHTML = markup;
  }, element.join("\n").replace(/ id="[^"]*"/g, "").replace("<vram-estimador ", '<vram-estimador id="p" '));
  const pasted = await total(other, "p");
  if (want) assert.equal(pasted, gib(want.per_gpu_bytes));
  assert.match(await other.locator("#p .vw-title").innerText(), /^Modelo propio \(llama\) en GeForce RTX 3060/);
  assert.equal(hub.requests.length, before, "no Hub request from the pasted widget");
  assert.equal(await importerLoaded(other), false);
  assert.deepEqual(otherProblems, []);
  await context.close();
});
