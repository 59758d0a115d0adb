package auth

import (
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
)

func TestAccessTokenRoundTripAndRefusals(t *testing.T) {
	now := time.Now()
	a := NewAccessTokens([]byte("0123456789abcdef0123456789abcdef"))
	id := uuid.New()
	tok := a.Issue(TokenForAPIKey, id, now.Add(AccessTokenLifetime))
	if !IsAccessToken(tok) {
		t.Fatalf("%q is not recognised as an access token", tok)
	}
	if _, _, ok := ParseAPIKey(tok); ok {
		t.Fatalf("%q parses as an API key", tok)
	}
	kind, got, exp, err := a.Check(tok, now)
	if err != nil || kind != TokenForAPIKey || got != id || exp.Unix() != now.Add(AccessTokenLifetime).Unix() {
		t.Fatalf("Check = %c %v %v %v", kind, got, exp, err)
	}
	if a.Issue(TokenForAPIKey, id, now.Add(time.Hour)) == a.Issue(TokenForAPIKey, id, now.Add(time.Hour)) {
		t.Fatal("two tokens for the same key and expiry are equal; the nonce is missing")
	}
	if _, _, _, err := a.Check(tok, now.Add(AccessTokenLifetime)); err == nil {
		t.Fatal("a token is accepted at its expiry")
	}
	other := NewAccessTokens([]byte("another key of thirty-two bytes!"))
	if _, _, _, err := other.Check(tok, now); err == nil {
		t.Fatal("a token signed with another key is accepted")
	}
	// Flip each character of the signed part: every change is refused.
	for i := len(AccessTokenPrefix); i < len(tok); i++ {
		b := []byte(tok)
		if b[i] == 'A' {
			b[i] = 'B'
		} else {
			b[i] = 'A'
		}
		if _, _, _, err := a.Check(string(b), now); err == nil {
			t.Fatalf("a token changed at %d is accepted", i)
		}
	}
	for _, bad := range []string{"", AccessTokenPrefix, tok[:len(tok)-1], tok + "A", strings.Replace(tok, "arbat_", "arb_", 1)} {
		if _, _, _, err := a.Check(bad, now); err == nil {
			t.Fatalf("%q is accepted", bad)
		}
	}
}

func FuzzAccessTokenCheck(f *testing.F) {
	a := NewAccessTokens(nil)
	now := time.Now()
	f.Add(a.Issue(TokenForUser, uuid.New(), now.Add(time.Hour)))
	f.Add("arbat_")
	f.Add("arbat_!!!!")
	f.Fuzz(func(t *testing.T, s string) {
		kind, _, exp, err := a.Check(s, now)
		if err == nil && ((kind != TokenForAPIKey && kind != TokenForUser) || !now.Before(exp)) {
			t.Fatalf("%q accepted as kind %c expiring %v", s, kind, exp)
		}
	})
}

// TestAccessTokenSaysWhenItWasIssued: Verify answers the instant Issue signed in, to the
// nanosecond, so that a sign-out between two tokens tells them apart.
func TestAccessTokenSaysWhenItWasIssued(t *testing.T) {
	a := NewAccessTokens(nil)
	id := uuid.New()
	before := time.Now()
	tok := a.Issue(TokenForUser, id, before.Add(time.Hour))
	after := time.Now()
	got, err := a.Verify(tok, after)
	if err != nil || got.Kind != TokenForUser || got.ID != id || got.Issued.Before(before) || got.Issued.After(after) {
		t.Fatalf("Verify = %+v %v; want user %s issued between %v and %v", got, err, id, before, after)
	}
}
