// Importing a model into the estimator: from a stand-in Hub on another origin (every
// status the real one answers), and from files whose headers alone are read.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync, openSync, ftruncateSync, closeSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { useBrowser, url, watch, screenshot, waitForIslands, cli, gib, waitForEstimate } from "./helpers.mjs";
import { startHub } from "./hub-fixture.mjs";
import { TINY_CONFIG, tinySafetensors, llamaGguf, moeGguf } from "./model-files.mjs";

const shared = useBrowser();
let hub;
before(async () => {
  hub = await startHub();
});
after(async () => {
  await hub?.close();
});

const dir = mkdtempSync(join(tmpdir(), "vramlab-import-"));
function file(name, bytes) {
  const path = join(dir, name);
  writeFileSync(path, bytes);
  return path;
}

// Problems that are not the fixture's own error statuses (which the page must survive).
function real(problems) {
  return problems.filter((p) => !p.includes(hub.url) && !p.includes("Failed to load resource"));
}

// The estimator with its import panel open and the Hub address set to the fixture.
async function openImport({ recordReads = false } = {}) {
  const context = await shared.browser.newContext();
  if (recordReads) {
    // Every Blob read the page makes, by size: the proof that only headers are read.
    await context.addInitScript(() => {
      // The importer reads through FileReader (gloo-file); Blob.arrayBuffer is watched too.
      window.__reads = [];
      const read = Blob.prototype.arrayBuffer;
      Blob.prototype.arrayBuffer = function () {
        window.__reads.push(this.size);
        return read.call(this);
      };
      const readBytes = FileReader.prototype.readAsArrayBuffer;
      FileReader.prototype.readAsArrayBuffer = function (blob) {
        window.__reads.push(blob.size);
        return readBytes.call(this, blob);
      };
    });
  }
  const page = await context.newPage();
  const problems = watch(page);
  await page.goto(url("estimador/"));
  await waitForIslands(page);
  const est = page.locator(".estimator");
  await est.locator("summary", { hasText: "config.json" }).click();
  await est.locator("summary", { hasText: "Servidor del Hub" }).click();
  await est.locator("input[name=hub]").fill(hub.url);
  return { context, page, problems, est };
}

async function importRepo(est, id) {
  await est.locator("input[name=hf]").fill(id);
  await est.locator("button", { hasText: "Importar del Hub" }).click();
}

test("the Hub: a single-file model by Range, a sharded one by its index, a shared link", async () => {
  const { context, page, problems, est } = await openImport();
  const imported = est.locator(".est-imported");
  // The importer is its own bundle, fetched on the first import only.
  const importerLoaded = () =>
    page.evaluate(() => performance.getEntriesByType("resource").some((e) => e.name.includes("import_web")));
  assert.equal(await importerLoaded(), false);

  await importRepo(est, "ok/tiny");
  await imported.filter({ hasText: "cabecera de model.safetensors" }).waitFor();
  assert.match(await imported.first().innerText(), /Importado de ok\/tiny: llama con 2 capas/);
  assert.equal(await est.locator("select[name=modelo]").inputValue(), "propio");
  assert.equal(await importerLoaded(), true);
  // Two ranges of the file (its length, then its header), after the redirect; never the
  // whole file.
  const cdn = hub.requests.filter((r) => r.path === "/cdn/tiny.safetensors" && r.method === "GET");
  const headerLen = hub.tiny.bytes.readBigUInt64LE(0);
  assert.deepEqual(
    cdn.map((r) => r.range),
    ["bytes=0-7", `bytes=8-${7n + headerLen}`],
  );
  const seq = await est.locator("input[name=contexto]").inputValue();
  const want = cli([
    "--model", file("tiny-config.json", JSON.stringify(TINY_CONFIG)),
    "--weights-file", file("tiny.safetensors", tinySafetensors().bytes),
    "--gpu", "rtx-4090", "--seq", seq,
  ]);
  if (want) {
    assert.equal(want.breakdown.weights, hub.tiny.weightBytes);
    await est.locator(".est-total").filter({ hasText: gib(want.per_gpu_bytes) }).waitFor();
  }

  // A sharded checkpoint: the index's total_size is the exact weight bytes, the same
  // as the catalog's Llama 3.1 8B in BF16.
  await importRepo(est, "https://huggingface.co/sharded/llama/tree/main");
  await imported.filter({ hasText: "model.safetensors.index.json" }).waitFor();
  assert.match(await imported.last().innerText(), /8\u202f030\u202f261\u202f248 parámetros/);
  const preset = cli(["--model", "llama-3.1-8b", "--gpu", "rtx-4090", "--seq", seq]);
  if (preset) await est.locator(".est-total").filter({ hasText: gib(preset.per_gpu_bytes) }).waitFor();

  // The link carries the architecture and the weights to a fresh browser.
  await page.waitForFunction(() => location.search.includes("pesos=16060522496"));
  const fresh = await shared.browser.newContext();
  const other = await fresh.newPage();
  const otherProblems = watch(other);
  await other.goto(page.url());
  await waitForIslands(other);
  await other.locator(".est-imported", { hasText: "Pesos exactos de sharded/llama" }).waitFor();
  if (preset) await other.locator(".est-total").filter({ hasText: gib(preset.per_gpu_bytes) }).waitFor();
  // The engine answered (a navigation while it loads would abort its download).
  await waitForEstimate(other);
  // A tampered size is a Spanish message.
  await other.goto(other.url().replace(/pesos=\d+/, "pesos=-5"));
  await waitForIslands(other);
  await other.locator(".est-import [role=alert]", { hasText: "tamaño de pesos dañado" }).waitFor();
  await waitForEstimate(other);
  assert.deepEqual(otherProblems, []);
  await fresh.close();

  // A server that ignores Range: the architecture still comes, the whole file does not.
  await importRepo(est, "norange/tiny");
  await imported.filter({ hasText: "no admite lecturas parciales" }).waitFor();
  await screenshot(page, "estimador-hub");

  // `?hf=org/model`, what the form sends without JavaScript, imports on arrival (from
  // the Hub address this browser remembers).
  await waitForEstimate(page);
  await page.goto(url("estimador/?hf=sharded/llama"));
  await waitForIslands(page);
  await imported.filter({ hasText: "Importado de sharded/llama" }).waitFor();
  assert.doesNotMatch(page.url(), /hf=/);
  assert.deepEqual(real(problems), []);
  await context.close();
});

