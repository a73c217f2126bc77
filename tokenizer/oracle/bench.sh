#!/bin/sh
# Prints the encode throughput of orchard's Go tokenizer and of the Rust
# tokenizers library on the conformance corpus, measured in the same run on
# one thread each, and their ratio. Needs Go, Node and ./install.sh.
#
#   tokenizer/oracle/bench.sh            (BENCH_SECONDS=3 by default)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
seconds=${BENCH_SECONDS:-3}
[ -f "$here/node_modules/tokenizers/package.json" ] || { echo "bench: run $here/install.sh first" >&2; exit 1; }

cd "$here/.."
goout=$(GOMAXPROCS=1 go test -run '^$' -bench '^Benchmark(EncodeGemma|LoadGemma)$' -benchtime "${seconds}s" -count 1 .)
rust=$(RAYON_NUM_THREADS=1 BENCH_SECONDS="$seconds" node "$here/bench.js")

echo "$goout" | grep -E "^Benchmark"
echo "rust: $rust"
GOOUT="$goout" RUST="$rust" node -e '
const go = {};
for (const line of process.env.GOOUT.split("\n")) {
  const f = line.trim().split(/\s+/);
  if (!f[0] || !f[0].startsWith("Benchmark")) continue;
  for (let i = 2; i + 1 < f.length; i += 2) go[f[0].replace(/-\d+$/, "") + " " + f[i + 1]] = Number(f[i]);
}
const r = JSON.parse(process.env.RUST);
const goTok = go["BenchmarkEncodeGemma tokens/s"], goMB = go["BenchmarkEncodeGemma MB/s"];
const goLoad = go["BenchmarkLoadGemma ns/op"] / 1e6;
const m = (x) => (x / 1e6).toFixed(2) + "M";
console.log(`corpus: ${r.texts} texts, ${r.bytes} bytes, ${r.tokens} tokens (Gemma 3 tokenizer.json), one thread each`);
console.log(`load:   go ${goLoad.toFixed(0)} ms    rust ${r.loadMs} ms`);
console.log(`encode: go ${m(goTok)} tokens/s ${goMB.toFixed(2)} MB/s`);
console.log(`        rust cold ${m(r.coldTokensPerSec)} tokens/s ${r.coldMBPerSec.toFixed(2)} MB/s, warm (repeated passes) ${m(r.warmTokensPerSec)} tokens/s ${r.warmMBPerSec.toFixed(2)} MB/s`);
console.log(`ratio go/rust: ${(goTok / r.coldTokensPerSec).toFixed(2)}x cold, ${(goTok / r.warmTokensPerSec).toFixed(2)}x warm`);
'
