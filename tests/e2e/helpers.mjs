// Shared set-up for the browser tests: Debian's Chromium through playwright-core,
// the site URL from `cargo xtask test`, and page-health bookkeeping.

import { chromium } from "playwright-core";
import { before, after } from "node:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { execFileSync } from "node:child_process";

export const BASE_URL = process.env.VRAMLAB_URL ?? "http://127.0.0.1:8080/";
export const SCREENSHOT_DIR = process.env.SCREENSHOT_DIR ?? "screenshots";

export const VIEWPORTS = {
  escritorio: { width: 1280, height: 900 },
  movil: { width: 390, height: 844 },
};

// Chromium flags verified on these machines: WebGPU through SwiftShader, and no background traffic to a
// network this machine does not have.
const ARGS = [
  "--no-sandbox",
  "--enable-unsafe-webgpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
  "--disable-quic",
  "--disable-dev-shm-usage",
];

export async function launch(extraArgs = []) {
  return chromium.launch({
    executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
    headless: true,
    args: [...ARGS, ...extraArgs],
  });
}

// Absolute URL of a site path such as "anatomia-vram/".
export function url(path = "") {
  return new URL(path, BASE_URL).href;
}

// Every page of the site, from the sitemap the build wrote (so a new page is tested
// without touching this file). Sitemap URLs use the public origin; map them here.
export async function sitePaths() {
  const res = await fetch(url("sitemap.xml"));
  const xml = await res.text();
  const locs = [...xml.matchAll(/<loc>([^<]+)<\/loc>/g)].map((m) => m[1]);
  if (locs.length === 0) throw new Error("sitemap.xml sin URLs");
  return locs.map((loc) => new URL(loc).pathname.replace(/^\//, ""));
}

// Records console errors, page errors and failed requests of a page.
export function watch(page) {
  const problems = [];
  page.on("console", (msg) => {
    if (msg.type() === "error" || msg.type() === "warning") {
      problems.push(`console.${msg.type()}: ${msg.text()}`);
    }
  });
  page.on("pageerror", (err) => problems.push(`pageerror: ${err.message}`));
  page.on("requestfailed", (req) =>
    problems.push(`requestfailed: ${req.url()} ${req.failure()?.errorText}`),
  );
  page.on("response", (res) => {
    if (res.status() >= 400) problems.push(`HTTP ${res.status()}: ${res.url()}`);
  });
  return problems;
}

export async function screenshot(page, name) {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOT_DIR, `${name}.png`), fullPage: true });
}

// Waits until the estimator's answer is the one for its inputs: the diagnostics worker
// answers every change after the first (aria-busy is "true" while it works). Call it
// after something that follows the change (a value in the form, a message): the page
// marks the output busy in the same turn.
export async function waitForEstimate(page) {
  await page.locator('.estimator output[aria-busy="false"]').waitFor({ state: "attached" });
}

// Waits until the island loader has hydrated every island on the page.
export async function waitForIslands(page) {
  await page.waitForFunction(() => document.documentElement.dataset.islands, null, {
    timeout: 30_000,
  });
  const state = await page.evaluate(() => document.documentElement.dataset.islands);
  if (state !== "ready") throw new Error(`islas en estado ${state}`);
}

// Scrolls to an island that its page wakes from a second bundle only when it nears the
// screen (the allocator lab) and waits until it is hydrated.
export async function waitForLaterIsland(page, selector) {
  await page.locator(selector).scrollIntoViewIfNeeded();
  await page.waitForFunction(
    (sel) => document.querySelector(sel)?.closest("leptos-island")?.dataset.hydrated === "true",
    selector,
    { timeout: 30_000 },
  );
}

// One browser per test file, launched before its tests and closed after them.
// Returns an object whose `browser` property is set once the file's tests start.
export function useBrowser(extraArgs = []) {
  const shared = { browser: null };
  before(async () => {
    shared.browser = await launch(extraArgs);
  });
  after(async () => {
    await shared.browser?.close();
  });
  return shared;
}

// `vramlab estimate … --json` from the CLI under test (VRAMLAB_BIN), or null without it.
export function cli(args) {
  const bin = process.env.VRAMLAB_BIN;
  if (!bin) return null;
  return JSON.parse(execFileSync(bin, ["estimate", ...args, "--json"], { encoding: "utf8" }));
}

// The page's label for a byte count (vram::ByteSize::binary): "16,38 GiB". Bytes are
// not recoverable from a rounded label, so tests compare labels.
export function gib(bytes) {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  while (i + 1 < units.length && bytes >= 1024 ** (i + 1)) i++;
  if (i === 0) return `${bytes} B`;
  const hundredths = Math.round((bytes * 100) / 1024 ** i);
  return `${Math.floor(hundredths / 100)},${String(hundredths % 100).padStart(2, "0")} ${units[i]}`;
}

// An init script (context.addInitScript(fakeWebGpu, info)): a WebGPU whose
// high-performance adapter says `info` ({vendor, architecture, description}), as a
// reader's browser would, before the page's scripts run.
export function fakeWebGpu(info) {
  const adapter = { info };
  Object.defineProperty(Navigator.prototype, "gpu", {
    configurable: true,
    get: () => ({ requestAdapter: async () => adapter }),
  });
}
