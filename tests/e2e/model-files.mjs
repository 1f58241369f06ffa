// Real model files for the import tests, written the way their tools write them: a
// safetensors file (8-byte length, JSON header, weights) and a GGUF v3 header as
// llama.cpp's converter lays it out.

// A tiny Llama: 2 layers, width 64, 4 heads (2 for K/V), untied head, vocabulary 256.
export const TINY_CONFIG = {
  model_type: "llama",
  num_hidden_layers: 2,
  hidden_size: 64,
  num_attention_heads: 4,
  num_key_value_heads: 2,
  intermediate_size: 128,
  vocab_size: 256,
  max_position_embeddings: 2048,
  tie_word_embeddings: false,
};

// The tensors of TINY_CONFIG as Hugging Face names them, with their shapes.
function tinyTensors() {
  const c = TINY_CONFIG;
  const h = c.hidden_size;
  const kv = (h / c.num_attention_heads) * c.num_key_value_heads;
  const t = [["model.embed_tokens.weight", [c.vocab_size, h]]];
  for (let i = 0; i < c.num_hidden_layers; i++) {
    const p = `model.layers.${i}.`;
    t.push(
      [p + "self_attn.q_proj.weight", [h, h]],
      [p + "self_attn.k_proj.weight", [kv, h]],
      [p + "self_attn.v_proj.weight", [kv, h]],
      [p + "self_attn.o_proj.weight", [h, h]],
      [p + "mlp.gate_proj.weight", [c.intermediate_size, h]],
      [p + "mlp.up_proj.weight", [c.intermediate_size, h]],
      [p + "mlp.down_proj.weight", [h, c.intermediate_size]],
      [p + "input_layernorm.weight", [h]],
      [p + "post_attention_layernorm.weight", [h]],
    );
  }
  t.push(["model.norm.weight", [h]], ["lm_head.weight", [c.vocab_size, h]]);
  return t;
}

// A whole safetensors file of TINY_CONFIG in BF16 (its weights are zeros).
export function tinySafetensors() {
  const header = { __metadata__: { format: "pt" } };
  let offset = 0;
  for (const [name, shape] of tinyTensors()) {
    const bytes = shape.reduce((a, b) => a * b, 1) * 2;
    header[name] = { dtype: "BF16", shape, data_offsets: [offset, offset + bytes] };
    offset += bytes;
  }
  const json = Buffer.from(JSON.stringify(header));
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(json.length));
  return { bytes: Buffer.concat([len, json, Buffer.alloc(offset)]), weightBytes: offset, params: offset / 2 };
}

class Writer {
  constructor() {
    this.parts = [];
  }
  u32(v) {
    const b = Buffer.alloc(4);
    b.writeUInt32LE(v);
    this.parts.push(b);
    return this;
  }
  u64(v) {
    const b = Buffer.alloc(8);
    b.writeBigUInt64LE(BigInt(v));
    this.parts.push(b);
    return this;
  }
  str(s) {
    const b = Buffer.from(s);
    this.u64(b.length);
    this.parts.push(b);
    return this;
  }
  bytes() {
    return Buffer.concat(this.parts);
  }
}

