// The estimator island: same numbers as the CLI, shareable URL state, Spanish errors.

import { test } from "node:test";
import assert from "node:assert/strict";
import { useBrowser, url, watch, screenshot, waitForIslands, waitForEstimate, cli, gib, VIEWPORTS, fakeWebGpu } from "./helpers.mjs";

const shared = useBrowser();

// vram::group_digits: narrow no-break spaces every three digits, from five digits up.
function groupDigits(n) {
  const s = String(n);
  return s.length <= 4 ? s : s.replace(/\B(?=(\d{3})+(?!\d))/g, "\u202f");
}

// A fresh browser context on the estimator page, hydrated, with its console watched.
async function openEstimator() {
  const context = await shared.browser.newContext();
  const page = await context.newPage();
  const problems = watch(page);
  await page.goto(url("estimador/"));
  await waitForIslands(page);
  await openGroups(page);
  return { context, page, problems, est: page.locator(".estimator") };
}

// Unfolds the estimator's groups of settings (formato y lote, entrenamiento, servidor,
// llama.cpp), as a reader does before changing one of them.
async function openGroups(page) {
  await page.evaluate(() => document.querySelectorAll(".estimator details.est-group").forEach((d) => (d.open = true)));
}

// Issue 41: the verdict, the bar and the launch within the first screen on a phone and a
// laptop; the settings of another task or engine folded away; the page a third of its
// old height at 390 px (47 814 px then).
test("the answer comes first: verdict and launch in the first screen, groups by task and engine", async () => {
  for (const [name, viewport] of Object.entries(VIEWPORTS)) {
    for (const query of ["", "?motor=vllm&contexto=8192"]) {
      const context = await shared.browser.newContext({ viewport });
      const page = await context.newPage();
      const problems = watch(page);
      await page.goto(url(`estimador/${query}`));
      await waitForIslands(page);
      const est = page.locator(".estimator");
      await est.locator(".est-launch-title").waitFor();
      if (query) await est.locator(".est-launch code", { hasText: "vllm serve" }).waitFor();
      const bottom = async (sel) => {
        const b = await est.locator(sel).first().boundingBox();
        return b.y + b.height;
      };
      for (const sel of [".est-total", ".est-bar", ".est-verdict"]) {
        const y = await bottom(sel);
        assert.ok(y <= viewport.height, `${name} ${query}: ${sel} acaba en ${y}`);
      }
      const launchTop = (await est.locator(".est-launch-title").boundingBox()).y;
      assert.ok(launchTop < viewport.height - 20, `${name} ${query}: la orden empieza en ${launchTop}`);
      if (viewport.width < 500) {
        const height = await page.evaluate(() => document.documentElement.scrollHeight);
        assert.ok(height <= 15_938, `${height} px`);
        assert.equal(await page.evaluate(() => document.documentElement.scrollWidth), viewport.width);
      }
      await page.screenshot({ path: `${process.env.SCREENSHOT_DIR ?? "screenshots"}/estimador-primera-pantalla-${name}${query ? "-vllm" : ""}.png` });
      // Only the groups of this task and engine are there, folded.
      const shown = await est.locator("details.est-group:not([hidden]) > summary").allInnerTexts();
      assert.deepEqual(shown, query ? ["Formato, lote y GPU", "Servidor"] : ["Formato, lote y GPU", "Servidor"]);
      assert.equal(await est.locator("details.est-group[open]").count(), 0);
      assert.deepEqual(problems, []);
      await context.close();
    }
  }
  // Training brings its own group; llama.cpp its own; a link that sets one of a group's
  // settings opens it.
  const context = await shared.browser.newContext({ viewport: VIEWPORTS.movil });
  const page = await context.newPage();
  await page.goto(url("estimador/?motor=llamacpp&capas-gpu=20"));
  await waitForIslands(page);
  const est = page.locator(".estimator");
  const group = (title) => est.locator("details.est-group", { has: page.locator(`summary:text-is("${title}")`) });
  await group("llama.cpp y Ollama").and(page.locator("[open]")).waitFor();
  assert.equal(await group("Servidor").isHidden(), true);
  assert.equal(await group("Entrenamiento").isHidden(), true);
  assert.equal(await est.locator("input[name=capas-gpu]").inputValue(), "20");
  await est.locator("select[name=modo]").selectOption("qlora");
  await group("Entrenamiento").waitFor();
  assert.equal(await group("llama.cpp y Ollama").isHidden(), true);
  // QLoRA's own settings only: no precision of a full fine-tune.
  await group("Entrenamiento").locator("summary").click();
  assert.equal(await est.locator("select[name=precision]").isHidden(), true);
  assert.equal(await est.locator("select[name=objetivos]").isVisible(), true);
  await context.close();
});

