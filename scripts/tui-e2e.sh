#!/usr/bin/env bash
# End-to-end check of the chat interface: runs the real binary on the
# demo bundle inside tmux, as a person would:
#   - sends a message, waits for the reply and the stats, saves checkpoint
#     "a", quits, starts again, loads "a" and checks the conversation;
#   - /context shows the window as a bar and switches the policy; the
#     input prices a message as it is typed (issue 22);
#   - focus (issue 13, item 1): after /delete and y the keys are the
#     input's, so typing deletes or saves nothing; the panel shows when it
#     has the keys; forking over an unsaved conversation asks;
#   - settings (item 2): a loaded checkpoint's and a --continue'd
#     conversation's settings are the ones on screen;
#   - a refused 50 KB paste (item 5): folded into one line with its size,
#     unfolded and folded again with ctrl+y, not restored from the draft,
#     cleared by esc; ctrl+c clears the input, then quits;
#   - /image attaches a picture to a message; the reply comes, the chip
#     shows, a follow-up goes without it; a file that is no picture is
#     refused when attached; a message refused for a picture that does not
#     decode keeps the other picture attached and enter sends it with it;
#   - orchard serve (issue 15) in the background: the chat attaches by
#     itself, a message is sent, the screen is dropped mid-reply as a lost
#     SSH connection would, a new screen attaches and sees the reply end,
#     then sends a picture with /image and sees its chip come back;
#     SIGTERM stops the server, which autosaves.
#   - the chat and the server together (issue 19): an API request while
#     the screen is attached shows in its status bar, a message typed
#     meanwhile says it is queued; the server is stopped and started
#     again under the screen, which says so, refuses a command, attaches
#     again by itself and shows the server's conversation and context.
#   - regenerate (ctrl+g): a second version "2/2" made from the cache (all
#     but one prompt token reused), ← → between versions; edit (↑ on an
#     empty input): the message replaced, its reply prefilled from before
#     it, the old one a version away;
#   - the history: /new keeps the conversation, ctrl+l lists it, a search
#     finds it, enter resumes it; it is still there in the next run;
#   - search (ctrl+f): matches counted, enter jumps to older ones, esc
#     closes;
#   - /copy code N: in a default tmux (which drops OSC 52) the block's code
#     lands in tmux's buffer, and orchard says so; with set-clipboard on it
#     reaches tmux's clipboard over OSC 52.
#   - tools (issue 23): with an MCP server (internal/mcpweather) in the
#     config and a scripted demo, a question about the weather shows a
#     call card asking; y runs it, the result shows on the card and the
#     model's answer follows; /tools's panel lists the tool and space turns it off.
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
	# orchard autosaves on the hangup; let it finish before removing its data.
	local i
	for i in $(seq 1 50); do
		pgrep -f "$work/orchard" >/dev/null 2>&1 || break
		sleep 0.1
	done
	rm -rf "$work"
}
trap cleanup EXIT

# The binary for orchard serve and --attach: ORCHARD_BIN, else built.
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
unset ORCHARD_API_KEY
mkdir -p "$XDG_CONFIG_HOME" "$XDG_DATA_HOME" "$XDG_STATE_HOME" "$XDG_RUNTIME_DIR"

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

# start [FLAGS]: run orchard and wait for its status bar.
start() { start_cmd "$ORCHARD_CMD $*"; }

# start_cmd COMMAND: run a command line and wait for the status bar.
start_cmd() {
	tm new-session -d -s "$session" -x 120 -y 40 "$1"
	wait_for "│ ctx "
}

type_line() {
	tm send-keys -t "$session" -l -- "$1"
	tm send-keys -t "$session" Enter
}

key() { tm send-keys -t "$session" "$@"; }

# absent TEXT WHY: fail if TEXT is on the screen.
absent() {
	if grep -qF -- "$1" <<<"$(screen)"; then
		fail "$2"
	fi
}

# gone: wait until orchard has exited.
gone() {
	local deadline=$((SECONDS + timeout_s))
	while tm has-session -t "$session" 2>/dev/null; do
		[ $SECONDS -ge $deadline ] && fail "$1"
		sleep 0.2
	done
}

# quit: ctrl+c until orchard exits (the first may clear the input or
# stop a reply; on an empty input two quit).
quit() {
	local i
	for i in 1 2 3 4 5 6; do
		tm has-session -t "$session" 2>/dev/null || return 0
		# orchard may exit between the check and the key (saving the
		# conversation and its history takes a moment).
		tm send-keys -t "$session" C-c 2>/dev/null || return 0
		sleep 0.3
	done
	gone "orchard did not quit on ctrl+c"
}

