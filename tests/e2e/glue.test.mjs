// The browser glue's failure cases (gloo): storage disabled, full, or holding a value
// from an older page; a file the browser cannot read. Each must leave the tools working
// and say what happened in Spanish.

import { test } from "node:test";
import assert from "node:assert/strict";
import { useBrowser, url, watch, waitForIslands, screenshot } from "./helpers.mjs";

const shared = useBrowser();

async function estimatorWith(initScript, arg) {
  const context = await shared.browser.newContext();
  if (initScript) await context.addInitScript(initScript, arg);
  const page = await context.newPage();
  const problems = watch(page);
  await page.goto(url("estimador/"));
  await waitForIslands(page);
  const est = page.locator(".estimator");
  await est.locator(".est-total").waitFor();
  return { context, page, problems, est };
}

test("with storage disabled the estimator works and says it will not remember", async () => {
  const { context, page, problems, est } = await estimatorWith(() => {
    // What a browser with site data blocked does: reading the property throws.
    Object.defineProperty(window, "localStorage", {
      get() {
        throw new DOMException("Access is denied for this document.", "SecurityError");
      },
    });
  });
  await est.locator("select[name=modo]").selectOption("qlora");
  const note = est.locator(".calc-storage");
  await note.waitFor();
  assert.match(await note.innerText(), /no deja guardar datos de este sitio/);
  assert.match(page.url(), /modo=qlora/);
  await est.locator(".est-total").waitFor();
  await screenshot(page, "estimador-sin-almacenamiento");
  assert.deepEqual(problems, []);
  await context.close();
});

test("with storage full the estimator says so once and keeps working", async () => {
  const { context, problems, est } = await estimatorWith(() => {
    Storage.prototype.setItem = function () {
      throw new DOMException("The quota has been exceeded.", "QuotaExceededError");
    };
  });
  await est.locator("select[name=modo]").selectOption("lora");
  await est.locator("select[name=modo]").selectOption("entrenamiento");
  const note = est.locator(".calc-storage");
  await note.waitFor();
  assert.match(await note.innerText(), /está lleno/);
  assert.equal(await note.count(), 1);
  assert.deepEqual(problems, []);
  await context.close();
});

test("a value stored by an older page is ignored, a current one restored", async () => {
  // Before the "v2 " text the state was JSON ({"v":1,…}), and before that the bare
  // query string: both are older pages' values.
  const old = await estimatorWith(() => {
    if (!sessionStorage.getItem("seeded")) {
      localStorage.setItem("vramlab.estimador", JSON.stringify({ v: 1, query: "modelo=llama-3.1-70b&modo=qlora" }));
      sessionStorage.setItem("seeded", "1");
    }
  });
  assert.notEqual(await old.est.locator("select[name=modo]").inputValue(), "qlora");
  const kept = await old.page.evaluate(() => localStorage.getItem("vramlab.estimador"));
  assert.ok(kept === null || kept.startsWith("v2 "), kept);
  assert.deepEqual(old.problems, []);
  await old.context.close();

  const current = await estimatorWith(() => {
    if (!sessionStorage.getItem("seeded")) {
      localStorage.setItem("vramlab.estimador", "v2 modo=qlora&gpu=rtx-3060");
      sessionStorage.setItem("seeded", "1");
    }
  });
  await current.page.waitForFunction(() => document.querySelector(".estimator select[name=modo]").value === "qlora");
  assert.equal(await current.est.locator("select[name=gpu]").inputValue(), "rtx-3060");
  assert.deepEqual(current.problems, []);
  await current.context.close();
});

test("a file the browser cannot read is a Spanish message, and the next one opens", async () => {
  const { mkdtempSync, writeFileSync } = await import("node:fs");
  const { join } = await import("node:path");
  const { tmpdir } = await import("node:os");
  const dir = mkdtempSync(join(tmpdir(), "vramlab-glue-"));
  const file = join(dir, "traza.txt");
  writeFileSync(file, "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n");

  const context = await shared.browser.newContext();
  await context.addInitScript(() => {
    // The first read fails the way a file that changed on disk does.
    for (const method of ["readAsText", "readAsArrayBuffer"]) {
      const real = FileReader.prototype[method];
      FileReader.prototype[method] = function (blob) {
        if (window.__failedOnce) return real.call(this, blob);
        window.__failedOnce = true;
        Object.defineProperty(this, "error", {
          value: new DOMException("The file could not be read.", "NotReadableError"),
        });
        setTimeout(() => this.dispatchEvent(new ProgressEvent("error")), 0);
      };
    }
  });
  const page = await context.newPage();
  const problems = watch(page);
  await page.goto(url("depurar-memoria/"));
  await waitForIslands(page);
  const viewer = page.locator(".snapshot-viewer");
  await viewer.locator("input[name=snapshot]").setInputFiles(file);
  const alert = viewer.locator("[role=alert]");
  await alert.waitFor();
  assert.match(await alert.innerText(), /No se pudo leer el archivo: el navegador no puede leerlo/);
  // The same file again is read this time: the viewer says what it is instead.
  await viewer.locator("input[name=snapshot]").setInputFiles([]);
  await viewer.locator("input[name=snapshot]").setInputFiles(file);
  await page.waitForFunction(() => /no parece un snapshot/.test(document.querySelector(".snapshot-viewer [role=alert]")?.textContent ?? ""));
  assert.deepEqual(problems, []);
  await context.close();
});