// Issue 41: the reader's GPU as the browser's WebGPU adapter names it, offered under the
// picker: a named card is chosen and said so; an architecture lists its cards; a link's
// card is never replaced.
test("the browser's GPU is suggested, said, and never replaces a link's", async () => {
  for (const [info, query, check] of [
    [{ vendor: "nvidia", architecture: "ampere", description: "NVIDIA GeForce RTX 3060" }, "", async (est) => {
      await est.locator(".est-gpu-hint", { hasText: "GPU elegida por lo que dice tu navegador" }).waitFor();
      assert.equal(await est.locator("select[name=gpu]").inputValue(), "rtx-3060");
      await est.locator(".est-verdict", { hasText: "RTX 3060" }).waitFor();
    }],
    [{ vendor: "nvidia", architecture: "lovelace", description: "" }, "", async (est) => {
      const hint = est.locator(".est-gpu-hint", { hasText: "arquitectura Ada Lovelace" });
      await hint.waitFor();
      // Nothing is chosen for the reader: they pick.
      assert.equal(await est.locator("select[name=gpu]").inputValue(), "rtx-4090");
      await hint.locator("button", { hasText: "GeForce RTX 4070 Ti" }).click();
      assert.equal(await est.locator("select[name=gpu]").inputValue(), "rtx-4070-ti");
      await est.locator(".est-gpu-hint").waitFor({ state: "detached" });
    }],
    [{ vendor: "nvidia", architecture: "ampere", description: "NVIDIA GeForce RTX 3060" }, "?gpu=l4", async (est, page) => {
      await page.waitForTimeout(500);
      assert.equal(await est.locator(".est-gpu-hint").count(), 0);
      assert.equal(await est.locator("select[name=gpu]").inputValue(), "l4");
    }],
  ]) {
    const context = await shared.browser.newContext();
    await context.addInitScript(fakeWebGpu, info);
    const page = await context.newPage();
    const problems = watch(page);
    await page.goto(url(`estimador/${query}`));
    await waitForIslands(page);
    await check(page.locator(".estimator"), page);
    assert.deepEqual(problems, []);
    await context.close();
  }
});

test("the estimator matches the CLI and follows its inputs", async () => {
  const { context, page, problems, est } = await openEstimator();
  const total = est.locator(".est-total");

  const expected = cli(["--model", "llama-3.1-8b", "--gpu", "rtx-4090"]);
  assert.match(await est.locator(".est-speed").innerText(), /tokens\/s/);
  if (expected) {
    assert.equal(await total.innerText(), gib(expected.per_gpu_bytes));
    assert.match(await est.locator(".est-limits").innerText(), new RegExp(`Lote máximo: ${expected.max_batch_fit}`));
  }

  // The chart marks where the reader's curve crosses the GPU: the solver's maximum
  // context, the same number as the limits line, and the current point.
  const chartMax = est.locator(".est-chart .est-chart-max");
  const limits = await est.locator(".est-limits").innerText();
  const maxSeq = await chartMax.getAttribute("data-tokens");
  assert.ok(limits.replace(/[\s\u00a0\u202f]/g, "").includes(`secuenciamáxima:${maxSeq}`), `${limits} / ${maxSeq}`);
  assert.equal(await est.locator(".est-chart .est-chart-now").getAttribute("data-tokens"), "4096");
  await est.locator(".est-chart .est-chart-pt").nth(4).focus();
  assert.match(await est.locator(".est-chart .est-chart-pt").nth(4).locator("title").textContent(), /8192 tokens: .* GiB con SDPA/);

  // Switch to QLoRA training on a 12 GiB card.
  await est.locator("select[name=modo]").selectOption("qlora");
  // The defaults QLoRA users get from PEFT/TRL, shown as they are computed: the base in
  // NF4 with double quantisation, gradient checkpointing on.
  assert.equal(await est.locator("select[name=formato]").inputValue(), "nf4-dq");
  assert.equal(await est.locator("input[name=checkpointing]").isChecked(), true);
  await est.locator("select[name=gpu]").selectOption("rtx-3060");
  await est.locator("input[name=contexto]").fill("1024");
  const qlora = cli(["--model", "llama-3.1-8b", "--mode", "train", "--finetune", "qlora", "--seq", "1024", "--gpu", "rtx-3060"]);
  if (qlora) {
    await total.filter({ hasText: gib(qlora.per_gpu_bytes) }).waitFor();
    const verdict = est.locator(".est-verdict");
    assert.equal(await verdict.getAttribute("data-fits"), String(qlora.fits));
    assert.equal(await verdict.getAttribute("data-verdict"), qlora.verdict);
  }
  // The URL now describes the configuration.
  await page.waitForFunction(() => location.search.includes("modo=qlora"));
  const sharedUrl = page.url();
  assert.match(sharedUrl, /gpu=rtx-3060/);
  // Token counts are written as model cards write them.
  assert.match(sharedUrl, /contexto=1k/);
  await screenshot(page, "estimador-qlora");

  // Bad input: a Spanish message, and recovery.
  await est.locator("input[name=lote]").fill("cero");
  await est.getByRole("alert").waitFor();
  assert.match(await est.getByRole("alert").innerText(), /El lote debe ser un entero entre 1 y/);
  // The field itself says what is wrong.
  assert.equal(await est.locator("input[name=lote]").getAttribute("aria-invalid"), "true");
  assert.match(await est.locator("label:has(input[name=lote]) .field-error").innerText(), /«cero» no lo es/);
  await est.locator("input[name=lote]").fill("2");
  await total.waitFor();
  assert.deepEqual(problems, []);

  // The chart, the GPU table and the speed hint are there.
  assert.equal(await est.locator(".est-chart polyline").count(), 2);
  const summary = await est.locator(".est-gpus summary").innerText();
  assert.match(summary, /Con margen en \d+ de \d+, al límite en \d+/);
  assert.ok((await est.locator(".est-gpus tbody tr").count()) >= 30);

  // Coming back without a query restores the last configuration (localStorage).
  const back = await context.newPage();
  await back.goto(url("estimador/"));
  await waitForIslands(back);
  await back.waitForFunction(() => document.querySelector(".estimator select[name=modo]").value === "qlora");
  await back.close();

  // Opening the shared link restores the configuration.
  const again = await shared.browser.newPage();
  await again.goto(sharedUrl);
  await waitForIslands(again);
  await again.waitForFunction(() => document.querySelector(".estimator select[name=modo]").value === "qlora");
  assert.equal(await again.locator(".estimator select[name=gpu]").inputValue(), "rtx-3060");
  await again.close();
  await context.close();
});

