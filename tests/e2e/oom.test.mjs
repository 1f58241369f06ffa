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

test("llama.cpp, Ollama and host-RAM failures are decoded with the flag to change", async () => {
  const page = await shared.browser.newPage();
  const problems = watch(page);
  await page.goto(url("memoria-reservada/"));
  await waitForIslands(page);
  const box = page.locator(".oom-explainer");
  const llama = [
    "llm_load_tensors: offloaded 80/81 layers to GPU",
    "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 9866.00 MiB on device 1: cudaMalloc failed: out of memory",
    "alloc_tensor_range: failed to allocate CUDA1 buffer of size 10345250816",
    "llama_model_load: error loading model: unable to allocate CUDA1 buffer",
  ].join("\n");
  await box.locator("textarea[name=oom]").fill(llama);
  await box.locator(".oom-kind", { hasText: "llama.cpp" }).waitFor();
  const numbers = await box.locator(".oom-numbers").innerText();
  assert.match(numbers, /9,63 GiB/);
  assert.match(numbers, /los pesos del modelo/);
  assert.match(await box.locator(".oom-cause").first().innerText(), /-ngl/);
  // The other lines of the same failure are listed with their own numbers.
  const others = box.locator(".oom-others");
  assert.match(await others.locator("summary").innerText(), /\(2\)/);
  await others.locator("summary").click();
  assert.match(await others.innerText(), /GPU 1, pidió 9,63 GiB/);
  await screenshot(page, "explicador-llamacpp");

  // `-ngl` fixed by hand: llama.cpp's --fit gave up before the allocation failed, and
  // the first cause says which flag to drop.
  await box.locator("textarea[name=oom]").fill([
    "llama_params_fit: failed to fit params to free device memory: n_gpu_layers already set by user to 26, abort",
    "load_tensors: offloaded 26/65 layers to GPU",
    "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 1401.75 MiB on device 0: cudaMalloc failed: out of memory",
    "graph_reserve: failed to allocate compute buffers",
  ].join("\n"));
  await box.locator(".oom-cause", { hasText: "Fijaste las capas a mano" }).first().waitFor();
  assert.match(await box.locator(".oom-cause").first().innerText(), /Quita -ngl 26/);

  // A load log that worked says where the memory went, per device.
  await box.locator("textarea[name=oom]").fill([
    "llm_load_tensors: offloaded 33/33 layers to GPU",
    "llm_load_tensors:      CUDA0 buffer size =  4403.49 MiB",
    "llama_new_context_with_model: n_ctx      = 8192",
    "llama_kv_cache_init:      CUDA0 KV buffer size =  1024.00 MiB",
    "llama_new_context_with_model:      CUDA0 compute buffer size =   560.00 MiB",
  ].join("\n"));
  await box.locator(".oom-kind", { hasText: "reparto de la memoria al cargar" }).waitFor();
  assert.match(await box.locator(".oom-numbers").innerText(), /CUDA0 · caché KV\s+1,00 GiB[\s\S]*Capas en la GPU\s+33 de 33/);

  // ComfyUI's load line next to a bare CUDA error says the weights were already split.
  await box.locator("textarea[name=oom]").fill([
    "Requested to load WAN21",
    "loaded partially; 5167.08 MB usable, 5167.08 MB loaded, 4633.39 MB offloaded, lowvram patches: 0",
    "!!! Exception during processing !!! CUDA error: out of memory",
  ].join("\n"));
  await box.locator(".oom-cause", { hasText: "ComfyUI ya cargaba el modelo a medias" }).waitFor();
  assert.match(await box.locator(".oom-numbers").innerText(), /ComfyUI: pesos en la RAM \(offloaded\)\s+4,52 GiB/);
  assert.match(await box.locator(".oom-cause", { hasText: "ComfyUI" }).innerText(), /--reserve-vram/);
  await screenshot(page, "explicador-comfyui");

  // Opened from a file, the text replaces what the box showed.
  const { mkdtempSync, writeFileSync } = await import("node:fs");
  const { join } = await import("node:path");
  const { tmpdir } = await import("node:os");
  const log = join(mkdtempSync(join(tmpdir(), "vramlab-ollama-")), "ollama.log");
  writeFileSync(log, "Error: model requires more system memory (44.0 GiB) than is available (7.6 GiB)\n");
  await box.locator("input[name=oom-archivo]").setInputFiles(log);
  await box.locator(".oom-kind", { hasText: "RAM del equipo" }).waitFor();
  assert.match(await box.locator(".oom-numbers").innerText(), /RAM disponible\s+7,60 GiB/);
  assert.match(await box.locator(".oom-cause").first().innerText(), /OLLAMA_NUM_PARALLEL/);
  assert.match(await box.locator("textarea[name=oom]").inputValue(), /^Error: model requires more system memory/);
  assert.deepEqual(problems, []);
  await page.close();
});

