// The WebGPU smoke test in the browser: the same WGSL kernel the native tests run on
// lavapipe, here through wgpu compiled to wasm on Chromium's SwiftShader adapter.

import { test } from "node:test";
import assert from "node:assert/strict";
import { useBrowser, url, watch, screenshot, waitForIslands } from "./helpers.mjs";

const shared = useBrowser();

test("the smoke kernel runs on WebGPU and matches the CPU", async () => {
  const page = await shared.browser.newPage();
  const problems = watch(page);
  await page.goto(url("comprobar-webgpu/"));
  await waitForIslands(page);
  assert.ok(await page.evaluate(() => "gpu" in navigator), "navigator.gpu");

  await page.getByRole("button", { name: "Probar WebGPU" }).click();
  const status = page.locator(".gpu-status[data-state='ok'], .gpu-status[data-state='error'], .gpu-status[data-state='mismatch']");
  await status.waitFor({ timeout: 60_000 });
  const text = await status.innerText();
  assert.equal(await status.getAttribute("data-state"), "ok", text);
  // Spanish decimal comma: "2,61e-6".
  const err = Number((await page.locator(".gpu-err").innerText()).replace(",", "."));
  assert.ok(err < 1e-3, `error ${err}`);
  assert.ok((await page.locator(".gpu-adapter").innerText()).length > 0);
  await screenshot(page, "webgpu-ok");
  assert.deepEqual(problems, []);
  await page.close();
});

// Without WebGPU (no navigator.gpu, or an adapter the browser refuses) the check must
// explain itself in Spanish. Both are simulated before any page script runs.
const NO_WEBGPU = {
  "no navigator.gpu": () => {
    delete Navigator.prototype.gpu;
  },
  "adapter refused": () => {
    const gpu = navigator.gpu;
    if (gpu) gpu.requestAdapter = async () => null;
  },
};

for (const [name, script] of Object.entries(NO_WEBGPU)) {
  test(`without WebGPU (${name}) the check says so in Spanish`, async () => {
    const context = await shared.browser.newContext();
    await context.addInitScript(script);
    const page = await context.newPage();
    const problems = watch(page);
    await page.goto(url("comprobar-webgpu/"));
    await waitForIslands(page);
    await page.getByRole("button", { name: "Probar WebGPU" }).click();
    const status = page.locator(".gpu-status[data-state='error']");
    await status.waitFor({ timeout: 30_000 });
    const text = await status.innerText();
    assert.match(text, /WebGPU|adaptador/, text);
    assert.equal(await status.getAttribute("role"), "alert");
    await screenshot(page, `webgpu-sin-${name.replaceAll(" ", "-").replace(".", "")}`);
    assert.deepEqual(problems, []);
    await context.close();
  });
}
