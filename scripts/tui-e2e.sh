#!/usr/bin/env bash
# End-to-end check of the chat interface: runs the real binary on the
# demo bundle inside tmux, sends a message, waits for the reply and the
# stats, saves checkpoint "a", quits, starts again, loads "a" and checks
# the conversation came back. Then it starts orchard serve in the
# background, opens the chat (which attaches to it), sends a message,
# drops the screen mid-reply as a lost SSH connection would, attaches
# again and sees the reply complete.
#
#   scripts/tui-e2e.sh                 # builds orchard, runs `orchard --demo`
#   ORCHARD_CMD="/path/to/bin --demo" scripts/tui-e2e.sh
#   TUI_E2E_TIMEOUT=120 scripts/tui-e2e.sh   # seconds per wait (default 90)
#
# Exit status: 0 passed, 1 a step failed (the screen is printed), 2 the
# environment lacks tmux or the build failed.
set -euo pipefail

cd "$(dirname "$0")/.."

if ! command -v tmux >/dev/null 2>&1; then
	echo "tui-e2e: tmux is required (apt-get install tmux / brew install tmux)" >&2
	exit 2
fi

timeout_s=${TUI_E2E_TIMEOUT:-90}
work=$(mktemp -d)
session="orchard-e2e-$$"
socket="$work/tmux.sock"
tm() { tmux -S "$socket" "$@"; }

serve_pid=""
cleanup() {
	tm kill-server >/dev/null 2>&1 || true
	if [ -n "$serve_pid" ]; then
		kill "$serve_pid" >/dev/null 2>&1 || true
		wait "$serve_pid" >/dev/null 2>&1 || true
	fi
	rm -rf "$work"
}
trap cleanup EXIT

bin=${ORCHARD_BIN:-}
if [ -z "${ORCHARD_CMD:-}" ] || [ -z "$bin" ]; then
	echo "tui-e2e: building orchard"
	if ! go build -o "$work/orchard" .; then
		echo "tui-e2e: build failed" >&2
		exit 2
	fi
	bin=${bin:-$work/orchard}
	ORCHARD_CMD=${ORCHARD_CMD:-"$bin --demo"}
fi

# Keep checkpoints and settings of this run apart from the user's; the
# cache (where the demo bundle is made once) is shared to save time.
export XDG_CONFIG_HOME="$work/config" XDG_DATA_HOME="$work/data" XDG_STATE_HOME="$work/state"
export XDG_RUNTIME_DIR="$work/run"
export ORCHARD_E2E_DIR="$work/store"
unset ORCHARD_API_KEY
mkdir -p "$XDG_CONFIG_HOME" "$XDG_DATA_HOME" "$XDG_STATE_HOME" "$XDG_RUNTIME_DIR" "$ORCHARD_E2E_DIR"

screen() { tm capture-pane -p -t "$session" 2>/dev/null || true; }

fail() {
	echo "tui-e2e: FAIL: $*" >&2
	echo "----- screen -----" >&2
	screen >&2
	echo "------------------" >&2
	exit 1
}

# wait_for TEXT...: wait until every TEXT is on the screen at once.
wait_for() {
	local deadline=$((SECONDS + timeout_s)) s missing
	while :; do
		s=$(screen)
		missing=""
		for want in "$@"; do
			if ! grep -qF -- "$want" <<<"$s"; then
				missing=$want
				break
			fi
		done
		[ -z "$missing" ] && return 0
		if ! tm has-session -t "$session" 2>/dev/null; then
			fail "orchard exited while waiting for \"$missing\""
		fi
		[ $SECONDS -ge $deadline ] && fail "\"$missing\" did not appear within ${timeout_s}s"
		sleep 0.2
	done
}

# wait_gone TEXT: wait until TEXT is no longer on the screen.
wait_gone() {
	local deadline=$((SECONDS + timeout_s))
	while grep -qF -- "$1" <<<"$(screen)"; do
		[ $SECONDS -ge $deadline ] && fail "\"$1\" stayed on the screen for ${timeout_s}s"
		sleep 0.2
	done
}