test("the engine is fetched on the first change, once, and a failed fetch is a Spanish message", async () => {
  const { context, page, problems, est } = await openEstimator();
  const engine = [];
  page.on("request", (r) => {
    if (/estimate_web/.test(r.url())) engine.push(r.url());
  });
  // The first answer is in the page's HTML: no engine yet.
  assert.match(await est.locator(".est-total").innerText(), /GiB/);
  assert.deepEqual(engine, []);

  await est.locator("select[name=gpu]").selectOption("rtx-3060");
  const expected = cli(["--model", "llama-3.1-8b", "--gpu", "rtx-3060"]);
  if (expected) await est.locator(".est-total", { hasText: gib(expected.per_gpu_bytes) }).waitFor();
  await waitForEstimate(page);
  assert.equal(engine.length, 2, engine.join(" "));
  // Later changes reuse it.
  await est.locator("input[name=contexto]").fill("8k");
  await waitForEstimate(page);
  await est.locator("select[name=gpu]").selectOption("h100-sxm");
  await waitForEstimate(page);
  assert.equal(await est.locator(".est-chart .est-chart-now").getAttribute("data-tokens"), "8192");
  assert.equal(engine.length, 2, engine.join(" "));
  assert.deepEqual(problems, []);

  // A bundle that cannot start: the output says so in Spanish, the form still works.
  const broken = await context.newPage();
  await broken.route(/estimate_web_bg[^/]*\.wasm/, (r) =>
    r.fulfill({ status: 200, contentType: "application/wasm", body: "no es wasm" }),
  );
  await broken.goto(url("estimador/"));
  await waitForIslands(broken);
  await openGroups(broken);
  await broken.locator(".estimator select[name=gpu]").selectOption("rtx-3060");
  const alert = broken.locator(".estimator output [role=alert]");
  await alert.waitFor();
  assert.match(await alert.innerText(), /No se pudo iniciar el módulo del estimador/);
  await broken.locator(".estimator input[name=lote]").fill("cero");
  await broken.locator(".estimator output [role=alert]", { hasText: "El lote debe ser" }).waitFor();
  await context.close();
});

test("hostile query parameters do not break the estimator", async () => {
  const page = await shared.browser.newPage();
  const problems = watch(page);
  const junk = encodeURIComponent("<script>alert(1)</script>".repeat(50));
  await page.goto(url(`estimador/?modelo=${junk}&lote=-5&contexto=1e99&gpu=&formato=%00`));
  await waitForIslands(page);
  const alert = page.locator(".estimator").getByRole("alert");
  await alert.waitFor();
  const text = await alert.innerText();
  assert.ok(text.length < 300, text);
  assert.match(text, /El enlace trae \d+ valores que no valen/);
  assert.equal(await page.locator("script:not([src])").count(), 0);
  assert.deepEqual(problems, []);
  await page.close();
});

// The hardening pass's freezing link: a custom MoE of 20 000 layers on llama.cpp with
// experts in RAM, whose solver once walked every layer for every layer count (over 114 s,
// and replayed from storage on every later visit).
const HUGE_MOE =
  "a1:20000.2048.32.4.128.6144.0.151936.0.0.2.0.0.1.0.0.0.0.0.40960.128,8,768,0,0.-.-:qwen3_moe";

