package web_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/arbiterhq/arbiter/internal/testkit/testdb"
	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/web"
	"github.com/jackc/pgx/v5"
)

// loginServer serves the real router over a fresh database with the local admin's password
// "right"; configure adjusts its dependencies.
func loginServer(t *testing.T, configure func(*web.Deps)) (*httptest.Server, *web.Server, *store.Store) {
	t.Helper()
	st := store.New(testdb.New(t))
	withAdmin(t, st, "right")
	d := deps(st)
	if configure != nil {
		configure(&d)
	}
	ws := web.New(d)
	srv := httptest.NewServer(ws)
	t.Cleanup(srv.Close)
	return srv, ws, st
}

func trust(t *testing.T, cidrs string) func(*web.Deps) {
	n, err := web.ParseTrustedProxies(cidrs)
	if err != nil {
		t.Fatal(err)
	}
	return func(d *web.Deps) { d.Login.TrustedProxies = n }
}

// loginForm fetches the login page anonymously and returns its CSRF cookie and form token.
func loginForm(t *testing.T, srv *httptest.Server) (*http.Cookie, string) {
	t.Helper()
	res, err := srv.Client().Get(srv.URL + "/login")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body := readAll(t, res)
	for _, c := range res.Cookies() {
		if c.Name == "arbiter_login" {
			return c, csrfIn(t, body)
		}
	}
	t.Fatalf("GET /login set no arbiter_login cookie: %v", res.Header)
	return nil, ""
}

func readAll(t *testing.T, res *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Error(err)
	}
	return string(b)
}

type loginAnswer struct {
	status     int
	retryAfter string
	location   string
	body       string
	cookies    []*http.Cookie
}

