package server

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestMaxReplyTokens: a request that sets no cap gets the server's
// (serve --demo: 256); one that sets its own keeps it.
func TestMaxReplyTokens(t *testing.T) {
	ts := startServer(t, serverOpts{replyCap: 5})
	for _, tc := range []struct{ maxTokens, want int }{{0, 5}, {7, 7}} {
		resp, err := http.Post(ts.url+"/v1/chat/completions", "application/json", strings.NewReader(chatBody(ts.info.Name, "tell me a long story", tc.maxTokens, false)))
		if err != nil {
			t.Fatal(err)
		}
		var c chatCompletion
		err = json.NewDecoder(resp.Body).Decode(&c)
		resp.Body.Close()
		if err != nil || c.Usage == nil || len(c.Choices) != 1 {
			t.Fatalf("max_tokens %d: %+v %v", tc.maxTokens, c, err)
		}
		if c.Usage.CompletionTokens != tc.want || *c.Choices[0].FinishReason != "length" {
			t.Errorf("max_tokens %d: %d tokens, finish %s; want %d, length", tc.maxTokens, c.Usage.CompletionTokens, *c.Choices[0].FinishReason, tc.want)
		}
	}
}