# wait_re REGEX: wait until a line of the screen matches REGEX.
wait_re() {
	local deadline=$((SECONDS + timeout_s))
	while ! grep -qE -- "$1" <<<"$(screen)"; do
		tm has-session -t "$session" 2>/dev/null || fail "orchard exited while waiting for /$1/"
		[ $SECONDS -ge $deadline ] && fail "/$1/ did not appear within ${timeout_s}s"
		sleep 0.2
	done
}

# reply MESSAGE: send the first message of a session and wait until the
# reply is over: the status bar is idle with a speed ("○ 49.7 tok/s").
reply() {
	type_line "$1"
	wait_for "$1"
	wait_re "○ [0-9.]+ tok/s"
}

prompt="Tell me about apple orchards"

echo "tui-e2e: first run: $ORCHARD_CMD"
start
wait_for "Type a message"
type_line "$prompt"
wait_for "$prompt" "tok/s"
# The reply is over when its footer (tokens · tok/s) is printed.
wait_for "tokens ·" "○"
key C-t
wait_for "stats" "decode" "latency" "context" "accepted"
key C-t
# /context (issue 22): the window as a bar with its parts; d and c switch
# the policy in the session, esc closes. Then the cost of a message shows
# on the input's rule as it is typed, before it is sent.
type_line "/context"
wait_for "Context" "system prompt" "message 1 (you)" "message 2 (model)" "reply reserve" "[compact]"
key d
wait_for "[drop-oldest]"
key c
wait_for "[compact]"
key Escape
wait_for "Message · / for commands"
tm send-keys -t "$session" -l -- "how many trees"
wait_re "tokens \(text [0-9]+ \+ template [0-9]+\) · [0-9,]+ left for the reply"
key C-c
wait_gone "left for the reply"
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
key C-Home
wait_for "$prompt"
quit

echo "tui-e2e: focus after a panel action"
start
type_line "/save alpha"
wait_for 'Saved checkpoint "alpha"'
type_line "/save beta"
wait_for 'Saved checkpoint "beta"'
key C-s
wait_for "checkpoints (" "tab selects"
type_line "/delete alpha"
wait_for 'Delete the checkpoint "alpha"?'
key y
wait_for 'Deleted checkpoint "alpha"'
# The keys are the input's again: d, y, s, f and r type, nothing happens
# to the checkpoints.
tm send-keys -t "$session" -l -- "what day is it today? fruit"
wait_for "› what day is it today? fruit"
absent 'Delete "beta"' "typing asked to delete a checkpoint"
absent "save as:" "typing opened the save prompt"
absent "rename to:" "typing opened the rename prompt"
wait_for "beta"
# ctrl+c clears the input (item 5).
key C-c
wait_gone "what day is it today"
# A conversation not saved since it changed: forking over it asks, and a
# key other than y keeps it.
reply "Which trees grow best?"
key Tab
wait_for "the keys act here" "keys go to the checkpoints panel"
key f
wait_for 'is not saved; forking "beta" replaces it'
key r
wait_for "Nothing was changed."
absent "rename to:" "r after the question opened the rename prompt"
absent "Started a new conversation" "the fork happened without a yes"
key Escape
wait_gone "the keys act here"
quit

echo "tui-e2e: settings after a load and --continue"
start
reply "Hello there"
type_line "/think on"
wait_for "Now: thinking on." "greedy · think"
type_line "/spec off"
wait_for "Now: speculation off." "spec off"
type_line "/save s2"
wait_for 'Saved checkpoint "s2"'
type_line "/think off"
wait_for "Now: thinking off."
type_line "/spec auto"
wait_for "Now: speculation auto."
wait_gone "greedy · think"
type_line "/load s2"
wait_for 'Loaded checkpoint "s2"' "greedy · think" "spec off"
# The screen knew thinking was on again, so turning it off is a change.
type_line "/think off"
wait_for "Now: thinking off."
type_line "/think on"
wait_for "Now: thinking on." "greedy · think"
quit
start --continue
wait_for "Hello there" "greedy · think" "spec off"
quit

echo "tui-e2e: a refused 50 KB paste"
big="$work/paste.txt"
for i in $(seq 1 1100); do
	echo "PASTE-50KB line $i of a long pasted text"
