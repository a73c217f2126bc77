package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestInspectDeep: `bundle inspect --deep` loads every model and prints
// what each declares, as text and as JSON; `selftest` starts with the
// same contract summary.
func TestInspectDeep(t *testing.T) {
	out := filepath.Join(t.TempDir(), "b")
	if code, _, stderr := runCmd(t, "bundle", "synth", "--family", "v2", "--preset", "tiny", "--seed", "4", "--out", out); code != 0 {
		t.Fatalf("synth: %d %s", code, stderr)
	}
	code, text, stderr := runCmd(t, "bundle", "inspect", "--deep", out)
	if code != 0 {
		t.Fatalf("inspect --deep: %d %s", code, stderr)
	}
	for _, want := range []string{"contract read through reference", "lmhead (lmhead.mlmodelc)", "state k_cache_0", "range [1…16 32]"} {
		if !strings.Contains(text, want) {
			t.Errorf("inspect --deep lacks %q:\n%s", want, text)
		}
	}
	code, js, stderr := runCmd(t, "bundle", "inspect", "--deep", "--json", out)
	var rep struct {
		Family   string
		Contract struct {
			Models []struct {
				Name   string
				Loaded []struct {
					Name           string
					MetadataStatus string `json:"metadata_status"`
					Inputs         []struct {
						Name   string
						Ranges [][2]int
					}
				}
			}
		}
	}
	if code != 0 || json.Unmarshal([]byte(js), &rep) != nil || rep.Family != "v2" || len(rep.Contract.Models) != 6 || rep.Contract.Models[5].Name != "vision_fp16" {
		t.Fatalf("inspect --deep --json: %d %s\n%s", code, stderr, js)
	}
	head := rep.Contract.Models[4]
	if head.Name != "lmhead" || head.Loaded[0].MetadataStatus != "agrees" || head.Loaded[0].Inputs[0].Ranges == nil {
		t.Errorf("head: %+v", head)
	}
	if code, _, _ := runCmd(t, "bundle", "inspect", "--deep", "--compute", "tpu", out); code != 2 {
		t.Errorf("--compute tpu: exit %d, want 2", code)
	}
	code, text, stderr = runCmd(t, "selftest", "--model", out, "--steps", "4")
	if code != 0 || !strings.Contains(text, "contract (reference") || !strings.Contains(text, "chunk_0_3") || !strings.Contains(text, "v2 RoPE rows equal libm") {
		t.Errorf("selftest does not start with the contract: %s\n%s", stderr, text)
	}
}
