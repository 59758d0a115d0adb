package scheduler

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPolicyChecksRefuseWithTheRuleAndTheField(t *testing.T) {
	cat := NewCatalog(seededPriorities(), seededCategories(), seededTypes())
	allow := &ProjectPolicy{Name: "alpha"}
	forbid := &ProjectPolicy{Name: "beta", Policy: Policy{ForbidPriorityChange: true, ForbidPreemptibilityChange: true, DefaultPriority: "medium"}}
	ranged := &ProjectPolicy{Name: "gamma", Policy: Policy{MinPriority: "medium-low", MaxPriority: "high"}}
	floor := &ProjectPolicy{Name: "delta", Policy: Policy{MinPriority: "medium"}}
	ceiling := &ProjectPolicy{Name: "eps", Policy: Policy{MaxPriority: "medium"}}
	const all = "; use one of: very-low, low, medium-low, medium, medium-high, high, very-high"
	cases := []struct {
		name    string
		asked   string
		project *ProjectPolicy
		gives   string
		want    *PolicyRefusal
	}{
		{"no name", "", allow, "low", &PolicyRefusal{RefusedUnknownPriority, "priority", "priority must name a priority" + all}},
		{"not in the dictionary", "urgent", nil, "", &PolicyRefusal{RefusedUnknownPriority, "priority", `priority "urgent" is not in the priority dictionary` + all}},
		{"no project bounds nothing", "very-high", nil, "", nil},
		{"an allowing project", "very-high", allow, "low", nil},
		{"a forbidding project", "high", forbid, "medium", &PolicyRefusal{RefusedPriorityChange, "priority",
			"project beta does not allow changing priority (its policy's allowPriorityChange is false); ask a research manager of the project"}},
		{"a forbidding project takes what it gives anyway", "medium", forbid, "medium", nil},
		{"outside the range", "very-high", ranged, "medium", &PolicyRefusal{RefusedPriorityRange, "priority",
			"priority very-high (150) is outside project gamma's allowed range medium-low (65) to high (125); pick a priority within it"}},
		{"inside the range", "high", ranged, "medium", nil},
		{"below the minimum", "low", floor, "medium", &PolicyRefusal{RefusedPriorityRange, "priority",
			"priority low (40) is below project delta's minPriority medium (80); pick medium or higher"}},
		{"above the maximum", "high", ceiling, "medium", &PolicyRefusal{RefusedPriorityRange, "priority",
			"priority high (125) is above project eps's maxPriority medium (80); pick medium or lower"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, got := cat.CheckPriority("priority", tc.asked, tc.project, tc.gives)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("CheckPriority(%q) (-want +got):\n%s", tc.asked, diff)
			}
		})
	}

	forbidden := &PolicyRefusal{RefusedPreemptibilityChange, "spec.preemptibility",
		"project beta does not allow changing preemptibility (its policy's allowPreemptibilityChange is false); its workloads keep their type's default"}
	for _, tc := range []struct {
		name    string
		asked   Preemptibility
		project *ProjectPolicy
		want    *PolicyRefusal
	}{
		{"an allowing project", NonPreemptible, allow, nil},
		{"no project", NonPreemptible, nil, nil},
		{"a forbidding project", NonPreemptible, forbid, forbidden},
		{"back to the default is a change too", "", forbid, forbidden},
		{"what it gives anyway", Preemptible, forbid, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := CheckPreemptibility("spec.preemptibility", tc.asked, tc.project, Preemptible)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("CheckPreemptibility(%q) (-want +got):\n%s", tc.asked, diff)
			}
		})
	}
}

// What a person may ask for is what the scheduler then takes: for random dictionaries'
// categories, types and project policies, a priority or preemptibility label the checks accept
// (with the defaults the policy gives as PolicyDefaults says) is resolved to exactly that, without
// a warning, and one they refuse is not.
func TestPolicyChecksAgreeWithResolution(t *testing.T) {
	prios := seededPriorities()
	pre := []Preemptibility{"", Preemptible, NonPreemptible, SemiPreemptible}
	name := func(r *rand.Rand) string {
		if r.IntN(3) == 0 {
			return ""
		}
		return prios[r.IntN(len(prios))].Name
	}
	pv := func(name string) int32 { p, _ := NewCatalog(prios, nil, nil).Priority(name); return p.Value }
	for seed := uint64(0); seed < 2000; seed++ {
		r := rand.New(rand.NewPCG(seed, 11))
		cats := []Category{{Name: "A", DefaultPriority: name(r), DefaultPreemptibility: pre[r.IntN(len(pre))]},
			{Name: "B", DefaultPriority: name(r), DefaultPreemptibility: pre[r.IntN(len(pre))]}}
		typ := WorkloadType{Name: "T", Group: "g", Category: []string{"", "A", "B", "missing"}[r.IntN(4)], Priority: name(r), Preemptibility: pre[r.IntN(len(pre))]}
		cat := NewCatalog(prios, cats, []WorkloadType{typ})
		project := &ProjectPolicy{Name: "p", Policy: Policy{DefaultPriority: name(r), MinPriority: name(r), MaxPriority: name(r),
			ForbidPriorityChange: r.IntN(2) == 0, ForbidPreemptibilityChange: r.IntN(2) == 0}}
		if lo, hi := project.Policy.MinPriority, project.Policy.MaxPriority; lo != "" && hi != "" && pv(lo) > pv(hi) {
			project.Policy.MinPriority, project.Policy.MaxPriority = hi, lo // the store refuses a range upside down
		}
		gives, givesPre := cat.PolicyDefaults(typ.Name, typ.Group, project.Policy)
		if got := cat.Resolve(&Workload{Type: typ.Name, Group: typ.Group}, project.Policy); got.Priority != gives || got.Preemptibility != givesPre {
			t.Fatalf("seed %d: PolicyDefaults = %v/%s, Resolve without labels = %v/%s", seed, gives, givesPre, got.Priority, got.Preemptibility)
		}
		for _, asked := range prios {
			_, refusal := cat.CheckPriority("priority", asked.Name, project, gives.Name)
			w := &Workload{UID: "u", Type: typ.Name, Group: typ.Group, Labels: map[string]string{LabelPriority: asked.Name}}
			got, warnings := cat.ResolvePriority(w, project.Policy)
			if taken := got == asked && len(warnings) == 0; taken != (refusal == nil) {
				t.Fatalf("seed %d, type %+v, policy %+v: asking for %s is refused %v, but the scheduler resolves %v with warnings %v",
					seed, typ, project.Policy, asked.Name, refusal, got, warnings)
			}
		}
		for _, asked := range pre[1:] {
			refusal := CheckPreemptibility("preemptibility", asked, project, givesPre)
			w := &Workload{UID: "u", Type: typ.Name, Group: typ.Group, Labels: map[string]string{LabelPreemptibility: string(asked)}}
			res := cat.Resolve(w, project.Policy)
			ignored := slices.ContainsFunc(res.Warnings, func(w Warning) bool { return w.Code == PreemptibilityChangeNotAllowed })
			if taken := res.Preemptibility == asked && !ignored; taken != (refusal == nil) {
				t.Fatalf("seed %d, type %+v, policy %+v: asking for %s is refused %v, but the scheduler resolves %s with warnings %v",
					seed, typ, project.Policy, asked, refusal, res.Preemptibility, res.Warnings)
			}
		}
	}
}
