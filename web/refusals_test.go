package web

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/labstack/echo/v4"

	"github.com/arbiterhq/arbiter/internal/testkit/testdb"
	"github.com/arbiterhq/arbiter/store"
)

// TestRefusalLogWritesOneRowPerKindAWindow: on a clock the test moves, the first refusal of a
// kind is written at once, the others of its window are folded into the kind's next row, the
// rows add up to every refusal, and past refusalKinds kinds a new kind is folded into its
// reason's catch-all rather than growing the map.
func TestRefusalLogWritesOneRowPerKindAWindow(t *testing.T) {
	t.Parallel()
	st := store.New(testdb.New(t))
	l := newRefusalLog(st, nil, slog.New(slog.DiscardHandler))
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	l.now = func() time.Time { return now }
	e := echo.New()
	refuse := func(route, subject string) {
		c := e.NewContext(httptest.NewRequest("POST", route, nil), httptest.NewRecorder())
		c.SetPath(route)
		l.refused(c, refusedUnauthenticated, subject, store.AuditEntry{Subject: "anonymous", SubjectType: "user",
			Action: "request", EntityType: route, Result: "denied", HTTPStatus: 401, Changes: map[string]any{}})
	}
	rows := func() []int { // how many refusals each row stands for, oldest first
		t.Helper()
		all, err := st.AuditEntries(context.Background(), 5000)
		if err != nil {
			t.Fatal(err)
		}
		var out []int
		for i := len(all) - 1; i >= 0; i-- {
			out = append(out, int(all[i].Changes["refusals"].(float64)))
		}
		return out
	}

	for range 10 { // 0 s .. 45 s: one window
		refuse("/a", "")
		now = now.Add(5 * time.Second)
	}
	if d := cmp.Diff([]int{1}, rows()); d != "" {
		t.Fatalf("rows within the first window (-want +got):\n%s", d)
	}
	now = now.Add(refusalWindow)
	refuse("/a", "") // past the window: written, with the nine folded before it
	if d := cmp.Diff([]int{1, 10}, rows()); d != "" {
		t.Fatalf("rows after the window (-want +got):\n%s", d)
	}
	refuse("/a", "")
	refuse("/a", "")
	l.flush(context.Background(), false) // the window of the last row has not passed
	if d := cmp.Diff([]int{1, 10}, rows()); d != "" {
		t.Fatalf("rows after an early flush (-want +got):\n%s", d)
	}
	now = now.Add(refusalWindow)
	l.flush(context.Background(), false)
	if d := cmp.Diff([]int{1, 10, 2}, rows()); d != "" {
		t.Fatalf("rows after the flush a window on (-want +got):\n%s", d)
	}

	for i := range refusalKinds + 50 { // more signed-in subjects than kinds are kept
		refuse("/b", fmt.Sprintf("user-%d", i))
	}
	l.mu.Lock()
	kinds := len(l.kinds)
	l.mu.Unlock()
	if kinds > refusalKinds+1 {
		t.Errorf("%d kinds remembered, want at most %d", kinds, refusalKinds+1)
	}
	l.flush(context.Background(), true)
	total := 0
	for _, n := range rows() {
		total += n
	}
	if want := 13 + refusalKinds + 50; total != want {
		t.Errorf("the rows stand for %d refusals, want %d", total, want)
	}
}