test("a link with an absurd architecture answers at once and is never replayed", async () => {
  const { context, page, problems } = await openEstimator();
  const link =
    url("estimador/") +
    "?modelo=propio&motor=llamacpp&formato=Q4_K_M&expertos-cpu=10&arquitectura=" +
    encodeURIComponent(HUGE_MOE);
  await page.goto(link);
  await waitForIslands(page);
  const start = Date.now();
  const alert = page.locator(".est-import [role=alert]");
  await alert.waitFor({ state: "attached", timeout: 5_000 });
  const took = Date.now() - start;
  assert.ok(took < 1_000, `la respuesta tardó ${took} ms`);
  assert.match(await alert.textContent(), /20000 capas; vramlab admite hasta 1024/);
  await waitForEstimate(page);
  // Nothing of it is remembered, so a plain visit shows the default estimate.
  const stored = await page.evaluate(() => localStorage.getItem("vramlab.estimador") ?? "");
  assert.doesNotMatch(stored, /20000/);

  // A page of the old code stored the same link: the next visit reads it, refuses it
  // at once and forgets it.
  const query = new URL(link).search.slice(1);
  await page.evaluate((q) => localStorage.setItem("vramlab.estimador", `v2 ${q}`), query);
  await page.goto(url("estimador/"));
  await waitForIslands(page);
  await alert.waitFor({ state: "attached", timeout: 5_000 });
  assert.match(await alert.textContent(), /20000 capas/);
  await page.waitForFunction(() => !(localStorage.getItem("vramlab.estimador") ?? "").includes("20000"));
  await page.goto(url("estimador/"));
  await waitForIslands(page);
  await waitForEstimate(page);
  assert.equal(await alert.count(), 0);
  assert.deepEqual(problems, []);
  await context.close();
});

test("the accuracy table is rendered at build time, on its own page", async () => {
  const context = await shared.browser.newContext({ javaScriptEnabled: false });
  const page = await context.newPage();
  // The accuracy material has its own page, linked from the estimator's.
  await page.goto(url("estimador/"));
  assert.equal(await page.locator('main a[href$="/como-calcula/"]').count() > 0, true);
  // The static estimator result reads without JavaScript too.
  assert.match(await page.locator(".est-total").innerText(), /GiB/);
  await page.goto(url("como-calcula/"));
  const rows = page.locator("table.validation tbody tr");
  assert.ok((await rows.count()) >= 10);
  assert.match(await page.locator(".validation-summary").innerText(), /error mediano/);
  await context.close();
});

test("search filters the models and a pasted config.json is estimated like the CLI", async () => {
  const { context, page, problems, est } = await openEstimator();

  await est.locator("input[name=buscar]").fill("qwen3");
  const visible = await est.locator("select[name=modelo] option:not([hidden])").allInnerTexts();
  assert.ok(visible.length >= 3, visible.join(" | "));
  assert.ok(visible.every((t) => /Qwen3/.test(t)), visible.join(" | "));

  // What people type: words in any order, sizes as words, Hub ids with a fine-tune
  // suffix. The first match becomes the model.
  // The names that once picked another model now find their own (issue 41's list).
  for (const [query, pattern] of [
    ["qwen 7b", /Qwen2\.5 7B/],
    ["llama 8b", /Llama 3(\.1)? 8B/],
    ["Qwen2.5-7B-Instruct", /Qwen2\.5 7B/],
    ["gpt-oss-20b", /gpt-oss 20B/],
    ["llama 4 scout", /Llama 4 Scout/],
    ["mistral small", /Mistral Small/],
    ["qwen3.5", /Qwen3\.5/],
    ["glm", /GLM/],
  ]) {
    await est.locator("input[name=buscar]").fill(query);
    const shown = await est.locator("select[name=modelo] option:not([hidden])").allInnerTexts();
    assert.ok(shown.some((t) => pattern.test(t)), `${query}: ${shown.join(" | ")}`);
    const chosen = await est.locator("select[name=modelo] option:checked").innerText();
    assert.match(chosen, pattern, query);
  }
  await est.locator("input[name=buscar]").fill("zzz 9000b");
  await est.locator(".est-search-empty", { hasText: "Sin resultados" }).waitFor();
  // No other model in its place: the reader's own is offered instead.
  await est.locator("button[name=usar-propio]").click();
  await est.locator("details.est-import[open] input[name=hf]").waitFor();
  await est.locator("details.est-import > summary").click();
  await est.locator("details.est-import:not([open])").waitFor();
  await est.locator("input[name=buscar]").fill("mistralai/Mixtral-8x22B-v0.1");
  assert.match(await est.locator("button[name=importar-busqueda]").innerText(), /Importar mistralai\/Mixtral-8x22B-v0\.1 del Hub/);
  await screenshot(page, "estimador-busqueda-sin-resultados");
  await est.locator("input[name=buscar]").fill("");

  const config = {
    model_type: "gpt2",
    n_embd: 768,
    n_head: 12,
    n_layer: 12,
    n_positions: 1024,
    vocab_size: 50257,
  };
  await est.locator("summary", { hasText: "config.json" }).click();
  await est.locator("textarea[name=config]").fill(JSON.stringify(config));
  await est.locator(".est-imported").waitFor();
  assert.match(await est.locator(".est-imported").innerText(), /124\u202f439\u202f808/);
  assert.equal(await est.locator("select[name=modelo]").inputValue(), "propio");

  // The same config through the CLI gives the same total.
  if (process.env.VRAMLAB_BIN) {
    const { mkdtempSync, writeFileSync } = await import("node:fs");
    const { join } = await import("node:path");
    const { tmpdir } = await import("node:os");
    const file = join(mkdtempSync(join(tmpdir(), "vramlab-")), "config.json");
    writeFileSync(file, JSON.stringify(config));
    const seq = await est.locator("input[name=contexto]").inputValue();
    const want = cli(["--model", file, "--seq", seq, "--gpu", "rtx-4090"]);
    await est.locator(".est-total").filter({ hasText: gib(want.per_gpu_bytes) }).waitFor();
  }

  // A broken paste: a Spanish message, the previous model stays.
  await est.locator("textarea[name=config]").fill("{ roto");
  const alert = est.locator(".est-import [role=alert]");
  await alert.waitFor();
  assert.match(await alert.innerText(), /JSON/);
  await screenshot(page, "estimador-config");
  assert.deepEqual(problems, []);
  await context.close();
});

