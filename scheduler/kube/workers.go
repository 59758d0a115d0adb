package kube

import (
	"context"
	"sync/atomic"
)

// startWorkers starts a pool of at most n goroutines that take items off queue and do them
// until ctx ends. The pool starts with one and grows as calls complete, as TCP's window does
// in slow start: each item done starts another goroutine until there are n, so the pool
// doubles with each round trip. A burst handed to a full pool at once (a start's 10,000
// binds) has its first n calls answered together, the API server sharing its cores among
// them: on two cores the first bind was seen 99–207 ms after the first cycle decided.
// Growing, the first call goes alone, and the pool is whole after log2(n) round trips.
func startWorkers[T any](ctx context.Context, n int, queue <-chan T, do func(T)) {
	var started atomic.Int64
	var work func()
	grow := func() {
		for {
			s := started.Load()
			if s >= int64(n) {
				return
			}
			if started.CompareAndSwap(s, s+1) {
				go work()
				return
			}
		}
	}
	work = func() {
		for {
			select {
			case <-ctx.Done():
				return
			case item := <-queue:
				do(item)
				grow()
			}
		}
	}
	grow()
}
