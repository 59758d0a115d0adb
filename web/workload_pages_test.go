package web_test

import (
	"encoding/base64"
	"encoding/csv"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"golang.org/x/net/html"
)

// pageAs GETs or POSTs (form non-nil) a console path with the bearer token, as htmx when asked,
// and parses the answer.
func pageAs(t *testing.T, srv *httptest.Server, token, path string, form url.Values, htmx bool, want int) *html.Node {
	t.Helper()
	method, body := "GET", ""
	if form != nil {
		method, body = "POST", form.Encode()
	}
	req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if htmx {
		req.Header.Set("HX-Request", "true")
	}
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := pageClient(srv).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	if res.StatusCode != want {
		t.Fatalf("%s %s = %d, want %d: %.600s", method, path, res.StatusCode, want, raw)
	}
	text := string(raw)
	if htmx && strings.HasPrefix(text, "<tr") {
		text = "<table><tbody>" + text + "</tbody></table>" // a row fragment, as htmx places it
	}
	if htmx && strings.HasPrefix(text, "<tbody") {
		text = "<table>" + text + "</table>" // a workload's rows, as htmx places them
	}
	doc, err := html.Parse(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// pageClients are the test servers' browsers: each follows redirects and keeps cookies (a
// flash set by a POST is read by the GET it redirects to).
var pageClients sync.Map

func pageClient(srv *httptest.Server) *http.Client {
	if c, ok := pageClients.Load(srv); ok {
		return c.(*http.Client)
	}
	jar, _ := cookiejar.New(nil)
	c, _ := pageClients.LoadOrStore(srv, &http.Client{Transport: srv.Client().Transport, Jar: jar})
	return c.(*http.Client)
}

// findAll is every element under n that matches.
func findAll(n *html.Node, match func(*html.Node) bool) []*html.Node {
	var out []*html.Node
	if n.Type == html.ElementNode && match(n) {
		out = append(out, n)
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		out = append(out, findAll(c, match)...)
	}
	return out
}

// rowNames are the names in the Workloads table's rows, in order.
func rowNames(doc *html.Node) string {
	var names []string
	for _, tr := range findAll(doc, func(n *html.Node) bool { return n.Data == "tr" && strings.Contains(attr(n, "class"), "workload-row") }) {
		names = append(names, textOf(findNode(tr, func(n *html.Node) bool { return n.Data == "strong" })))
	}
	return strings.Join(names, ",")
}

func rowOf(t *testing.T, doc *html.Node, uid string) *html.Node {
	t.Helper()
	tr := findNode(doc, func(n *html.Node) bool { return attr(n, "id") == "wl-"+uid })
	if tr == nil {
		t.Fatalf("no row wl-%s", uid)
	}
	return tr
}

func selectIn(tr *html.Node, name string) *html.Node {
	return findNode(tr, func(n *html.Node) bool { return n.Data == "select" && attr(n, "name") == name })
}

func hasAttr(n *html.Node, key string) bool {
	for _, a := range n.Attr {
		if a.Key == key {
			return true
		}
	}
	return false
}

func TestWorkloadsPageListsFiltersSortsAndDownloads(t *testing.T) {
	t.Parallel()
	f := newWorkloadAPI(t, &fakeLabeler{})
	admin := tokenOf(f.srv)
	for _, tc := range []struct{ query, want string }{
		{"", "train-a,train-b,beta-job,gamma-job,orphan"},
		{"?project=alpha", "train-a,train-b"},
		{"?phase=Pending&preemptible=true", "train-a,beta-job,gamma-job,orphan"},
		{"?priority=high", "train-b"},
		{"?preemptible=false", "train-b"},
		{"?type=Job&search=gam", "gamma-job"},
		{"?sortBy=priorityValue&sortOrder=desc", "train-b,gamma-job,orphan,train-a,beta-job"},
		{"?sortBy=queuePosition&phase=Pending&priority=low", "train-a"},
		{"?sortBy=queuePosition&sortOrder=desc&project=alpha", "train-a,train-b"},
		{"?deleted=true&project=alpha", "train-a,train-b,serve-c"},
	} {
		if got := rowNames(pageAs(t, f.srv, admin, "/workloads"+tc.query, nil, false, 200)); got != tc.want {
			t.Errorf("/workloads%s shows %q, want %q", tc.query, got, tc.want)
		}
	}
	// Ties (no queue position) keep one order across refreshes: the UID breaks them.
	first := rowNames(pageAs(t, f.srv, admin, "/workloads?sortBy=queuePosition", nil, false, 200))
	for range 3 {
		if again := rowNames(pageAs(t, f.srv, admin, "/workloads?sortBy=queuePosition", nil, false, 200)); again != first {
			t.Errorf("order changed across refreshes: %q then %q", first, again)
		}
	}
	// The same filters and order as CSV, all pages.
	res, err := http.NewRequest("GET", f.srv.URL+"/workloads.csv?phase=Pending&sortBy=priorityValue", nil)
	if err != nil {
		t.Fatal(err)
	}
	res.Header.Set("Authorization", "Bearer "+admin)
	ans, err := f.srv.Client().Do(res)
	if err != nil {
		t.Fatal(err)
	}
	defer ans.Body.Close()
	rows, err := csv.NewReader(ans.Body).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range rows[1:] {
		names = append(names, r[1]+"/"+r[6]+"/"+r[7])
	}
	want := []string{"beta-job/very-low/true", "train-a/low/true", "orphan/medium-low/true", "gamma-job/medium/true"}
	if diff := cmp.Diff(want, names); diff != "" || rows[0][1] != "name" {
		t.Errorf("CSV (-want +got):\n%s header %v", diff, rows[0])
	}
	// Sort links keep the filters and toggle the direction.
	doc := pageAs(t, f.srv, admin, "/workloads?project=alpha&sortBy=name", nil, false, 200)
	th := findAll(doc, func(n *html.Node) bool { return n.Data == "th" })
	var link *html.Node
	for _, h := range th {
		if strings.HasPrefix(strings.TrimSpace(textOf(h)), "Name ▴") { // the submitter below it
			link = findNode(h, func(n *html.Node) bool { return n.Data == "a" })
		}
	}
	if link == nil {
		t.Fatal("no Name header sorted ascending")
	}
	if !strings.Contains(attr(link, "href"), "project=alpha") || !strings.Contains(attr(link, "href"), "sortOrder=desc") {
		t.Errorf("Name header links to %q", attr(link, "href"))
	}
	// A refused filter value is a 400, not a 500.
	pageAs(t, f.srv, admin, "/workloads?preemptible=maybe", nil, false, 400)
}

func TestWorkloadsPageControlsFollowRoleAndPolicy(t *testing.T) {
	t.Parallel()
	f := newWorkloadAPI(t, &fakeLabeler{})
	admin := tokenOf(f.srv)
	doc := pageAs(t, f.srv, admin, "/workloads", nil, false, 200)
	if s := selectIn(rowOf(t, doc, f.trainA), "priority"); s == nil || hasAttr(s, "disabled") {
		t.Error("admin: train-a's priority select is missing or disabled")
	}
	// beta forbids priority changes: the select is disabled with the sentence as its title and
	// its description, the note above the table (said once for all rows), which the row's
	// short label links to.
	described := func(doc, row, s *html.Node, why string) bool {
		id := attr(s, "aria-describedby")
		note := findNode(doc, func(n *html.Node) bool { return id != "" && attr(n, "id") == id })
		link := findNode(row, func(n *html.Node) bool { return n.Data == "a" && attr(n, "href") == "#"+id })
		return hasAttr(s, "disabled") && strings.Contains(strings.ToLower(attr(s, "title")), why) &&
			note != nil && strings.Contains(strings.ToLower(textOf(note)), why) && link != nil &&
			!strings.Contains(strings.ToLower(textOf(row)), why)
	}
	beta := rowOf(t, doc, f.betaJob)
	s := selectIn(beta, "priority")
	const why = "project beta does not allow changing priority"
	if s == nil || !described(doc, beta, s, why) {
		t.Errorf("beta-job's priority control: %v; row text %q", s, textOf(beta))
	}
	if p := selectIn(beta, "preemptibility"); p == nil || hasAttr(p, "disabled") {
		t.Error("beta-job's preemptibility select is missing or disabled; beta's policy does not bind preemptibility")
	}
	// gamma forbids preemptibility changes but allows priority within its range.
	gamma := rowOf(t, doc, f.gammaJob)
	const whyGamma = "project gamma does not allow changing preemptibility"
	if p := selectIn(gamma, "preemptibility"); p == nil || !described(doc, gamma, p, whyGamma) {
		t.Errorf("gamma-job's preemptibility control: %v; row text %q", p, textOf(gamma))
	}
	if s := selectIn(gamma, "priority"); s == nil || hasAttr(s, "disabled") {
		t.Error("gamma-job's priority select is missing or disabled; gamma's policy allows priority changes")
	}
	// gamma offers only its range (medium-low to high).
	var opts []string
	for _, o := range findAll(selectIn(rowOf(t, doc, f.gammaJob), "priority"), func(n *html.Node) bool { return n.Data == "option" }) {
		opts = append(opts, attr(o, "value"))
	}
	if diff := cmp.Diff([]string{"medium-low", "medium", "medium-high", "high"}, opts); diff != "" {
		t.Errorf("gamma-job's priorities (-want +got):\n%s", diff)
	}
	if findNode(doc, func(n *html.Node) bool { return attr(n, "id") == "bulk-form" }) == nil {
		t.Error("admin sees no bulk form")
	}

	// A viewer sees no selects, no checkboxes and no bulk form.
	viewer := newAPIKey(t, f.st, "viewer", "system", "")
	doc = pageAs(t, f.srv, viewer, "/workloads", nil, false, 200)
	if n := findAll(doc, func(n *html.Node) bool {
		return n.Data == "select" && (attr(n, "name") == "preemptibility" || strings.HasPrefix(attr(n, "aria-label"), "Priority of"))
	}); len(n) != 0 || findNode(doc, func(n *html.Node) bool {
		return attr(n, "id") == "bulk-form" || attr(n, "type") == "checkbox" && attr(n, "name") == "id"
	}) != nil {
		t.Errorf("viewer sees %d row selects or the bulk form", len(n))
	}
	if rowNames(doc) != "train-a,train-b,beta-job,gamma-job,orphan" {
		t.Errorf("viewer sees %q", rowNames(doc))
	}
	// A researcher of alpha sees the selects disabled, with the sentence why.
	researcher := newAPIKey(t, f.st, "researcher", "project", f.alpha)
	doc = pageAs(t, f.srv, researcher, "/workloads", nil, false, 200)
	row := rowOf(t, doc, f.trainA)
	if s := selectIn(row, "preemptibility"); s == nil || !described(doc, row, s, "researchers may change only their own workloads") {
		t.Errorf("researcher's train-a row: %q", textOf(row))
	}
	// A viewer's save is refused.
	pageAs(t, f.srv, viewer, "/workloads/"+f.trainA, url.Values{"priority": {"high"}}, true, 403)
}

func TestWorkloadsPageInlineChange(t *testing.T) {
	t.Parallel()
	lab := &fakeLabeler{}
	f := newWorkloadAPI(t, lab)
	admin := tokenOf(f.srv)
	row := pageAs(t, f.srv, admin, "/workloads/"+f.trainA, url.Values{"priority": {"high"}}, true, 200)
	if s := findNode(selectIn(rowOf(t, row, f.trainA), "priority"), func(n *html.Node) bool { return n.Data == "option" && hasAttr(n, "selected") }); s == nil || attr(s, "value") != "high" || !strings.Contains(textOf(row), "Saved priority") {
		t.Errorf("row after the change: %q", textOf(row))
	}
	if call := lab.last(t); call.uid != f.trainA || *call.set["priorityClassName"] != "high" {
		t.Errorf("labeler call %+v", call)
	}
	// The same code as PATCH: the history has the change.
	if r := get(t, f.srv, "/api/v1/workloads/"+f.trainA+"/events"); !strings.Contains(string(r.body), "priority from low to high") {
		t.Errorf("events: %s", r.body)
	}
	// A refused save shows the sentence in the row (400 is swapped by htmx).
	row = pageAs(t, f.srv, admin, "/workloads/"+f.gammaJob, url.Values{"priority": {"very-high"}}, true, 400)
	if a := findNode(rowOf(t, row, f.gammaJob), func(n *html.Node) bool { return attr(n, "role") == "alert" }); a == nil || !strings.Contains(textOf(a), "outside project gamma's allowed range") {
		t.Errorf("refused row: %q", textOf(row))
	}
	row = pageAs(t, f.srv, admin, "/workloads/"+f.trainB, url.Values{"preemptibility": {"preemptible"}}, true, 200)
	if !strings.Contains(textOf(row), "Saved preemptibility") || *lab.last(t).set["kai.scheduler/preemptibility"] != "preemptible" {
		t.Errorf("preemptibility change: %q", textOf(row))
	}
}

func TestWorkloadsPageWithoutClusterShowsWhy(t *testing.T) {
	t.Parallel()
	f := newWorkloadAPI(t, nil)
	admin := tokenOf(f.srv)
	// htmx swaps no 5xx answer, so the row comes back with 200 and the 503's sentence in place.
	row := rowOf(t, pageAs(t, f.srv, admin, "/workloads/"+f.trainA, url.Values{"priority": {"high"}}, true, 200), f.trainA)
	if a := findNode(row, func(n *html.Node) bool { return attr(n, "role") == "alert" }); a == nil || !strings.Contains(textOf(a), "no cluster is connected") {
		t.Errorf("row without a cluster: %q", textOf(row))
	}
	if s := findNode(selectIn(row, "priority"), func(n *html.Node) bool { return n.Data == "option" && hasAttr(n, "selected") }); s == nil || attr(s, "value") != "low" {
		t.Error("the row does not show the priority as it is")
	}
	doc := pageAs(t, f.srv, admin, "/workloads/bulk", url.Values{"id": {f.trainA}, "preemptibility": {"non-preemptible"}}, false, 200)
	if !strings.Contains(textOf(doc), "train-a: refused — no cluster is connected") {
		t.Errorf("bulk without a cluster: %q", strings.Join(strings.Fields(textOf(doc)), " "))
	}
}

func TestWorkloadsPageBulkChange(t *testing.T) {
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
	gone := uuid.NewString()
	doc := pageAs(t, f.srv, admin, "/workloads/bulk?project=alpha", url.Values{"id": {f.trainA, f.betaJob, gone}, "priority": {"medium"}, "preemptibility": {"non-preemptible"}}, false, 200)
	want := []string{
		"train-a: changed",
		"beta-job: refused — project beta does not allow changing priority (its policy's allowPriorityChange is false); ask a research manager of the project",
		gone + ": not found — workload " + gone + " was not found",
	}
	if diff := cmp.Diff(want, outcomes(doc)); diff != "" {
		t.Errorf("bulk outcomes (-want +got):\n%s", diff)
	}
	if lab.count() != 1 {
		t.Errorf("%d label patches, want 1", lab.count())
	}
	// The page after the bulk change keeps its filters.
	if got := rowNames(doc); got != "train-a,train-b" {
		t.Errorf("page after bulk shows %q", got)
	}
	// All matching the filter: the pending preemptible workloads of research.
	doc = pageAs(t, f.srv, admin, "/workloads/bulk?phase=Pending&preemptible=true", url.Values{"all": {"true"}, "preemptibility": {"non-preemptible"}}, false, 200)
	if diff := cmp.Diff([]string{"train-a: changed", "beta-job: changed",
		"gamma-job: refused — project gamma does not allow changing preemptibility (its policy's allowPreemptibilityChange is false); its workloads keep their type's default",
		"orphan: changed"}, outcomes(doc)); diff != "" {
		t.Errorf("all matching (-want +got):\n%s", diff)
	}
	// Nothing chosen is said at the top.
	doc = pageAs(t, f.srv, admin, "/workloads/bulk", url.Values{"id": {f.trainA}}, false, 400)
	if !strings.Contains(textOf(doc), "Choose a priority or a preemptibility to set.") {
		t.Error("no sentence for an empty bulk change")
	}
}

// Each workload's name on the Workloads page opens its story (/workloads/{id}), and that page
// answers for the same workload.
func TestWorkloadsPageLinksEachNameToItsStory(t *testing.T) {
	t.Parallel()
	f := newWorkloadAPI(t, &fakeLabeler{})
	admin := tokenOf(f.srv)
	doc := pageAs(t, f.srv, admin, "/workloads", nil, false, 200)
	rows := findAll(doc, func(n *html.Node) bool { return n.Data == "tr" && strings.Contains(attr(n, "class"), "workload-row") })
	if len(rows) == 0 {
		t.Fatal("no workload rows")
	}
	for _, tr := range rows {
		uid := strings.TrimPrefix(attr(tr.Parent, "id"), "wl-") // each workload is a tbody of its own
		link := findNode(tr, func(n *html.Node) bool { return n.Data == "a" && strings.Contains(attr(n, "class"), "workload-link") })
		if link == nil || attr(link, "href") != "/workloads/"+uid {
			t.Errorf("row %s: name link %v, want /workloads/%s", uid, link, uid)
			continue
		}
		story := pageAs(t, f.srv, admin, attr(link, "href"), nil, false, 200)
		if name := textOf(findNode(tr, func(n *html.Node) bool { return n.Data == "strong" })); !strings.Contains(textOf(story), name) {
			t.Errorf("the story at %s does not name %s", attr(link, "href"), name)
		}
	}
}

// TestBulkChangeLandsOnTheWorkloadsView: an applied bulk change answers with a redirect to the
// Workloads view it was made from (Post/Redirect/Get), which shows the outcome once; reloading
// that address shows the view without it, and opening the bulk form's address itself (a
// reload of a preview, a link shared) is the same view, not an error. A flash made for another
// caller, or not signed by the server, is not shown.
func TestBulkChangeLandsOnTheWorkloadsView(t *testing.T) {
	t.Parallel()
	lab := &fakeLabeler{}
	f := newWorkloadAPI(t, lab)
	admin := tokenOf(f.srv)
	noFollow := &http.Client{Transport: f.srv.Client().Transport, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	send := func(method, path string, form url.Values, cookies ...*http.Cookie) *http.Response {
		t.Helper()
		var body io.Reader
		if form != nil {
			body = strings.NewReader(form.Encode())
		}
		req, err := http.NewRequest(method, f.srv.URL+path, body)
		if err != nil {
			t.Fatal(err)
		}
		if form != nil {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		req.Header.Set("Authorization", "Bearer "+admin)
		for _, c := range cookies {
			req.AddCookie(c)
		}
		res, err := noFollow.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res
	}
	res := send("POST", "/workloads/bulk?project=alpha&sortBy=name", url.Values{"id": {f.trainA, f.betaJob}, "priority": {"medium"}})
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/workloads?project=alpha&sortBy=name" {
		t.Fatalf("applying a bulk change answers %d to %q, want 303 to the view /workloads?project=alpha&sortBy=name", res.StatusCode, res.Header.Get("Location"))
	}
	if lab.count() != 1 {
		t.Errorf("%d label patches, want train-a's", lab.count())
	}
	// The browser follows it: the view with its filters, saying what the change did.
	outcomes := func(doc *html.Node) string {
		var out []string
		for _, li := range findAll(doc, func(n *html.Node) bool { return n.Data == "li" && strings.Contains(attr(n, "class"), "outcome") }) {
			out = append(out, strings.Join(strings.Fields(textOf(li)), " "))
		}
		return strings.Join(out, "; ")
	}
	doc := pageAs(t, f.srv, admin, "/workloads/bulk?project=alpha", url.Values{"id": {f.trainA, f.betaJob}, "priority": {"medium"}}, false, 200)
	want := "train-a: changed; beta-job: refused — project beta does not allow changing priority (its policy's allowPriorityChange is false); ask a research manager of the project"
	if got := outcomes(doc); got != want {
		t.Errorf("the view after the change says %q, want %q", got, want)
	}
	if got := rowNames(doc); got != "train-a,train-b" {
		t.Errorf("the view after the change shows %q, want project alpha's", got)
	}
	// Reloaded, it is the view as it is, without the outcome.
	if got := outcomes(pageAs(t, f.srv, admin, "/workloads?project=alpha", nil, false, 200)); got != "" {
		t.Errorf("the reloaded view still says %q", got)
	}
	// The bulk form's address opened with GET is the view with the same filters.
	res = send("GET", "/workloads/bulk?project=alpha&phase=Pending", nil)
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/workloads?phase=Pending&project=alpha" {
		t.Errorf("GET /workloads/bulk answers %d to %q, want 303 to /workloads?phase=Pending&project=alpha", res.StatusCode, res.Header.Get("Location"))
	}
	if got := rowNames(pageAs(t, f.srv, admin, "/workloads/bulk?project=alpha", nil, false, 200)); got != "train-a,train-b" {
		t.Errorf("GET /workloads/bulk shows %q", got)
	}
	// A flash is the server's, for its caller: one altered, or another's, says nothing.
	res = send("POST", "/workloads/bulk", url.Values{"id": {f.trainA}, "priority": {"low"}})
	var flash *http.Cookie
	for _, c := range res.Cookies() {
		if c.Name == "arbiter_flash" {
			flash = c
		}
	}
	if flash == nil || !flash.HttpOnly || flash.Path != "/workloads" || flash.MaxAge <= 0 {
		t.Fatalf("the change set no HttpOnly, short-lived flash on /workloads: %+v", flash)
	}
	payload, sig, _ := strings.Cut(flash.Value, ".")
	forged := &http.Cookie{Name: flash.Name, Value: base64.RawURLEncoding.EncodeToString([]byte(`{"o":[{"Name":"x","Outcome":"changed"}]}`)) + "." + sig}
	viewer := newAPIKey(t, f.st, "viewer", "system", "")
	for name, tc := range map[string]struct {
		token  string
		cookie *http.Cookie
	}{"altered": {admin, forged}, "another caller's": {viewer, &http.Cookie{Name: flash.Name, Value: payload + "." + sig}}} {
		req, _ := http.NewRequest("GET", f.srv.URL+"/workloads", nil)
		req.Header.Set("Authorization", "Bearer "+tc.token)
		req.AddCookie(tc.cookie)
		res, err := noFollow.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if d, _ := html.Parse(strings.NewReader(string(raw))); res.StatusCode != 200 || outcomes(d) != "" {
			t.Errorf("a flash %s: %d, says %q", name, res.StatusCode, outcomes(d))
		}
	}
}

// The Age header's arrow and aria-sort tell the order of the ages the column shows: sorted by
// creation time ascending (the default), the oldest, largest age comes first, so descending.
func TestTheAgeHeaderSaysTheOrderOfTheAges(t *testing.T) {
	t.Parallel()
	f := newWorkloadAPI(t, &fakeLabeler{})
	admin := tokenOf(f.srv)
	for _, tc := range []struct{ query, ariaSort, arrow string }{
		{"", "descending", "▾"},
		{"?sortBy=createdAt&sortOrder=desc", "ascending", "▴"},
	} {
		doc := page(t, f.srv, admin, "/workloads"+tc.query, 200)
		th := findNode(doc, func(n *html.Node) bool {
			return n.Type == html.ElementNode && n.Data == "th" && strings.HasPrefix(strings.TrimSpace(textOf(n)), "Age")
		})
		if th == nil {
			t.Fatalf("/workloads%s has no Age header", tc.query)
		}
		if got := attr(th, "aria-sort"); got != tc.ariaSort || !strings.Contains(textOf(th), tc.arrow) {
			t.Errorf("/workloads%s: the Age header reads %q, aria-sort %q; want %s and %q", tc.query, strings.TrimSpace(textOf(th)), got, tc.arrow, tc.ariaSort)
		}
	}
}