test("the Hub's failures are Spanish messages: 401, 404, bad ids, broken, huge and slow", async () => {
  const { context, page, problems, est } = await openImport();
  const alert = est.locator(".est-import [role=alert]");
  for (const [id, want] of [
    ["gated/llama", /privado o restringido \(el Hub respondió 401\).*pega su config\.json/],
    ["nadie/nada", /no tiene «config\.json» en «nadie\/nada» \(404\)/],
    ["no es un id", /no es un id del Hub/],
    ["broken/x", /config\.json de broken\/x: .*JSON/],
    ["huge/x", /ocupa más de 1,00 MiB/],
    ["slow/x", /no respondió en 10 s/],
  ]) {
    await importRepo(est, id);
    await alert.filter({ hasText: want }).waitFor({ timeout: 20_000 });
    assert.equal(await est.locator("button", { hasText: "Importar del Hub" }).isDisabled(), false);
  }
  // A base URL that is not http(s) is refused before any request.
  await est.locator("input[name=hub]").fill("ftp://espejo");
  await importRepo(est, "ok/tiny");
  await alert.filter({ hasText: "debe empezar por http" }).waitFor();
  // An offline Hub (nothing listening) is a network message.
  await est.locator("input[name=hub]").fill("http://127.0.0.1:9");
  await importRepo(est, "ok/tiny");
  await alert.filter({ hasText: "No se pudo conectar con http://127.0.0.1:9" }).waitFor();
  await screenshot(page, "estimador-hub-error");
  assert.deepEqual(
    real(problems).filter((p) => !p.includes("127.0.0.1:9/")),
    [],
  );
  await context.close();
});