done >"$big"
# A long paste is folded into one line that gives its size; ctrl+y unfolds
# it and folds it back.
paste_big() {
	tm load-buffer -b big "$big"
	tm paste-buffer -p -b big -t "$session"
	wait_for "› [paste 1 · 1,100 lines · ~" "ctrl+y unfolds the paste"
}
start
paste_big
key C-y
wait_for "PASTE-50KB line 1100" "1,100 lines · ~" "ctrl+y folds the paste"
key C-y
wait_for "› [paste 1 · 1,100 lines · ~"
key Enter
wait_for "The message was not sent"
wait_for "› [paste 1 · 1,100 lines · ~"
# Leave from the palette (ctrl+c would clear the input): the refused
# paste is not kept as a draft.
key C-p
tm send-keys -t "$session" -l -- "quit"
key Enter
gone "orchard did not quit from the palette"
start
absent "PASTE-50KB" "the refused paste came back from draft.txt"
absent "[paste" "the refused paste came back from draft.txt"
paste_big
key Enter
wait_for "The message was not sent"
key Escape
wait_gone "[paste 1"
wait_for "› Message"
# ctrl+c on an empty input arms quitting; the second quits.
key C-c
wait_for "again to quit"
key C-c
gone "a second ctrl+c on an empty input did not quit"

# tokens_line: the stats panel's "N in, R reused" of the last turn.
tokens_line() {
	key C-t
	wait_for "reused,"
	screen | grep -oE '[0-9,]+ in, [0-9,]+ reused' | tail -n 1 | tr -d ,
	key C-t
	wait_gone "reused,"
}

# wait_turn: a turn started by a key runs (● in the status bar, if seen
# at all) and ends (○ with a speed).
wait_turn() {
	local deadline=$((SECONDS + 10))
	while ! grep -qE "● [0-9.]+ tok/s|● prefill" <<<"$(screen)" && [ $SECONDS -lt $deadline ]; do
		sleep 0.1
	done
	wait_re "○ [0-9.]+ tok/s"
}

echo "tui-e2e: regenerate, versions, edit"
start
reply "Tell me about apple orchards"
read -r in _ reused _ <<<"$(tokens_line)"
[ "$reused" = 0 ] || fail "the first turn reused $reused tokens"
key C-g
wait_for "gemma  ‹ 2/2 ›"
wait_turn
read -r in2 _ reused2 _ <<<"$(tokens_line)"
[ "$in2" = "$in" ] && [ "$reused2" = $((in - 1)) ] ||
	fail "regenerate fed $in2 prompt tokens reusing $reused2; want $in reusing $((in - 1)) (the cache rewound, not prefilled)"
key Left
wait_for "gemma  ‹ 1/2 ›"
key Right
wait_for "gemma  ‹ 2/2 ›"
key Up
wait_for "editing your last message" "› Tell me about apple orchards"
key C-u
tm send-keys -t "$session" -l -- "Tell me about pear orchards"
key Enter
wait_for "you  ‹ 2/2 ›" "Tell me about pear orchards"
wait_turn
absent "Tell me about apple orchards" "the edited message is still shown"
read -r in3 _ reused3 _ <<<"$(tokens_line)"
# The edited message replaces the first (the prompt is one message long,
# not the conversation plus it) and what follows the shared words is fed.
[ "$in3" -lt $((in + 10)) ] && [ "$reused3" -lt $((in3 - 1)) ] ||
	fail "the edit fed $in3 prompt tokens reusing $reused3 (the first prompt was $in): not rewound to before the message"
key Left
wait_for "Tell me about apple orchards" "you  ‹ 1/2 ›" "gemma  ‹ 2/2 ›"
quit

echo "tui-e2e: the history"
start
reply "Plant quinces near the south wall"
type_line "/new"
wait_for "kept in the history" "Type a message"
type_line "Something else entirely"
wait_for "Something else entirely"
wait_turn
key C-l
wait_for "history (" "the keys act here"
tm send-keys -t "$session" -l -- "QUINCES"
wait_for "1 found" "Plant quinces near"
key Enter
wait_for 'Resumed "Plant quinces near the south wall"'
absent "Something else entirely" "the resumed conversation is not the one on screen"
quit
start
key C-l
wait_for "Something else entirely" "Plant quinces near"
key Escape
wait_gone "the keys act here"
quit

