package web_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/google/uuid"
	"golang.org/x/net/html"
)

// TestBulkIDListIsBounded: an explicit list of ids in one bulk change is bounded like "all
// matching the filter" (2,000), after duplicates are removed: past the bound a 400 with the
// sentence and nothing changed; an id sent many times is changed (and listed) once.
func TestBulkIDListIsBounded(t *testing.T) {
	t.Parallel()
	lab := &fakeLabeler{}
	f := newWorkloadAPI(t, lab)
	admin := tokenOf(f.srv)
	outcomes := func(doc *html.Node) []string {
		var out []string
		for _, li := range findAll(doc, func(n *html.Node) bool { return n.Data == "li" && strings.Contains(attr(n, "class"), "outcome") }) {
			out = append(out, strings.Join(strings.Fields(textOf(li)), " "))
		}
		return out
	}
	ids := []string{f.trainA}
	for range 2000 {
		ids = append(ids, uuid.NewString())
	}
	doc := pageAs(t, f.srv, admin, "/workloads/bulk", url.Values{"id": ids, "preemptibility": {"non-preemptible"}}, false, 400)
	if text := strings.Join(strings.Fields(textOf(doc)), " "); !strings.Contains(text, "2001 workloads are selected; one bulk change takes at most 2000") {
		t.Errorf("2001 ids: no sentence about the bound in %.300s", text)
	}
	if lab.count() != 0 {
		t.Errorf("2001 ids: %d label patches, want none", lab.count())
	}
	// 2,000 copies of one id and a few others are within the bound: each is changed once.
	dup := make([]string, 0, 2003)
	for range 2000 {
		dup = append(dup, f.trainA)
	}
	dup = append(dup, f.betaJob, f.trainA, f.betaJob)
	doc = pageAs(t, f.srv, admin, "/workloads/bulk", url.Values{"id": dup, "preemptibility": {"non-preemptible"}, "preview": {"true"}}, false, 200)
	if got := outcomes(doc); len(got) != 2 || !strings.HasPrefix(got[0], "train-a:") || !strings.HasPrefix(got[1], "beta-job:") {
		t.Errorf("duplicated ids: outcomes %q, want train-a and beta-job once each", got)
	}
}