test("several GPUs, the serving plan and a shared imported model", async () => {
  const { context, page, problems, est } = await openEstimator();
  const total = est.locator(".est-total");

  // 70B in bf16 on four H100s with tensor parallelism, then as a vLLM-style server.
  await est.locator("select[name=modelo]").selectOption("llama-3.1-70b");
  await est.locator("select[name=gpu]").selectOption("h100-sxm");
  await est.locator("input[name=gpus]").fill("4");
  const tp = cli(["--model", "llama-3.1-70b", "--gpu", "h100-sxm", "--gpus", "4", "--tp", "4"]);
  if (tp) await total.filter({ hasText: gib(tp.per_gpu_bytes) }).waitFor();
  assert.match(await est.locator(".est-all-gpus").innerText(), /4 GPU/);
  await est.locator("input[name=servidor]").check();
  const serve = cli(["--model", "llama-3.1-70b", "--gpu", "h100-sxm", "--gpus", "4", "--tp", "4", "--serve"]);
  const plan = est.locator(".est-serving");
  await plan.waitFor();
  if (serve) {
    const tokens = groupDigits(serve.serving.tokens);
    assert.ok((await plan.innerText()).includes(tokens), `${await plan.innerText()} vs ${tokens}`);
  }

  // Full training with ZeRO-3 shards the model states; the paged optimizer is explained.
  await est.locator("select[name=modo]").selectOption("entrenamiento");
  // The server's settings go with their group; training's come.
  await est.locator("input[name=servidor]").waitFor({ state: "hidden" });
  await openGroups(page);
  // DeepSpeed keeps 16-bit weights with an fp32 master copy; the page says so.
  assert.equal(await est.locator("select[name=motor] option[value=vllm]").isDisabled(), true);
  await est.locator("select[name=motor]").selectOption("deepspeed");
  assert.equal(await est.locator("select[name=precision]").inputValue(), "mixta");
  await est.locator("select[name=zero]").selectOption("3");
  await est.locator("select[name=optimizador]").selectOption("paged-adamw8bit");
  const z3 = cli(["--model", "llama-3.1-70b", "--gpu", "h100-sxm", "--gpus", "4", "--mode", "train", "--runtime", "deepspeed", "--zero", "3", "--optimizer", "paged-adamw8bit"]);
  if (z3) await total.filter({ hasText: gib(z3.per_gpu_bytes) }).waitFor();
  await est.locator(".est-notes", { hasText: "paginado" }).waitFor();
  await page.waitForFunction(() => location.search.includes("zero=3") && location.search.includes("motor=deepspeed"));
  await screenshot(page, "estimador-zero3");

  // An imported config travels in the link and comes back in a fresh browser.
  await est.locator("select[name=modo]").selectOption("inferencia");
  await est.locator("input[name=gpus]").fill("1");
  await est.locator("summary", { hasText: "config.json" }).click();
  const config = { model_type: "gpt2", n_embd: 768, n_head: 12, n_layer: 12, n_positions: 1024, vocab_size: 50257 };
  await est.locator("textarea[name=config]").fill(JSON.stringify(config));
  await page.waitForFunction(() => location.search.includes("arquitectura="));
  const link = page.url();
  const fresh = await shared.browser.newContext();
  const other = await fresh.newPage();
  const otherProblems = watch(other);
  await other.goto(link);
  await waitForIslands(other);
  await other.waitForFunction(() => document.querySelector(".estimator select[name=modelo]").value === "propio");
  assert.match(await other.locator(".est-imported").innerText(), /124\u202f439\u202f808/);
  // The fresh browser answers the link as the page that wrote it did.
  await waitForEstimate(page);
  await waitForEstimate(other);
  assert.equal(await other.locator(".est-total").innerText(), await total.innerText());

  // The link carries the compact architecture text, not JSON.
  assert.match(decodeURIComponent(new URL(link).searchParams.get("arquitectura")), /^a1:[0-9.,-]+:gpt2$/);
  // A tampered architecture is refused with a Spanish message, nothing breaks: in the
  // compact text, and in the JSON older links carried (read by the importer bundle).
  const zeroLayers = link.replace(/arquitectura=a1%3A\d+/, "arquitectura=a1%3A0");
  assert.notEqual(zeroLayers, link);
  await other.goto(zeroLayers);
  await waitForIslands(other);
  await other.locator(".est-import [role=alert]").waitFor({ state: "attached" });
  assert.match(await other.locator(".est-import [role=alert]").textContent(), /dañada: El campo «num_hidden_layers»/);
  await waitForEstimate(other);
  const tampered = link.replace(/arquitectura=[^&]*/, "arquitectura=" + encodeURIComponent('{"layers":0}'));
  await other.goto(tampered);
  await waitForIslands(other);
  await other.locator(".est-import [role=alert]").waitFor({ state: "attached" });
  assert.match(await other.locator(".est-import [role=alert]").textContent(), /dañada \(JSON\)/);
  assert.deepEqual(otherProblems, []);
  await fresh.close();
  assert.deepEqual(problems, []);
  await context.close();
});