echo "tui-e2e: search in the conversation"
start
reply "first orchard question"
type_line "second orchard question"
wait_for "second orchard question"
wait_turn
key C-f
wait_for "find:"
tm send-keys -t "$session" -l -- "ORCHARD QUESTION"
wait_for "2/2"
key Enter
wait_for "1/2"
tm send-keys -t "$session" -l -- "zzz"
wait_for "no match"
key Escape
wait_gone "find:"
quit

echo "tui-e2e: copy a code block"
start
# A default tmux drops OSC 52: the block goes into tmux's buffer, and
# orchard says so.
tm set-option -g set-clipboard external
printf 'Check this:\n```sh\necho orchard-e2e\nls -l\n```\n' >"$work/code.txt"
tm load-buffer -b code "$work/code.txt"
tm paste-buffer -p -b code -t "$session"
key Enter
wait_for "code 1 · sh · /copy code 1"
wait_turn
type_line "/copy code 1"
wait_for "Copied code block 1 (sh), 2 lines, to tmux's buffer (prefix+] pastes)"
got=$(tm show-buffer)
[ "$got" = "$(printf 'echo orchard-e2e\nls -l')" ] || fail "tmux's buffer holds \"$got\""
tm delete-buffer
tm set-option -g set-clipboard on
type_line "/copy code 1"
wait_for "Copied code block 1 (sh), 2 lines, to your terminal's clipboard (OSC 52, through tmux)"
got=$(tm show-buffer)
[ "$got" = "$(printf 'echo orchard-e2e\nls -l')" ] || fail "the clipboard holds \"$got\""
quit
echo "tui-e2e: an image attached to a message (issue 12)"
# A 24×16 PNG of four coloured blocks, as base64 so the script needs no
# image tools.
pic="$work/orchard picture.png"
printf '%s' 'iVBORw0KGgoAAAANSUhEUgAAABgAAAAQCAIAAACDRijCAAAAIklEQVR42mM4UWFDEGkQgRhGDRrZBsnZEEQaRKBRg0a0QQCYsn6QIN+oCwAAAABJRU5ErkJggg==' | base64 -d >"$pic"
start
type_line "/image '$pic'"
wait_for "attached: ▣ orchard picture.png"
type_line "What is in this picture?"
wait_for "What is in this picture?" "▣ orchard picture.png" "tokens"
wait_re "○ [0-9.]+ tok/s"
# A follow-up about the same picture reuses the cache: the image is not
# sent again.
type_line "And its colours?"
wait_for "And its colours?"
wait_re "○ [0-9.]+ tok/s"
absent "attached:" "the attachment queue was not emptied by sending"
quit

echo "tui-e2e: attachments kept after a failed send (issue 18, item 6)"
# notimage.png is refused when it is attached; broken.png looks like a PNG
# (its first bytes) but does not decode, so the engine refuses the
# message: the picture stays attached, broken.png is dropped, and enter
# sends the message again with the picture.
printf 'hello' >"$work/notimage.png"
printf '\x89PNG\r\n\x1a\nnot really a picture' >"$work/broken.png"
start
type_line "/image $work/notimage.png"
wait_for "notimage.png was not attached" "unsupported format"
absent "attached: ▣ notimage.png" "a file that is not a picture was attached"
type_line "/image '$pic'"
wait_for "Attached orchard picture.png (PNG)"
type_line "/image $work/broken.png"
wait_for "attached: ▣ orchard picture.png  ▣ broken.png"
type_line "Look at these"
wait_for "The message was not sent" "broken.png was dropped"
wait_for "attached: ▣ orchard picture.png  (sent with the next message)" "› Look at these"
absent "▣ broken.png" "the file the engine refused is still attached"
key Enter
wait_for "▣ orchard picture.png · " "24×16"
wait_re "○ [0-9.]+ tok/s"
absent "attached:" "the attachment queue was not emptied by sending"
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
start_cmd "$bin --demo"
wait_for "attached to unix:"
type_line "$prompt"
wait_for "$prompt" "tok/s"
sleep 1
absent "tokens ·" "the reply ended before the screen could be dropped mid-reply"
# A dropped SSH connection: the terminal goes away (SIGHUP).
tm kill-session -t "$session"
sleep 0.5
start_cmd "$bin --attach"
wait_for "attached to"
key C-Home
wait_for "$prompt"
key C-End
# The reply that went on while no screen was attached ends here.
wait_for "tokens ·"
grep -qE '"finishReason":"(eos|cap|contextFull)"' "$XDG_DATA_HOME/orchard/metrics.jsonl" ||
	fail "the reply did not finish on the server (metrics.jsonl)"
