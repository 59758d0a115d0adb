package testdb

import (
	"net"
	"net/url"
	"strconv"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// Staller sits between a test's pool and its database (a TCP proxy on 127.0.0.1) and can
// freeze the traffic as a stopped server would: connections are still accepted and bytes are
// still read, but nothing is forwarded either way until Thaw. Stall a test's own connections
// without stopping the server that other tests share.
type Staller struct {
	URL string // the database's URL through the proxy

	mu     sync.Mutex
	frozen bool
	thawed *sync.Cond
}

// Stall starts a proxy to the database at dbURL for the length of the test.
func Stall(t testing.TB, dbURL string) *Staller {
	t.Helper()
	cfg, err := pgconn.ParseConfig(dbURL)
	if err != nil {
		t.Fatalf("testdb: %v", err)
	}
	network, addr := "tcp", net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port)))
	if len(cfg.Host) > 0 && cfg.Host[0] == '/' {
		network, addr = "unix", cfg.Host+"/.s.PGSQL."+strconv.Itoa(int(cfg.Port))
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("testdb: %v", err)
	}
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatalf("testdb: %v", err)
	}
	q := u.Query()
	q.Del("host")
	q.Del("port")
	u.RawQuery = q.Encode()
	u.Host = ln.Addr().String()
	s := &Staller{URL: u.String()}
	s.thawed = sync.NewCond(&s.mu)

	var conns sync.WaitGroup
	var mu sync.Mutex
	var open []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			d, err := net.Dial(network, addr)
			if err != nil {
				c.Close()
				continue
			}
			mu.Lock()
			open = append(open, c, d)
			mu.Unlock()
			conns.Add(2)
			go func() { defer conns.Done(); s.pipe(d, c) }()
			go func() { defer conns.Done(); s.pipe(c, d) }()
		}
	}()
	t.Cleanup(func() {
		s.Thaw()
		ln.Close()
		<-done
		mu.Lock()
		for _, c := range open {
			c.Close()
		}
		mu.Unlock()
		conns.Wait()
	})
	return s
}

// pipe copies src to dst, holding every chunk while the proxy is frozen.
func (s *Staller) pipe(dst, src net.Conn) {
	defer dst.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			s.mu.Lock()
			for s.frozen {
				s.thawed.Wait()
			}
			s.mu.Unlock()
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil { // io.EOF or a closed connection: pass the end on
			return
		}
	}
}

// Freeze stops forwarding in both directions, as SIGSTOP on the server would.
func (s *Staller) Freeze() {
	s.mu.Lock()
	s.frozen = true
	s.mu.Unlock()
}

// Thaw forwards again, held bytes first.
func (s *Staller) Thaw() {
	s.mu.Lock()
	s.frozen = false
	s.mu.Unlock()
	s.thawed.Broadcast()
}
