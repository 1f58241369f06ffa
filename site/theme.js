// vramlab theme: light, dark or the system's, remembered across pages and visits.
//
// A classic script in <head>, run before the first paint so a stored choice never
// flashes the other theme. Without JavaScript the page follows the system
// (prefers-color-scheme) and the toggle stays hidden: the stylesheet shows it only
// under html[data-js], which this script sets before the body is parsed, so the
// header never shifts when the toggle appears.

(function () {
  const KEY = "vramlab-tema";
  const ORDER = ["sistema", "claro", "oscuro"];
  const LABEL = { sistema: "Tema: sistema", claro: "Tema: claro", oscuro: "Tema: oscuro" };
  const root = document.documentElement;

  function stored() {
    try {
      const value = localStorage.getItem(KEY);
      return ORDER.includes(value) ? value : "sistema";
    } catch {
      return "sistema";
    }
  }

  function apply(choice) {
    if (choice === "claro") root.dataset.theme = "light";
    else if (choice === "oscuro") root.dataset.theme = "dark";
    else delete root.dataset.theme;
  }

  root.dataset.js = "";
  apply(stored());

  document.addEventListener("DOMContentLoaded", () => {
    const button = document.getElementById("theme-toggle");
    if (!button) return;
    const show = (choice) => {
      button.textContent = LABEL[choice];
      button.setAttribute("aria-label", `${LABEL[choice]}. Pulsa para cambiarlo`);
    };
    show(stored());
    button.addEventListener("click", () => {
      const next = ORDER[(ORDER.indexOf(stored()) + 1) % ORDER.length];
      try {
        if (next === "sistema") localStorage.removeItem(KEY);
        else localStorage.setItem(KEY, next);
      } catch {
        // Storage refused (private mode): the choice lasts for this page only.
      }
      apply(next);
      show(next);
    });
  });
})();
