package server

import (
	"context"
	"log/slog"

	"k8s.io/klog/v2"
)

// RouteKlog sends what client-go logs through klog (a reflector's failed watch, a lease not
// renewed: one line per retry while the API server is down) to log at debug level. Arbiter
// says once, at warn level, that the API server is unreachable (clusterHealth) and that it
// stopped leading (leadership); the retries are detail. klog is process-wide: call once.
func RouteKlog(log *slog.Logger) {
	klog.SetSlogLogger(slog.New(debugOnly{log.Handler()}))
}

// debugOnly lowers every record to debug.
type debugOnly struct{ slog.Handler }

func (h debugOnly) Enabled(ctx context.Context, _ slog.Level) bool {
	return h.Handler.Enabled(ctx, slog.LevelDebug)
}

// Handle also checks the level: logr hands klog's errors (a reflector's failed watch) to
// Handle without asking Enabled, so without the check they would show at info level.
func (h debugOnly) Handle(ctx context.Context, r slog.Record) error {
	if !h.Handler.Enabled(ctx, slog.LevelDebug) {
		return nil
	}
	r.Level = slog.LevelDebug
	return h.Handler.Handle(ctx, r)
}

func (h debugOnly) WithAttrs(attrs []slog.Attr) slog.Handler {
	return debugOnly{h.Handler.WithAttrs(attrs)}
}

func (h debugOnly) WithGroup(name string) slog.Handler { return debugOnly{h.Handler.WithGroup(name)} }
