package store_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/arbiterhq/arbiter/internal/testkit/testdb"
	"github.com/arbiterhq/arbiter/store"
)

// TestOneWorkloadCannotStopRecording: text copied from Kubernetes objects is bounded and
// sanitised before it is written (a 3.2 KB submitter would not fit the submitter index, a NUL
// is refused by PostgreSQL), and a row that still fails is skipped and reported, never failing
// the batch of the healthy ones beside it.
func TestOneWorkloadCannotStopRecording(t *testing.T) {
	t.Parallel()
	st := store.New(testdb.New(t))
	var mu sync.Mutex
	var skipped []string
	st.OnRecordSkipped(func(what, uid string, err error) {
		mu.Lock()
		defer mu.Unlock()
		skipped = append(skipped, what+" "+uid)
	})
	ctx := context.Background()
	now := time.Now()
	rec := func(uid string) store.WorkloadRecord {
		return store.WorkloadRecord{UID: uid, Namespace: "team-a", Name: uid, Kind: "Job", APIGroup: "batch", TypeName: "Job",
			Phase: "Pending", Gang: 1, RequestedGPUs: 1, QueuedAt: now}
	}
	long := rec("long")
	long.Submitter = strings.Repeat("x", 3200)
	long.Message = strings.Repeat("m", 100_000)
	nul := rec("nul")
	nul.Submitter = "ann\x00evil"
	nul.Name = "train\x00\xff"
	nul.Reason = "Bad\x00Reason"
	nul.Nodes = []string{"node-\x001"}
	bad := rec("bad")
	bad.Phase = "Bogus" // refused by the table's check whatever its text: skipped
	records := []store.WorkloadRecord{rec("ok-1"), long, nul, bad, rec("ok-2")}
	events := []store.WorkloadEvent{
		{WorkloadUID: "ok-1", Kind: "Queued", Message: "queued"},
		{WorkloadUID: "nul", Kind: "Queued", Reason: "x\x00y", Message: "a\x00b" + strings.Repeat("é", 50_000)},
		{WorkloadUID: "ok-2", Kind: "Nonsense"}, // refused by the check: skipped
		{WorkloadUID: "ok-2", Kind: "Queued", Message: "queued"},
	}
	if err := st.RecordWorkloads(ctx, records, events); err != nil {
		t.Fatalf("RecordWorkloads: %v", err)
	}
	for _, uid := range []string{"ok-1", "ok-2", "long", "nul"} {
		got, err := st.WorkloadRecord(ctx, uid)
		if err != nil {
			t.Fatalf("record %s: %v", uid, err)
		}
		for field, v := range map[string]string{"name": got.Name, "submitter": got.Submitter, "reason": got.Reason, "message": got.Message} {
			if strings.ContainsRune(v, 0) || !utf8.ValidString(v) {
				t.Errorf("%s: %s %q holds a NUL or invalid UTF-8", uid, field, v)
			}
		}
		if len(got.Submitter) > store.MaxSubmitterBytes || len(got.Message) > store.MaxMessageBytes {
			t.Errorf("%s: submitter of %d bytes, message of %d: not bounded", uid, len(got.Submitter), len(got.Message))
		}
	}
	if got, _ := st.WorkloadRecord(ctx, "nul"); got.Submitter != "annevil" || got.Name != "train\uFFFD" || got.Nodes[0] != "node-1" {
		t.Errorf("nul: submitter %q, name %q, nodes %q", got.Submitter, got.Name, got.Nodes)
	}
	if got, _ := st.WorkloadRecord(ctx, "long"); got.Submitter != strings.Repeat("x", store.MaxSubmitterBytes) {
		t.Errorf("long: submitter of %d bytes, want the first %d", len(got.Submitter), store.MaxSubmitterBytes)
	}
	if _, err := st.WorkloadRecord(ctx, "bad"); err == nil {
		t.Error("the record refused by the table was written")
	}
	for uid, want := range map[string]int{"ok-1": 1, "ok-2": 1, "nul": 1} {
		evs, err := st.WorkloadEvents(ctx, uid)
		if err != nil || len(evs) != want {
			t.Fatalf("%s: %d events (%v), want %d", uid, len(evs), err, want)
		}
		for _, e := range evs {
			if strings.ContainsRune(e.Reason+e.Message, 0) || len(e.Message) > store.MaxMessageBytes || !utf8.ValidString(e.Message) {
				t.Errorf("%s: event not sanitised: reason %q, message of %d bytes", uid, e.Reason, len(e.Message))
			}
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(skipped, ",") != "record bad,event ok-2" {
		t.Errorf("skipped %q, want the record of bad and ok-2's Nonsense event", skipped)
	}
}
