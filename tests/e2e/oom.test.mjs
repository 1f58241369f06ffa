// The OOM explainer in chapter 2: a worked example, real pastes, unknown text.

import { test } from "node:test";
import assert from "node:assert/strict";
import { useBrowser, url, watch, screenshot, waitForIslands } from "./helpers.mjs";

const shared = useBrowser();

test("the explainer decodes pastes of every era and says when it does not know", async () => {
  const page = await shared.browser.newPage();
  const problems = watch(page);
  await page.goto(url("memoria-reservada/"));
  await waitForIslands(page);
  const box = page.locator(".oom-explainer");

  // The worked example is explained at build time: fragmentation first, with a link.
  const first = box.locator(".oom-cause").first();
  assert.match(await first.innerText(), /fragmenta/i);
  assert.match(await box.locator(".oom-numbers").innerText(), /3,87 GiB/);
  const href = await first.locator("a").getAttribute("href");
  assert.match(href, /memoria-reservada\/#fragmentacion$/);

  // A 2019-style message inside a traceback, with a log prefix.
  const old = [
    "Traceback (most recent call last):",
    '  File "train.py", line 88, in <module>',
    "[rank0]: RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 10.76 GiB total capacity; 9.82 GiB already allocated; 13.44 MiB free; 9.92 GiB reserved in total by PyTorch)",
  ].join("\r\n");
  await box.locator("textarea[name=oom]").fill(old);
  await box.locator(".oom-numbers", { hasText: "9,82 GiB" }).waitFor();
  assert.match(await box.locator(".calc-hint", { hasText: "Formato" }).innerText(), /1\.4/);
  await screenshot(page, "explicador-oom");

  // Text that is no OOM: an honest answer, not a guess.
  await box.locator("textarea[name=oom]").fill("hola, esto no es un error de memoria");
  await box.locator(".oom-kind", { hasText: "No reconozco" }).waitFor();
  assert.equal(await box.locator(".oom-numbers").count(), 0);

  // A long log (2 MB) with the message at the end is still explained.
  // (Set as a paste would, in one go: Playwright's fill types long text far too slowly.)
  const noise = "INFO step 12 loss 1.2345 lr 3e-4\n".repeat(60_000);
  await box.locator("textarea[name=oom]").fill("");
  await box.locator("textarea[name=oom]").evaluate((el, text) => {
    el.value = text;
    el.dispatchEvent(new Event("input", { bubbles: true }));
  }, noise + old);
  await box.locator(".oom-numbers", { hasText: "9,82 GiB" }).waitFor({ timeout: 30_000 });
  assert.deepEqual(problems, []);
  await page.close();
});

test("the debugging chapter reads a memory_summary table", async () => {
  const page = await shared.browser.newPage();
  const problems = watch(page);
  await page.goto(url("depurar-memoria/"));
  await waitForIslands(page);
  const box = page.locator(".oom-explainer");
  assert.match(await box.locator(".oom-kind").innerText(), /memory_summary/);
  const numbers = await box.locator(".oom-numbers").innerText();
  assert.match(numbers, /cudaMalloc retries\s+12/);
  assert.match(numbers, /No liberable/);
  assert.match(await box.locator(".oom-cause").first().innerText(), /reintent|caché/i);
  assert.deepEqual(problems, []);
  await page.close();
});
