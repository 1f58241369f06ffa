// vramlab's diagnostics worker loader (a module worker).
//
// The page starts this script as a Web Worker and posts one message first: the URLs
// of the worker's wasm-bindgen glue and wasm, which carry content hashes and so
// cannot be written here. The loader imports the glue and starts the module; the
// module then listens for requests itself and says it is ready (see
// crates/worker-web). A bundle that fails to load is reported, not left silent.

self.addEventListener(
  "message",
  async (event) => {
    const { js, wasm } = event.data ?? {};
    try {
      const bundle = await import(js);
      await bundle.default({ module_or_path: wasm });
    } catch (err) {
      self.postMessage(JSON.stringify({ kind: "failed", id: null, why: `No se pudo cargar el analizador en segundo plano: ${err}` }));
    }
  },
  { once: true },
);