// A Llama-3.1-8B-shaped GGUF header: its metadata, a 128 256-token vocabulary (which
// makes the header longer than the first 1 MiB read) and its 291 tensors.
export function llamaGguf() {
  const ints = [
    ["llama.block_count", 32],
    ["llama.embedding_length", 4096],
    ["llama.attention.head_count", 32],
    ["llama.attention.head_count_kv", 8],
    ["llama.feed_forward_length", 14336],
    ["llama.context_length", 131072],
  ];
  // Every tensor of Llama 3.1 8B as a Q4_K_M file stores it (8 030 261 248 parameters):
  // Q4_K (type 12, 144 bytes a 256-value block) for most matrices, Q6_K (type 14, 210
  // bytes) for the output and the FFN down projections, F32 norms (type 0, 4 bytes).
  const tensors = [
    ["token_embd.weight", [4096, 128256], 12, 144],
    ["output.weight", [4096, 128256], 14, 210],
    ["output_norm.weight", [4096], 0, 1024],
  ];
  for (let b = 0; b < 32; b++) {
    tensors.push(
      [`blk.${b}.attn_norm.weight`, [4096], 0, 1024],
      [`blk.${b}.ffn_norm.weight`, [4096], 0, 1024],
      [`blk.${b}.attn_q.weight`, [4096, 4096], 12, 144],
      [`blk.${b}.attn_k.weight`, [4096, 1024], 12, 144],
      [`blk.${b}.attn_v.weight`, [4096, 1024], 14, 210],
      [`blk.${b}.attn_output.weight`, [4096, 4096], 12, 144],
      [`blk.${b}.ffn_gate.weight`, [4096, 14336], 12, 144],
      [`blk.${b}.ffn_up.weight`, [4096, 14336], 12, 144],
      [`blk.${b}.ffn_down.weight`, [14336, 4096], 14, 210],
    );
  }
  const w = new Writer();
  w.parts.push(Buffer.from("GGUF"));
  w.u32(3).u64(tensors.length).u64(ints.length + 2);
  w.str("general.architecture").u32(8).str("llama");
  for (const [k, v] of ints) w.str(k).u32(4).u32(v);
  w.str("tokenizer.ggml.tokens").u32(9).u32(8).u64(128256);
  for (let i = 0; i < 128256; i++) w.str("t");
  let weightBytes = 0;
  let params = 0;
  for (const [name, dims, ggml, per256] of tensors) {
    w.str(name).u32(dims.length);
    for (const d of dims) w.u64(d);
    w.u32(ggml).u64(0);
    const count = dims.reduce((a, b) => a * b, 1);
    weightBytes += (count / 256) * per256;
    params += count;
  }
  return { bytes: w.bytes(), weightBytes, params };
}

// A Qwen3-MoE-shaped GGUF header whose two blocks store their experts differently
// (block 0: Q4_K gate/up, Q6_K down; block 1: Q8_0), as imatrix mixes do.
export function moeGguf() {
  const ints = [
    ["qwen3moe.block_count", 2],
    ["qwen3moe.embedding_length", 2048],
    ["qwen3moe.attention.head_count", 32],
    ["qwen3moe.attention.head_count_kv", 4],
    ["qwen3moe.attention.key_length", 128],
    ["qwen3moe.feed_forward_length", 6144],
    ["qwen3moe.context_length", 40960],
    ["qwen3moe.expert_count", 128],
    ["qwen3moe.expert_used_count", 8],
    ["qwen3moe.expert_feed_forward_length", 768],
    ["qwen3moe.vocab_size", 151936],
  ];
  // name, dims, GGML type, bytes per block, weights per block
  const tensors = [
    ["token_embd.weight", [2048, 151936, 1], 12, 144, 256],
    ["blk.0.ffn_gate_exps.weight", [2048, 768, 128], 12, 144, 256],
    ["blk.0.ffn_up_exps.weight", [2048, 768, 128], 12, 144, 256],
    ["blk.0.ffn_down_exps.weight", [768, 2048, 128], 14, 210, 256],
    ["blk.1.ffn_gate_exps.weight", [2048, 768, 128], 8, 34, 32],
    ["blk.1.ffn_up_exps.weight", [2048, 768, 128], 8, 34, 32],
    ["blk.1.ffn_down_exps.weight", [768, 2048, 128], 8, 34, 32],
  ];
  const w = new Writer();
  w.parts.push(Buffer.from("GGUF"));
  w.u32(3).u64(tensors.length).u64(ints.length + 1);
  w.str("general.architecture").u32(8).str("qwen3moe");
  for (const [k, v] of ints) w.str(k).u32(4).u32(v);
  const experts = [0, 0];
  for (const [name, dims, ggml, perBlock, block] of tensors) {
    w.str(name).u32(dims.length);
    for (const d of dims) w.u64(d);
    w.u32(ggml).u64(0);
    const bytes = (dims[0] * dims[1] * dims[2] / block) * perBlock;
    if (name.startsWith("blk.")) experts[Number(name[4])] += bytes;
  }
  return { bytes: w.bytes(), experts };
}
