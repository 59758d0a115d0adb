package web

import (
	"crypto/subtle"
	"sync"
	"time"

	"github.com/arbiterhq/arbiter/store"
	"github.com/google/uuid"
)

// keyCacheTTL is how long a validated API key is trusted without asking the database again.
// A key revoked through this server is forgotten at once; one revoked through another replica
// (or directly in the database) keeps working here for at most this long.
const keyCacheTTL = 5 * time.Second

// keyCacheMax bounds the cache; when full it is emptied (keys are few; this only guards
// against a flood of distinct valid keys).
const keyCacheMax = 4096

// keyCache remembers recently validated API keys by their key id, with the SHA-256 of the
// secret that was checked, so that a busy client costs one key lookup every few seconds rather
// than one per request. The zero value is ready to use.
type keyCache struct {
	mu      sync.Mutex
	entries map[uuid.UUID]cachedKey
}

type cachedKey struct {
	key        store.APIKey
	secretHash []byte
	until      time.Time
}

// get returns the key if it was validated with the same secret hash within the TTL and has
// not expired since.
func (c *keyCache) get(id uuid.UUID, secretHash []byte, now time.Time) (store.APIKey, bool) {
	e, ok := c.entry(id, now)
	if !ok || subtle.ConstantTimeCompare(e.secretHash, secretHash) != 1 {
		return store.APIKey{}, false
	}
	return e.key, true
}

// active returns the key if it was validated within the TTL and has not expired since,
// whatever secret was checked: an access token's signature stands in for the secret.
func (c *keyCache) active(id uuid.UUID, now time.Time) (store.APIKey, bool) {
	e, ok := c.entry(id, now)
	return e.key, ok
}

// entry is the cached validation of key id while it holds.
func (c *keyCache) entry(id uuid.UUID, now time.Time) (cachedKey, bool) {
	c.mu.Lock()
	e, ok := c.entries[id]
	c.mu.Unlock()
	if !ok || !now.Before(e.until) {
		return cachedKey{}, false
	}
	return e, true
}

// put remembers a key the store has just validated, until the TTL or its expiry.
func (c *keyCache) put(k store.APIKey, secretHash []byte, now time.Time) {
	until := now.Add(keyCacheTTL)
	if k.ExpiresAt.Before(until) {
		until = k.ExpiresAt
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil || len(c.entries) >= keyCacheMax {
		c.entries = map[uuid.UUID]cachedKey{}
	}
	c.entries[k.ID] = cachedKey{key: k, secretHash: secretHash, until: until}
}

// forget drops a key (on revocation).
func (c *keyCache) forget(id uuid.UUID) {
	c.mu.Lock()
	delete(c.entries, id)
	c.mu.Unlock()
}