test("the server's GPU fraction and vLLM's CUDA graphs, and Ollama's vision projector", async () => {
  const { context, page, problems, est } = await openEstimator();
  const total = est.locator(".est-total");
  await est.locator("select[name=modelo]").selectOption("llama-3.1-8b");
  await est.locator("select[name=gpu]").selectOption("rtx-4090");
  await est.locator("input[name=servidor]").check();

  // vLLM up to 0.20 captured its CUDA graphs after the KV cache had filled the
  // fraction: at 95 % of an RTX 4090 there is no room left for them.
  await est.locator("select[name=grafos-cuda]").selectOption("aparte");
  await est.locator("input[name=utilizacion]").fill("0,95");
  const verdict = est.locator(".est-verdict[data-verdict=graphs-do-not-fit]");
  await verdict.waitFor();
  assert.match(await verdict.innerText(), /grafos CUDA.*al 94 % o menos/s);
  const old = cli(["--model", "llama-3.1-8b", "--gpu", "rtx-4090", "--serve", "--gpu-memory-utilization", "0.95", "--cuda-graphs", "after-kv"]);
  if (old) assert.equal(old.verdict, "graphs-do-not-fit");
  await page.waitForFunction(() => location.search.includes("grafos-cuda=aparte") && location.search.includes("utilizacion=0.95"));
  assert.match(await est.locator(".est-serving").innerText(), /Hasta capturar los grafos CUDA/);
  // vLLM 0.21 takes them out of the KV cache first and starts.
  await est.locator("select[name=grafos-cuda]").selectOption("reservados");
  await est.locator(".est-verdict[data-verdict=serves]").waitFor();
  assert.match(await est.locator(".est-serving").innerText(), /ya están descontados/);
  await screenshot(page, "estimador-grafos-cuda");
  // A fraction out of bounds is refused on the field, in Spanish.
  await est.locator("input[name=utilizacion]").fill("1,5");
  await est.locator("label:has(input[name=utilizacion]) .field-error").waitFor();
  assert.match(await est.locator("label:has(input[name=utilizacion]) .field-error").innerText(), /«1,5» no lo es/);
  await est.locator("input[name=utilizacion]").fill("0.9");
  await est.locator("input[name=servidor]").uncheck();

  // Ollama loads gemma3's vision projector from the model's own blob; unticking it
  // leaves the language model alone, as `--mmproj false` does.
  await est.locator("select[name=modelo]").selectOption("gemma-3-4b");
  await est.locator("select[name=motor]").selectOption("ollama");
  const projector = est.locator("input[name=proyector]");
  await page.waitForFunction(() => document.querySelector(".estimator input[name=proyector]").checked);
  const withIt = cli(["--model", "gemma-3-4b", "--runtime", "ollama", "--gpu", "rtx-4090"]);
  if (withIt) {
    await total.filter({ hasText: gib(withIt.per_gpu_bytes) }).waitFor();
    assert.equal(withIt.projector.weights, 851_226_048);
  }
  await est.locator(".est-notes", { hasText: "proyector" }).waitFor();
  await projector.uncheck();
  await page.waitForFunction(() => location.search.includes("proyector=no"));
  const without = cli(["--model", "gemma-3-4b", "--runtime", "ollama", "--gpu", "rtx-4090", "--mmproj", "false"]);
  if (without) await total.filter({ hasText: gib(without.per_gpu_bytes) }).waitFor();
  assert.deepEqual(problems, []);
  await context.close();
});