test("files: a MoE GGUF's own expert tensors are what --n-cpu-moe moves, on the page as in the CLI", async () => {
  const { context, page, problems, est } = await openImport();
  const moe = moeGguf();
  const path = file("moe.gguf", moe.bytes);
  await est.locator("input[name=config-archivo]").setInputFiles(path);
  await est.locator(".est-imported").filter({ hasText: "Pesos exactos de moe.gguf" }).waitFor();
  await est.locator("select[name=motor]").selectOption("llamacpp");
  // The llama.cpp group, folded under the answer, as a reader opens it.
  await page.evaluate(() => document.querySelectorAll(".estimator details.est-group").forEach((d) => (d.open = true)));
  await est.locator("input[name=expertos-cpu]").fill("1");
  // The link carries the header's expert list, so a shared link computes the same.
  await page.waitForFunction(() => location.search.includes("expertos-gguf=") && location.search.includes("expertos-cpu=1"));
  const seq = await est.locator("input[name=contexto]").inputValue();
  const run = (n) => cli(["--model", path, "--gpu", "rtx-4090", "--seq", seq, "--runtime", "llama.cpp", "--n-cpu-moe", n]);
  const want = run("1");
  if (want) {
    // The CLI moved exactly block 0's experts, and the page shows its total.
    assert.equal(run("0").breakdown.weights - want.breakdown.weights, moe.experts[0]);
    await est.locator(".est-total").filter({ hasText: gib(want.per_gpu_bytes) }).waitFor();
  }
  await est.locator("output").filter({ hasText: "los expertos de 1 capa (" }).waitFor();
  // The reader's RAM bandwidth changes the speed line and the link, not the memory.
  await est.locator("input[name=ram-gbs]").fill("307");
  await page.waitForFunction(() => location.search.includes("ram-gbs=307"));
  await est.locator(".est-speed").filter({ hasText: "de la RAM de la CPU, a 307 GB/s" }).waitFor();
  if (want) {
    await est.locator(".est-total").filter({ hasText: gib(want.per_gpu_bytes) }).waitFor();
  }
  assert.deepEqual(real(problems), []);
  await context.close();
});

test("files: a GGUF header, a 3 GiB safetensors read by its header alone, a dropped index", async () => {
  const { context, page, problems, est } = await openImport({ recordReads: true });
  const imported = est.locator(".est-imported");
  const input = est.locator("input[name=config-archivo]");

  const gguf = llamaGguf();
  const ggufPath = file("llama.gguf", gguf.bytes);
  await input.setInputFiles(ggufPath);
  await imported.filter({ hasText: "Pesos exactos de llama.gguf" }).waitFor();
  assert.match(await imported.first().innerText(), /Importado: llama con 32 capas/);
  const seq = await est.locator("input[name=contexto]").inputValue();
  const want = cli(["--model", ggufPath, "--gpu", "rtx-4090", "--seq", seq]);
  if (want) {
    assert.equal(want.breakdown.weights, gguf.weightBytes);
    await est.locator(".est-total").filter({ hasText: gib(want.per_gpu_bytes) }).waitFor();
  }

  // A sparse 3 GiB file: only its 8-byte length and its header are read.
  const tiny = tinySafetensors();
  const bigPath = join(dir, "grande.safetensors");
  writeFileSync(bigPath, tiny.bytes.subarray(0, 8 + Number(tiny.bytes.readBigUInt64LE(0))));
  const fd = openSync(bigPath, "r+");
  ftruncateSync(fd, 3 * 1024 ** 3);
  closeSync(fd);
  await page.evaluate(() => (window.__reads = []));
  await input.setInputFiles(bigPath);
  await imported.filter({ hasText: "Pesos exactos de grande.safetensors" }).waitFor();
  const reads = await page.evaluate(() => window.__reads);
  assert.deepEqual(reads, [8, 8 + Number(tiny.bytes.readBigUInt64LE(0))]);
  // The GGUF's architecture stays; the weights are now the dropped file's, and a
  // 2-layer checkpoint's weights are refused for an 8B model with both counts.
  assert.match(await imported.first().innerText(), /llama con 32 capas/);
  await est.getByText(/no son los de este modelo: el archivo tiene .* y el modelo 8.030.261.248 parámetros/).first().waitFor();

  // Dropping a checkpoint index on the panel gives its total size.
  const index = JSON.stringify({ metadata: { total_size: 141107412992 }, weight_map: { a: "x" } });
  const drop = await page.evaluateHandle((text) => {
    const dt = new DataTransfer();
    dt.items.add(new File([text], "model.safetensors.index.json", { type: "application/json" }));
    return dt;
  }, index);
  await est.locator(".est-import").dispatchEvent("drop", { dataTransfer: drop });
  await imported.filter({ hasText: "131,42 GiB" }).waitFor();

  // A file that is neither: a Spanish message naming it.
  await input.setInputFiles({ name: "notas.txt", mimeType: "text/plain", buffer: Buffer.from("hola") });
  await est.locator(".est-import [role=alert]", { hasText: "notas.txt: no es un .safetensors ni un .gguf" }).waitFor();

  // Forgetting: back to a preset, and nothing imported is left in the link.
  await est.locator("button", { hasText: "Olvidar el modelo importado" }).click();
  await page.waitForFunction(() => !location.search.includes("pesos="));
  assert.notEqual(await est.locator("select[name=modelo]").inputValue(), "propio");
  assert.equal(await imported.count(), 0);
  await screenshot(page, "estimador-archivos");
  assert.deepEqual(real(problems), []);
  await context.close();
});
