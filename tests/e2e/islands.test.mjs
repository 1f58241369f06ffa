// The weights calculator: rendered at build time, hydrated in the browser, and
// readable without JavaScript.

import { test } from "node:test";
import assert from "node:assert/strict";
import { useBrowser, url, watch, screenshot, waitForIslands } from "./helpers.mjs";

const shared = useBrowser();

const CALC = ".calc:not(.estimator)";

test("the calculator hydrates and reacts to input", async () => {
  const page = await shared.browser.newPage();
  const problems = watch(page);
  await page.goto(url("anatomia-vram/"));
  await waitForIslands(page);
  const island = page.locator("leptos-island").first();
  assert.equal(await island.getAttribute("data-hydrated"), "true");

  const calc = page.locator(CALC);
  const input = calc.getByLabel("Parámetros");
  const select = calc.getByLabel("Formato de los pesos");
  const big = calc.locator(".calc-big");
  assert.equal(await big.innerText(), "13,04 GiB");

  // 70B in bf16: 140 000 000 000 bytes = 130,39 GiB.
  await input.fill("70B");
  await assert.doesNotReject(() => big.filter({ hasText: "130,39 GiB" }).waitFor());
  assert.match(await calc.locator(".calc-alt").innerText(), /140,00 GB/);

  // fp32 doubles it; the table highlights the chosen row.
  await select.selectOption("fp32");
  await big.filter({ hasText: "260,77 GiB" }).waitFor();
  assert.equal(await calc.locator("tr.current th").innerText(), "fp32");

  // NF4 counts its block scales: 4,5 bits per weight.
  await input.fill("7e9");
  await select.selectOption("nf4");
  await big.filter({ hasText: "3,67 GiB" }).waitFor();

  // Bad input: a Spanish message next to the field, nothing breaks.
  await input.fill("siete mil millones");
  const alert = calc.getByRole("alert");
  await alert.waitFor();
  assert.match(await alert.innerText(), /no es un número válido/);
  assert.equal(await input.getAttribute("aria-invalid"), "true");
  await screenshot(page, "calculadora-error");

  // And it recovers.
  await input.fill("8030261248");
  await select.selectOption("bf16");
  await big.filter({ hasText: "14,96 GiB" }).waitFor();
  assert.equal(await input.getAttribute("aria-invalid"), "false");

  assert.deepEqual(problems, []);
  await page.close();
});

test("a huge paste is rejected quickly and calmly", async () => {
  const page = await shared.browser.newPage();
  const problems = watch(page);
  await page.goto(url("anatomia-vram/"));
  await waitForIslands(page);
  const input = page.locator(CALC).getByLabel("Parámetros");
  await input.fill("9".repeat(100_000));
  const alert = page.locator(CALC).getByRole("alert");
  await alert.waitFor();
  const text = await alert.innerText();
  assert.ok(text.length < 300, `mensaje de ${text.length} caracteres`);
  assert.deepEqual(problems, []);
  await page.close();
});

test("without JavaScript the page still reads, result included", async () => {
  const context = await shared.browser.newContext({ javaScriptEnabled: false });
  const page = await context.newPage();
  await page.goto(url("anatomia-vram/"));
  const calc = page.locator(CALC);
  assert.equal(await calc.locator(".calc-big").innerText(), "13,04 GiB");
  assert.equal(await calc.locator("tbody tr").count(), 6);
  assert.equal(await calc.getByLabel("Parámetros").inputValue(), "7B");
  assert.match(await page.locator("main").innerText(), /Las cuatro categorías/);
  // Navigation works without scripts.
  await page.getByRole("link", { name: "Inicio" }).first().click();
  await page.waitForURL(url(""));
  await screenshot(page, "sin-javascript");
  await context.close();
});