test("vLLM, llama.cpp and Ollama open their own context: «auto», as a default launch does", async () => {
  const { context, page, problems, est } = await openEstimator();
  const contextField = est.locator("input[name=contexto]");
  await est.locator("select[name=modelo]").selectOption("llama-3.1-8b");
  await est.locator("select[name=gpu]").selectOption("rtx-4090");
  // `vllm serve` with no --max-model-len takes the model's 131 072 tokens: on a 4090
  // the KV cache cannot hold one such sequence and vLLM refuses to start.
  await est.locator("select[name=motor]").selectOption("vllm");
  await page.waitForFunction(() => document.querySelector(".estimator input[name=contexto]").value === "auto");
  const refused = est.locator(".est-verdict[data-verdict=cannot-serve]");
  await refused.waitFor();
  const vllm = cli(["--model", "llama-3.1-8b", "--gpu", "rtx-4090", "--runtime", "vllm"]);
  if (vllm) {
    assert.equal(vllm.verdict, "cannot-serve");
    assert.equal(vllm.seq_tokens, 131_072);
    assert.equal(vllm.settings.seq, "auto");
    assert.match(await refused.innerText(), new RegExp(groupDigits(vllm.max_seq_fit)));
  }
  await est.locator(".est-notes", { hasText: "Contexto automático" }).waitFor();
  await est.locator(".est-limits", { hasText: `Contexto automático: ${groupDigits(131_072)} tokens` }).waitFor();
  // The reader's own context wins, and the link carries it.
  await contextField.fill("8k");
  await est.locator(".est-verdict[data-verdict=serves]").waitFor();
  await page.waitForFunction(() => location.search.includes("contexto=8k"));
  await contextField.fill("auto");
  await refused.waitFor();
  await screenshot(page, "estimador-contexto-auto");

  // llama-server opens the trained context and --fit lowers it to leave 1 GiB free:
  // on a 12 GB card the page and the CLI agree on the total.
  await est.locator("select[name=motor]").selectOption("llamacpp");
  await est.locator("select[name=gpu]").selectOption("rtx-3060");
  const fitted = cli(["--model", "llama-3.1-8b", "--gpu", "rtx-3060", "--runtime", "llama.cpp"]);
  if (fitted) {
    assert.ok(fitted.seq_tokens > 4096 && fitted.seq_tokens < 131_072, String(fitted.seq_tokens));
    await est.locator(".est-total").filter({ hasText: gib(fitted.per_gpu_bytes) }).waitFor();
    await est.locator(".est-notes", { hasText: `lo baja a ${groupDigits(fitted.seq_tokens)}` }).waitFor();
  }

  // A model too big for the card: --fit moves whole layers to the CPU (-ngl auto), so
  // the default launch runs, slower; the page and the CLI agree.
  await est.locator("select[name=modelo]").selectOption("qwen2.5-32b");
  const offloaded = cli(["--model", "qwen2.5-32b", "--gpu", "rtx-3060", "--runtime", "llama.cpp"]);
  if (offloaded) {
    assert.equal(offloaded.settings.gpu_layers, "auto");
    assert.equal(offloaded.verdict, "fits");
    await est.locator(".est-total").filter({ hasText: gib(offloaded.per_gpu_bytes) }).waitFor();
  }
  await est.locator(".est-notes", { hasText: "Capas automáticas" }).waitFor();
  await est.locator("select[name=modelo]").selectOption("llama-3.1-8b");

  // A runtime without a context of its own refuses «auto» on the field, in Spanish.
  await est.locator("select[name=motor]").selectOption("transformers");
  await contextField.fill("auto");
  const error = est.locator("label:has(input[name=contexto]) .field-error");
  await error.waitFor();
  assert.match(await error.innerText(), /solo vale para inferencia con vLLM, llama.cpp u Ollama/);
  assert.deepEqual(problems, []);
  await context.close();
});

test("a list of LoRA modules is estimated like the CLI and travels in the link", async () => {
  const { context, page, problems, est } = await openEstimator();
  await est.locator("select[name=modo]").selectOption("lora");
  const list = est.locator("input[name=objetivos-lista]");
  await list.fill("q_proj,k_proj,v_proj");
  await page.waitForFunction(() => new URLSearchParams(location.search).get("objetivos") === "q_proj,k_proj,v_proj");
  // The select shows the typed list as its own option.
  assert.equal(await est.locator("select[name=objetivos]").inputValue(), "q_proj,k_proj,v_proj");
  const expected = cli(["--model", "llama-3.1-8b", "--gpu", "rtx-4090", "--mode", "lora", "--lora-targets", "q_proj,k_proj,v_proj"]);
  if (expected) await est.locator(".est-total").filter({ hasText: gib(expected.per_gpu_bytes) }).waitFor();
  // A module the estimator cannot count: a Spanish message under the field.
  await list.fill("q_proj,lm_head");
  await est.getByRole("alert").waitFor();
  assert.match(await est.locator("label:has(input[name=objetivos-lista]) .field-error").innerText(), /«q_proj,lm_head» no existe/);
  // A preset chosen in the select replaces the typed list.
  await est.locator("select[name=objetivos]").selectOption("todas");
  assert.equal(await list.inputValue(), "");
  await est.locator(".est-total").waitFor();
  await page.waitForFunction(() => new URLSearchParams(location.search).get("objetivos") === "todas");
  await screenshot(page, "estimador-lora-lista");
  assert.deepEqual(problems, []);
  await context.close();
});

