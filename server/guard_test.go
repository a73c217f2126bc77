package server

import (
	"encoding/json"
	"net"
	"os"
	"regexp"
	"strings"
	"testing"
)

// chatMessages is how many messages the chat's conversation holds.
func chatMessages(t *testing.T, ts *testServer) int {
	t.Helper()
	_, _, body := call(t, nil, "GET", ts.url+"/orchard/v1/session", "", nil, "")
	var s struct {
		Messages []json.RawMessage `json:"messages"`
	}
	if err := json.Unmarshal([]byte(body), &s); err != nil {
		t.Fatalf("session: %v: %s", err, body)
	}
	return len(s.Messages)
}

// TestCrossSiteFormPost: a page in the user's browser cannot drive the
// server. A forged cross-site form post (text/plain, sent by a browser
// without asking first) to the session is refused for its origin, and
// refused again for its type when the Origin is missing; the chat's
// conversation is untouched. Without the guard the message was taken
// and /session/clear wiped the chat.
func TestCrossSiteFormPost(t *testing.T) {
	ts := startServer(t, serverOpts{})
	form := map[string]string{"Content-Type": "text/plain", "Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "no-cors"}
	for _, path := range []string{"/orchard/v1/session/messages", "/orchard/v1/session/clear", "/orchard/v1/checkpoints"} {
		status, h, body := call(t, nil, "POST", ts.url+path, "", form, `{"text": "injected", "name": "x"}`)
		if status != 403 || !strings.Contains(body, "origin_not_allowed") || h.Get("Access-Control-Allow-Origin") != "" {
			t.Fatalf("%s, cross-site form: HTTP %d %v %s", path, status, h, body)
		}
		status, _, body = call(t, nil, "POST", ts.url+path, "", map[string]string{"Content-Type": "text/plain"}, `{"text": "injected", "name": "x"}`)
		if status != 415 || !strings.Contains(body, "application/json") {
			t.Fatalf("%s, text/plain without an origin: HTTP %d %s", path, status, body)
		}
		status, _, body = call(t, nil, "POST", ts.url+path, "", map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, `text=injected`)
		if status != 415 {
			t.Fatalf("%s, a urlencoded form: HTTP %d %s", path, status, body)
		}
	}
	// A cross-site <img> or <script> sends no Origin; its Sec-Fetch-Site
	// gives it away. Following a link is let through.
	status, _, body := call(t, nil, "GET", ts.url+"/orchard/v1/session", "", map[string]string{"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "no-cors"}, "")
	if status != 403 {
		t.Fatalf("cross-site no-cors read: HTTP %d %s", status, body)
	}
	if status, _, body := call(t, nil, "GET", ts.url+"/health", "", map[string]string{"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate"}, ""); status != 200 {
		t.Fatalf("a followed link: HTTP %d %s", status, body)
	}
	if n := chatMessages(t, ts); n != 0 {
		t.Fatalf("the chat holds %d messages after the forged posts", n)
	}
	// What curl and the SDKs send passes: JSON (any charset), or nothing.
	if status, _, body := call(t, nil, "POST", ts.url+"/orchard/v1/session/cancel", "", nil, ""); status != 200 {
		t.Fatalf("an empty POST: HTTP %d %s", status, body)
	}
	if status, _, body := call(t, nil, "POST", ts.url+"/v1/chat/completions", "", map[string]string{"Content-Type": "application/json; charset=utf-8"},
		`{"model": "orchard", "max_tokens": 2, "messages": [{"role": "user", "content": "hi"}]}`); status != 200 {
		t.Fatalf("JSON with a charset: HTTP %d %s", status, body)
	}
	// The transcription form is multipart; elsewhere it is refused.
	if status, _, _ := call(t, nil, "POST", ts.url+"/v1/chat/completions", "", map[string]string{"Content-Type": "multipart/form-data; boundary=x"}, "--x--"); status != 415 {
		t.Fatalf("multipart to the chat: HTTP %d", status)
	}
	if status, _, _ := call(t, nil, "POST", ts.url+"/v1/audio/transcriptions", "", map[string]string{"Content-Type": "multipart/form-data; boundary=x"}, "--x--"); status == 415 {
		t.Fatal("multipart refused where a form is the API")
	}
}

// TestForeignHost: only this machine's names reach the server. A page
// whose name an attacker re-points at 127.0.0.1 (DNS rebinding) comes to
// a loopback address with its own name in Host: refused, in each API's
// error shape; loopback names and addresses, the machine's name and the
// allowed hosts pass; the unix socket is left alone.
func TestForeignHost(t *testing.T) {
	ts := startServer(t, serverOpts{guard: GuardOptions{AllowedHosts: []string{"mac.lan", "*.corp.example"}}})
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(ts.url, "http://"))
	for _, host := range []string{"evil.example", "rebind.attacker.example:" + port, "127.0.0.1.nip.io:" + port, "localhost.evil.example", "10.1.2.3:" + port, "corp.example"} {
		status, _, body := call(t, nil, "GET", ts.url+"/orchard/v1/session", host, nil, "")
		if status != 403 || !strings.Contains(body, "host_not_allowed") || strings.Contains(body, `"messages"`) {
			t.Errorf("Host %s: HTTP %d %s", host, status, body)
		}
		status, _, body = call(t, nil, "GET", ts.url+"/api/tags", host, nil, "")
		var e map[string]string
		if status != 403 || json.Unmarshal([]byte(body), &e) != nil || !strings.Contains(e["error"], "server.allowed_hosts") {
			t.Errorf("Host %s on /api/tags: HTTP %d %s, want ollama's error shape", host, status, body)
		}
	}
	allowed := []string{"127.0.0.1:" + port, "localhost:" + port, "LOCALHOST", "app.localhost:" + port, "[::1]:" + port, "127.0.0.2", "mac.lan:" + port, "Mac.LAN.", "a.corp.example"}
	if name, err := os.Hostname(); err == nil && name != "" {
		allowed = append(allowed, name+":"+port)
	}
	for _, host := range allowed {
		if status, _, body := call(t, nil, "GET", ts.url+"/orchard/v1/session", host, nil, ""); status != 200 {
			t.Errorf("Host %s: HTTP %d %s", host, status, body)
		}
	}
	uc := unixClient(ts.sock)
	if status, _, body := call(t, uc, "GET", "http://orchard/orchard/v1/session", "evil.example", map[string]string{"Origin": "https://evil.example"}, ""); status != 200 {
		t.Fatalf("the unix socket: HTTP %d %s", status, body)
	}
	// The listen address's name is this machine's.
	named := startServer(t, serverOpts{guard: GuardOptions{Listen: "orchard-box:11535"}})
	if status, _, body := call(t, nil, "GET", named.url+"/v1/models", "orchard-box:11535", nil, ""); status != 200 {
		t.Fatalf("the listen address's name: HTTP %d %s", status, body)
	}
}

// TestPreflight: an allowed origin gets CORS headers and its preflight
// (204, without the key, which browsers never send on a preflight); a
// foreign origin gets 403 and no CORS header.
func TestPreflight(t *testing.T) {
	ts := startServer(t, serverOpts{key: "s3cret", guard: GuardOptions{Origins: []string{"http://localhost:3000", "https://*.example.com"}}})
	pre := func(origin string) map[string]string {
		return map[string]string{"Origin": origin, "Access-Control-Request-Method": "POST",
			"Access-Control-Request-Headers": "authorization,content-type,x-stainless-os", "Access-Control-Request-Private-Network": "true"}
	}
	for _, origin := range []string{"http://localhost:3000", "https://app.example.com"} {
		status, h, body := call(t, nil, "OPTIONS", ts.url+"/v1/chat/completions", "", pre(origin), "")
		if status != 204 || h.Get("Access-Control-Allow-Origin") != origin || !strings.Contains(h.Get("Access-Control-Allow-Methods"), "POST") ||
			h.Get("Access-Control-Allow-Headers") != "authorization,content-type,x-stainless-os" || h.Get("Access-Control-Allow-Private-Network") != "true" {
			t.Fatalf("preflight from %s: HTTP %d %v %s", origin, status, h, body)
		}
	}
	for _, origin := range []string{"https://evil.example", "http://localhost:3001", "https://example.com.evil.example", "null"} {
		status, h, body := call(t, nil, "OPTIONS", ts.url+"/v1/chat/completions", "", pre(origin), "")
		if status != 403 || h.Get("Access-Control-Allow-Origin") != "" {
			t.Fatalf("preflight from %s: HTTP %d %v %s", origin, status, h, body)
		}
		status, h, _ = call(t, nil, "POST", ts.url+"/v1/chat/completions", "", map[string]string{"Origin": origin, "Content-Type": "application/json", "Authorization": "Bearer s3cret"},
			`{"model": "orchard", "max_tokens": 2, "messages": [{"role": "user", "content": "hi"}]}`)
		if status != 403 || h.Get("Access-Control-Allow-Origin") != "" {
			t.Fatalf("request from %s: HTTP %d %v", origin, status, h)
		}
	}
	// The request itself, from the allowed origin: CORS headers, the
	// ignored sampling readable by the page; a 401 is readable too.
	status, h, body := call(t, nil, "POST", ts.url+"/v1/chat/completions", "", map[string]string{"Origin": "http://localhost:3000", "Content-Type": "application/json", "Authorization": "Bearer s3cret"},
		`{"model": "orchard", "temperature": 1, "max_tokens": 2, "messages": [{"role": "user", "content": "hi"}]}`)
	if status != 200 || h.Get("Access-Control-Allow-Origin") != "http://localhost:3000" || !strings.Contains(h.Get("Access-Control-Expose-Headers"), IgnoredHeader) ||
		h.Get(IgnoredHeader) != "temperature" || !strings.Contains(h.Get("Vary"), "Origin") {
		t.Fatalf("request from the allowed origin: HTTP %d %v %s", status, h, body)
	}
	status, h, _ = call(t, nil, "GET", ts.url+"/v1/models", "", map[string]string{"Origin": "http://localhost:3000"}, "")
	if status != 401 || h.Get("Access-Control-Allow-Origin") != "http://localhost:3000" {
		t.Fatalf("401 to the allowed origin: HTTP %d %v", status, h)
	}
	// OPTIONS without an Origin is no preflight: the methods, no CORS.
	status, h, _ = call(t, nil, "OPTIONS", ts.url+"/v1/models", "", nil, "")
	if status != 204 || h.Get("Allow") == "" || h.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("OPTIONS: HTTP %d %v", status, h)
	}
}

// TestHealthAndKey: /health answers without the key, saying only that
// the server is up and its version; with the key (Bearer in any case, or
// x-api-key) it says everything.
func TestHealthAndKey(t *testing.T) {
	ts := startServer(t, serverOpts{key: "s3cret"})
	status, _, body := call(t, nil, "GET", ts.url+"/health", "", nil, "")
	var h map[string]any
	json.Unmarshal([]byte(body), &h)
	if status != 200 || h["status"] != "ok" || h["version"] != "v1.2.3-test" || len(h) != 2 {
		t.Fatalf("health without the key: HTTP %d %s", status, body)
	}
	for _, hdr := range []map[string]string{{"Authorization": "bearer s3cret"}, {"Authorization": "BEARER  s3cret "}, {"X-Api-Key": "s3cret"}} {
		status, _, body := call(t, nil, "GET", ts.url+"/health", "", hdr, "")
		if status != 200 || !strings.Contains(body, `"bundle_dir"`) || !strings.Contains(body, `"version":"v1.2.3-test"`) {
			t.Fatalf("health with %v: HTTP %d %s", hdr, status, body)
		}
		if status, _, body := call(t, nil, "GET", ts.url+"/orchard/v1/session", "", hdr, ""); status != 200 {
			t.Fatalf("session with %v: HTTP %d %s", hdr, status, body)
		}
	}
	for _, hdr := range []map[string]string{{"Authorization": "Basic s3cret"}, {"Authorization": "Bearer"}, {"Authorization": "Bearer s3cre"}, {"X-Api-Key": "nope"}} {
		if status, _, body := call(t, nil, "GET", ts.url+"/orchard/v1/session", "", hdr, ""); status != 401 {
			t.Fatalf("session with %v: HTTP %d %s", hdr, status, body)
		}
	}
}

// TestEveryRouteNeedsTheKey goes through every route the server
// registers: with a key set, each answers 401 without it, but /health
// (and / for clients checking the server runs).
func TestEveryRouteNeedsTheKey(t *testing.T) {
	ts := startServer(t, serverOpts{key: "s3cret"})
	if len(ts.routes) < 20 {
		t.Fatalf("only %d routes recorded", len(ts.routes))
	}
	for _, pattern := range ts.routes {
		method, path, ok := strings.Cut(pattern, " ")
		if !ok {
			method, path = "GET", pattern
		}
		path = pathVar.ReplaceAllString(path, "x")
		if path == "/" {
			path = "/no-such-endpoint"
		}
		status, _, body := call(t, nil, method, ts.url+path, "", map[string]string{"Content-Type": "application/json"}, "{}")
		public := path == "/health"
		if public && status != 200 || !public && (status != 401 || !strings.Contains(body, "API key")) {
			t.Errorf("%s without the key: HTTP %d %s", pattern, status, body)
		}
	}
}

// pathVar is a pattern's path variable, {name} or {rest...}.
var pathVar = regexp.MustCompile(`\{[^}]*\}`)
