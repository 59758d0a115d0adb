package web_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
)

// fairness is the answer of /api/v1/arbiter/node-pools/{id}/time-based-fairness.
type fairness struct {
	NodePoolID      string  `json:"nodePoolId"`
	Enabled         bool    `json:"enabled"`
	WindowSeconds   int64   `json:"windowSeconds"`
	HalfLifeSeconds int64   `json:"halfLifeSeconds"`
	KValue          float64 `json:"kValue"`
	UpdatedAt       *string `json:"updatedAt"`
	UpdatedBy       string  `json:"updatedBy"`
}

func TestS28_AdminsSetANodePoolsTimeBasedFairShare(t *testing.T) {
	t.Parallel()
	srv, st := newAPI(t)
	pool := create(t, srv, "/api/v1/node-pools", `{"name":"a100","labelKey":"arbiter.dev/node-pool"}`)
	path := "/api/v1/arbiter/node-pools/" + pool + "/time-based-fairness"

	got := getAs[fairness](t, srv, path)
	want := fairness{NodePoolID: pool, WindowSeconds: 7 * 24 * 3600, HalfLifeSeconds: 24 * 3600, KValue: 1}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("a pool nobody set: off, with the defaults (-want +got):\n%s", diff)
	}

	got = sendAs[fairness](t, srv, "PUT", path, `{"enabled":true,"windowSeconds":600,"halfLifeSeconds":120,"kValue":2}`, 200)
	if got.UpdatedAt == nil || got.UpdatedBy == "" {
		t.Errorf("the change is not stamped: %+v", got)
	}
	want = fairness{NodePoolID: pool, Enabled: true, WindowSeconds: 600, HalfLifeSeconds: 120, KValue: 2, UpdatedAt: got.UpdatedAt, UpdatedBy: got.UpdatedBy}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("PUT answered (-want +got):\n%s", diff)
	}
	// fields left out keep their values
	got = sendAs[fairness](t, srv, "PUT", path, `{"kValue":0.5}`, 200)
	want.KValue, want.UpdatedAt = 0.5, got.UpdatedAt
	if diff := cmp.Diff(want, getAs[fairness](t, srv, path)); diff != "" {
		t.Errorf("GET after PUT (-want +got):\n%s", diff)
	}
	rows := auditRows(t, st, "node-pool")
	if len(rows) == 0 || rows[0].Action != "update" || rows[0].EntityName != "a100" || rows[0].Changes["timeBasedFairness.kValue"] == nil {
		t.Errorf("the change is not audited as the pool's: %+v", rows)
	}

	for _, tc := range []struct {
		body, field string
	}{
		{`{"windowSeconds":10}`, "windowSeconds"},
		{`{"windowSeconds":"a week"}`, "windowSeconds"},
		{`{"halfLifeSeconds":30}`, "halfLifeSeconds"},
		{`{"kValue":-1}`, "kValue"},
		{`{"kValue":1000}`, "kValue"},
		{`{"enabled":null}`, "enabled"},
		{`{"enabled":"yes"}`, "enabled"},
		{`{"strength":3}`, "strength"},
	} {
		r := send(t, srv, "PUT", path, tc.body, 400)
		if msg := r.refusal(t).Message; !strings.Contains(msg, tc.field) {
			t.Errorf("PUT %s: the refusal %q does not name %s", tc.body, msg, tc.field)
		}
	}
	if diff := cmp.Diff(want, getAs[fairness](t, srv, path)); diff != "" {
		t.Errorf("after refusals, nothing changed (-want +got):\n%s", diff)
	}
	send(t, srv, "PUT", "/api/v1/arbiter/node-pools/"+uuid.NewString()+"/time-based-fairness", `{"enabled":true}`, 404)
	send(t, srv, "GET", "/api/v1/arbiter/node-pools/"+uuid.NewString()+"/time-based-fairness", "", 404)
	send(t, srv, "PUT", "/api/v1/arbiter/node-pools/not-an-id/time-based-fairness", `{"enabled":true}`, 400)
}

func TestS28_OnlyAdminsChangeTimeBasedFairShareEveryoneReadsIt(t *testing.T) {
	t.Parallel()
	w := newOrgWorld(t)
	path := "/api/v1/arbiter/node-pools/" + w.pool + "/time-based-fairness"
	for _, rc := range roleCases {
		scopeType, scopeID := w.scopeID(rc.scope)
		token := newAPIKey(t, w.st, rc.role, scopeType, scopeID)
		if r := doAs(t, w.srv, token, "GET", path, "", ""); r.status != 200 {
			t.Errorf("%s at %s: GET = %d, want 200: %s", rc.role, rc.scope, r.status, r.body)
		}
		want := 403
		if rc.admin {
			want = 200
		}
		if r := doAs(t, w.srv, token, "PUT", path, "application/json", `{"enabled":true}`); r.status != want {
			t.Errorf("%s at %s: PUT = %d, want %d: %s", rc.role, rc.scope, r.status, want, r.body)
		}
	}
	if r := doAs(t, w.srv, "", "GET", path, "", ""); r.status != 401 {
		t.Errorf("anonymous GET = %d, want 401", r.status)
	}
	if r := doAs(t, w.srv, "", "PUT", path, "application/json", `{"enabled":false}`); r.status != 401 {
		t.Errorf("anonymous PUT = %d, want 401", r.status)
	}
}
