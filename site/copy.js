// vramlab: a «Copiar» button on every code block, those drawn later included. The
// highlighting is done at build time; this only adds the buttons, so without
// JavaScript the blocks read the same.

(function () {
  const DONE_MS = 2000;

  function select(node) {
    const range = document.createRange();
    range.selectNodeContents(node);
    const selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
  }

  function add(block) {
    const code = block.querySelector("code");
    if (!code || block.querySelector(".copy")) return;
    const button = document.createElement("button");
    button.type = "button";
    button.className = "copy";
    button.textContent = "Copiar";
    button.setAttribute("aria-label", "Copiar el código");
    const status = document.createElement("span");
    status.className = "copy-status";
    status.setAttribute("role", "status");
    let timer = 0;
    const say = (text) => {
      status.textContent = text;
      button.textContent = text === "" ? "Copiar" : text;
      clearTimeout(timer);
      timer = setTimeout(() => {
        status.textContent = "";
        button.textContent = "Copiar";
      }, DONE_MS);
    };
    button.addEventListener("click", async () => {
      const text = code.textContent;
      try {
        await navigator.clipboard.writeText(text);
        say("Copiado");
      } catch {
        // No clipboard permission (or not a secure context): select the text so
        // Ctrl+C / Cmd+C copies it.
        select(code);
        say("Seleccionado: pulsa Ctrl+C");
      }
    });
    block.append(button, status);
  }

  function init() {
    document.querySelectorAll("div.code").forEach(add);
    // Blocks that arrive later (the estimator's launch command, redrawn with each
    // answer) get their button too.
    new MutationObserver((changes) => {
      for (const change of changes) {
        for (const node of change.addedNodes) {
          if (node.nodeType !== 1) continue;
          if (node.matches("div.code")) add(node);
          node.querySelectorAll("div.code").forEach(add);
        }
      }
    }).observe(document.body, { childList: true, subtree: true });
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
})();
