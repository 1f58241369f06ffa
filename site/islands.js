// vramlab island loader.
//
// Pages rendered with islands name their hydrate bundle in <head>: a modulepreload
// for the JavaScript glue, and the wasm's URL in this script's data-wasm (not a
// preload, which would compete with the page's text). This script loads the bundle
// once, then hands every <leptos-island> element to the function
// Leptos exported for it, whose name is in the element's data-component attribute.
//
// A page may name a second bundle (data-later-js, data-later-wasm) for a heavy island
// far down the page that its first bundle lacks: that bundle is fetched only when one
// of those islands comes within a screen of the viewport, so the page's first load
// stays light. Until then the island shows its build-time HTML.
// It is an external module, so the Content-Security-Policy needs no inline script.

const glue = document.getElementById("vramlab-hydrate-js");
const script = document.getElementById("vramlab-islands");
const wasm = script?.dataset.wasm;

async function load(js, wasmUrl) {
  const bundle = await import(js);
  await bundle.default({ module_or_path: wasmUrl });
  bundle.hydrate();
  return bundle;
}

async function wake(bundle, island) {
  try {
    await bundle[island.dataset.component](island);
    island.dataset.hydrated = "true";
  } catch (err) {
    island.dataset.hydrated = "error";
    console.error(`vramlab: la isla «${island.dataset.component}» no pudo iniciarse`, err);
  }
}

function missing(island) {
  island.dataset.hydrated = "error";
  console.warn(`vramlab: el paquete no contiene la isla «${island.dataset.component}»`);
}

// Wakes `islands` from the later bundle once the first of them nears the viewport.
function wakeLater(islands) {
  const js = script?.dataset.laterJs;
  const laterWasm = script?.dataset.laterWasm;
  if (!js || !laterWasm || !("IntersectionObserver" in window)) {
    if (js && laterWasm) {
      startLater(js, laterWasm, islands);
    } else {
      islands.forEach(missing);
    }
    return;
  }
  const observer = new IntersectionObserver(
    (entries) => {
      if (entries.some((e) => e.isIntersecting)) {
        observer.disconnect();
        startLater(js, laterWasm, islands);
      }
    },
    { rootMargin: "100% 0px" },
  );
  islands.forEach((island) => {
    island.dataset.hydrated = "later";
    observer.observe(island);
  });
}

async function startLater(js, laterWasm, islands) {
  try {
    const bundle = await load(js, laterWasm);
    for (const island of islands) {
      if (typeof bundle[island.dataset.component] === "function") {
        await wake(bundle, island);
      } else {
        missing(island);
      }
    }
  } catch (err) {
    islands.forEach((island) => {
      island.dataset.hydrated = "error";
    });
    console.error("vramlab: no se pudo cargar la parte interactiva", err);
  }
}

async function wakeIslands() {
  if (!glue || !wasm) {
    return;
  }
  const bundle = await load(glue.href, wasm);
  const later = [];
  for (const island of document.querySelectorAll("leptos-island")) {
    const name = island.dataset.component;
    if (name && typeof bundle[name] === "function") {
      await wake(bundle, island);
    } else if (name && script.dataset.laterJs) {
      later.push(island);
    } else {
      missing(island);
    }
  }
  document.documentElement.dataset.islands = "ready";
  if (later.length > 0) {
    wakeLater(later);
  }
}

wakeIslands().catch((err) => {
  document.documentElement.dataset.islands = "error";
  console.error("vramlab: no se pudo cargar la parte interactiva", err);
});
