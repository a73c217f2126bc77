package server

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"net/http"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/orchard-llm/orchard/internal/testmedia"
)

// paddedPNG is a small picture of exactly size bytes: its pixels, and
// padding in a private ancillary chunk, which decoders skip. A file at
// the size limit that decodes to few pixels: it measures what the server
// holds for a request, not what decoding a large picture takes (media's
// budget).
func paddedPNG(size int) []byte {
	p := testmedia.PNG(1, 32, 24)
	pad := size - len(p) - 12
	const ihdrEnd = 8 + 25
	chunk := make([]byte, 12+pad)
	binary.BigEndian.PutUint32(chunk, uint32(pad))
	copy(chunk[4:], "orPd")
	binary.BigEndian.PutUint32(chunk[8+pad:], crc32.ChecksumIEEE(chunk[4:8+pad]))
	out := append(append(append([]byte{}, p[:ihdrEnd]...), chunk...), p[ihdrEnd:]...)
	return out
}

// imageRequest is a chat completion carrying pictures (data URLs) and a
// question.
func imageRequest(pics ...[]byte) []byte {
	var b bytes.Buffer
	b.WriteString(`{"model": "orchard", "max_tokens": 2, "messages": [{"role": "user", "content": [`)
	for _, p := range pics {
		b.WriteString(`{"type": "image_url", "image_url": {"url": "data:image/png;base64,`)
		b.WriteString(base64.StdEncoding.EncodeToString(p))
		b.WriteString(`"}}, `)
	}
	b.WriteString(`{"type": "text", "text": "What is in these pictures?"}]}]}`)
	return b.Bytes()
}

// heapPeak samples the live heap every millisecond until stopped.
type heapPeak struct {
	stop chan struct{}
	done chan struct{}
	peak atomic.Uint64
}

