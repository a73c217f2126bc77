#!/usr/bin/env bash
# Runs the official OpenAI, ollama and Anthropic clients (clients.test.mjs)
# against `orchard serve --demo` (with tools-script.json), started on a free port with its own data
# folders and an API key, as a user would run it.
#
#   server/clienttest/run.sh                    # builds orchard, installs the clients
#   ORCHARD_BIN=/path/to/orchard server/clienttest/run.sh
#
# Exit status: 0 passed, 1 a client test failed, 2 the environment lacks
# node/npm or the server did not start.
set -euo pipefail
cd "$(dirname "$0")/../.."

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
	echo "client tests: node and npm are required" >&2
	exit 2
fi
sh server/clienttest/install.sh

work=$(mktemp -d)
serve_pid=""
cleanup() {
	if [ -n "$serve_pid" ]; then
		kill "$serve_pid" >/dev/null 2>&1 || true
		wait "$serve_pid" >/dev/null 2>&1 || true
	fi
	rm -rf "$work"
}
trap cleanup EXIT

bin=${ORCHARD_BIN:-}
if [ -z "$bin" ]; then
	echo "client tests: building orchard"
	go build -o "$work/orchard" . || { echo "client tests: build failed" >&2; exit 2; }
	bin=$work/orchard
fi

# The user's config, data and socket stay out of it; the demo bundle is
# made once in the user's cache and shared.
export XDG_CONFIG_HOME="$work/config" XDG_DATA_HOME="$work/data" XDG_STATE_HOME="$work/state" XDG_RUNTIME_DIR="$work/run"
mkdir -p "$XDG_CONFIG_HOME" "$XDG_DATA_HOME" "$XDG_STATE_HOME" "$XDG_RUNTIME_DIR"
export ORCHARD_API_KEY=clienttest-key

# The script makes the demo call a tool when asked about the weather and
# answer when the result comes back; elsewhere its weights reply.
"$bin" serve --demo --script server/clienttest/tools-script.json --listen 127.0.0.1:0 --socket none 2>"$work/serve.log" &
serve_pid=$!
url=""
for _ in $(seq 1 600); do
	url=$(sed -n 's|^  listening on  \(http://[0-9.:]*\).*|\1|p' "$work/serve.log" | head -n 1)
	[ -n "$url" ] && break
	if ! kill -0 "$serve_pid" 2>/dev/null; then
		break
	fi
	sleep 0.1
done
if [ -z "$url" ]; then
	echo "client tests: orchard serve did not start:" >&2
	cat "$work/serve.log" >&2
	exit 2
fi
echo "client tests: orchard serve --demo at $url"

# A real spoken sentence for the transcription (espeak-ng, as the media
# tests make theirs); without it that test says it is skipped.
clip=""
if command -v espeak-ng >/dev/null 2>&1; then
	clip="$work/speech.wav"
	espeak-ng -w "$clip" "The quick brown fox jumps over the lazy dog."
fi

status=0
ORCHARD_URL=$url ORCHARD_KEY=$ORCHARD_API_KEY ORCHARD_CLIP=$clip node --test server/clienttest/clients.test.mjs || status=1
if [ "$status" != 0 ]; then
	echo "----- orchard serve's output -----" >&2
	cat "$work/serve.log" >&2
fi
exit "$status"
