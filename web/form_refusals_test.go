package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/views"
	"golang.org/x/net/html"
)

// TestFormRefusalsAreShownWhereTheyBelong: every create and edit form, posted with an invalid
// value of each of its fields, answers a page (or, for an inline edit, the row) on which the
// refusal's sentence is visible next to that field, or, when the refusal names no field of the
// form, in the form's own error region (never lost because a field was guessed wrongly).
func TestFormRefusalsAreShownWhereTheyBelong(t *testing.T) {
	t.Parallel()
	srv, _, pool, dept, proj := orgAPI(t)
	wt := list[views.WorkloadTypeAnswer](t, srv, "/api/v1/workload-types", "types")[0].ID
	defaultPool := store.DefaultNodePoolID.String()

	cases := []struct {
		name     string
		path     string
		form     url.Values
		htmx     bool   // an inline edit: the answer is the row
		sentence string // part of the refusal
		near     string // the control the sentence sits next to; "" for the form's own error region
	}{
		// Node pools: create.
		{"pool name", "/node-pools", url.Values{"name": {"A100"}, "labelKey": {"k"}, "placement": {"binpack"}}, false, `node pool name "A100" is not valid`, "name"},
		{"pool name taken", "/node-pools", url.Values{"name": {"a100"}, "labelKey": {"k"}, "labelValue": {"other"}, "placement": {"binpack"}}, false, "a node pool named a100 already exists", "name"},
		{"pool label key", "/node-pools", url.Values{"name": {"p1"}, "labelKey": {"bad key!"}, "placement": {"binpack"}}, false, `labelKey "bad key!" is not a valid`, "labelKey"},
		{"pool label value", "/node-pools", url.Values{"name": {"p2"}, "labelKey": {"k"}, "labelValue": {"-x-"}, "placement": {"binpack"}}, false, `labelValue "-x-" is not a valid`, "labelValue"},
		{"pool label taken", "/node-pools", url.Values{"name": {"p3"}, "labelKey": {"arbiter.dev/node-pool"}, "labelValue": {"a100"}, "placement": {"binpack"}}, false, "already selects the nodes labelled", "labelValue"},
		{"pool placement", "/node-pools", url.Values{"name": {"p4"}, "labelKey": {"k"}, "placement": {"sideways"}}, false, `placement "sideways" is not valid`, "placement"},
		// Node pools: inline edit.
		{"pool row name", "/node-pools/" + pool, url.Values{"name": {"A100"}, "labelKey": {"k"}, "labelValue": {"v"}, "placement": {"binpack"}}, true, `node pool name "A100" is not valid`, "name"},
		{"pool row placement", "/node-pools/" + defaultPool, url.Values{"placement": {"sideways"}}, true, `placement "sideways" is not valid`, "placement"},
		{"pool row delete", "/node-pools/" + pool + "/delete", url.Values{}, true, "is in the quotas of", ""},

		// Departments: create.
		{"department name", "/departments", url.Values{"name": {"Research"}}, false, `department name "Research" is not valid`, "name"},
		{"department name taken", "/departments", url.Values{"name": {"research"}}, false, "a department named research already exists", "name"},
		{"department quota typed", "/departments", url.Values{"name": {"d1"}, "deserved-" + pool: {"many"}}, false, "deserved GPUs in pool a100 must be a whole number", "deserved-" + pool},
		{"department quota rule", "/departments", url.Values{"name": {"d2"}, "deserved-" + pool: {"4"}, "limit-" + pool: {"2"}}, false, "limit 2 GPUs in pool a100 is below the deserved 4", "deserved-" + pool},
		// Departments: inline edit.
		{"department row name", "/departments/" + dept, url.Values{"name": {"Research"}}, true, `department name "Research" is not valid`, "name"},
		{"department row quota", "/departments/" + dept + "/quotas/" + pool, url.Values{"deserved": {"2"}}, true, "its projects have 10", "deserved"},
		{"department row priority offset", "/departments/" + dept, url.Values{"priorityPolicy": {"fence"}, "priorityOffset": {"lots"}}, true, "priority offset must be a whole number", "priorityOffset"},
		{"department row priority policy", "/departments/" + dept, url.Values{"priorityPolicy": {"global"}}, true, `priorityPolicy "global" is not valid`, "priorityPolicy"},
		{"department row delete", "/departments/" + dept + "/delete", url.Values{}, true, "move them to another department", ""},

		// Projects: create.
		{"project name", "/projects", url.Values{"name": {"Vision"}, "departmentId": {dept}}, false, `project name "Vision" is not valid`, "name"},
		{"project department missing", "/projects", url.Values{"name": {"p1"}}, false, "a project needs a departmentId", "departmentId"},
		{"project department id", "/projects", url.Values{"name": {"p2"}, "departmentId": {"nine"}}, false, `departmentId "nine" is not a valid id`, "departmentId"},
		{"project namespace", "/projects", url.Values{"name": {"p3"}, "departmentId": {dept}, "namespaces": {"Bad_NS"}}, false, `namespace "Bad_NS" is not a valid`, "namespaces"},
		{"project namespace taken", "/projects", url.Values{"name": {"p4"}, "departmentId": {dept}, "namespaces": {"team-alpha"}}, false, "namespace team-alpha already belongs to project alpha", "namespaces"},
		{"project quota typed", "/projects", url.Values{"name": {"p5"}, "departmentId": {dept}, "deserved-" + pool: {"-3"}}, false, "deserved GPUs in pool a100 must be a whole number", "deserved-" + pool},
		{"project quota rule", "/projects", url.Values{"name": {"p6"}, "departmentId": {dept}, "deserved-" + pool: {"10"}}, false, "department research has 16 deserved GPUs in pool a100", "deserved-" + pool},
		// Projects: inline edit.
		{"project row name", "/projects/" + proj, url.Values{"name": {"Alpha"}, "departmentId": {dept}, "namespaces": {"team-alpha"}}, true, `project name "Alpha" is not valid`, "name"},
		{"project row namespaces", "/projects/" + proj, url.Values{"name": {"alpha"}, "departmentId": {dept}, "namespaces": {"Bad_NS"}}, true, `namespace "Bad_NS" is not a valid`, "namespaces"},
		{"project row department", "/projects/" + proj, url.Values{"name": {"alpha"}, "departmentId": {"nine"}, "namespaces": {"team-alpha"}}, true, `departmentId "nine" is not a valid id`, "departmentId"},
		{"project row quota", "/projects/" + proj + "/quotas/" + pool, url.Values{"deserved": {"2"}, "limit": {"1"}}, true, "limit 1 GPUs in pool a100 is below the deserved 2", "deserved"},
		{"project row policy runtime", "/projects/" + proj + "/policy", url.Values{"minRuntimeSeconds": {"-5"}}, true, "minimum runtime (seconds) must be a whole number", "minRuntimeSeconds"},
		{"project row policy delay", "/projects/" + proj + "/policy", url.Values{"preemptionDelaySeconds": {"-1"}}, true, "preemption delay (seconds) must be a whole number", "preemptionDelaySeconds"},
		{"project row policy offset", "/projects/" + proj + "/policy", url.Values{"priorityOffset": {"99999999999"}}, true, "priority offset must be a whole number", "priorityOffset"},
		{"project row policy bound", "/projects/" + proj + "/policy", url.Values{"minPriority": {"nonesuch"}}, true, `minPriority "nonesuch" is not in the priority dictionary`, "minRuntimeSeconds"},

		// Workload types: inline edit (the row is one form with one error region).
		{"workload type preemptibility", "/workload-types/" + wt, url.Values{"preemptibility": {"sometimes"}}, true, `preemptibility "sometimes" is not valid`, ""},

		// Access: create forms (one error region at the top of the page).
		{"access key days", "/access/keys", url.Values{"name": {"k"}, "role": {"viewer"}, "days": {"0"}}, false, "valid for days must be a whole number", ""},
		{"access rule subject", "/access/rules", url.Values{"subjectType": {"user"}, "subject": {""}, "role": {"viewer"}}, false, "an access rule needs a subject", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest("POST", srv.URL+tc.path, strings.NewReader(tc.form.Encode()))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("Authorization", "Bearer "+tokenOf(srv))
			if tc.htmx {
				req.Header.Set("HX-Request", "true")
			}
			res, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			if res.StatusCode < 400 {
				t.Fatalf("POST %s = %d, want a refusal", tc.path, res.StatusCode)
			}
			doc, err := html.Parse(res.Body)
			if err != nil {
				t.Fatal(err)
			}
			alert := findNode(doc, func(n *html.Node) bool {
				return attr(n, "role") == "alert" && strings.Contains(textOf(n), tc.sentence)
			})
			if alert == nil {
				t.Fatalf("POST %s: no alert says %q; page text: %s", tc.path, tc.sentence, strings.Join(strings.Fields(textOf(doc)), " "))
			}
			if tc.near == "" {
				if strings.Contains(attr(alert, "class"), "field-error") {
					t.Errorf("POST %s: %q is shown at a field, want the form's own error region", tc.path, tc.sentence)
				}
				return
			}
			if findNode(alert.Parent, func(n *html.Node) bool { return attr(n, "name") == tc.near }) == nil {
				t.Errorf("POST %s: %q is not shown next to the field %s", tc.path, tc.sentence, tc.near)
			}
		})
	}
}

func findNode(n *html.Node, match func(*html.Node) bool) *html.Node {
	if n.Type == html.ElementNode && match(n) {
		return n
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if found := findNode(c, match); found != nil {
			return found
		}
	}
	return nil
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func textOf(n *html.Node) string {
	if n.Type == html.TextNode {
		return n.Data
	}
	var b strings.Builder
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		b.WriteString(textOf(c))
	}
	return b.String()
}