// postLogin sends the login form with the given cookie (nil: none) and headers.
func postLogin(t *testing.T, srv *httptest.Server, ck *http.Cookie, form url.Values, header map[string]string) loginAnswer {
	t.Helper()
	req, err := http.NewRequest("POST", srv.URL+"/login", strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	if ck != nil {
		req.AddCookie(&http.Cookie{Name: ck.Name, Value: ck.Value})
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.Do(req)
	if err != nil {
		t.Error(err)
		return loginAnswer{}
	}
	defer res.Body.Close()
	return loginAnswer{status: res.StatusCode, retryAfter: res.Header.Get("Retry-After"), location: res.Header.Get("Location"),
		body: readAll(t, res), cookies: res.Cookies()}
}

// heapPeak samples the Go heap in use until stop is called and returns the highest sample.
func heapPeak() (stop func() uint64) {
	var peak atomic.Uint64
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			if m.HeapInuse > peak.Load() {
				peak.Store(m.HeapInuse)
			}
			select {
			case <-done:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	return func() uint64 { close(done); <-finished; return peak.Load() }
}

// TestParallelWrongSignInsAreBounded fires 32 parallel wrong sign-ins twice at the real
// handler: first for one account from one address — no more than the free allowance (3) may
// reach the password check, the rest are 429 with Retry-After — then for 32 accounts from 32
// addresses (through a trusted proxy) — at most two checks run at once, a sign-in that finds
// no slot in time is a 503 with Retry-After and a sentence, and the heap stays far below 32
// hashes' 2 GiB. Not parallel: it measures this process's heap.
func TestParallelWrongSignInsAreBounded(t *testing.T) {
	srv, ws, _ := loginServer(t, trust(t, "127.0.0.1/32"))
	ck, token := loginForm(t, srv)
	defer debug.SetGCPercent(debug.SetGCPercent(100)) // the bound below assumes Go's default pacing
	fire := func(user func(i int) string, addr func(i int) string) map[int][]loginAnswer {
		var mu sync.Mutex
		out := map[int][]loginAnswer{}
		var wg sync.WaitGroup
		for i := range 32 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				a := postLogin(t, srv, ck, url.Values{"_csrf": {token}, "username": {user(i)}, "password": {"wrong"}},
					map[string]string{"X-Forwarded-For": addr(i)})
				mu.Lock()
				out[a.status] = append(out[a.status], a)
				mu.Unlock()
			}()
		}
		wg.Wait()
		return out
	}
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	base := m.HeapInuse
	stop := heapPeak()

	// One account, one address.
	got := fire(func(int) string { return "admin" }, func(int) string { return "198.51.100.1" })
	checked, _ := ws.PasswordChecks()
	t.Logf("one account from one address: %d checked; answers 401×%d 429×%d 503×%d",
		checked, len(got[401]), len(got[429]), len(got[503]))
	if checked > 3 || int(checked) != len(got[401]) {
		t.Errorf("%d password checks and %d answers 401; at most 3 may be checked", checked, len(got[401]))
	}
	if len(got[401])+len(got[503]) != 3 || len(got[429]) != 29 {
		t.Errorf("answers %v: want three 401 (or 503 when busy) and 29 × 429", statuses(got))
	}
	for _, a := range got[429] {
		if a.retryAfter == "" || !strings.Contains(a.body, "Too many failed sign-ins") {
			t.Errorf("a 429 without Retry-After or the sentence: %q %.200s", a.retryAfter, a.body)
			break
		}
	}

	// 32 accounts from 32 addresses: the throttle lets every one through; the slots bound them.
	got = fire(func(i int) string { return fmt.Sprintf("user%d", i) }, func(i int) string { return fmt.Sprintf("198.51.100.%d", 10+i) })
	after, peak := ws.PasswordChecks()
	heap := stop()
	t.Logf("32 accounts from 32 addresses: %d checked, at most %d at once; answers 401×%d 503×%d; heap in use %d MiB at the start, %d MiB at the peak",
		after-checked, peak, len(got[401]), len(got[503]), base>>20, heap>>20)
	if peak > 2 {
		t.Errorf("%d password checks ran at once, want at most 2", peak)
	}
	if int(after-checked) != len(got[401]) || len(got[401])+len(got[503]) != 32 || len(got[401]) < 2 {
		t.Errorf("%d checks, answers %v", after-checked, statuses(got))
	}
	for _, a := range got[503] {
		if a.retryAfter == "" || !strings.Contains(a.body, "busy checking other sign-ins") {
			t.Errorf("a 503 without Retry-After or the sentence: %q %.300s", a.retryAfter, a.body)
			break
		}
	}
	// Two 64 MiB hashes at once, plus what the collector has not returned yet: far below the
	// 2 GiB that 32 unbounded hashes take.
	if limit := uint64(64<<20) * (2 + 2) * 3 / 2; heap-base > limit {
		t.Errorf("the heap grew by %d MiB during the sign-ins, want under %d MiB", (heap-base)>>20, limit>>20)
	}
}

func statuses(m map[int][]loginAnswer) map[int]int {
	out := map[int]int{}
	for k, v := range m {
		out[k] = len(v)
	}
	return out
}

// TestNextCannotLeaveTheConsole: next after sign-in is a plain path on this origin. A signed-in
// caller visiting /login is sent to next at once, so its Location shows what safeNext kept;
// a successful sign-in with next in the form is checked the same way.
func TestNextCannotLeaveTheConsole(t *testing.T) {
	t.Parallel()
	srv, _, st := loginServer(t, nil)
	admin := newAPIKey(t, st, "admin", "system", "")
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, tc := range []struct{ rawQuery, want string }{
		{"next=/%09/evil.example/phish", "/"},
		{"next=/%5Cevil.example", "/"},
		{"next=//evil.example", "/"},
		{"next=/%252F%252Fevil.example", "/"},
		{"next=https:evil.example", "/"},
		{"next=/%0d%0aSet-Cookie:x=1", "/"},
		{"next=/projects%3Fx%3D1", "/projects?x=1"},
	} {
		req, _ := http.NewRequest("GET", srv.URL+"/login?"+tc.rawQuery, nil)
		req.Header.Set("Authorization", "Bearer "+admin)
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != tc.want {
			t.Errorf("GET /login?%s signed in = %d Location %q, want 303 %q", tc.rawQuery, res.StatusCode, res.Header.Get("Location"), tc.want)
		}
	}
	ck, token := loginForm(t, srv)
	for _, tc := range []struct{ next, want string }{
		{"/\t/evil.example/phish", "/"},
		{"/projects?x=1", "/projects?x=1"},
	} {
		a := postLogin(t, srv, ck, url.Values{"_csrf": {token}, "username": {"admin"}, "password": {"right"}, "next": {tc.next}}, nil)
		if a.status != http.StatusSeeOther || a.location != tc.want {
			t.Errorf("sign-in with next %q = %d Location %q, want 303 %q", tc.next, a.status, a.location, tc.want)
		}
	}
}

// TestForwardedHeadersOnlyFromTrustedProxies: X-Forwarded-For and X-Forwarded-Proto from a
// peer that is not a configured proxy change nothing — not the address the sign-in throttle
// counts, not the audit rows' source IP, not the cookie's Secure flag; from a trusted proxy
// they do.
func TestForwardedHeadersOnlyFromTrustedProxies(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, trusted, wantAddr string
		wantSecure              bool
	}{
		{"no proxy configured", "", "127.0.0.1", false},
		{"the peer is not a configured proxy", "10.0.0.0/8", "127.0.0.1", false},
		{"the peer is a configured proxy", "127.0.0.1/32", "203.0.113.9", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv, _, st := loginServer(t, trust(t, tc.trusted))
			forwarded := map[string]string{"X-Forwarded-For": "203.0.113.9", "X-Forwarded-Proto": "https", "X-Real-IP": "203.0.113.10"}
			ck, token := loginForm(t, srv)
			if a := postLogin(t, srv, ck, url.Values{"_csrf": {token}, "username": {"admin"}, "password": {"wrong"}}, forwarded); a.status != 401 {
				t.Fatalf("wrong password = %d", a.status)
			}
			rows, err := st.Pool().Query(context.Background(), `SELECT key FROM login_failures WHERE key LIKE 'address:%'`)
			if err != nil {
				t.Fatal(err)
			}
			keys, err := pgx.CollectRows(rows, pgx.RowTo[string])
			if err != nil {
				t.Fatal(err)
			}
			if len(keys) != 1 || keys[0] != "address:"+tc.wantAddr {
				t.Errorf("the throttle counted %v, want address:%s", keys, tc.wantAddr)
			}
			if e := auditRows(t, st, "session"); len(e) != 1 || e[0].SourceIP != tc.wantAddr {
				t.Errorf("the sign-in's audit rows %+v, want source IP %s", e, tc.wantAddr)
			}
			// A refused API call's audit row (auditFailures) too.
			req, _ := http.NewRequest("POST", srv.URL+"/api/v1/access-rules", strings.NewReader(`{}`))
			for k, v := range forwarded {
				req.Header.Set(k, v)
			}
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if e := auditRows(t, st, "/api/v1/access-rules"); res.StatusCode != 401 || len(e) != 1 || e[0].SourceIP != tc.wantAddr {
				t.Errorf("refused API call %d, audit rows %+v, want source IP %s", res.StatusCode, e, tc.wantAddr)
			}
			a := postLogin(t, srv, ck, url.Values{"_csrf": {token}, "username": {"admin"}, "password": {"right"}}, forwarded)
			if a.status != http.StatusSeeOther {
				t.Fatalf("right password = %d", a.status)
			}
			for _, c := range a.cookies {
				if c.Name == "arbiter_session" && c.Secure != tc.wantSecure {
					t.Errorf("session cookie Secure = %v with X-Forwarded-Proto: https, want %v", c.Secure, tc.wantSecure)
				}
			}
		})
	}
}

