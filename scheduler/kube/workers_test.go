package kube

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/arbiterhq/arbiter/internal/testkit/poll"
)

// busyPool counts how many of a pool's items are being done at once.
type busyPool struct {
	mu         sync.Mutex
	busy, most int
	done       int
	release    chan struct{}
}

func (p *busyPool) do(int) {
	p.mu.Lock()
	p.busy++
	p.most = max(p.most, p.busy)
	p.mu.Unlock()
	<-p.release
	p.mu.Lock()
	p.busy--
	p.done++
	p.mu.Unlock()
}

func (p *busyPool) state() (busy, most, done int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.busy, p.most, p.done
}

// TestWorkerPoolSendsItsFirstCallAloneAndGrowsToItsBound: a burst handed to a new pool has its
// first item done alone; the pool then doubles with each round of completions, to n and never
// past it.
func TestWorkerPoolSendsItsFirstCallAloneAndGrowsToItsBound(t *testing.T) {
	const n = 8
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	queue := make(chan int, 100)
	for i := range 100 {
		queue <- i
	}
	p := &busyPool{release: make(chan struct{})}
	startWorkers(ctx, n, queue, p.do)

	waitBusy := func(want int) {
		t.Helper()
		if !poll.Within(5*time.Second, func() bool { busy, _, _ := p.state(); return busy == want }) {
			busy, _, _ := p.state()
			t.Fatalf("%d items in progress, want %d", busy, want)
		}
	}
	waitBusy(1)
	time.Sleep(20 * time.Millisecond) // a pool that started more than one would have by now
	if busy, _, _ := p.state(); busy != 1 {
		t.Fatalf("before the first item completed, %d were in progress: want the first alone", busy)
	}
	// Completing every item in progress doubles the pool, as each completion starts another
	// goroutine: 1, 2, 4, 8, then 8 again.
	for _, want := range []int{2, 4, 8, 8} {
		busy, _, before := p.state()
		for range busy {
			p.release <- struct{}{}
		}
		if !poll.Within(5*time.Second, func() bool { _, _, done := p.state(); return done == before+busy }) {
			t.Fatal("the released items did not complete")
		}
		waitBusy(want)
	}
	close(p.release)
	if !poll.Within(5*time.Second, func() bool { _, _, done := p.state(); return done == 100 }) {
		_, _, done := p.state()
		t.Fatalf("%d of 100 items done", done)
	}
	if _, most, _ := p.state(); most != n {
		t.Fatalf("at most %d items were in progress at once, want the bound %d", most, n)
	}
}