test("the answer carries the command that runs it, the CLI's own, with a copy button", async () => {
  const { context, page, problems, est } = await openEstimator();
  await est.locator("select[name=modelo]").selectOption("qwen2.5-7b");
  await est.locator("select[name=gpu]").selectOption("l4");
  await est.locator("select[name=motor]").selectOption("vllm");
  await est.locator("input[name=contexto]").fill("32768");
  const launch = est.locator(".est-launch");
  const code = launch.locator("pre code");
  await code.filter({ hasText: "--max-model-len 32768" }).waitFor();
  const want = cli(["--model", "qwen2.5-7b", "--gpu", "l4", "--runtime", "vllm", "--seq", "32768"]);
  if (want) assert.equal(await code.textContent(), want.launch.command);
  assert.match(await launch.locator(".est-launch-why").innerText(), /--gpu-memory-utilization 0\.9: la parte de la GPU que vLLM toma/);
  // The block is redrawn with every answer and keeps its «Copiar» button.
  await launch.locator("button.copy").waitFor();

  // llama.cpp: the reader's own .gguf goes where the placeholder says.
  await est.locator("select[name=motor]").selectOption("llamacpp");
  await est.locator("select[name=modelo]").selectOption("qwen3-30b-a3b");
  await est.locator("select[name=gpu]").selectOption("rtx-3060");
  await est.locator("input[name=contexto]").fill("16384");
  await code.filter({ hasText: "llama-server" }).waitFor();
  const llama = cli(["--model", "qwen3-30b-a3b", "--gpu", "rtx-3060", "--runtime", "llama.cpp", "--seq", "16384"]);
  if (llama) await code.filter({ hasText: llama.launch.command }).waitFor();
  await launch.locator("li", { hasText: "MODELO.gguf: pon aquí la ruta de tu archivo .gguf" }).waitFor();
  await launch.locator("button.copy").waitFor();

  // Training is a Python script, the CLI's --emit: TRL's SFTTrainer with the fused loss.
  await est.locator("select[name=modelo]").selectOption("llama-3.1-8b");
  await est.locator("select[name=modo]").selectOption("qlora");
  await openGroups(page);
  await est.locator("select[name=perdida]").selectOption("fusionada");
  await code.filter({ hasText: "from trl import SFTConfig, SFTTrainer" }).waitFor();
  const script = cli(["--model", "llama-3.1-8b", "--mode", "qlora", "--gpu", "rtx-3060", "--seq", "16384", "--loss", "fused"]);
  if (script) {
    assert.equal(script.launch.language, "python");
    await code.filter({ hasText: script.launch.command }).waitFor();
  }
  assert.equal(await code.getAttribute("class"), "language-python");
  await launch.locator("li", { hasText: "per_device_train_batch_size=1: el lote del cálculo" }).waitFor();
  await launch.locator("button.copy").waitFor();
  await page.setViewportSize({ width: 390, height: 844 });
  await est.locator("select[name=modo]").selectOption("inferencia");
  await est.locator("select[name=motor]").selectOption("ollama");
  await code.filter({ hasText: "ollama serve" }).waitFor();
  // At 390 px the command wraps instead of scrolling sideways.
  const overflow = await code.evaluate((el) => el.closest("pre").scrollWidth - el.closest("pre").clientWidth);
  assert.ok(overflow <= 1, String(overflow));
  await screenshot(page, "estimador-lanzar-movil");
  assert.deepEqual(problems, []);
  await context.close();
});

test("a setup that does not fit shows its plan, and a candidate's link applies it", async () => {
  const { context, page, problems, est } = await openEstimator();
  await est.locator("select[name=modelo]").selectOption("llama-3.1-8b");
  await est.locator("select[name=modo]").selectOption("qlora");
  await est.locator("select[name=gpu]").selectOption("rtx-3060");
  const first = est.locator(".est-plan li").first();
  await first.waitFor();
  const want = cli(["--model", "llama-3.1-8b", "--mode", "qlora", "--gpu", "rtx-3060"]);
  if (want) {
    assert.equal(want.fits, false);
    assert.equal(await first.locator("a").innerText(), want.plan[0].change);
    assert.match(await first.innerText(), new RegExp(gib(want.plan[0].per_gpu_bytes)));
  }
  assert.equal(await first.getAttribute("data-fits"), "true");
  // Following it: the page takes the change, and the plan gives way to a fit.
  await first.locator("a").click();
  await page.waitForURL(/motor=unsloth/);
  await waitForIslands(page);
  assert.equal(await est.locator("select[name=motor]").inputValue(), "unsloth");
  assert.equal(await est.locator(".est-verdict").getAttribute("data-fits"), "true");
  assert.equal(await est.locator(".est-plan").count(), 0);
  await screenshot(page, "estimador-plan");
  assert.deepEqual(problems, []);
  await context.close();
});
