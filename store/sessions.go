package store

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
)

// SessionStore is the server-side session store of scs (the sessions table of 0003_auth). It
// implements scs.CtxStore, so each call runs under the request's context and, like every store
// call, under the store's deadline: a stalled database fails a request's session load with
// ErrUnavailable instead of hanging it. (scs's pgxstore runs every query with
// context.Background(), unbounded.)
type SessionStore struct {
	s           *Store
	stopCleanup chan struct{}
	stopped     chan struct{}
}

// Sessions returns the session store. With a cleanup interval above zero it deletes expired
// sessions in the background until StopCleanup is called.
func (s *Store) Sessions(cleanup time.Duration) *SessionStore {
	ss := &SessionStore{s: s}
	if cleanup > 0 {
		ss.stopCleanup, ss.stopped = make(chan struct{}), make(chan struct{})
		go ss.cleanup(cleanup)
	}
	return ss
}

// FindCtx returns the data of an unexpired session; found is false when there is none.
func (ss *SessionStore) FindCtx(ctx context.Context, token string) (b []byte, found bool, err error) {
	err = ss.s.pool.QueryRow(ctx, `SELECT data FROM sessions WHERE token = $1 AND current_timestamp < expiry`, token).Scan(&b)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, classify(err)
	}
	return b, true, nil
}

// CommitCtx stores a session's data and expiry, replacing what the token had.
func (ss *SessionStore) CommitCtx(ctx context.Context, token string, b []byte, expiry time.Time) error {
	_, err := ss.s.pool.Exec(ctx, `INSERT INTO sessions (token, data, expiry) VALUES ($1, $2, $3)
		ON CONFLICT (token) DO UPDATE SET data = EXCLUDED.data, expiry = EXCLUDED.expiry`, token, b, expiry)
	return classify(err)
}

// DeleteCtx removes a session.
func (ss *SessionStore) DeleteCtx(ctx context.Context, token string) error {
	_, err := ss.s.pool.Exec(ctx, `DELETE FROM sessions WHERE token = $1`, token)
	return classify(err)
}

// AllCtx returns the data of every unexpired session by token.
func (ss *SessionStore) AllCtx(ctx context.Context) (map[string][]byte, error) {
	rows, err := ss.s.pool.Query(ctx, `SELECT token, data FROM sessions WHERE current_timestamp < expiry`)
	if err != nil {
		return nil, classify(err)
	}
	all := map[string][]byte{}
	var token string
	var data []byte
	_, err = pgx.ForEachRow(rows, []any{&token, &data}, func() error {
		all[token] = data
		return nil
	})
	return all, classify(err)
}

// Find, Commit, Delete and All are the context-free methods of scs.Store; scs calls the
// *Ctx ones above, these are for completeness and still bounded by the store's deadline.
func (ss *SessionStore) Find(token string) ([]byte, bool, error) {
	return ss.FindCtx(context.Background(), token)
}
func (ss *SessionStore) Commit(token string, b []byte, expiry time.Time) error {
	return ss.CommitCtx(context.Background(), token, b, expiry)
}
func (ss *SessionStore) Delete(token string) error {
	return ss.DeleteCtx(context.Background(), token)
}
func (ss *SessionStore) All() (map[string][]byte, error) { return ss.AllCtx(context.Background()) }

func (ss *SessionStore) cleanup(interval time.Duration) {
	defer close(ss.stopped)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ss.stopCleanup:
			return
		case <-t.C:
			_, _ = ss.s.pool.Exec(context.Background(), `DELETE FROM sessions WHERE expiry < current_timestamp`)
		}
	}
}

// StopCleanup ends the background deletion of expired sessions and waits for it.
func (ss *SessionStore) StopCleanup() {
	if ss.stopCleanup != nil {
		close(ss.stopCleanup)
		<-ss.stopped
		ss.stopCleanup = nil
	}
}
