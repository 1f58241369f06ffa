// vramlab island loader.
//
// Pages rendered with islands name their hydrate bundle in <head>: a modulepreload
// for the JavaScript glue, and the wasm's URL in this script's data-wasm (not a
// preload, which would compete with the page's text). This script loads the bundle
// once, then hands every <leptos-island> element to the function
// Leptos exported for it, whose name is in the element's data-component attribute.
// It is an external module, so the Content-Security-Policy needs no inline script.

const glue = document.getElementById("vramlab-hydrate-js");
const wasm = document.getElementById("vramlab-islands")?.dataset.wasm;

async function wakeIslands() {
  if (!glue || !wasm) {
    return;
  }
  const bundle = await import(glue.href);
  await bundle.default({ module_or_path: wasm });
  bundle.hydrate();
  for (const island of document.querySelectorAll("leptos-island")) {
    const name = island.dataset.component;
    const wake = name ? bundle[name] : undefined;
    if (typeof wake !== "function") {
      console.warn(`vramlab: el paquete no contiene la isla «${name}»`);
      continue;
    }
    try {
      await wake(island);
      island.dataset.hydrated = "true";
    } catch (err) {
      island.dataset.hydrated = "error";
      console.error(`vramlab: la isla «${name}» no pudo iniciarse`, err);
    }
  }
  document.documentElement.dataset.islands = "ready";
}

wakeIslands().catch((err) => {
  document.documentElement.dataset.islands = "error";
  console.error("vramlab: no se pudo cargar la parte interactiva", err);
});