# /image on the attached screen: it sends the file's bytes with the
# message; the chip (with the picture's pixels, which only the server's
# decoder knows) comes back with the turn, and the turn ends on the server.
turns=$(wc -l <"$XDG_DATA_HOME/orchard/metrics.jsonl")
type_line "/image '$pic'"
wait_for "attached: ▣ orchard picture.png"
type_line "And in this picture?"
wait_for "And in this picture?" "▣ orchard picture.png · " "24×16"
deadline=$((SECONDS + timeout_s))
until [ "$(wc -l <"$XDG_DATA_HOME/orchard/metrics.jsonl")" -gt "$turns" ]; do
	[ $SECONDS -ge $deadline ] && fail "the turn with a picture did not finish on the server"
	sleep 0.2
done
absent "attached:" "the attachment queue was not emptied by sending"

echo "tui-e2e: an API request on the attached screen; the server restarted under it"
port=$(sed -n 's/.*listening on  http:\/\/127\.0\.0\.1:\([0-9]*\).*/\1/p' "$work/serve.log" | head -1)
[ -n "$port" ] || fail "no port in the banner of orchard serve"
wait_re "○ [0-9.]+ tok/s"
turns=$(wc -l <"$XDG_DATA_HOME/orchard/metrics.jsonl")
curl -sN "http://127.0.0.1:$port/v1/chat/completions" -H 'Content-Type: application/json' \
	-d '{"model": "orchard", "stream": true, "max_tokens": 400, "messages": [{"role": "user", "content": "Write at length about pears"}]}' \
	>"$work/api.out" 2>&1 &
curl_pid=$!
wait_for "busy: API · /v1/chat/completions"
type_line "Are you free now?"
wait_for "queued · 1st in line" "waits its turn"
wait "$curl_pid" || fail "the API request failed: $(tail -c 300 "$work/api.out")"
grep -q '"finish_reason":"length"' "$work/api.out" || fail "the API request did not run to its token cap"
wait_for "Are you free now?"
deadline=$((SECONDS + timeout_s))
until [ "$(wc -l <"$XDG_DATA_HOME/orchard/metrics.jsonl")" -gt $((turns + 1)) ]; do
	[ $SECONDS -ge $deadline ] && fail "the queued message's turn did not finish on the server"
	sleep 0.2
done
wait_re "○ [0-9.]+ tok/s"
# The server goes away (it autosaves) and comes back with its conversation.
kill -TERM "$serve_pid"
wait "$serve_pid" || fail "orchard serve exited with status $? on SIGTERM"
serve_pid=""
wait_for "server went away · reconnecting"
wait_for "Are you free now?"
type_line "/clear"
wait_for "not connected"
"$bin" serve --demo --continue --listen "127.0.0.1:$port" >"$work/serve2.log" 2>&1 &
serve_pid=$!
wait_for "Reconnected to unix:"
wait_for "Are you free now?"
absent "reconnecting" "the status bar still says it is reconnecting"
# The status bar shows the context the server's conversation fills.
wait_re "│ ctx [1-9][0-9,]*/"
quit
kill -TERM "$serve_pid"
wait "$serve_pid" || fail "orchard serve exited with status $? on SIGTERM"
serve_pid=""
[ -d "$XDG_DATA_HOME/orchard/checkpoints/_autosave" ] || fail "orchard serve did not autosave the conversation"

echo "tui-e2e: a tool call: the card, y, the result, the answer"
go build -o "$work/mcp-weather" ./internal/mcpweather/cmd/mcp-weather || { echo "tui-e2e: build of the MCP server failed" >&2; exit 2; }
mkdir -p "$XDG_CONFIG_HOME/orchard"
printf '[mcp.servers.weather]\ncommand = "%s"\n' "$work/mcp-weather" >"$XDG_CONFIG_HOME/orchard/config.toml"
start --script scripts/testdata/tools-script.json
type_line "What is the weather in Paris?"
wait_for "⚙ weather.get_weather" 'Run weather.get_weather {"city":"Paris"}?' "a always"
absent "<|tool_call>" "the call's markup is on the screen"
key y
wait_for "sunny, 15 °C in Paris" "It is sunny in Paris."
type_line "/tools"
wait_for "[x] get_weather" "context tokens"
key Down
key Space
wait_for "[ ] get_weather" "0 declared"
key Escape
quit
rm "$XDG_CONFIG_HOME/orchard/config.toml"

echo "tui-e2e: ok"
