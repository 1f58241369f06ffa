// The theme toggle: follows the system by default, cycles sistema → claro → oscuro,
// and the choice survives a reload and a move to another page.

import { test } from "node:test";
import assert from "node:assert/strict";
import { useBrowser, url, watch, screenshot, waitForIslands } from "./helpers.mjs";

const shared = useBrowser();

const background = (page) =>
  page.evaluate(() => getComputedStyle(document.body).backgroundColor);

test("the theme choice persists across reloads and pages", async () => {
  const context = await shared.browser.newContext({ colorScheme: "light" });
  const page = await context.newPage();
  const problems = watch(page);
  await page.goto(url("anatomia-vram/"), { waitUntil: "domcontentloaded" });
  // Leaving a page while its islands' wasm still downloads aborts that request (a
  // `requestfailed` for the watcher): each page is let finish before the next step.
  await waitForIslands(page);
  const toggle = page.locator("#theme-toggle");
  await toggle.waitFor({ state: "visible" });
  assert.equal(await toggle.textContent(), "Tema: sistema");
  const light = await background(page);

  await toggle.click();
  assert.equal(await toggle.textContent(), "Tema: claro");
  assert.equal(await page.getAttribute("html", "data-theme"), "light");
  await toggle.click();
  assert.equal(await toggle.textContent(), "Tema: oscuro");
  const dark = await background(page);
  assert.notEqual(dark, light, "el fondo no cambió al elegir el tema oscuro");

  await page.reload({ waitUntil: "domcontentloaded" });
  assert.equal(await page.getAttribute("html", "data-theme"), "dark");
  assert.equal(await background(page), dark);
  await waitForIslands(page);
  await page.locator("#theme-toggle").waitFor({ state: "visible" });
  assert.equal(await page.locator("#theme-toggle").textContent(), "Tema: oscuro");

  await page.goto(url("glosario/"), { waitUntil: "domcontentloaded" });
  assert.equal(await page.getAttribute("html", "data-theme"), "dark");
  await screenshot(page, "tema-oscuro-glosario");

  // Back to the system's choice: the attribute goes and the light background returns.
  await page.locator("#theme-toggle").click();
  assert.equal(await page.locator("#theme-toggle").textContent(), "Tema: sistema");
  assert.equal(await page.getAttribute("html", "data-theme"), null);
  assert.equal(await background(page), light);
  assert.deepEqual(problems, []);
  await context.close();
});

test("with the system in dark mode the default is dark and «claro» overrides it", async () => {
  const context = await shared.browser.newContext({ colorScheme: "dark" });
  const page = await context.newPage();
  await page.goto(url(""), { waitUntil: "domcontentloaded" });
  const systemDark = await background(page);
  await page.locator("#theme-toggle").click();
  assert.equal(await page.getAttribute("html", "data-theme"), "light");
  assert.notEqual(await background(page), systemDark);
  await context.close();
});
