package web

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/arbiterhq/arbiter/store"
	"github.com/labstack/echo/v4"
)

// RefusalCounter hears of every refused request (the metric arbiter_refused_requests_total):
// the route's path template and one of the reasons below.
type RefusalCounter interface {
	Refused(route, reason string)
}

type noRefusalCounter struct{}

func (noRefusalCounter) Refused(string, string) {}

// Why a request was refused before it changed anything: the reason label of
// arbiter_refused_requests_total and the "reason" of a refusal's audit row.
const (
	refusedUnauthenticated = "unauthenticated" // 401: no credential, or one that is not valid
	refusedForbidden       = "forbidden"       // 403: the caller's role does not allow it, or a CSRF check failed
	refusedAnonymous       = "anonymous"       // another 4xx answered to a caller without credentials
	refusedUnknownClient   = "unknown_client"  // a client-credential grant naming no API key that exists
	refusedUnknownAccount  = "unknown_account" // a password sign-in naming no account that exists
	refusedUnknownRefresh  = "unknown_refresh" // a refresh_token grant with a token unknown, expired or revoked
	refusedThrottled       = "throttled"       // 429: the sign-in throttle holds the account or address
	refusedLimited         = "limited"         // 429: a concurrency bound (dry runs, CSV exports) is full
	refusedBusy            = "busy"            // 503: every password check slot is taken
	refusedBadGrant        = "bad_grant"       // a token request that does not say what it asks, or mixes two keys
	// An identity provider's sign-in that did not complete, by what went wrong.
	refusedOIDCState    = "oidc_state"          // the callback's state is not this browser's sign-in
	refusedOIDCProvider = "oidc_provider_error" // the provider answered an error
	refusedOIDCExchange = "oidc_exchange"       // the provider refused to trade the code for tokens
	refusedOIDCNonce    = "oidc_nonce"          // the ID token's nonce is not this sign-in's
	refusedOIDCExpired  = "oidc_expired"        // the ID token has expired
	refusedOIDCToken    = "oidc_token_invalid"  // the ID token did not verify otherwise
)

// Refusals are counted each, but written to the audit log sampled: a caller without
// credentials can send as many as the network carries, and a row each (about 550 bytes) would
// grow the log and slow every writer without bound. Of each kind of refusal (reason, method,
// route and, for a signed-in caller, its subject) the first is written at once; the further ones
// within refusalWindow are folded into the kind's next row, written when the next one comes
// after the window or by the periodic flush (RunRefusalFlush), whichever is first. Every row
// says how many refusals it stands for ("refusals", itself included) and when the first of
// them came ("firstAt"), so the log's rows still add up to every refusal. At most one row per
// kind and window per replica.
const (
	refusalWindow = time.Minute
	// refusalKinds bounds the kinds remembered at once (about 1 KB each). Past it, a refusal
	// of a new kind is folded into its reason's catch-all kind (method, route, subject "*"): at most
	// refusalKinds + one per reason entries.
	refusalKinds = 1024
	// refusalFlushEvery is how often the folded refusals of kinds whose window has passed are
	// written: a kind's tail is on record at most refusalWindow + refusalFlushEvery late.
	refusalFlushEvery = 15 * time.Second
)

type refusalKind struct{ reason, method, route, subject string }

// foldedRefusals is what a kind holds between its rows.
type foldedRefusals struct {
	lastRow time.Time        // when the kind's last row was written
	count   int              // refusals since, not written
	firstAt time.Time        // when the first of them came
	latest  store.AuditEntry // the last of them, which the row that tells of them shows
}

// refusalLog counts refusals and writes their sampled audit rows.
type refusalLog struct {
	audit   AuditStore // nil: no audit log (tests of routing only)
	counter RefusalCounter
	log     *slog.Logger
	now     func() time.Time

	mu    sync.Mutex
	kinds map[refusalKind]*foldedRefusals
}

func newRefusalLog(audit AuditStore, counter RefusalCounter, log *slog.Logger) *refusalLog {
	if counter == nil {
		counter = noRefusalCounter{}
	}
	return &refusalLog{audit: audit, counter: counter, log: log, now: time.Now, kinds: map[refusalKind]*foldedRefusals{}}
}

