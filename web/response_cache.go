package web

import (
	"encoding/json"
	"net/http"
	"sync"

	"github.com/labstack/echo/v4"
)

// responseCache keeps encoded answers of configuration lists (workload types, categories),
// which are read far more often than they change. Entries belong to one configuration version
// (store.ConfigVersion, which counts changes made here and those other replicas announce); a
// newer version empties the cache.
type responseCache struct {
	mu      sync.Mutex
	version uint64
	entries map[string][]byte
}

// maxCachedResponses bounds the cache: query strings are the caller's to vary.
const maxCachedResponses = 256

func (rc *responseCache) get(version uint64, key string) ([]byte, bool) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.version != version {
		return nil, false
	}
	b, ok := rc.entries[key]
	return b, ok
}

func (rc *responseCache) put(version uint64, key string, body []byte) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if version < rc.version {
		return // computed before a change that another request has already seen
	}
	if version > rc.version || rc.entries == nil || len(rc.entries) >= maxCachedResponses {
		rc.version, rc.entries = version, map[string][]byte{}
	}
	rc.entries[key] = body
}

// cachedJSON answers from the cache when the configuration has not changed since the answer
// was computed; otherwise it computes, encodes, caches and answers. The version is read before
// computing, so an answer computed across a change is filed under the older version.
func cachedJSON(c echo.Context, rc *responseCache, version func() uint64, key string, compute func() (any, error)) error {
	v := version()
	if body, ok := rc.get(v, key); ok {
		return c.JSONBlob(http.StatusOK, body)
	}
	value, err := compute()
	if err != nil {
		return err
	}
	body, err := json.Marshal(value)
	if err != nil {
		return err
	}
	rc.put(v, key, body)
	return c.JSONBlob(http.StatusOK, body)
}
