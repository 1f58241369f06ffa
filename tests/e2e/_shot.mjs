import { chromium } from "playwright-core";
const b = await chromium.launch({ executablePath: "/usr/bin/chromium", headless: true, args: ["--no-sandbox"] });
for (const [name, w] of [["desk", 1280], ["phone", 390]]) {
  const p = await b.newPage({ viewport: { width: w, height: 900 } });
  const errs = []; p.on("console", m => m.type() === "error" && errs.push(m.text()));
  await p.goto("http://127.0.0.1:8090/" + process.argv[2]);
  const ov = await p.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  await p.screenshot({ path: `/tmp/shot-${name}.png`, fullPage: false, clip: undefined });
  const el = await p.$(process.argv[3] ?? "table");
  if (el) await el.screenshot({ path: `/tmp/el-${name}.png` });
  console.log(name, "overflow", ov, "errors", errs);
}
await b.close();
