#!/bin/sh
# Installs the official client libraries the client tests run (versions
# pinned in package.json) into server/clienttest/node_modules.
set -eu
cd "$(dirname "$0")"
if [ -f node_modules/openai/package.json ] && [ -f node_modules/ollama/package.json ] && [ -f node_modules/@anthropic-ai/sdk/package.json ]; then
	echo "client tests: already installed"
	exit 0
fi
npm install --no-save --no-audit --no-fund --no-package-lock
node -e 'require("openai"); require("ollama"); require("@anthropic-ai/sdk")'
echo "client tests: installed"