// refused counts one refusal of c's request and writes its audit row e, or folds it into
// its kind's next row. subject names a signed-in caller (its refusals are a kind of their
// own); "" for a caller without credentials, whatever it claimed to be.
func (l *refusalLog) refused(c echo.Context, reason, subject string, e store.AuditEntry) {
	route := routeOf(c)
	l.counter.Refused(route, reason)
	if l.audit == nil {
		return
	}
	now := l.now()
	k := refusalKind{reason: reason, method: c.Request().Method, route: route, subject: subject}
	l.mu.Lock()
	f, ok := l.kinds[k]
	if !ok && len(l.kinds) >= refusalKinds {
		l.forgetQuietKinds(now)
		if len(l.kinds) >= refusalKinds {
			k = refusalKind{reason: reason, method: "*", route: "*", subject: "*"}
			f, ok = l.kinds[k]
		}
	}
	if ok && now.Sub(f.lastRow) < refusalWindow {
		if f.count == 0 {
			f.firstAt = now
		}
		f.count++
		f.latest = e
		l.mu.Unlock()
		return
	}
	count, firstAt := 1, now
	if ok && f.count > 0 {
		count, firstAt = f.count+1, f.firstAt
	}
	l.kinds[k] = &foldedRefusals{lastRow: now}
	l.mu.Unlock()
	l.write(context.WithoutCancel(c.Request().Context()), reason, count, firstAt, e)
}

// forgetQuietKinds drops the kinds with nothing folded whose window has passed: their next
// refusal is written at once anyway. l.mu is held.
func (l *refusalLog) forgetQuietKinds(now time.Time) {
	for k, f := range l.kinds {
		if f.count == 0 && now.Sub(f.lastRow) >= refusalWindow {
			delete(l.kinds, k)
		}
	}
}

// flush writes a row for each kind holding folded refusals whose window has passed (every
// such kind when all is set: the server is stopping), and forgets quiet kinds.
func (l *refusalLog) flush(ctx context.Context, all bool) {
	if l.audit == nil {
		return
	}
	type due struct {
		reason  string
		count   int
		firstAt time.Time
		latest  store.AuditEntry
	}
	now := l.now()
	var rows []due
	l.mu.Lock()
	for k, f := range l.kinds {
		if f.count > 0 && (all || now.Sub(f.lastRow) >= refusalWindow) {
			rows = append(rows, due{reason: k.reason, count: f.count, firstAt: f.firstAt, latest: f.latest})
			*f = foldedRefusals{lastRow: now}
		}
	}
	l.forgetQuietKinds(now)
	l.mu.Unlock()
	for _, r := range rows {
		l.write(ctx, r.reason, r.count, r.firstAt, r.latest)
	}
}

// write records e as the row of count refusals, the first at firstAt.
func (l *refusalLog) write(ctx context.Context, reason string, count int, firstAt time.Time, e store.AuditEntry) {
	changes := map[string]any{"reason": reason, "refusals": count, "firstAt": firstAt.UTC().Format(time.RFC3339)}
	for field, v := range e.Changes {
		changes[field] = v
	}
	e.Changes = changes
	if err := l.audit.RecordAudit(ctx, e); err != nil {
		l.log.Warn("audit row of refused requests not written", "reason", reason, "refusals", count, "err", err)
	}
}

// RunRefusalFlush writes the folded refusals of each kind once its window has passed, every
// refusalFlushEvery, until ctx ends; then it writes what is still folded, within
// refusalFlushTimeout.
func (s *Server) RunRefusalFlush(ctx context.Context) {
	tick := time.NewTicker(refusalFlushEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			last, cancel := context.WithTimeout(context.WithoutCancel(ctx), refusalFlushTimeout)
			defer cancel()
			s.refusals.flush(last, true)
			return
		case <-tick.C:
			s.refusals.flush(ctx, false)
		}
	}
}

// refusalFlushTimeout bounds the last flush when the server stops.
const refusalFlushTimeout = 5 * time.Second

// FlushRefusals writes every kind's folded refusals now, window or not.
func (s *Server) FlushRefusals(ctx context.Context) { s.refusals.flush(ctx, true) }
