package web_test

import (
	"context"
	"maps"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/views"
	"github.com/arbiterhq/arbiter/web"
	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"golang.org/x/net/html"
)

// fakePods stands in for the scheduler's last view of the workloads' pods.
type fakePods map[string][]views.WorkloadPod

func (f fakePods) WorkloadPods(uid string) ([]views.WorkloadPod, bool) {
	p, ok := f[uid]
	return p, ok
}

func (f fakePods) Pods() []views.WorkloadPod {
	var all []views.WorkloadPod
	for _, uid := range slices.Sorted(maps.Keys(f)) {
		all = append(all, f[uid]...)
	}
	return all
}

// storyStatus stands in for the scheduler's last cycle's figures: pool default has 8 GPUs, 6 allocated;
// project alpha uses 4 there, all non-preemptible.
type storyStatus struct{}

func (storyStatus) NodePoolStatus(pool string) views.NodePoolStatus {
	if pool == "default" {
		return views.NodePoolStatus{Nodes: 2, ReadyNodes: 2, GPUs: 8, AllocatedGPUs: 6}
	}
	return views.NodePoolStatus{}
}

func (storyStatus) Usage(kind, name, pool string) views.Usage {
	if kind == "project" && name == "alpha" && pool == "default" {
		return views.Usage{Allocated: 4, AllocatedNonPreemptible: 4}
	}
	return views.Usage{}
}

// storyFixture adds to the workload fixture a victim in alpha, preempted by train-b under S16
// and now waiting again, and beta-job reclaimed by gamma-job under S17.
func storyFixture(t *testing.T) (*workloadFixture, string) {
	t.Helper()
	f := newWorkloadAPI(t, &fakeLabeler{})
	victim := uuid.NewString()
	rec := store.WorkloadRecord{UID: victim, Namespace: "team-alpha", Name: "victim", Kind: "Job", APIGroup: "batch", TypeName: "Job",
		CategoryName: "Train", ProjectName: "alpha", DepartmentName: "research", PriorityName: "low", PriorityValue: 40,
		Preemptibility: "non-preemptible", Phase: "Pending", Gang: 2, RequestedGPUs: 2, QueuedAt: f.at(0), QueuePosition: 2,
		Reason:  "NonPreemptibleOverQuota",
		Message: "You have reached the limit of non-preemptible resources: project alpha would use 6 GPUs of non-preemptible work in pool default, deserved 4; submit it as preemptible or wait for other non-preemptible work to finish."}
	three := 3
	events := []store.WorkloadEvent{
		{WorkloadUID: victim, At: f.at(0), Kind: "Queued", Message: "Queued in project alpha at priority low."},
		{WorkloadUID: victim, At: f.at(1), Kind: "Admitted", Message: "Admitted on [n1] in node pool default with 2 GPUs."},
		{WorkloadUID: victim, At: f.at(3), Kind: "Preempted", Reason: "S16", PreemptorUID: f.trainB,
			Message: "Preempted by team-alpha/train-b under S16 (a higher-priority workload of the same project); 2 GPUs freed; exit code 3006"},
		{WorkloadUID: victim, At: f.at(4), Kind: "PriorityChanged", Actor: "Ada", Message: "Changed priority from low to medium by Ada."},
		{WorkloadUID: f.betaJob, At: f.at(5), Kind: "Reclaimed", Reason: "S17", PreemptorUID: f.gammaJob, Borrowed: &three,
			Message: "Preempted by team-gamma/gamma-job under S17 (another project reclaiming its deserved quota); 2 GPUs freed; exit code 3006"},
	}
	if err := f.st.RecordWorkloads(context.Background(), withProjectIDs(t, f.st, []store.WorkloadRecord{rec}), events); err != nil {
		t.Fatal(err)
	}
	return f, victim
}

