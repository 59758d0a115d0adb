package web

import (
	"fmt"
	"testing"
	"time"

	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/views"
	"github.com/google/go-cmp/cmp"
)

// org is an organization whose projects were created in the order named, a minute apart.
func org(names ...string) []store.ProjectRef {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	var out []store.ProjectRef
	for i, n := range names {
		out = append(out, store.ProjectRef{Name: n, CreatedAt: t0.Add(time.Duration(i) * time.Minute)})
	}
	return out
}

func TestProjectSwatchesFollowTheOrderProjectsWereCreatedIn(t *testing.T) {
	// Listed by name, as the store lists them; created vision, ads, search.
	refs := org("vision", "ads", "search")
	refs[0], refs[1], refs[2] = refs[1], refs[2], refs[0]
	want := map[string]views.Swatch{"vision": {Color: 0, Pattern: 0}, "ads": {Color: 1, Pattern: 1}, "search": {Color: 2, Pattern: 2}}
	if diff := cmp.Diff(want, projectSwatches(refs)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestProjectsCreatedAtOnceAreOrderedByName(t *testing.T) {
	refs := org("b", "a")
	refs[1].CreatedAt = refs[0].CreatedAt
	got := projectSwatches(refs)
	if got["a"] != swatchAt(0) || got["b"] != swatchAt(1) {
		t.Errorf("two projects created at once: %v", got)
	}
}

func TestAProjectKeepsItsSwatchWhenOthersAreCreatedAfterIt(t *testing.T) {
	before := projectSwatches(org("ads", "search", "vision"))
	after := projectSwatches(org("ads", "search", "vision", "aaa-new", "zzz-new"))
	for p, s := range before {
		if after[p] != s {
			t.Errorf("%s was %v, is %v once two projects are created after it", p, s, after[p])
		}
	}
}

func TestTwelveConsecutiveProjectsDifferInColourAndSixtyInSwatch(t *testing.T) {
	var names []string
	for i := range 60 {
		names = append(names, fmt.Sprintf("p%02d", i))
	}
	got := projectSwatches(org(names...))
	swatches := map[views.Swatch]string{}
	for i, n := range names {
		if other, ok := swatches[got[n]]; ok {
			t.Errorf("%s and %s share swatch %v", other, n, got[n])
		}
		swatches[got[n]] = n
		if i > 0 {
			prev := got[names[i-1]]
			if prev.Color == got[n].Color || prev.Pattern == got[n].Pattern {
				t.Errorf("neighbours %s %v and %s %v share a colour or a pattern", names[i-1], prev, n, got[n])
			}
		}
		for j := max(0, i-paletteColors+1); j < i; j++ {
			if got[names[j]].Color == got[n].Color {
				t.Errorf("%s and %s, fewer than 12 apart, share colour %d", names[j], n, got[n].Color)
			}
		}
	}
}

func TestAProjectTheOrganizationDoesNotKnowGetsAStableSwatchInThePalette(t *testing.T) {
	known := projectSwatches(org("ads"))
	s := swatchOf(known, "deleted-since")
	if s != swatchOf(known, "deleted-since") || s.Color < 0 || s.Color >= paletteColors || s.Pattern < 0 || s.Pattern >= palettePatterns {
		t.Errorf("an unknown project's swatch: %v, then %v", s, swatchOf(known, "deleted-since"))
	}
	if swatchOf(known, "ads") != swatchAt(0) {
		t.Errorf("a known project's swatch is not its place's")
	}
}