func watchHeap() *heapPeak {
	h := &heapPeak{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(h.done)
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		for {
			metrics.Read(s)
			if v := s[0].Value.Uint64(); v > h.peak.Load() {
				h.peak.Store(v)
			}
			select {
			case <-h.stop:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	return h
}

func (h *heapPeak) end() uint64 {
	close(h.stop)
	<-h.done
	return h.peak.Load()
}

// post sends a body once: the client may not send it again on a broken
// connection (which would count its memory twice).
func post(t testing.TB, url string, body []byte) (int, string) {
	t.Helper()
	req, err := http.NewRequest("POST", url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.GetBody = nil
	return postJSON(t, req)
}

// postJSON sends req with a JSON body and returns the answer's status
// and body.
func postJSON(t testing.TB, req *http.Request) (int, string) {
	t.Helper()
	req.Header.Set("Content-Type", "application/json")
	resp, err := httpClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(raw)
}

// TestRequestMemory: a request at the documented limits — two pictures of
// the largest size (32 MiB each, decoded) in one body — is answered, and
// everything the process allocates while it is read, decoded and answered
// stays under 256 MiB (the allocations are an upper bound of what it held
// at once). Before, one 30 MiB picture made the server allocate 274 MiB:
// the body read whole with growth, then four more copies of the picture.
func TestRequestMemory(t *testing.T) {
	limit, target := int64(DefaultMaxMediaBytes), uint64(256<<20)
	if raceEnabled {
		limit, target = limit/4, target/4 // the same limits, scaled
	}
	ts := startServer(t, serverOpts{maxMedia: limit})
	pic := paddedPNG(int(limit))
	body := imageRequest(pic, pic)
	if int64(len(body)) > ts.maxBody() {
		t.Fatalf("the request (%d bytes) is over the body limit %d", len(body), ts.maxBody())
	}
	pic = nil
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	peak := watchHeap()
	status, answer := post(t, ts.url+"/v1/chat/completions", body)
	live := peak.end()
	runtime.ReadMemStats(&after)
	if status != 200 {
		t.Fatalf("%d: %.300s", status, answer)
	}
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("a %.1f MiB body (two %.0f MiB pictures): %.1f MiB allocated while it was answered; live heap %.1f MiB before, at most %.1f MiB during (sampled)",
		mib(len(body)), mib(limit), mib(alloc), mib(before.HeapAlloc), mib(live))
	if alloc > target {
		t.Fatalf("the request allocated %.1f MiB, over the %.0f MiB target", mib(alloc), mib(target))
	}
	if ts.budget.inUse() != 0 {
		t.Fatalf("%d bytes of the bodies' budget still held", ts.budget.inUse())
	}
}

func mib[T int | int64 | uint64](n T) float64 { return float64(n) / (1 << 20) }

// TestBodiesBudget: bodies held at once stay within the budget: while one
// request holds its place, another that does not fit is refused with 503,
// Retry-After and a sentence, without its body being read; one that could
// never fit is 413; a chat turn holds its files until it ends; the budget
// is all given back.
func TestBodiesBudget(t *testing.T) {
	ts := startServer(t, serverOpts{delay: 20 * time.Millisecond, maxMedia: 1 << 20, maxBuffered: 5 << 19})
	small := imageRequest(paddedPNG(5 << 17)) // 0.83 MiB, counted 1.7 MiB of the 2.5
	done := make(chan int, 1)
	go func() {
		st, _ := post(t, ts.url+"/v1/chat/completions", bytes.Replace(small, []byte(`"max_tokens": 2`), []byte(`"max_tokens": 30`), 1))
		done <- st
	}()
	for ts.budget.inUse() < int64(2*len(small)) {
		time.Sleep(time.Millisecond)
	}
	resp, err := httpClient.Post(ts.url+"/v1/chat/completions", "application/json", bytes.NewReader(small))
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" || !strings.Contains(string(raw), "request bodies") {
		t.Fatalf("a body that does not fit now: %d %q", resp.StatusCode, raw)
	}
	if st := <-done; st != 200 {
		t.Fatalf("the first request: %d", st)
	}
	if st, raw := post(t, ts.url+"/v1/chat/completions", small); st != 200 {
		t.Fatalf("once the first was answered: %d %.200s", st, raw)
	}
	big := imageRequest(paddedPNG(1<<20), paddedPNG(1<<20)) // 2.7 MiB, counted 5.3 MiB
	if st, raw := post(t, ts.url+"/v1/chat/completions", big); st != 413 || !strings.Contains(raw, "request_too_large") {
		t.Fatalf("a body that can never fit: %d %.200s", st, raw)
	}

	// A chat message's files are held until its turn ends.
	if st, e := callCommand(t, ts, "PUT", "/orchard/v1/settings", `{"max_tokens": 8}`); st != 200 {
		t.Fatalf("settings: %d %+v", st, e)
	}
	pic := base64.StdEncoding.EncodeToString(paddedPNG(1 << 19))
	msg := fmt.Sprintf(`{"text": "look", "media": [{"kind": "image", "name": "p.png", "data": %q}]}`, pic)
	if st, raw := post(t, ts.url+"/orchard/v1/session/messages", []byte(msg)); st != 202 {
		t.Fatalf("chat message: %d %s", st, raw)
	}
	if held := ts.budget.inUse(); held < int64(2*len(msg)) {
		t.Errorf("the chat turn holds %d bytes of the budget, want its body's %d twice", held, len(msg))
	}
	waitIdle(t, ts)
	for deadline := time.Now().Add(5 * time.Second); ts.budget.inUse() != 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d bytes of the budget still held after everything ended", ts.budget.inUse())
		}
	}
}

// TestManyLargeBodies: sixteen clients each sending a body at the limit
// at once (the 16 × 1 GB, scaled down: 4 MiB files, a 24 MiB
// budget; a quarter under the race detector) are answered or refused
// with 503 — never more held than the budget — and the live heap stays
// near the budget.
func TestManyLargeBodies(t *testing.T) {
	file, budget := 4<<20, int64(24<<20)
	if raceEnabled {
		file, budget = file/4, budget/4
	}
	ts := startServer(t, serverOpts{maxMedia: int64(file), maxBuffered: budget})
	body := imageRequest(paddedPNG(file), paddedPNG(file))
	if int64(len(body)) > ts.maxBody() {
		t.Fatalf("the request (%d bytes) is over the body limit %d", len(body), ts.maxBody())
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	peak := watchHeap()
	var maxHeld atomic.Int64
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			if n := ts.budget.inUse(); n > maxHeld.Load() {
				maxHeld.Store(n)
			}
			time.Sleep(100 * time.Microsecond)
		}
	}()
	var wg sync.WaitGroup
	var mu sync.Mutex
	statuses := map[int]int{}
	for range 16 {
		wg.Go(func() {
			st, _ := post(t, ts.url+"/v1/chat/completions", body)
			mu.Lock()
			statuses[st]++
			mu.Unlock()
		})
	}
	wg.Wait()
	close(stop)
	live := peak.end()
	t.Logf("16 bodies of %.1f MiB at once: %v; at most %.1f MiB held of the %.0f MiB budget; live heap %.1f MiB before, at most %.1f MiB during (sampled)",
		mib(len(body)), statuses, mib(maxHeld.Load()), mib(budget), mib(ms.HeapAlloc), mib(live))
	for st, n := range statuses {
		if st != 200 && st != 503 {
			t.Errorf("%d requests answered %d", n, st)
		}
	}
	if statuses[200] == 0 || statuses[503] == 0 {
		t.Errorf("want some answered and some refused: %v", statuses)
	}
	if maxHeld.Load() > budget {
		t.Errorf("%d bytes held, over the budget", maxHeld.Load())
	}
	if ts.budget.inUse() != 0 {
		t.Errorf("%d bytes of the budget still held", ts.budget.inUse())
	}
}

