package store

import (
	"time"

	"github.com/alexedwards/scs/pgxstore"
)

// Sessions is the server-side session store (the sessions table of 0003_auth). With a
// cleanup interval above zero it deletes expired sessions in the background until
// StopCleanup is called.
func (s *Store) Sessions(cleanup time.Duration) *pgxstore.PostgresStore {
	return pgxstore.NewWithCleanupInterval(s.pool, cleanup)
}
