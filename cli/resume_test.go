package cli

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"testing"
)

// TestResumeContinuesTheSavedReply is issue 20's regression: a reply cut
// at --max-tokens, saved, then resumed without a prompt goes on where it
// stopped — the last saved token is not emitted again — and the resumed
// run stops at the --max-tokens given on its own command line, not the
// checkpoint's. The bundle and prompt are the issue's: on them the reply
// holds a token that makes the next turn re-render rather than continue
// the history, the case that repeated the token.
func TestResumeContinuesTheSavedReply(t *testing.T) {
	isolate(t)
	dir := filepath.Join(t.TempDir(), "r1")
	if code, _, stderr := runCmd(t, "bundle", "synth", "--family", "r1", "--preset", "tiny", "--seed", "5", "--out", dir); code != 0 {
		t.Fatal(stderr)
	}
	const prompt = "Count slowly from one to twenty, one number per line, then stop."
	ids := func(args ...string) []int {
		t.Helper()
		code, out, stderr := runCmd(t, append([]string{"run", "--model", dir, "--json", "--spec", "off"}, args...)...)
		if code != 0 {
			t.Fatalf("%v: %d %s", args, code, stderr)
		}
		var res struct {
			ReplyIDs []int `json:"replyIds"`
		}
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatal(err)
		}
		return res.ReplyIDs
	}
	straight := ids("--prompt", prompt, "--max-tokens", "40")
	first := ids("--prompt", prompt, "--max-tokens", "20", "--save", "bar")
	if !slices.Equal(first, straight[:20]) {
		t.Fatalf("first 20: %v, the straight run: %v", first, straight[:20])
	}
	if got := ids("--resume", "bar", "--max-tokens", "20"); !slices.Equal(got, straight[20:]) {
		t.Errorf("resumed: %v, want %v (the straight run's next 20)", got, straight[20:])
	}
	if got := ids("--resume", "bar", "--max-tokens", "3"); !slices.Equal(got, straight[20:23]) {
		t.Errorf("resumed with --max-tokens 3: %v, want %v", got, straight[20:23])
	}
}