// TestLongTextRefusedBeforeTokenizing: a message far longer than the
// context can hold is refused as context_length_exceeded by its length,
// before BPE runs on it (a 16 MB message held the engine 12 s, a 30 MB
// one ran it out of memory): at once, allocating little beyond the body.
func TestLongTextRefusedBeforeTokenizing(t *testing.T) {
	size := 20 << 20
	if raceEnabled {
		size /= 4
	}
	ts := startServer(t, serverOpts{})
	word := strings.Repeat("a", size) // one word: BPE's worst case
	for _, tc := range []struct{ path, body string }{
		{"/v1/chat/completions", `{"model": "orchard", "messages": [{"role": "user", "content": "` + word + `"}]}`},
		{"/api/chat", `{"model": "orchard", "stream": false, "messages": [{"role": "user", "content": "` + word + `"}]}`},
		{"/orchard/v1/session/messages", `{"text": "` + word + `"}`},
	} {
		body := []byte(tc.body)
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		t0 := time.Now()
		status, answer := post(t, ts.url+tc.path, body)
		took := time.Since(t0)
		runtime.ReadMemStats(&after)
		alloc := after.TotalAlloc - before.TotalAlloc
		t.Logf("%s: %.0f MiB of text refused in %v, %.1f MiB allocated", tc.path, mib(size), took.Round(time.Millisecond), mib(alloc))
		if status != 400 || !strings.Contains(answer, "refused before tokenizing") {
			t.Errorf("%s: %d %.300s", tc.path, status, answer)
		}
		if alloc > uint64(5*len(body)/2) { // the body, and the text read from it

			t.Errorf("%s: %.1f MiB allocated for a %.1f MiB body", tc.path, mib(alloc), mib(len(tc.body)))
		}
	}
}

// TestChunkedBody: a body sent in chunks (no Content-Length) is read as
// it grows: within the limit it is answered, past it refused with 413.
func TestChunkedBody(t *testing.T) {
	ts := startServer(t, serverOpts{maxMedia: 1 << 20})
	send := func(body []byte) (int, string) {
		req, _ := http.NewRequest("POST", ts.url+"/v1/chat/completions", io.MultiReader(bytes.NewReader(body)))
		status, raw := postJSON(t, req)
		if req.ContentLength != 0 {
			t.Fatalf("the body was sent with a length")
		}
		return status, raw
	}
	if st, raw := send(imageRequest(paddedPNG(1<<20), paddedPNG(1<<20))); st != 200 {
		t.Fatalf("within the limit: %d %.200s", st, raw)
	}
	over := imageRequest(paddedPNG(1<<20), paddedPNG(1<<20), paddedPNG(1<<20))
	if int64(len(over)) <= ts.maxBody() {
		t.Fatalf("%d bytes is not over the limit %d", len(over), ts.maxBody())
	}
	if st, raw := send(over); st != 413 || !strings.Contains(raw, "request_too_large") {
		t.Fatalf("over the limit: %d %.200s", st, raw)
	}
	if ts.budget.inUse() != 0 {
		t.Fatalf("%d bytes of the budget still held", ts.budget.inUse())
	}
}