func TestParseTrustedProxies(t *testing.T) {
	t.Parallel()
	got, err := web.ParseTrustedProxies(" 10.0.0.0/8, 192.168.1.5 ,fd00::/8,::1,")
	if err != nil {
		t.Fatal(err)
	}
	var s []string
	for _, n := range got {
		s = append(s, n.String())
	}
	if strings.Join(s, " ") != "10.0.0.0/8 192.168.1.5/32 fd00::/8 ::1/128" {
		t.Errorf("parsed %v", s)
	}
	for _, bad := range []string{"bogus", "10.0.0.0/33", "10.0.0.0/8;rm"} {
		if _, err := web.ParseTrustedProxies(bad); err == nil || !strings.Contains(err.Error(), "CIDR") {
			t.Errorf("%q: err %v", bad, err)
		}
	}
}

// TestASignInWaitsForTheAdminsPasswordToBeStored: a start stores the local admin's password
// only after the scheduler's first decision (server.bootstrapAdmin); a sign-in that comes
// before waits for it (LoginConfig.AdminReady) instead of finding no account, or the old
// password.
func TestASignInWaitsForTheAdminsPasswordToBeStored(t *testing.T) {
	t.Parallel()
	st := store.New(testdb.New(t))
	ready := make(chan struct{})
	d := deps(st)
	d.Login.AdminReady = ready
	srv := httptest.NewServer(web.New(d))
	t.Cleanup(srv.Close)
	ck, token := loginForm(t, srv)
	answered := make(chan loginAnswer, 1)
	go func() {
		answered <- postLogin(t, srv, ck, url.Values{"_csrf": {token}, "username": {"admin"}, "password": {"right"}}, nil)
	}()
	select {
	case a := <-answered:
		t.Fatalf("the sign-in was answered (%d) before the admin's password was stored", a.status)
	case <-time.After(300 * time.Millisecond):
	}
	withAdmin(t, st, "right")
	close(ready)
	a := <-answered
	if a.status != http.StatusSeeOther && a.status != http.StatusFound {
		t.Fatalf("the sign-in once the password was stored: %d %q, want a redirect into the console", a.status, a.body)
	}
}
