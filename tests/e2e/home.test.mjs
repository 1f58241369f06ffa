// The home page's first screen: the OOM explainer and "¿Cabe mi modelo?" above the fold
// on a desktop and on a 390 px phone, answering through the diagnostics worker and the
// estimate-web bundle, and the quick estimate handing its settings to the full estimator.

import { test } from "node:test";
import assert from "node:assert/strict";
import { useBrowser, url, watch, screenshot, waitForIslands, VIEWPORTS, fakeWebGpu } from "./helpers.mjs";

const shared = useBrowser();

const OOM =
  "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.65 GiB of which 1.23 GiB is free. Including non-PyTorch memory, this process has 22.41 GiB memory in use. Of the allocated memory 18.02 GiB is allocated by PyTorch, and 3.87 GiB is reserved by PyTorch but unallocated.";

for (const [label, viewport] of Object.entries(VIEWPORTS)) {
  test(`the home page opens on both tools (${label})`, async () => {
    const context = await shared.browser.newContext({ viewport });
    const page = await context.newPage();
    const problems = watch(page);
    await page.goto(url(""));
    await waitForIslands(page);
    // Above the fold: the paste box and the first of the quick estimator's fields.
    for (const selector of ["textarea[name=oom]", ".quick-estimator select[name=modelo]"]) {
      const box = await page.locator(selector).boundingBox();
      assert.ok(box, selector);
      assert.ok(box.y + box.height <= viewport.height, `${selector} bajo el pliegue: ${box.y + box.height} > ${viewport.height}`);
    }
    // The first answer is there before any script ran (built with the page).
    const quick = page.locator(".quick-estimator");
    assert.match(await quick.locator(".quick-title").innerText(), /Llama 3\.1 8B en GeForce RTX 4090 · QLoRA/);
    assert.equal(await quick.locator(".quick-verdict").getAttribute("data-verdict"), "fits");
    await screenshot(page, `inicio-herramientas-${label}`);

    // Pasting an error explains it in place.
    await page.locator("textarea[name=oom]").fill(OOM);
    await page.locator(".oom-kind", { hasText: "asignador de PyTorch" }).waitFor();
    assert.match(await page.locator(".oom-cause").first().innerText(), /fragment/i);

    // A 70B model for full fine-tuning does not fit; the link carries the settings.
    await quick.locator("select[name=modelo]").selectOption("llama-3.1-70b");
    await quick.locator("select[name=modo]").selectOption("entrenamiento");
    // The answer to the last change: an earlier one may show for a moment.
    await quick.locator("a.quick-open[href*='modo=entrenamiento']").waitFor();
    await quick.locator(".quick-title", { hasText: "Llama 3.1 70B" }).waitFor();
    await quick.locator(".quick-verdict[data-verdict=does-not-fit]").waitFor();
    const href = await quick.locator("a.quick-open").getAttribute("href");
    assert.match(href, /\/estimador\/\?/);
    assert.match(href, /modelo=llama-3\.1-70b/);
    assert.match(href, /modo=entrenamiento/);
    await Promise.all([page.waitForURL(/estimador/), quick.locator("a.quick-open").click()]);
    await waitForIslands(page);
    assert.equal(await page.locator(".estimator select[name=modelo]").inputValue(), "llama-3.1-70b");
    assert.deepEqual(problems, []);
    await context.close();
  });
}

test("the quick estimator offers the browser's GPU, as the estimator does", async () => {
  const context = await shared.browser.newContext();
  await context.addInitScript(fakeWebGpu, { vendor: "nvidia", architecture: "ampere", description: "NVIDIA GeForce RTX 3060" });
  const page = await context.newPage();
  const problems = watch(page);
  await page.goto(url(""));
  await waitForIslands(page);
  const quick = page.locator(".quick-estimator");
  await quick.locator(".est-gpu-hint", { hasText: "GPU elegida por lo que dice tu navegador" }).waitFor();
  assert.equal(await quick.locator("select[name=gpu]").inputValue(), "rtx-3060");
  await quick.locator(".quick-title", { hasText: "RTX 3060" }).waitFor();
  await quick.locator("a.quick-open[href*='gpu=rtx-3060']").waitFor();
  assert.deepEqual(problems, []);
  await context.close();

  // An architecture alone: its cards to pick from, nothing chosen for the reader.
  const other = await shared.browser.newContext();
  await other.addInitScript(fakeWebGpu, { vendor: "nvidia", architecture: "lovelace", description: "" });
  const page2 = await other.newPage();
  await page2.goto(url(""));
  await waitForIslands(page2);
  const quick2 = page2.locator(".quick-estimator");
  const hint = quick2.locator(".est-gpu-hint", { hasText: "arquitectura Ada Lovelace" });
  await hint.waitFor();
  assert.equal(await quick2.locator("select[name=gpu]").inputValue(), "rtx-4090");
  await hint.locator("button", { hasText: "GeForce RTX 4070 Ti" }).click();
  assert.equal(await quick2.locator("select[name=gpu]").inputValue(), "rtx-4070-ti");
  await quick2.locator(".quick-title", { hasText: "RTX 4070 Ti" }).waitFor();
  await other.close();
});
