package mailbox

import (
	"slices"
	"sync"
	"testing"
)

// sum merges consecutive positive values (as deltas merge); a negative
// value never merges, nor does anything into it.
func sum(last *int, next int) bool {
	if next < 0 || *last < 0 {
		return false
	}
	*last += next
	return true
}

func TestBox(t *testing.T) {
	for _, tc := range []struct {
		name     string
		limit    int
		merge    func(*int, int) bool
		push     []int
		close    bool
		want     []int
		refused  int // pushes that returned false
		wantOpen bool
	}{
		{name: "fifo", push: []int{1, 2, 3}, want: []int{1, 2, 3}, wantOpen: true},
		{name: "empty", want: nil, wantOpen: true},
		{name: "merge consecutive", merge: sum, push: []int{1, 2, -1, 3, 4, -2}, want: []int{3, -1, 7, -2}, wantOpen: true},
		{name: "limit gives up", limit: 2, push: []int{1, 2, 3, 4}, want: []int{1, 2}, refused: 2},
		{name: "merged values do not count", limit: 2, merge: sum, push: []int{1, 2, 3, -1, 4}, want: []int{6, -1}, refused: 1},
		{name: "close keeps what is queued", push: []int{1, 2}, close: true, want: []int{1, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := New(tc.limit, tc.merge)
			refused := 0
			for _, v := range tc.push {
				if !b.Push(v) {
					refused++
				}
			}
			if tc.close {
				b.Close()
				if b.Push(9) {
					t.Error("a push after Close was accepted")
				}
			}
			if refused != tc.refused {
				t.Errorf("refused %d pushes, want %d", refused, tc.refused)
			}
			got, open := b.Take()
			if !slices.Equal(got, tc.want) || open != tc.wantOpen {
				t.Errorf("Take = %v, open %v; want %v, open %v", got, open, tc.want, tc.wantOpen)
			}
			if again, _ := b.Take(); again != nil {
				t.Errorf("a second Take = %v, want nil", again)
			}
		})
	}
}

// TestNext: Next takes one value at a time in order; the values behind
// it go on merging; the box's room is reused.
func TestNext(t *testing.T) {
	b := New(0, sum)
	b.Push(1)
	b.Push(-1)
	b.Push(2)
	if v, ok, open := b.Next(); v != 1 || !ok || !open {
		t.Fatalf("Next = %d, %v, %v; want 1, true, true", v, ok, open)
	}
	b.Push(3) // merges into the queued 2
	var got []int
	for {
		v, ok, _ := b.Next()
		if !ok {
			break
		}
		got = append(got, v)
	}
	if want := []int{-1, 5}; !slices.Equal(got, want) {
		t.Fatalf("then %v, want %v", got, want)
	}
	b.Close()
	if _, ok, open := b.Next(); ok || open {
		t.Fatalf("Next on a closed empty box: ok %v, open %v", ok, open)
	}
}

// TestCloseAfterPush: a value pushed right before the box closes reaches
// a reader that takes once per wake, and that take says nothing more
// comes (a reader told "open" would wait for a wake that never comes).
func TestCloseAfterPush(t *testing.T) {
	b := New[int](0, nil)
	b.Push(1)
	b.Close()
	<-b.Wake()
	items, open := b.Take()
	if len(items) != 1 || open {
		t.Fatalf("Take: %v, open %v; want [1], closed", items, open)
	}
	select {
	case <-b.Wake():
		t.Fatal("a second wake for one push and a close")
	default:
	}
}

// TestConcurrent: producers on many goroutines, one reader waiting on
// Wake; every value arrives once, each producer's in its order (run it
// with -race).
func TestConcurrent(t *testing.T) {
	const producers, each = 8, 2000
	type item struct{ p, i int }
	for _, name := range []string{"Take", "Next"} {
		t.Run(name, func(t *testing.T) {
			b := New[item](0, nil)
			var wg sync.WaitGroup
			for p := range producers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range each {
						b.Push(item{p, i})
					}
				}()
			}
			go func() { wg.Wait(); b.Close() }()
			next := make([]int, producers)
			for {
				var got []item
				var open bool
				if name == "Take" {
					got, open = b.Take()
				} else {
					v, ok, o := b.Next()
					if ok {
						got = []item{v}
					}
					open = o
				}
				for _, it := range got {
					if it.i != next[it.p] {
						t.Fatalf("producer %d: got %d, want %d", it.p, it.i, next[it.p])
					}
					next[it.p]++
				}
				if !open && b.Len() == 0 {
					break
				}
				if len(got) == 0 {
					<-b.Wake()
				}
			}
			for p, n := range next {
				if n != each {
					t.Errorf("producer %d: %d values arrived, want %d", p, n, each)
				}
			}
		})
	}
}

// TestNextAllocatesNothing: a producer and a reader that keep pace reuse
// the box's room (the engine's event path: nothing allocated per token).
func TestNextAllocatesNothing(t *testing.T) {
	b := New[*int](0, nil)
	v := new(int)
	allocs := testing.AllocsPerRun(1000, func() {
		b.Push(v)
		b.Push(v)
		b.Next()
		b.Next()
	})
	if allocs != 0 {
		t.Fatalf("%.1f allocations per push and next, want 0", allocs)
	}
}

// BenchmarkPushNext is the engine's event path: one push, one hand-over.
func BenchmarkPushNext(b *testing.B) {
	box := New[*int](0, nil)
	v := new(int)
	b.ReportAllocs()
	for b.Loop() {
		box.Push(v)
		box.Next()
	}
}

// BenchmarkPushMerge is a slow reader's: every push merges into the tail.
func BenchmarkPushMerge(b *testing.B) {
	box := New(0, sum)
	box.Push(1)
	b.ReportAllocs()
	for b.Loop() {
		box.Push(1)
	}
}

// BenchmarkConcurrent: a producer and a reader on two goroutines.
func BenchmarkConcurrent(b *testing.B) {
	box := New[int](0, nil)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			items, open := box.Take()
			if !open && len(items) == 0 {
				return
			}
			if len(items) == 0 {
				<-box.Wake()
			}
		}
	}()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		box.Push(i)
	}
	box.Close()
	<-done
}
