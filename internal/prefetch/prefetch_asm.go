//go:build amd64 || arm64

package prefetch

// line prefetches the cache line at addr (prefetch_$GOARCH.s).
func line(addr uintptr)
