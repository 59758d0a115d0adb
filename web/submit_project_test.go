package web_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/google/uuid"
	"golang.org/x/net/html"
)

// TestSubmitRefusesAProjectTheCallerMayNotUse: POST /submit with a project the caller may
// not submit to (or none that exists) is refused with the sentence beside the project select,
// and nothing is submitted; it is never swapped silently for a project the caller may use.
func TestSubmitRefusesAProjectTheCallerMayNotUse(t *testing.T) {
	t.Parallel()
	f := newSubmitAPIWith(t, nil)
	researcher := newAPIKey(t, f.st, "researcher", "project", f.alpha)
	for _, project := range []string{f.beta, uuid.NewString(), "not-an-id"} {
		before := f.cluster.count()
		status, location, body := submitFormPost(t, f.srv.URL, researcher, url.Values{"type": {"trainings"}, "projectId": {project},
			"name": {"swapped"}, "spec.image": {"python"}, "spec.compute.gpuDevicesRequest": {"1"}})
		doc, _ := html.Parse(strings.NewReader(body))
		label := findNode(doc, func(n *html.Node) bool {
			return n.Data == "label" && findNode(n, func(s *html.Node) bool { return s.Data == "select" && attr(s, "name") == "projectId" }) != nil
		})
		var alert *html.Node
		if label != nil {
			alert = findNode(label, func(n *html.Node) bool { return attr(n, "role") == "alert" })
		}
		if status != 400 || alert == nil || !strings.Contains(textOf(alert), "may not submit to") {
			t.Errorf("projectId %s for a researcher of alpha = %d %s; want 400 with the sentence at the project: %.400s", project, status, location, body)
		}
		if f.cluster.count() != before {
			t.Errorf("projectId %s: a workload was submitted", project)
		}
	}
}
