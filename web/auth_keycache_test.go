package web

import (
	"testing"
	"time"

	"github.com/arbiterhq/arbiter/store"
	"github.com/google/uuid"
)

// TestKeyCache: a validated key is trusted for the TTL, never past its expiry, only with the
// same secret, and not after it is forgotten (revoked).
func TestKeyCache(t *testing.T) {
	now := time.Now()
	var c keyCache
	k := store.APIKey{ID: uuid.New(), ExpiresAt: now.Add(time.Hour)}
	hash := []byte("0123456789abcdef0123456789abcdef")
	if _, ok := c.get(k.ID, hash, now); ok {
		t.Fatal("an empty cache answered")
	}
	c.put(k, hash, now)
	if got, ok := c.get(k.ID, hash, now.Add(keyCacheTTL-time.Millisecond)); !ok || got.ID != k.ID {
		t.Error("a fresh key is not cached")
	}
	if _, ok := c.get(k.ID, hash, now.Add(keyCacheTTL)); ok {
		t.Error("a key is trusted past the TTL")
	}
	if _, ok := c.get(k.ID, []byte("another secret's hash..........."), now); ok {
		t.Error("a wrong secret matched the cached key")
	}
	c.forget(k.ID)
	if _, ok := c.get(k.ID, hash, now); ok {
		t.Error("a forgotten key is still trusted")
	}
	soon := store.APIKey{ID: uuid.New(), ExpiresAt: now.Add(time.Second)}
	c.put(soon, hash, now)
	if _, ok := c.get(soon.ID, hash, now.Add(time.Second)); ok {
		t.Error("a key is trusted past its expiry")
	}
}
