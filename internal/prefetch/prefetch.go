// Package prefetch asks the processor to bring memory into its caches ahead of use, without
// waiting for it.
//
// A loop whose next step depends on the step before (the scheduler's admission, each attempt
// choosing the next) pays every cache miss in full, one after another; the processor can run
// ahead only as far as its reorder buffer reaches, a few hundred instructions, far short of the
// hundreds of nanoseconds a miss costs. Reading a value early does not help enough: the load
// still has to finish before the instructions after it retire. A prefetch instruction retires
// at once, so the miss runs while the loop goes on. Go has no prefetch of its own outside its
// runtime, hence the few lines of assembly; on other architectures Of does nothing.
package prefetch

import "unsafe"

// Of asks for the cache line holding *p. It never faults: p may be any address.
func Of[T any](p *T) { line(uintptr(unsafe.Pointer(p))) }

// String asks for the cache line holding the start of s.
func String(s string) { line(uintptr(unsafe.Pointer(unsafe.StringData(s)))) }