test("vLLM and llama.cpp start-up logs are set against the estimator; Ollama's plan is read", async () => {
  const page = await shared.browser.newPage();
  const problems = watch(page);
  await page.goto(url("depurar-memoria/"));
  await waitForIslands(page);
  const box = page.locator(".oom-explainer");
  const log = [
    "$ vllm serve meta-llama/Llama-3.1-8B-Instruct",
    "INFO worker.py:241] Memory profiling takes 11.85 seconds",
    "the current vLLM instance can use total_gpu_memory (79.11GiB) x gpu_memory_utilization (0.90) = 71.20GiB",
    "model weights take 14.99GiB; non_torch_memory takes 0.35GiB; PyTorch activation peak memory takes 1.24GiB;",
    "the rest of the memory reserved for KV Cache is 54.62GiB.",
    "INFO kv_cache_utils.py:566] GPU KV cache size: 447,488 tokens",
  ].join("\n");
  await box.locator("textarea[name=oom]").fill(log);
  const table = box.locator(".oom-reconcile");
  await table.waitFor();
  assert.match(await table.locator("caption").innerText(), /Llama 3\.1 8B.*79,11 GiB/);
  assert.match(await table.innerText(), /Bytes de caché por token[\s\S]*?127,99 KiB\s+128,00 KiB/);
  await screenshot(page, "explicador-vllm");
  // A start that worked: the run opens in the estimator, no plan.
  const plan = box.locator(".oom-plan");
  assert.match(await plan.locator(".est-plan-title").innerText(), /Llama 3\.1 8B con vLLM/);
  assert.equal(await plan.locator("ol").count(), 0);

  // vLLM refusing the model's whole window on an L4: the estimator's plan for that run,
  // each candidate with its command, the first one fitting; its link opens it there.
  await box.locator("textarea[name=oom]").fill([
    "$ vllm serve meta-llama/Llama-3.1-8B-Instruct",
    "INFO worker.py:241] the current vLLM instance can use total_gpu_memory (22.05GiB) x gpu_memory_utilization (0.90) = 19.85GiB",
    "INFO worker.py:241] model weights take 14.99GiB; non_torch_memory takes 0.12GiB; PyTorch activation peak memory takes 1.24GiB; the rest of the memory reserved for KV Cache is 3.50GiB.",
    "ValueError: To serve at least one request with the models's max seq len (131072), (16.00 GiB KV cache is needed, which is larger than the available KV cache memory (3.50 GiB). Based on the available memory, the estimated maximum model length is 28672.",
  ].join("\n"));
  await plan.locator("ol li").first().waitFor();
  assert.match(await plan.locator(".est-plan-title").innerText(), /22,05 GiB, contexto de 131\s072 tokens/);
  const step = plan.locator("ol li").first();
  assert.equal(await step.getAttribute("data-fits"), "true");
  assert.match(await step.locator("code").innerText(), /^vllm serve meta-llama\/Llama-3\.1-8B-Instruct/);
  await page.setViewportSize({ width: 390, height: 844 });
  const wide = await page.evaluate(() => document.documentElement.scrollWidth - innerWidth);
  assert.ok(wide <= 1, `the page scrolls ${wide} px sideways at 390 px`);
  await plan.scrollIntoViewIfNeeded();
  await screenshot(page, "explicador-vllm-plan-390");
  await page.setViewportSize({ width: 1280, height: 900 });
  const estimator = await step.locator("a").getAttribute("href");
  assert.match(estimator, /\/estimador\/\?modelo=llama-3\.1-8b&/);
  const there = await shared.browser.newPage();
  await there.goto(new URL(estimator, page.url()).href);
  await waitForIslands(there);
  await there.locator('.est-verdict[data-fits="true"]').waitFor();
  await there.close();

  // A llama.cpp load log is estimated with its own settings (n_ctx, -ngl, n_ubatch).
  await box.locator("textarea[name=oom]").fill([
    "llama_model_loader: - kv   2:                               general.name str              = mistralai_mistral-7b-instruct-v0.1",
    "print_info: file type   = Q4_K - Medium",
    "load_tensors: offloaded 20/33 layers to GPU",
    "load_tensors:        CUDA0 model buffer size =  2495.31 MiB",
    "llama_context: n_ctx         = 768",
    "llama_context: n_ubatch      = 256",
    "llama_context: flash_attn    = 1",
    "llama_kv_cache:      CUDA0 KV buffer size =    60.00 MiB",
    "llama_context:      CUDA0 compute buffer size =   137.79 MiB",
  ].join("\n"));
  await table.locator("caption", { hasText: "llama.cpp" }).waitFor();
  assert.match(await table.locator("caption").innerText(), /Mistral 7B.*Q4_K_M.*-ngl 20.*micro-lote de 256/);
  assert.match(await table.innerText(), /Búfer de cómputo de la GPU\s+137,79 MiB\s+137,79 MiB/);
  // On a phone each term's values stack under its name instead of scrolling sideways.
  const desk = page.viewportSize();
  await page.setViewportSize({ width: 390, height: 844 });
  const spill = await table.evaluate((t) => t.scrollWidth - t.clientWidth);
  assert.ok(spill <= 1, `the table scrolls ${spill} px sideways at 390 px`);
  const label = await table.locator("td").first().evaluate((td) => getComputedStyle(td, "::before").content);
  assert.equal(label, '"Registro"');
  await screenshot(page, "explicador-llamacpp-390");
  await page.setViewportSize(desk);

  // Ollama's offload line: its own estimate and how many layers it placed.
  await box.locator("textarea[name=oom]").fill(
    'time=2024-07-24T13:50:47.458+02:00 level=INFO source=memory.go:309 msg="offload to cuda" layers.requested=-1 layers.model=33 layers.offload=31 layers.split="" memory.available="[22.7 GiB]" memory.required.full="23.5 GiB" memory.required.partial="22.5 GiB" memory.required.kv="9.8 GiB" memory.graph.full="5.1 GiB" memory.graph.partial="5.4 GiB"',
  );
  await box.locator(".oom-kind", { hasText: "capas que puso en la GPU" }).waitFor();
  assert.match(await box.locator(".oom-numbers").innerText(), /Ollama: capas en la GPU\s+31 de 33/);
  assert.match(await box.locator(".oom-cause").first().innerText(), /num_ctx/);
  await page.setViewportSize({ width: 390, height: 844 });
  await screenshot(page, "explicador-ollama-390");
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

test("the snapshot viewer opens a real Python pickle and refuses a malicious one", async () => {
  const { mkdtempSync } = await import("node:fs");
  const { join } = await import("node:path");
  const { tmpdir } = await import("node:os");
  const { execFileSync } = await import("node:child_process");
  const dir = mkdtempSync(join(tmpdir(), "vramlab-snap-"));
  const good = join(dir, "memoria.pickle");
  const evil = join(dir, "malicioso.pickle");
  const bomb = join(dir, "compartido.pickle");
  // Written by Python's own pickle, with the structure _dump_snapshot() uses.
  execFileSync("python3", ["-c", `
import pickle, sys, os
frames = [{"filename": "train.py", "line": 42, "name": "forward"},
          {"filename": "/usr/lib/python3/site-packages/torch/nn/modules/module.py", "line": 1736, "name": "_call_impl"}]
mib = 1 << 20
seg = lambda addr, blocks: {"device": 0, "address": addr, "total_size": sum(b["size"] for b in blocks),
    "allocated_size": sum(b["size"] for b in blocks if b["state"] == "active_allocated"),
    "active_size": 0, "requested_size": 0, "stream": 0, "segment_type": "large",
    "segment_pool_id": (0, 0), "is_expandable": False, "frames": [], "blocks": blocks}
blocks = []
addr = 1 << 32
for i in range(6):
    blocks.append({"address": addr, "size": 2 * mib, "requested_size": 2 * mib - 100,
                   "state": "active_allocated" if i % 2 == 0 else "inactive", "frames": frames})
    addr += 2 * mib
big = {"address": 1 << 40, "size": 512 * mib, "requested_size": 512 * mib, "state": "active_allocated", "frames": frames}
snap = {"segments": [seg(1 << 32, blocks), seg(1 << 40, [big])],
        "device_traces": [[{"action": "alloc", "addr": 1 << 40, "size": 512 * mib, "stream": 0, "frames": frames},
                           {"action": "oom", "addr": 0, "size": 1024 * mib, "stream": 0, "device_free": 12 * mib, "frames": frames}]]}
pickle.dump(snap, open(sys.argv[1], "wb"), protocol=4)
class Boom:
    def __reduce__(self):
        return (os.system, ("echo hacked",))
pickle.dump({"segments": [Boom()]}, open(sys.argv[2], "wb"))
# 25 KB that a naive reader expands to 30 GB: one long string shared by 10 million entries.
E = {"action": "y" * 3000}
T = [E] * 10000
pickle.dump({"segments": [], "device_traces": [T] * 1000}, open(sys.argv[3], "wb"), protocol=4)
`, good, evil, bomb]);

  const page = await shared.browser.newPage();
  const problems = watch(page);
  await page.goto(url("depurar-memoria/"));
  await waitForIslands(page);
  const viewer = page.locator(".snapshot-viewer");
  await viewer.locator("input[name=snapshot]").setInputFiles(good);
  await viewer.locator(".snap-name").waitFor();
  const stats = await viewer.locator(".alloc-stats").innerText();
  assert.match(stats, /Reservada\s+524,00 MiB/);
  assert.match(stats, /Asignada\s+518,00 MiB/);
  assert.match(await viewer.locator(".snap-top tbody tr").first().innerText(), /512,00 MiB[\s\S]*train\.py:42 en forward/);
  assert.match(await viewer.locator(".snap-traces").innerText(), /1 OOM/);
  assert.ok((await viewer.locator(".alloc-segments rect.blk-cached").count()) >= 3);
  // Live memory by call site, the fragmentation in words, and the recorded OOM.
  assert.match(await viewer.locator(".snap-sites tbody tr").first().innerText(), /518,00 MiB\s+4\s+train\.py:42 en forward/);
  assert.match(await viewer.locator(".snap-frag").innerText(), /La caché guarda 6,00 MiB libres, pero su mayor hueco es de 2,00 MiB/);
  assert.match(await viewer.locator(".snap-ooms").innerText(), /pidió 1,00 GiB con 12,00 MiB libres en la GPU; lo pidió train\.py:42 en forward/);
  await screenshot(page, "visor-snapshot");

  await viewer.locator("input[name=snapshot]").setInputFiles(evil);
  const alert = viewer.locator("[role=alert]");
  await alert.waitFor();
  assert.match(await alert.innerText(), /malicioso\.pickle/);

  // The shared-string bomb is refused at the byte budget, and the page lives on.
  await viewer.locator("input[name=snapshot]").setInputFiles(bomb);
  await page.waitForFunction(() => /256 MiB/.test(document.querySelector(".snapshot-viewer [role=alert]")?.textContent ?? ""), null, { timeout: 60_000 });
  assert.match(await alert.innerText(), /compartido\.pickle[\s\S]*256 MiB/);
  await viewer.locator("input[name=snapshot]").setInputFiles(good);
  await page.waitForFunction(() => /524,00 MiB/.test(document.querySelector(".snapshot-viewer .alloc-stats")?.textContent ?? ""));
  assert.deepEqual(problems, []);
  await page.close();
});
