// vramlab's embeddable VRAM estimator: <vram-estimador modelo="…" gpu="…"></vram-estimador>.
// Written by sitegen for this build: the import names this build's bundle, and the
// observed attributes come from the same table the widget reads (crates/embed/src/spec.rs).
import init, { Widget, css } from "__GLUE__";

const OBSERVED = __ATTRS__;
// The model importer (glue, wasm), loaded by the widget only when it shows a Hub model.
const IMPORTER = __IMPORTER__.map((path) => (path ? new URL(path, import.meta.url).href : ""));
const site = new URL("../", import.meta.url).href;
const ready = init({ module_or_path: new URL("__WASM__", import.meta.url) });
let sheet = null;

// One constructed stylesheet shared by every widget's shadow root.
function styles() {
  if (!sheet) {
    sheet = new CSSStyleSheet();
    sheet.replaceSync(css());
  }
  return sheet;
}

class VramEstimador extends HTMLElement {
  static get observedAttributes() {
    return OBSERVED;
  }

  connectedCallback() {
    const root = this.shadowRoot ?? this.attachShadow({ mode: "open" });
    if (this.widget) return;
    const note = document.createElement("p");
    note.textContent = "Cargando el estimador de VRAM…";
    root.replaceChildren(note);
    ready.then(
      () => {
        if (!this.isConnected || this.widget) return;
        root.adoptedStyleSheets = [styles()];
        const mount = document.createElement("div");
        root.replaceChildren(mount);
        this.widget = new Widget(mount, site, (name) => this.getAttribute(name), ...IMPORTER);
      },
      (err) => {
        note.textContent = "No se pudo cargar el estimador de VRAM de vramlab.";
        console.warn("<vram-estimador>", err);
      },
    );
  }

  attributeChangedCallback() {
    this.widget?.refresh();
  }

  disconnectedCallback() {
    this.widget?.free();
    this.widget = null;
  }
}

if (!customElements.get("vram-estimador")) customElements.define("vram-estimador", VramEstimador);
