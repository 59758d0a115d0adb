package server

import (
	"context"
	"log/slog"
	"time"
)

// The local admin account's password is hashed with argon2id (64 MiB, three passes on two
// threads): about a quarter of the CPU Arbiter used in its first two seconds on the 10,000-pod
// backlog, taken while the informers decoded their first lists on the same two cores, which
// is what the first bind waits for; and, stored as soon as the first cycle had decided, it
// took both cores while the first bind was on its way (seen 45 and 177 ms after the decision
// then, 51–59 ms once it waited). It is stored once the first bind has been answered instead;
// sign-in waits for it (web.LoginConfig.AdminReady), and the console is served meanwhile.

// adminBootstrapWait bounds how long the password waits for the first bind.
const adminBootstrapWait = 10 * time.Second

// adminBootstrapRetry is how long a failed store of the password waits before the next try.
const adminBootstrapRetry = 2 * time.Second

// firstBind waits for the scheduler's first bind to be answered, or its first cycle to bind
// nothing (nil: no cluster, nothing to wait for). A standby (another replica holds the
// lease) decides nothing: it waits for its lists only.
func firstBind(run *schedulerRun) func(context.Context) {
	return func(ctx context.Context) {
		if run == nil {
			return
		}
		ctx, cancel := context.WithTimeout(ctx, adminBootstrapWait)
		defer cancel()
		// past the bound, or at the end, the password goes on anyway
		if run.sched.WaitSynced(ctx) != nil || run.lead.Standby() {
			return
		}
		_ = run.sched.WaitFirstBind(ctx)
	}
}

// bootstrapAdmin stores the local admin's password once wait returns, trying again until it
// is stored or ctx ends, and then closes ready.
func bootstrapAdmin(ctx context.Context, wait func(context.Context), save func(context.Context) error, ready chan struct{}, log *slog.Logger) {
	wait(ctx)
	for ctx.Err() == nil {
		err := save(ctx)
		if err == nil {
			close(ready)
			return
		}
		log.Error("the local admin account's password is not stored yet; trying again", "err", err)
		select {
		case <-ctx.Done():
		case <-time.After(adminBootstrapRetry):
		}
	}
}
