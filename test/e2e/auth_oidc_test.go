package e2e

import (
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/arbiterhq/arbiter/internal/testkit/poll"
	"github.com/arbiterhq/arbiter/server"
	"github.com/chromedp/chromedp"
	"github.com/oauth2-proxy/mockoidc"
)

// provider is an in-process OIDC provider (mockoidc) whose answers a test can spoil.
type provider struct {
	*mockoidc.MockOIDC
	mu     sync.Mutex
	tamper string // "", "state", "nonce", "deny", "token-error"
}

func (p *provider) set(mode string) { p.mu.Lock(); p.tamper = mode; p.mu.Unlock() }

func (p *provider) mode() string { p.mu.Lock(); defer p.mu.Unlock(); return p.tamper }

func startProvider(t *testing.T) *provider {
	t.Helper()
	m, err := mockoidc.NewServer(nil)
	if err != nil {
		t.Fatal(err)
	}
	p := &provider{MockOIDC: m}
	_ = m.AddMiddleware(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch mode := p.mode(); {
			case strings.HasSuffix(r.URL.Path, mockoidc.AuthorizationEndpoint) && (mode == "state" || mode == "nonce"):
				q := r.URL.Query()
				q.Set(mode, "spoiled-"+mode)
				r.URL.RawQuery = q.Encode()
			case strings.HasSuffix(r.URL.Path, mockoidc.AuthorizationEndpoint) && mode == "deny":
				back, _ := url.Parse(r.URL.Query().Get("redirect_uri"))
				q := back.Query()
				q.Set("error", "access_denied")
				q.Set("error_description", "the user is not assigned to this application")
				q.Set("state", r.URL.Query().Get("state"))
				back.RawQuery = q.Encode()
				http.Redirect(w, r, back.String(), http.StatusFound)
				return
			case strings.HasSuffix(r.URL.Path, mockoidc.TokenEndpoint) && mode == "token-error":
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusBadRequest)
				_, _ = w.Write([]byte(`{"error":"invalid_grant","error_description":"the code has expired"}`))
				return
			}
			next.ServeHTTP(w, r)
		})
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Start(ln, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Shutdown() })
	return p
}

// TestBrowserOIDCLogin drives the whole OIDC sign-in in Chromium against an in-process
// provider: redirect, callback, session cookie, the signed-in header, logout; then the failure
// paths (wrong state, wrong nonce, expired ID token, provider error on the callback, token
// endpoint error), each told to the person as a sentence on the login page.
func TestBrowserOIDCLogin(t *testing.T) {
	t.Parallel()
	p := startProvider(t)
	a := startArbiter(t, server.Config{DatabaseURL: freshDatabase(t), OIDCIssuer: p.Issuer(),
		OIDCClientID: p.ClientID, OIDCClientSecret: p.ClientSecret, AdminGroups: "engineering"})
	ctx := newBrowser(t)

	// An anonymous visit goes to the login page, which offers the provider.
	err := chromedp.Do(ctx,
		chromedp.Navigate(a.URL+"/workload-types"),
		chromedp.WaitVisible(`#oidc-login`),
	)
	if err != nil {
		t.Fatal(err)
	}
	loc, _ := chromedp.Run(ctx, chromedp.Location())
	if !strings.Contains(loc, "/login?next=") {
		t.Errorf("the anonymous visit landed on %s", loc)
	}
	// Sign in: to the provider and back through the callback, to the page first asked for.
	err = chromedp.Do(ctx,
		chromedp.Click(`#oidc-login`),
		chromedp.WaitVisible(`header .who .role`),
	)
	if err != nil {
		t.Fatal(err)
	}
	loc, _ = chromedp.Run(ctx, chromedp.Location())
	user, _ := chromedp.Run(ctx, chromedp.Text(`header .who .user`))
	role, _ := chromedp.Run(ctx, chromedp.Text(`header .who .role`))
	if !strings.HasSuffix(loc, "/workload-types") || user != "jane.doe" || role != "admin" {
		t.Errorf("after sign-in: %s, header %q %q", loc, user, role)
	}
	// The session cookie exists and is HttpOnly: scripts cannot see it.
	cookies, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.cookie`))
	if err != nil || strings.Contains(cookies, "arbiter_session") {
		t.Errorf("document.cookie = %q (%v); the session cookie must be HttpOnly", cookies, err)
	}
	screenshot(t, ctx, "oidc-signed-in")

	// Logout ends the session: the next visit goes to the login page again.
	err = chromedp.Do(ctx,
		chromedp.Click(`form.logout button`),
		chromedp.WaitVisible(`#oidc-login`),
		chromedp.Navigate(a.URL+"/priorities"),
		chromedp.WaitVisible(`#oidc-login`),
	)
	if err != nil {
		t.Fatalf("logout: %v", err)
	}

	for _, tc := range []struct{ mode, want string }{
		{"state", "was not started here"},
		{"nonce", "nonce does not match"},
		{"expired", "has expired"},
		{"deny", "not assigned to this application"},
		{"token-error", "refused to complete the sign-in"},
	} {
		if tc.mode == "expired" {
			p.FastForward(-time.Hour) // tokens issued an hour ago expired 50 minutes ago
		} else {
			p.set(tc.mode)
		}
		err := chromedp.Do(ctx,
			chromedp.Navigate(a.URL+"/login"),
			chromedp.Click(`#oidc-login`),
		)
		msg := ""
		if err == nil { // an empty msg after the wait is reported below, once the provider is reset
			poll.Within(10*time.Second, func() bool {
				msg, _ = chromedp.Run(ctx, chromedp.Evaluate[string](`location.pathname === '/auth/oidc/callback' && document.querySelector('#login-error') ? document.querySelector('#login-error').textContent : ''`))
				return msg != ""
			})
		}
		if tc.mode == "expired" {
			p.FastForward(time.Hour)
		}
		p.set("")
		if err != nil {
			t.Errorf("%s: %v", tc.mode, err)
			continue
		}
		if !strings.Contains(msg, tc.want) {
			t.Errorf("%s: the login page says %q, want %q", tc.mode, msg, tc.want)
		}
		if n, _ := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('header .who .role').length`)); n != 0 {
			t.Errorf("%s: signed in anyway", tc.mode)
		}
		if tc.mode == "deny" {
			screenshot(t, ctx, "oidc-provider-error")
		}
	}
	// Every failure is on the audit log (read on the Event history page, signed in again).
	err = chromedp.Do(ctx,
		chromedp.Navigate(a.URL+"/login?next=/event-history"),
		chromedp.Click(`#oidc-login`),
		chromedp.WaitVisible(`header .who .role`),
		chromedp.Navigate(a.URL+"/event-history?action=login&result=failure"),
		chromedp.WaitVisible(`#audit-table`),
	)
	if err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "event-history")
	if n, _ := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('#audit-table tr.audit-row').length`)); n != 5 {
		t.Errorf("%d failed logins on the Event history page, want 5", n)
	}
}