start() {
	tm new-session -d -s "$session" -x 120 -y 40 "${1:-$ORCHARD_CMD}"
	wait_for "${2:-Type a message}"
}

type_line() {
	tm send-keys -t "$session" -l -- "$1"
	tm send-keys -t "$session" Enter
}

quit() {
	tm send-keys -t "$session" C-c
	sleep 0.2
	tm send-keys -t "$session" C-c
	local deadline=$((SECONDS + timeout_s))
	while tm has-session -t "$session" 2>/dev/null; do
		[ $SECONDS -ge $deadline ] && fail "orchard did not quit on ctrl+c ctrl+c"
		sleep 0.2
	done
}

prompt="Tell me about apple orchards"

echo "tui-e2e: first run: $ORCHARD_CMD"
start
type_line "$prompt"
wait_for "$prompt" "tok/s"
# The reply is over when its footer (tokens · tok/s) is printed.
wait_for "tokens ·" "○"
tm send-keys -t "$session" C-t
wait_for "stats" "decode" "latency" "context" "accepted"
tm send-keys -t "$session" C-t
type_line "/save a"
wait_for 'Saved checkpoint "a"'
# The context the conversation fills, as the status bar shows it.
used=$(screen | grep -oE 'ctx [0-9,]+/[0-9,]+' | tail -n 1)
[ -n "$used" ] || fail "no context figure in the status bar"
quit

echo "tui-e2e: second run"
start
type_line "/load a"
# The restored conversation fills the same context; its first message is
# at the top of the transcript.
wait_for 'Loaded checkpoint "a"' "$used"
tm send-keys -t "$session" C-Home
wait_for "$prompt"
quit

echo "tui-e2e: orchard serve, attach, detach mid-reply, attach again"
"$bin" serve --demo --listen 127.0.0.1:0 >"$work/serve.log" 2>&1 &
serve_pid=$!
deadline=$((SECONDS + timeout_s))
until grep -q "listening on" "$work/serve.log"; do
	if ! kill -0 "$serve_pid" 2>/dev/null; then
		cat "$work/serve.log" >&2
		fail "orchard serve exited"
	fi
	[ $SECONDS -ge $deadline ] && fail "orchard serve did not start"
	sleep 0.2
done
grep -q "ssh -L" "$work/serve.log" || fail "orchard serve did not say how to reach it from a laptop"
# The demo bundle is served on the default socket, so the chat attaches.
start "$bin --demo"
wait_for "attached to unix:"
type_line "$prompt"
wait_for "$prompt" "tok/s"
sleep 1
if screen | grep -qF "tokens ·"; then
	fail "the reply ended before the screen could be dropped mid-reply"
fi
# A dropped SSH connection: the terminal goes away (SIGHUP).
tm kill-session -t "$session"
sleep 0.5
start "$bin --attach" "attached to"
tm send-keys -t "$session" C-Home
wait_for "$prompt"
tm send-keys -t "$session" C-End
# The reply that went on while no screen was attached ends here.
wait_for "tokens ·"
grep -q '"finishReason":"eos"' "$XDG_DATA_HOME/orchard/metrics.jsonl" ||
	grep -q '"finishReason":"cap"' "$XDG_DATA_HOME/orchard/metrics.jsonl" ||
	grep -q '"finishReason":"contextFull"' "$XDG_DATA_HOME/orchard/metrics.jsonl" ||
	fail "the reply did not finish on the server (metrics.jsonl)"
quit
kill -TERM "$serve_pid"
wait "$serve_pid" || fail "orchard serve exited with status $? on SIGTERM"
serve_pid=""
[ -d "$XDG_DATA_HOME/orchard/checkpoints/_autosave" ] || fail "orchard serve did not autosave the conversation"

echo "tui-e2e: ok"
