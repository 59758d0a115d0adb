package e2e

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/arbiterhq/arbiter/store"
)

// TestOneJobCannotStopRecording: a Job whose arbiter.dev/submitted-by annotation is 3.2 KB
// (too large for the submitter index) and one whose annotation holds a NUL, among healthy
// Jobs: every Job is recorded, the odd ones with their text bounded and sanitised.
func TestOneJobCannotStopRecording(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1, 4)
	ns := e.project("rec", 4, store.PolicyUpdate{})
	const submitter = "arbiter.dev/submitted-by"
	uid := map[string]string{}
	uid["ok-1"] = string(e.job(jobSpec{name: "ok-1", namespace: ns}).UID)
	uid["long"] = string(e.job(jobSpec{name: "long", namespace: ns, annotations: map[string]string{submitter: strings.Repeat("a", 3200)}}).UID)
	uid["nul"] = string(e.job(jobSpec{name: "nul", namespace: ns, annotations: map[string]string{submitter: "ann\x00evil"}}).UID)
	uid["ok-2"] = string(e.job(jobSpec{name: "ok-2", namespace: ns}).UID)

	for name, id := range uid {
		e.eventually(name+" is recorded with its history", time.Minute, func() bool {
			_, err := e.store.WorkloadRecord(e.ctx, id)
			return err == nil && len(e.history(id)) > 0
		})
		r := e.record(id)
		if strings.ContainsRune(r.Submitter, 0) || !utf8.ValidString(r.Submitter) || len(r.Submitter) > store.MaxSubmitterBytes {
			t.Errorf("%s: submitter of %d bytes not bounded or sanitised: %q", name, len(r.Submitter), r.Submitter)
		}
	}
	if r := e.record(uid["nul"]); r.Submitter != "annevil" {
		t.Errorf("nul: submitter %q, want the annotation without its NUL", r.Submitter)
	}
	if r := e.record(uid["long"]); len(r.Submitter) != store.MaxSubmitterBytes {
		t.Errorf("long: submitter of %d bytes, want it cut to %d", len(r.Submitter), store.MaxSubmitterBytes)
	}
}
