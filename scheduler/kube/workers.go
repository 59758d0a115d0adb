package kube

import (
	"context"
	"sync/atomic"
)

// startWorkers starts a pool of at most n goroutines that take items off queue and do them
// until ctx ends. The pool starts with one and grows as calls complete: each goroutine, once
// it has done its first item, starts another, so 1, 2, 4… up to n, a doubling per round trip.
// A burst handed to a full pool at once (a start's 10,000 binds) has its first n calls
// answered together, the API server sharing its cores among them: on two cores the first
// bind came back 64–239 ms after it was sent. Growing, the first call goes alone and the
// pool is whole after log2(n) round trips.
func startWorkers[T any](ctx context.Context, n int, queue <-chan T, do func(T)) {
	var started atomic.Int64
	var work func()
	work = func() {
		grown := false
		for {
			select {
			case <-ctx.Done():
				return
			case item := <-queue:
				do(item)
				if !grown {
					grown = true
					if started.Add(1) <= int64(n) {
						go work()
					}
				}
			}
		}
	}
	if n > 0 {
		started.Store(1)
		go work()
	}
}
