// Ports for the cluster's processes: chosen here, bound by the processes after.

package devcluster

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
)

// freePorts returns len(prefer) free loopback ports, prefer[i] where it is free. A port is
// free when this process could listen on it; the process started with it binds it moments
// later. The kernel's choice for port 0 would come from its ephemeral range, the range it also
// takes the local port of every outgoing connection from: in between, a connection of the
// cluster's own clients could take the port, and the process would fail with "address already
// in use" (seen once in a full test run). So the ports are drawn at random below that range,
// where only a listener naming the port takes it, and none is handed out twice by this process.
func freePorts(prefer []int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	ports := make([]int, len(prefer))
	for i, p := range prefer {
		l := listenOn(p)
		for try := 0; l == nil && try < 200; try++ {
			l = listenOn(handedOut.draw())
		}
		if l == nil {
			return nil, fmt.Errorf("devcluster: no free port in %d-%d, below the ephemeral range", ephemeralLow-portRange, ephemeralLow-1)
		}
		ls = append(ls, l)
		ports[i] = l.Addr().(*net.TCPAddr).Port
		handedOut.add(ports[i])
	}
	return ports, nil
}

// FreeAddr is a free loopback address ("127.0.0.1:port") for a process or server a test starts
// after, its port drawn as the cluster's are (freePorts).
func FreeAddr() (string, error) {
	p, err := freePorts([]int{0})
	if err != nil {
		return "", err
	}
	return "127.0.0.1:" + strconv.Itoa(p[0]), nil
}

// listenOn listens on the loopback port p; nil if p is not a port or not free.
func listenOn(p int) net.Listener {
	if p <= 0 || p > 65535 {
		return nil
	}
	l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
	if err != nil {
		return nil
	}
	return l
}

// ephemeralLow is where the kernel's range of ports for outgoing connections begins (Linux's
// default where it cannot be read); freePorts draws from the portRange ports below it.
var ephemeralLow = ephemeralStart()

const portRange = 12000

func ephemeralStart() int {
	const linuxDefault = 32768
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return linuxDefault
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return linuxDefault
	}
	low, err := strconv.Atoi(f[0])
	if err != nil || low < 1024+portRange {
		return linuxDefault
	}
	return low
}

// handedOut is the ports freePorts gave out in this process, so that two clusters started at
// once (tests run in parallel) are not given the same one. Bounded: it forgets them all past
// maxHandedOut, by when the first have long been bound.
var handedOut = &portSet{ports: map[int]bool{}}

const maxHandedOut = 2000

type portSet struct {
	mu    sync.Mutex
	ports map[int]bool
}

// draw picks a port below the ephemeral range that this process has not handed out.
func (s *portSet) draw() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		p := ephemeralLow - portRange + rand.IntN(portRange)
		if !s.ports[p] {
			return p
		}
	}
}

func (s *portSet) add(p int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.ports) >= maxHandedOut {
		clear(s.ports)
	}
	s.ports[p] = true
}
