package server

import (
	"crypto/sha256"
	"crypto/subtle"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path"
	"strings"
)

// The guard stands between the TCP listener and the endpoints. With the
// default — loopback, no key — anything that can make the user's browser
// send a request could otherwise drive the server: a page's cross-site
// form post (a "simple" request, sent without asking first) or a page
// whose host name an attacker re-points at 127.0.0.1 (DNS rebinding),
// which then reads the conversation and the history as its own origin.
// So on TCP:
//   - the Host header must name this machine: a loopback name or address,
//     its own name, the address the connection came to, the listen
//     address, or one of server.allowed_hosts (else 403);
//   - a browser's Origin must be one of server.origins (else 403); a
//     request without one (curl, the SDKs) passes, unless the browser
//     says it is cross-site (Sec-Fetch-Site: an <img>, a <script>);
//   - a body must be JSON, or multipart where a form is the API (else
//     415): a browser sends no other type cross-site without asking;
//   - only allowed origins get CORS headers and preflights (204).
// The unix socket is left alone: its mode limits it to its owner, and no
// browser reaches it.

// GuardOptions say which names and browser origins may reach the server
// besides this machine's own.
type GuardOptions struct {
	// Listen is the TCP address served; its host may be named in the
	// Host header.
	Listen string
	// AllowedHosts are more names the Host header may carry: a name,
	// "*.example.com", or "*" for any.
	AllowedHosts []string
	// Origins are the browser origins allowed: "http://localhost:3000",
	// "https://*.example.com", or "*" for any. None by default.
	Origins []string
}

type guard struct {
	listenHost string
	hostnames  []string // this machine's name, with and without .local
	hosts      []string
	origins    []string
}

func newGuard(o GuardOptions) *guard {
	g := &guard{}
	if h, _, err := net.SplitHostPort(o.Listen); err == nil {
		g.listenHost = normalHost(h)
	}
	if name, err := os.Hostname(); err == nil && name != "" {
		name = normalHost(name)
		base := strings.TrimSuffix(name, ".local")
		g.hostnames = []string{base, base + ".local"}
	}
	for _, h := range o.AllowedHosts {
		g.hosts = append(g.hosts, normalHost(h))
	}
	for _, p := range o.Origins {
		g.origins = append(g.origins, strings.TrimSuffix(strings.ToLower(p), "/"))
	}
	return g
}

// normalHost lower-cases a host and drops its port, brackets and final dot.
func normalHost(h string) string {
	if host, _, err := net.SplitHostPort(h); err == nil {
		h = host
	}
	return strings.TrimSuffix(strings.ToLower(strings.Trim(h, "[]")), ".")
}

// hostOK reports whether the Host header names this machine.
func (g *guard) hostOK(r *http.Request) bool {
	host := normalHost(r.Host)
	switch {
	case host == "": // HTTP/1.0 without Host: no browser sends that
		return true
	case host == "localhost" || strings.HasSuffix(host, ".localhost"), host == g.listenHost:
		return true
	}
	for _, n := range g.hostnames {
		if host == n {
			return true
		}
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		// An address is no rebinding: a page at an address was served
		// by whatever listens there. Loopback and the address the
		// connection came to are this machine's.
		if ip = ip.Unmap(); ip.IsLoopback() {
			return true
		}
		if la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
			if ap, err := netip.ParseAddrPort(la.String()); err == nil && ap.Addr().Unmap() == ip {
				return true
			}
		}
	}
	for _, p := range g.hosts {
		if p == "*" || p == host || strings.HasPrefix(p, "*.") && strings.HasSuffix(host, p[1:]) {
			return true
		}
	}
	return false
}

// originOK reports whether a browser origin is allowed.
func (g *guard) originOK(origin string) bool {
	o := strings.ToLower(origin)
	for _, p := range g.origins {
		if p == "*" || p == o {
			return true
		}
		if strings.Contains(p, "*") {
			if ok, _ := path.Match(p, o); ok {
				return true
			}
		}
	}
	return false
}

// corsExposed are the response headers a browser page may read.
const corsExposed = "X-Orchard-Ignored, Retry-After, WWW-Authenticate"

const corsMethods = "GET, HEAD, POST, PUT, DELETE, OPTIONS"

