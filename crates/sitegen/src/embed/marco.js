// The iframe form of the widget (/embed/?modelo=…): the query's attributes go onto the
// element (bounded: an architecture is at most 4 KiB), and the page's height goes to the parent, which may size the iframe to it.
const OBSERVED = __ATTRS__;
const widget = document.querySelector("vram-estimador");
for (const [name, value] of new URLSearchParams(location.search)) {
  if (OBSERVED.includes(name)) widget.setAttribute(name, value.slice(0, 4096));
}
let last = 0;
new ResizeObserver(() => {
  const height = Math.ceil(document.documentElement.getBoundingClientRect().height);
  if (height !== last && window.parent !== window) {
    last = height;
    window.parent.postMessage({ tipo: "vramlab:altura", altura: height }, "*");
  }
}).observe(document.documentElement);
