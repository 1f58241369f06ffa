// Code blocks: highlighted at build time (the colours come from CSS classes, so they
// show without JavaScript) and a «Copiar» button that puts the exact source on the
// clipboard.

import { test } from "node:test";
import assert from "node:assert/strict";
import { useBrowser, url, watch, screenshot } from "./helpers.mjs";

const shared = useBrowser();

test("code is highlighted and the copy button copies it", async () => {
  const context = await shared.browser.newContext();
  await context.grantPermissions(["clipboard-read", "clipboard-write"], {
    origin: new URL(url()).origin,
  });
  const page = await context.newPage();
  const problems = watch(page);
  await page.goto(url("estrategias/"), { waitUntil: "domcontentloaded" });

  const block = page.locator("div.code", { has: page.locator("code.language-python") }).first();
  const keyword = block.locator("span.hl-keyword").first();
  const color = await keyword.evaluate((el) => getComputedStyle(el).color);
  const plain = await block.locator("code").evaluate((el) => getComputedStyle(el).color);
  assert.notEqual(color, plain, "las palabras clave no tienen color propio");

  const button = block.locator("button.copy");
  await button.waitFor({ state: "visible" });
  assert.equal(await button.textContent(), "Copiar");
  await button.click();
  await page.waitForFunction(
    (el) => el.textContent === "Copiado",
    await button.elementHandle(),
  );
  const copied = await page.evaluate(() => navigator.clipboard.readText());
  const source = await block.locator("code").textContent();
  assert.equal(copied, source);
  assert.ok(copied.split("\n").length > 2, copied);
  await screenshot(page, "codigo-estrategias");
  assert.deepEqual(problems, []);
  await context.close();
});

test("without clipboard access the button selects the code instead", async () => {
  const context = await shared.browser.newContext();
  const page = await context.newPage();
  await page.addInitScript(() => {
    Object.defineProperty(navigator, "clipboard", {
      value: { writeText: () => Promise.reject(new Error("denegado")) },
    });
  });
  await page.goto(url("estrategias/"), { waitUntil: "domcontentloaded" });
  const block = page.locator("div.code").first();
  await block.locator("button.copy").click();
  await page.waitForFunction(() => document.querySelector("div.code .copy")?.textContent.startsWith("Seleccionado"));
  const selected = await page.evaluate(() => window.getSelection().toString());
  assert.equal(selected.trimEnd(), (await block.locator("code").textContent()).trimEnd());
  await context.close();
});
