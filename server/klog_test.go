package server

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"k8s.io/klog/v2"
)

// What client-go logs through klog, errors included (one per retry while the API server is
// down), shows only at debug level.
func TestRouteKlog_DebugOnly(t *testing.T) {
	for _, tc := range []struct {
		level slog.Level
		shown bool
	}{{slog.LevelInfo, false}, {slog.LevelDebug, true}} {
		var buf bytes.Buffer
		RouteKlog(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: tc.level})))
		klog.ErrorS(errors.New("connection refused"), "Failed to watch")
		klog.InfoS("lease renewed")
		klog.Flush()
		out := buf.String()
		if got := strings.Contains(out, "Failed to watch"); got != tc.shown {
			t.Errorf("at level %s, klog's error shown: %v, want %v; log:\n%s", tc.level, got, tc.shown, out)
		}
		if tc.shown && !strings.Contains(out, "level=DEBUG") {
			t.Errorf("klog's lines are not at debug level:\n%s", out)
		}
	}
	klog.ClearLogger()
}
