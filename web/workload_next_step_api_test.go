package web_test

import (
	"strings"
	"testing"

	"github.com/arbiterhq/arbiter/views"
)

// GET /api/v1/workloads/{id} says what a waiting workload waits for and what would let it
// start, as its page does (the command line's describe prints it); a running one has none,
// and lists leave it out.
func TestWorkloadAPI_SaysTheNextStep(t *testing.T) {
	t.Parallel()
	f := newWorkloadAPI(t, &fakeLabeler{})
	a := getAs[views.Workload](t, f.srv, "/api/v1/workloads/"+f.trainA)
	if a.NextStep == "" || !strings.Contains(string(get(t, f.srv, "/workloads/"+f.trainA).body), a.NextStep[:20]) {
		t.Errorf("train-a waits, and its next step in the API is %q, not what its page says", a.NextStep)
	}
	if b := getAs[views.Workload](t, f.srv, "/api/v1/workloads/"+f.trainB); b.NextStep != "" {
		t.Errorf("train-b runs, yet its next step is %q", b.NextStep)
	}
	if list := string(get(t, f.srv, "/api/v1/workloads").body); strings.Contains(list, `"nextStep"`) {
		t.Errorf("the list answers nextStep: %.300s", list)
	}
}
