// A stand-in for the Hugging Face Hub on its own loopback origin: the same
// `/{org}/{model}/resolve/main/{file}` paths, CORS headers, a redirect to a "CDN"
// that honours Range requests, and each failure the importer must explain.

import { createServer } from "node:http";
import { TINY_CONFIG, tinySafetensors } from "./model-files.mjs";

const LLAMA_8B_CONFIG = {
  model_type: "llama",
  num_hidden_layers: 32,
  hidden_size: 4096,
  num_attention_heads: 32,
  num_key_value_heads: 8,
  intermediate_size: 14336,
  vocab_size: 128256,
  max_position_embeddings: 131072,
  tie_word_embeddings: false,
};

const CORS = {
  "access-control-allow-origin": "*",
  "access-control-allow-headers": "range",
  "access-control-expose-headers": "content-range, content-length",
};

// Serves `body` whole, or the one range `bytes=a-b` asks for with 206.
function sendBytes(req, res, body, honourRange = true) {
  const m = /^bytes=(\d+)-(\d+)$/.exec(req.headers.range ?? "");
  if (m && honourRange) {
    const from = Number(m[1]);
    const to = Math.min(Number(m[2]), body.length - 1);
    res.writeHead(206, {
      ...CORS,
      "content-range": `bytes ${from}-${to}/${body.length}`,
      "content-length": to - from + 1,
    });
    return res.end(body.subarray(from, to + 1));
  }
  res.writeHead(200, { ...CORS, "content-length": body.length });
  res.end(body);
}

function json(res, value, status = 200) {
  const body = typeof value === "string" ? value : JSON.stringify(value);
  res.writeHead(status, { ...CORS, "content-type": "application/json" });
  res.end(body);
}

// Starts the fixture; resolves to { url, requests, close }.
export async function startHub() {
  const tiny = tinySafetensors();
  const requests = [];
  const timers = new Set();
  const server = createServer((req, res) => {
    requests.push({ path: req.url, range: req.headers.range ?? null, method: req.method });
    if (req.method === "OPTIONS") {
      res.writeHead(204, { ...CORS, "access-control-allow-methods": "GET" });
      return res.end();
    }
    const [, org, , , , file] = req.url.split("/");
    const route = `${org}/${file}`;
    switch (route) {
      // A single-file model: no index, the weights' header by Range after a redirect.
      case "ok/config.json":
        return json(res, TINY_CONFIG);
      case "ok/model.safetensors":
        res.writeHead(302, { ...CORS, location: "/cdn/tiny.safetensors" });
        return res.end();
      case "sharded/config.json":
      case "norange/config.json":
        return json(res, org === "sharded" ? LLAMA_8B_CONFIG : TINY_CONFIG);
      case "sharded/model.safetensors.index.json":
        return json(res, {
          metadata: { total_size: 16060522496, total_parameters: 8030261248 },
          weight_map: { "model.embed_tokens.weight": "model-00001-of-00004.safetensors" },
        });
      case "norange/model.safetensors":
        return sendBytes(req, res, tiny.bytes, false);
      case "gated/config.json":
        return json(res, { error: "Access to model gated/x is restricted." }, 401);
      case "broken/config.json":
        return json(res, '{"model_type": "llama", "hidden_size": ');
      case "slow/config.json": {
        const t = setTimeout(() => json(res, TINY_CONFIG), 13_000);
        timers.add(t);
        return;
      }
      // A body that never says its length and goes on past any config's size.
      case "huge/config.json": {
        res.writeHead(200, { ...CORS, "content-type": "application/json" });
        const chunk = Buffer.alloc(64 * 1024, 0x20);
        let sent = 0;
        const pump = () => {
          while (sent < 64 && res.write(chunk)) sent++;
          if (sent >= 64) return res.end();
          res.once("drain", pump);
        };
        return pump();
      }
    }
    if (req.url === "/cdn/tiny.safetensors") return sendBytes(req, res, tiny.bytes);
    json(res, { error: "Repository not found" }, 404);
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    tiny,
    close: () => {
      timers.forEach(clearTimeout);
      server.closeAllConnections();
      return new Promise((resolve) => server.close(resolve));
    },
  };
}