// page GETs a page with token and parses it; want is the status expected.
func page(t *testing.T, srv *httptest.Server, token, path string, want int) *html.Node {
	t.Helper()
	r := doAs(t, srv, token, "GET", path, "", "")
	if r.status != want {
		t.Fatalf("GET %s = %d, want %d: %.300s", path, r.status, want, r.body)
	}
	doc, err := html.Parse(strings.NewReader(string(r.body)))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func byID(doc *html.Node, id string) *html.Node {
	return findNode(doc, func(n *html.Node) bool { return attr(n, "id") == id })
}

// words is a node's text with its white space collapsed.
func words(n *html.Node) string {
	if n == nil {
		return ""
	}
	return strings.Join(strings.Fields(spaced(n)), " ")
}

// spaced is a node's text with a space between elements, so table cells read apart.
func spaced(n *html.Node) string {
	if n.Type == html.TextNode {
		return n.Data
	}
	var b strings.Builder
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		b.WriteString(spaced(c))
		if c.Type == html.ElementNode && (c.Data == "td" || c.Data == "th" || c.Data == "li" || c.Data == "p" || c.Data == "div") {
			b.WriteString(" ")
		}
	}
	return b.String()
}

// links lists the hrefs of a node's links.
func links(n *html.Node) []string {
	var out []string
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && n.Data == "a" {
			out = append(out, attr(n, "href"))
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	if n != nil {
		walk(n)
	}
	return out
}

// TestWorkloadStoryNamesPreemptorAndRule: a preempted workload's page says who preempted it,
// under which rule, and how to avoid it, links the preemptor, and tells its next step with the
// pool's and project's figures.
func TestWorkloadStoryNamesPreemptorAndRule(t *testing.T) {
	t.Parallel()
	f, victim := storyFixture(t)
	d := deps(f.st)
	d.Workloads, d.OrgStatus = f.st, storyStatus{}
	d.Pods = fakePods{victim: {{Name: "victim-a", Phase: "Pending", GPUs: 1}, {Name: "victim-b", Node: "n2", Phase: "Bound", GPUs: 1}}}
	srv := httptest.NewServer(web.New(d))
	t.Cleanup(srv.Close)
	admin := newAPIKey(t, f.st, "admin", "system", "")

	doc := page(t, srv, admin, "/workloads/"+victim, 200)
	why := byID(doc, "why")
	if got, want := words(why), "by team-alpha/train-b under S16 (in-project priority"; !strings.Contains(got, want) {
		t.Errorf("why says %q, want it to contain %q", got, want)
	}
	if got, want := words(why), "Next time: run it non-preemptible within project alpha's deserved quota, or at a higher priority"; !strings.Contains(got, want) {
		t.Errorf("why says %q, want %q", got, want)
	}
	if diff := cmp.Diff([]string{"/workloads/" + f.trainB}, links(why)); diff != "" {
		t.Errorf("why's links (-want +got):\n%s", diff)
	}
	timeline := byID(doc, "timeline")
	for _, want := range []string{"Queued", "Admitted", "Preempted S16", "(preemptor: team-alpha/train-b)", "PriorityChanged Changed priority from low to medium by Ada."} {
		if !strings.Contains(words(timeline), want) {
			t.Errorf("the timeline %q does not contain %q", words(timeline), want)
		}
	}
	if diff := cmp.Diff([]string{"/workloads/" + f.trainB}, links(timeline)); diff != "" {
		t.Errorf("timeline links (-want +got):\n%s", diff)
	}
	want := "Needs 2 GPUs in pool default; 2 of the pool's 8 are free; project alpha has used 4 of its 0 deserved GPUs for non-preemptible work, " +
		"so a non-preemptible workload cannot start beyond them. Submit it as preemptible (it may then borrow idle GPUs), or wait for the project's other non-preemptible work to finish."
	if got := words(byID(doc, "next-step")); got != want {
		t.Errorf("next step:\n got %q\nwant %q", got, want)
	}
	if got := words(byID(doc, "story-next").Parent); !strings.Contains(got, "position 2 in project alpha's queue") {
		t.Errorf("the next-step card %q does not give the queue position", got)
	}
	pods := words(findNode(doc, func(n *html.Node) bool { return strings.Contains(attr(n, "class"), "story-pods") }))
	for _, want := range []string{"victim-a — Pending 1", "victim-b n2 Bound 1"} {
		if !strings.Contains(pods, want) {
			t.Errorf("pods %q do not contain %q", pods, want)
		}
	}

	// A reclaim under S17 names what the project borrowed; the preemptor in a project the
	// caller may not read is named without a link.
	deptAdmin := newAPIKey(t, f.st, "department-admin", "department", f.research)
	doc = page(t, srv, deptAdmin, "/workloads/"+f.betaJob, 200)
	why = byID(doc, "why")
	for _, want := range []string{"Reclaimed at", "by team-gamma/gamma-job under S17 (reclaim of borrowed GPUs", "project beta was using 3 GPUs beyond its deserved quota"} {
		if !strings.Contains(words(why), want) {
			t.Errorf("why %q does not contain %q", words(why), want)
		}
	}
	if l := links(why); len(l) != 0 {
		t.Errorf("why links %v to a workload the caller may not read", l)
	}

	// Without a cluster the page says so; a workload the caller may not read is a 404.
	doc = page(t, f.srv, admin, "/workloads/"+victim, 200)
	if got := words(doc); !strings.Contains(got, "No cluster connected") {
		t.Errorf("without a cluster the page does not say so: %q", got)
	}
	alphaViewer := newAPIKey(t, f.st, "viewer", "project", f.alpha)
	page(t, srv, alphaViewer, "/workloads/"+victim, 200)
	page(t, srv, alphaViewer, "/workloads/"+f.betaJob, 404)
	page(t, srv, admin, "/workloads/"+uuid.NewString(), 404)
}

// TestStoryPageFollowsTheWorkloadAndShowsThePrediction: a workload's page refreshes itself
// (htmx, every few seconds, from its own address) while the workload has not finished, and
// not once it has; the victims the Submit page's dry run named, carried in the address, are
// shown as that prediction, named from their records: linked when the caller may open them,
// else only by project; one since preempted for this workload says so.
func TestStoryPageFollowsTheWorkloadAndShowsThePrediction(t *testing.T) {
	t.Parallel()
	f, victim := storyFixture(t)
	admin := tokenOf(f.srv)
	live := func(doc *html.Node) *html.Node { return byID(doc, "workload-live") }
	doc := page(t, f.srv, admin, "/workloads/"+f.trainA, 200)
	if l := live(doc); l == nil || attr(l, "hx-get") != "/workloads/"+f.trainA || !strings.HasPrefix(attr(l, "hx-trigger"), "every ") || attr(l, "hx-select") != "#workload-live" {
		t.Errorf("a pending workload's page does not refresh itself: %v", l)
	}
	if l := live(page(t, f.srv, admin, "/workloads/"+f.serveC, 200)); l == nil || attr(l, "hx-get") != "" || attr(l, "hx-trigger") != "" {
		t.Errorf("a finished workload's page still refreshes itself: %v", l)
	}
	if byID(doc, "predicted-victims") != nil {
		t.Error("a page opened without a prediction shows one")
	}

	// train-b preempted victim (its history says so); beta-job is beta's, which an alpha
	// researcher may not open; a made-up id is no workload.
	path := "/workloads/" + f.trainB + "?predicted=start-after-preemption&victim=" + victim + "&victim=" + f.betaJob + "&victim=" + uuid.NewString()
	researcher := newAPIKey(t, f.st, "researcher", "project", f.alpha)
	doc = page(t, f.srv, researcher, path, 200)
	p := byID(doc, "predicted-victims")
	if p == nil {
		t.Fatal("no prediction on the landing page")
	}
	if l := live(doc); attr(l, "hx-get") != path {
		t.Errorf("the page refreshes from %q, want its own address %q (keeping the prediction)", attr(l, "hx-get"), path)
	}
	text := words(p)
	for _, want := range []string{"The dry run at submission predicted it would preempt these, then start:",
		"team-alpha/victim project alpha preempted for it", "a workload you cannot open project beta", "This is the prediction, not a record"} {
		if !strings.Contains(text, want) {
			t.Errorf("the prediction reads %q, want %q in it", text, want)
		}
	}
	links := findAll(p, func(n *html.Node) bool { return n.Data == "a" })
	if len(links) != 1 || attr(links[0], "href") != "/workloads/"+victim {
		t.Errorf("the prediction links %d workloads, want the victim only", len(links))
	}
	if strings.Contains(text, "beta-job") || strings.Count(text, "project") != 2 {
		t.Errorf("the prediction reads %q: it names what the caller may not open, or lists a made-up id", text)
	}
	// Only the dry run's outcomes with victims are shown; anything else in the address is not.
	if byID(page(t, f.srv, admin, "/workloads/"+f.trainB+"?predicted=start-now&victim="+victim, 200), "predicted-victims") != nil {
		t.Error("a prediction without victims' outcome is shown")
	}
}

// groupedPods is fakePods with the sentence saying which rule grouped each workload.
type groupedPods struct {
	fakePods
	by map[string]string
}

func (g groupedPods) WorkloadGrouping(uid string) string { return g.by[uid] }

// TestWorkloadStorySaysWhichRuleGroupedItsPods: a workload whose top owner is of a kind
// Arbiter does not know says so on its page, with where its gang came from.
func TestWorkloadStorySaysWhichRuleGroupedItsPods(t *testing.T) {
	t.Parallel()
	f, victim := storyFixture(t)
	d := deps(f.st)
	d.Workloads, d.OrgStatus = f.st, storyStatus{}
	const sentence = "Grouped by owner Gadget/g (kind not known: gang = the 2 pods that exist)."
	d.Pods = groupedPods{fakePods{victim: {{Name: "g-0", Phase: "Pending", GPUs: 1}, {Name: "g-1", Phase: "Pending", GPUs: 1}}},
		map[string]string{victim: sentence}}
	srv := httptest.NewServer(web.New(d))
	t.Cleanup(srv.Close)
	admin := newAPIKey(t, f.st, "admin", "system", "")
	if got := words(byID(page(t, srv, admin, "/workloads/"+victim, 200), "pods-grouping")); got != sentence {
		t.Errorf("the pods section says %q, want %q", got, sentence)
	}
}

// The workload's page says, beside its priority and preemptibility, where each came from as
// the scheduler recorded it; a workload not resolved yet says nothing of it.
func TestWorkloadStorySaysWhereItsPriorityAndPreemptibilityCameFrom(t *testing.T) {
	t.Parallel()
	f, _ := storyFixture(t)
	d := deps(f.st)
	d.Workloads, d.OrgStatus, d.Pods = f.st, storyStatus{}, fakePods{}
	srv := httptest.NewServer(web.New(d))
	t.Cleanup(srv.Close)
	admin := newAPIKey(t, f.st, "admin", "system", "")

	doc := page(t, srv, admin, "/workloads/"+f.trainB, 200)
	for id, want := range map[string]string{"story-priority-from": trainBPriorityFrom, "story-preemptibility-from": trainBPreemptibilityFrom} {
		if n := byID(doc, id); n == nil || words(n) != want {
			t.Errorf("#%s says %q, want %q", id, words(n), want)
		}
	}
	doc = page(t, srv, admin, "/workloads/"+f.trainA, 200)
	for _, id := range []string{"story-priority-from", "story-preemptibility-from"} {
		if n := byID(doc, id); n != nil {
			t.Errorf("train-a, not resolved yet, has #%s %q", id, words(n))
		}
	}
}
