// The diagnostics Web Worker: the snapshot viewer and the allocator lab decode the
// reader's file off the page's thread. "Cancelar" (or a new file) terminates the work
// in progress; a worker that crashes or cannot load its module is a Spanish message,
// and the next file starts a fresh worker.

import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { useBrowser, url, watch, waitForIslands, waitForLaterIsland, screenshot } from "./helpers.mjs";

const shared = useBrowser();

const dir = mkdtempSync(join(tmpdir(), "vramlab-worker-"));
const snapshotFile = join(dir, "instantanea.json");
writeFileSync(
  snapshotFile,
  JSON.stringify({
    segments: [
      {
        device: 0,
        address: 1048576,
        total_size: 20971520,
        blocks: [
          { address: 1048576, size: 2097152, state: "active_allocated", frames: [{ filename: "train.py", line: 42, name: "forward" }] },
          { address: 3145728, size: 18874368, state: "inactive", frames: [] },
        ],
      },
    ],
    device_traces: [],
  }),
);

// Stand-ins for the worker's bundle: one that starts and never answers, one that
// throws on the first request (what a trap or an out-of-memory abort looks like).
const SILENT = `export default async function () { self.postMessage(JSON.stringify({ kind: "ready" })); }`;
const CRASHING = `export default async function () {
  self.addEventListener("message", () => { throw new Error("memoria agotada (simulada)"); });
  self.postMessage(JSON.stringify({ kind: "ready" }));
}`;
const BUNDLE_JS = /\/pkg\/worker_web\.[^/]*js$/;
const BUNDLE_WASM = /\/pkg\/worker_web_bg\.[^/]*wasm$/;

async function viewerPage(context) {
  const page = await context.newPage();
  const problems = watch(page);
  await page.goto(url("depurar-memoria/"));
  await waitForIslands(page);
  return { page, problems, viewer: page.locator(".snapshot-viewer") };
}

async function opensForReal(page, viewer) {
  await viewer.locator("input[name=snapshot]").setInputFiles([]);
  await viewer.locator("input[name=snapshot]").setInputFiles(snapshotFile);
  await page.waitForFunction(() => /20,00 MiB/.test(document.querySelector(".snapshot-viewer .alloc-stats")?.textContent ?? ""));
  assert.match(await viewer.locator(".snap-top tbody tr").first().innerText(), /train\.py:42 en forward/);
}

test("a snapshot is decoded in a Web Worker, which stays for the next file", async () => {
  const context = await shared.browser.newContext();
  const { page, problems, viewer } = await viewerPage(context);
  const started = page.waitForEvent("worker");
  await viewer.locator("input[name=snapshot]").setInputFiles(snapshotFile);
  const worker = await started;
  assert.match(worker.url(), /\/assets\/worker\.[^/]+\.js$/);
  await viewer.locator(".snap-name").waitFor();
  assert.equal(await viewer.locator(".snap-name").innerText(), "instantanea.json");
  // The same worker answers the next file: no new one is started.
  let more = 0;
  page.on("worker", () => more++);
  await opensForReal(page, viewer);
  assert.equal(more, 0);
  assert.equal(page.workers().length, 1);
  assert.deepEqual(problems, []);
  await context.close();
});

test("Cancelar terminates a worker that is still working, and the next file starts a new one", async () => {
  const context = await shared.browser.newContext();
  await context.route(BUNDLE_JS, (route) => route.fulfill({ contentType: "text/javascript", body: SILENT }));
  const { page, problems, viewer } = await viewerPage(context);
  const started = page.waitForEvent("worker");
  await viewer.locator("input[name=snapshot]").setInputFiles(snapshotFile);
  const worker = await started;
  const busy = viewer.locator(".calc-busy");
  await busy.waitFor();
  assert.match(await busy.innerText(), /Leyendo instantanea\.json en segundo plano/);
  await screenshot(page, "visor-snapshot-leyendo");
  const closed = new Promise((resolve) => worker.on("close", resolve));
  await busy.locator("button[name=cancelar]").click();
  await closed;
  await busy.waitFor({ state: "detached" });
  assert.equal(await viewer.locator("output").innerText(), "");
  await context.unroute(BUNDLE_JS);
  await opensForReal(page, viewer);
  assert.deepEqual(problems, []);
  await context.close();
});

test("a worker that crashes or cannot load is a Spanish message, and the page goes on", async () => {
  const context = await shared.browser.newContext();
  await context.route(BUNDLE_JS, (route) => route.fulfill({ contentType: "text/javascript", body: CRASHING }));
  const { page, problems, viewer } = await viewerPage(context);
  await viewer.locator("input[name=snapshot]").setInputFiles(snapshotFile);
  const alert = viewer.locator("output [role=alert]");
  await alert.waitFor();
  assert.match(await alert.innerText(), /El análisis en segundo plano se detuvo \(.*memoria agotada \(simulada\)\)/);
  await context.unroute(BUNDLE_JS);
  await opensForReal(page, viewer);

  // A module whose wasm is missing: the loader says so.
  const { page: page2, problems: problems2, viewer: viewer2 } = await viewerPage(context);
  await context.route(BUNDLE_WASM, (route) => route.fulfill({ status: 404, body: "" }));
  await viewer2.locator("input[name=snapshot]").setInputFiles(snapshotFile);
  const alert2 = viewer2.locator("output [role=alert]");
  await alert2.waitFor();
  assert.match(await alert2.innerText(), /No se pudo cargar el analizador en segundo plano/);
  await context.unroute(BUNDLE_WASM);
  await opensForReal(page2, viewer2);

  // What the simulated failures themselves leave: the 404 (whose body the wasm
  // compiler abandons) and the thrown error.
  const expected = (p) => !/(HTTP 404|requestfailed): .*worker_web_bg|memoria agotada/.test(p);
  assert.deepEqual(problems.filter(expected), []);
  assert.deepEqual(problems2.filter(expected), []);
  await context.close();
});

test("the lab drops a file still being read when the reader picks a scenario", async () => {
  const context = await shared.browser.newContext();
  await context.route(BUNDLE_JS, (route) => route.fulfill({ contentType: "text/javascript", body: SILENT }));
  const page = await context.newPage();
  const problems = watch(page);
  await page.goto(url("memoria-reservada/"));
  await waitForIslands(page);
  await waitForLaterIsland(page, ".alloc-lab");
  const lab = page.locator(".alloc-lab");
  const trace = join(dir, "traza.jsonl");
  writeFileSync(trace, '{"op":"alloc","id":1,"bytes":1048576}\n{"op":"free","id":1}\n');
  const started = page.waitForEvent("worker");
  await lab.locator("input[name=traza]").setInputFiles(trace);
  const worker = await started;
  await lab.locator(".calc-busy", { hasText: "Leyendo traza.jsonl" }).waitFor();
  const closed = new Promise((resolve) => worker.on("close", resolve));
  await lab.locator("select[name=escenario]").selectOption({ index: 1 });
  await closed;
  await lab.locator(".calc-busy").waitFor({ state: "detached" });
  assert.doesNotMatch(await lab.locator(".calc-hint").first().innerText(), /traza\.jsonl/);
  assert.deepEqual(problems, []);
  await context.close();
});
