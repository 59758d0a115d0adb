package workloads

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/arbiterhq/arbiter/auth"
	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/workload/native"
)

// TestOwnership_ResearchersActOnTheirOwn: in a project, a research manager stops, runs,
// deletes and changes any workload; a researcher only the ones they submitted through Arbiter
// (refused, naming who submitted it, or that no one did); a researcher of another project and
// a viewer are refused by their role; an API key is never taken for the person of the same
// name. Each refusal is the kind web answers as 403.
func TestOwnership_ResearchersActOnTheirOwn(t *testing.T) {
	project := auth.Project("p1", "d1")
	user := func(name string, role auth.Role, at auth.Scope) auth.Identity {
		return auth.Identity{Subject: name, SubjectType: "user", DisplayName: name}.WithGrants([]auth.Grant{{Role: role, Scope: at}})
	}
	ada := user("ada", auth.RoleResearcher, project)
	training := func(submitter string) Visible {
		return Visible{Scope: project, Record: store.WorkloadRecord{UID: "u1", Name: "train", ProjectName: "alpha",
			TypeName: native.Training.Type, Kind: native.Training.Object, Submitter: submitter}}
	}
	key := auth.Identity{Subject: "ada", SubjectType: "api-key"}.WithGrants([]auth.Grant{{Role: auth.RoleResearcher, Scope: project}})

	for _, tc := range []struct {
		name   string
		who    auth.Identity
		w      Visible
		refuse string // "" when allowed
	}{
		{"a research manager, someone else's", user("rm", auth.RoleResearchManager, project), training("bob"), ""},
		{"a researcher, their own", ada, training("ada"), ""},
		{"a researcher, someone else's", ada, training("bob"), "researchers may stop only their own workloads, and train was submitted by bob"},
		{"a researcher, one not submitted through Arbiter", ada, training(""), "it has no submitter"},
		{"an API key named as the submitter", key, training("ada"), "researchers may stop only their own workloads"},
		{"a researcher of another project", user("cy", auth.RoleResearcher, auth.Project("p2", "d1")), training("cy"), "your role does not allow you to stop this workload here"},
		{"a viewer", user("vi", auth.RoleViewer, project), training("vi"), "your role does not allow you to stop this workload here"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Refusal(tc.who, tc.w, Stop)
			if tc.refuse == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if err := MayChange(tc.who, tc.w.Record, tc.w.Scope); err != nil {
					t.Fatalf("a change refused: %v", err)
				}
				return
			}
			if !errors.Is(err, store.ErrForbidden) || !strings.Contains(err.Error(), tc.refuse) {
				t.Fatalf("refusal = %v, want a forbidden saying %q", err, tc.refuse)
			}
			if err := MayChange(tc.who, tc.w.Record, tc.w.Scope); !errors.Is(err, store.ErrForbidden) {
				t.Fatalf("a change = %v, want forbidden", err)
			}
		})
	}
}

// TestActions_WhatCannotBeDoneSaysWhatToDoInstead: an inference is deleted but never stopped
// or run; a finished workload is deleted but not stopped or changed; a workload of a kind
// Arbiter did not submit is left to the cluster. Each is a conflict with the sentence why.
func TestActions_WhatCannotBeDoneSaysWhatToDoInstead(t *testing.T) {
	project := auth.Project("p1", "d1")
	admin := auth.Identity{Subject: "root", SubjectType: "user"}.WithGrants([]auth.Grant{{Role: auth.RoleAdmin, Scope: auth.System}})
	finished := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	inference := Visible{Scope: project, Record: store.WorkloadRecord{UID: "i1", Name: "serve", TypeName: native.Inference.Type, Kind: native.Inference.Object}}
	done := Visible{Scope: project, Record: store.WorkloadRecord{UID: "t1", Name: "train", TypeName: native.Training.Type, Kind: native.Training.Object, FinishedAt: &finished}}
	foreign := Visible{Scope: project, Record: store.WorkloadRecord{UID: "r1", Name: "ray", TypeName: "Ray", Kind: "RayCluster"}}

	for _, tc := range []struct {
		name   string
		w      Visible
		a      Action
		refuse string
	}{
		{"stop an inference", inference, Stop, "an inference cannot be stopped and run again"},
		{"run an inference", inference, Run, "an inference cannot be stopped and run again"},
		{"delete an inference", inference, Delete, ""},
		{"stop a finished training", done, Stop, "workload train finished at 2026-01-02T03:04:05Z; submit it again instead"},
		{"delete a finished training", done, Delete, ""},
		{"delete a RayCluster", foreign, Delete, "which Arbiter does not stop, run or delete"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Refusal(admin, tc.w, tc.a)
			switch {
			case tc.refuse == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.refuse != "" && (!errors.Is(err, store.ErrConflict) || !strings.Contains(err.Error(), tc.refuse)):
				t.Fatalf("refusal = %v, want a conflict saying %q", err, tc.refuse)
			}
		})
	}
	if err := MayChange(admin, done.Record, done.Scope); !errors.Is(err, store.ErrConflict) || !strings.Contains(err.Error(), "can no longer change") {
		t.Errorf("a change of a finished workload = %v", err)
	}
}
