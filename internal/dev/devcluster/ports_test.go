package devcluster

import (
	"net"
	"strconv"
	"testing"
)

// The cluster's ports come from below the kernel's ephemeral range, where no outgoing
// connection takes one between freePorts and the process's bind, and never twice; a preferred
// port is kept while it is free and replaced once something listens on it.
func TestFreePortsAreBelowTheEphemeralRangeAndDistinct(t *testing.T) {
	ports, err := freePorts(make([]int, 50))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, p := range ports {
		if p < ephemeralLow-portRange || p >= ephemeralLow {
			t.Errorf("port %d, want one in [%d, %d), below the ephemeral range", p, ephemeralLow-portRange, ephemeralLow)
		}
		if seen[p] {
			t.Errorf("port %d handed out twice", p)
		}
		seen[p] = true
	}

	kept, err := freePorts([]int{ports[0]})
	if err != nil || kept[0] != ports[0] {
		t.Errorf("a free preferred port %d: got %v, %v", ports[0], kept, err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(ports[1]))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	moved, err := freePorts([]int{ports[1]})
	if err != nil || moved[0] == ports[1] {
		t.Errorf("a preferred port in use %d: got %v, %v", ports[1], moved, err)
	}
}