// guard wraps the endpoints in the checks above.
func (s *Server) guard(next http.Handler) http.Handler {
	g := newGuard(s.o.Guard)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Context().Value(unixConnKey{}) != nil {
			next.ServeHTTP(w, r)
			return
		}
		if !g.hostOK(r) {
			guardError(w, r, http.StatusForbidden, "host_not_allowed",
				"requests addressed to "+quoteHeader(r.Host)+" are refused: only this machine's names are served (a page whose name points here is refused); allow a name with server.allowed_hosts")
			return
		}
		origin := r.Header.Get("Origin")
		switch {
		case origin != "" && !g.originOK(origin):
			guardError(w, r, http.StatusForbidden, "origin_not_allowed",
				"requests from the web page "+quoteHeader(origin)+" are refused; allow its origin with server.origins or ORCHARD_ORIGINS")
			return
		case origin != "":
			h := w.Header()
			h.Set("Access-Control-Allow-Origin", origin)
			h.Add("Vary", "Origin")
			h.Set("Access-Control-Expose-Headers", corsExposed)
			if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
				h.Set("Access-Control-Allow-Methods", corsMethods)
				if rh := r.Header.Get("Access-Control-Request-Headers"); rh != "" {
					h.Set("Access-Control-Allow-Headers", rh)
				}
				if r.Header.Get("Access-Control-Request-Private-Network") == "true" {
					h.Set("Access-Control-Allow-Private-Network", "true")
				}
				h.Set("Access-Control-Max-Age", "600")
				w.WriteHeader(http.StatusNoContent)
				return
			}
		case crossSite(r):
			guardError(w, r, http.StatusForbidden, "origin_not_allowed",
				"a web page's request without an Origin is refused (Sec-Fetch-Site: "+quoteHeader(r.Header.Get("Sec-Fetch-Site"))+")")
			return
		}
		if r.Method == http.MethodOptions {
			w.Header().Set("Allow", corsMethods)
			w.WriteHeader(http.StatusNoContent)
			return
		}
		if msg := bodyTypeRefusal(r); msg != "" {
			guardError(w, r, http.StatusUnsupportedMediaType, "unsupported_media_type", msg)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// crossSite reports a browser's request from another site that carries
// no Origin (an <img>, a <script>, a no-cors fetch). Following a link is
// let through: the page that had it cannot read the answer.
func crossSite(r *http.Request) bool {
	switch r.Header.Get("Sec-Fetch-Site") {
	case "cross-site", "same-site":
		nav := r.Header.Get("Sec-Fetch-Mode") == "navigate"
		return !(nav && (r.Method == http.MethodGet || r.Method == http.MethodHead))
	}
	return false
}

// formPaths take a multipart form as their API (OpenAI's transcriptions).
func formPath(p string) bool {
	return p == "/v1/audio/transcriptions" || p == "/audio/transcriptions"
}

// bodyTypeRefusal says why a request's body type is refused, or "". A
// request that carries a body, or says what type it has, must be JSON.
func bodyTypeRefusal(r *http.Request) string {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return ""
	}
	ct := r.Header.Get("Content-Type")
	if ct == "" && r.ContentLength == 0 {
		return "" // curl -X POST .../cancel
	}
	mt, _, _ := mime.ParseMediaType(ct)
	switch {
	case mt == "application/json":
		return ""
	case mt == "multipart/form-data" && formPath(r.URL.Path):
		return ""
	case formPath(r.URL.Path):
		return "the body must be a multipart form (Content-Type: multipart/form-data), not " + quoteHeader(ct)
	}
	return "the body must be JSON: send Content-Type: application/json (curl: -H 'Content-Type: application/json'), not " + quoteHeader(ct)
}

// quoteHeader quotes a header value for a message, shortened.
func quoteHeader(v string) string {
	if v == "" {
		return `""`
	}
	if len(v) > 100 {
		v = v[:100] + "…"
	}
	return `"` + strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f || r == '"' {
			return '?'
		}
		return r
	}, v) + `"`
}

// guardError refuses a request in the shape of the API it was made to:
// ollama's on /api/, OpenAI's elsewhere.
func guardError(w http.ResponseWriter, r *http.Request, status int, code, msg string) {
	if strings.HasPrefix(r.URL.Path, "/api/") {
		ollamaError(w, status, msg)
		return
	}
	apiError(w, status, "invalid_request_error", code, "", msg)
}

// keyOK reports whether a request may use the server: no key is set, it
// came through the unix socket (whose mode already limits it to its
// owner), or it carries the key — "Authorization: Bearer KEY" (the
// scheme in any case) or, as Anthropic's clients send it, "x-api-key".
func (s *Server) keyOK(r *http.Request) bool {
	if s.o.APIKey == "" || r.Context().Value(unixConnKey{}) != nil {
		return true
	}
	got := requestKey(r)
	// Hashes compare in constant time whatever the lengths.
	a, b := sha256.Sum256([]byte(got)), sha256.Sum256([]byte(s.o.APIKey))
	return got != "" && subtle.ConstantTimeCompare(a[:], b[:]) == 1
}

func requestKey(r *http.Request) string {
	scheme, tok, _ := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
	if strings.EqualFold(scheme, "Bearer") {
		return strings.TrimSpace(tok)
	}
	return strings.TrimSpace(r.Header.Get("X-Api-Key"))
}

// publicPath answers without the key: /health (status and version only)
// and / (that the server runs), for clients checking it is there.
func publicPath(r *http.Request) bool {
	return (r.Method == http.MethodGet || r.Method == http.MethodHead) && (r.URL.Path == "/health" || r.URL.Path == "/")
}

// authorize checks the API key on every request but the public ones.
func (s *Server) authorize(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if publicPath(r) || s.keyOK(r) {
			next.ServeHTTP(w, r)
			return
		}
		w.Header().Set("WWW-Authenticate", `Bearer realm="orchard"`)
		// A client without the key gets no connection to try again on
		// (nor to hold open).
		w.Header().Set("Connection", "close")
		msg := "missing API key: send Authorization: Bearer KEY (the key orchard serve was started with)"
		if requestKey(r) != "" {
			msg = "wrong API key"
		}
		guardError(w, r, http.StatusUnauthorized, "invalid_api_key", msg)
	})
}

// router is a ServeMux that remembers its patterns, so that a test can
// go through every route (TestEveryRouteNeedsTheKey).
type router struct {
	*http.ServeMux
	patterns []string
}

func newRouter() *router { return &router{ServeMux: http.NewServeMux()} }

func (rt *router) HandleFunc(pattern string, h func(http.ResponseWriter, *http.Request)) {
	rt.patterns = append(rt.patterns, pattern)
	rt.ServeMux.HandleFunc(pattern, h)
}
