// vramlab search box.
//
// The header's box is static HTML, disabled until this script runs. On the first
// focus it imports the `search-web` wasm bundle (the Spanish analyzer and the query
// engine, the same Rust code sitegen built the index with) and has it fetch the
// index; pages that are never searched pay nothing for either.
//
// Keyboard: "/" (outside text fields) or Ctrl+K / Cmd+K focuses the box; ArrowDown
// moves into the results, which are real links; ArrowUp/ArrowDown move between them;
// Esc goes back to the box, then closes the panel, then clears the box; Enter in the
// box opens the first result. Results are built with DOM calls, never innerHTML.

const LIMIT = 8;
const root = document.getElementById("buscador");
const input = document.getElementById("buscar");
const panel = root?.querySelector(".search-panel");
const status = document.getElementById("buscar-estado");
const list = document.getElementById("buscar-lista");

let engine = null; // the search-web module once loaded
let loading = null; // the pending load
let failure = null; // Spanish reason the engine could not load

function describe(err) {
  if (typeof err === "string") return err;
  return err?.message ?? String(err);
}

function load() {
  if (!loading) {
    loading = (async () => {
      try {
        const module = await import(root.dataset.moduleJs);
        await module.default({ module_or_path: root.dataset.moduleWasm });
        await module.open(root.dataset.index);
        engine = module;
      } catch (err) {
        failure = describe(err);
      }
      render();
    })();
  }
  return loading;
}

function results(query) {
  if (!engine) return [];
  const flat = engine.find(query, LIMIT);
  const rows = [];
  for (let i = 0; i + 2 < flat.length; i += 3) {
    rows.push({ url: flat[i], place: flat[i + 1], excerpt: flat[i + 2] });
  }
  return rows;
}

function statusText(query, count) {
  if (failure) return `No se pudo cargar el índice de búsqueda: ${failure}`;
  if (!engine) return "Cargando el índice…";
  if (count === 0) return `Nada coincide con «${query}».`;
  if (count === 1) return "1 resultado";
  if (count >= LIMIT) return `Los ${count} mejores resultados`;
  return `${count} resultados`;
}

function render() {
  const query = input.value.trim();
  const open = query !== "" && root.contains(document.activeElement);
  panel.hidden = !open;
  if (!open) return;
  const rows = results(query);
  status.textContent = statusText(query, rows.length);
  list.replaceChildren(
    ...rows.map((row, i) => {
      const a = document.createElement("a");
      a.id = `buscar-r${i}`;
      a.href = row.url;
      const place = document.createElement("span");
      place.className = "search-place";
      place.textContent = row.place;
      const excerpt = document.createElement("span");
      excerpt.className = "search-excerpt";
      excerpt.textContent = row.excerpt;
      a.append(place, excerpt);
      const li = document.createElement("li");
      li.append(a);
      return li;
    }),
  );
}

function links() {
  return [...list.querySelectorAll("a")];
}

function typing(target) {
  return (
    target instanceof HTMLElement &&
    (["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName) || target.isContentEditable)
  );
}

if (root && input && panel && status && list) {
  input.disabled = false;
  input.addEventListener("focus", () => {
    load();
    render();
  });
  input.addEventListener("input", render);
  input.addEventListener("keydown", (ev) => {
    if (ev.key === "ArrowDown" && links().length > 0) {
      ev.preventDefault();
      links()[0].focus();
    } else if (ev.key === "Enter") {
      const first = links()[0];
      if (first) {
        ev.preventDefault();
        window.location.href = first.href;
      }
    } else if (ev.key === "Escape") {
      if (!panel.hidden) {
        panel.hidden = true;
      } else {
        input.value = "";
      }
    }
  });
  list.addEventListener("keydown", (ev) => {
    const all = links();
    const i = all.indexOf(document.activeElement);
    if (i < 0) return;
    if (ev.key === "ArrowDown") {
      ev.preventDefault();
      all[Math.min(i + 1, all.length - 1)].focus();
    } else if (ev.key === "ArrowUp") {
      ev.preventDefault();
      (i === 0 ? input : all[i - 1]).focus();
    } else if (ev.key === "Escape") {
      ev.preventDefault();
      input.focus();
    }
  });
  // Leaving the whole box (tab, click elsewhere) closes the panel.
  root.addEventListener("focusout", (ev) => {
    if (!root.contains(ev.relatedTarget)) panel.hidden = true;
  });
  document.addEventListener("keydown", (ev) => {
    const chord = (ev.ctrlKey || ev.metaKey) && ev.key.toLowerCase() === "k";
    const slash = ev.key === "/" && !ev.ctrlKey && !ev.metaKey && !typing(ev.target);
    if (chord || slash) {
      ev.preventDefault();
      input.focus();
      input.select();
    }
  });
}
