package web

import (
	"cmp"
	"hash/fnv"
	"slices"

	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/views"
)

// The project palette of the Nodes page: paletteColors colours (classes gpu-c0 … gpu-c11 in
// static/arbiter.css) and palettePatterns patterns over them (gpu-p0, plain, … gpu-p4). The
// two counts are coprime, so the pairs repeat only every 60 projects.
const (
	paletteColors   = 12
	palettePatterns = 5
)

// swatchAt is the swatch of the project at place i of the organization's order. Neighbours
// differ in both colour and pattern; any 12 consecutive projects differ in colour, any 60 in
// colour or pattern.
func swatchAt(i int) views.Swatch {
	return views.Swatch{Color: i % paletteColors, Pattern: i % palettePatterns}
}

// projectSwatches gives every project of the organization its swatch by its place in the order
// the projects were created (then by name). A hash of the name gave 8 colours by chance, and
// projects that happened to share one could not be told apart; places do not collide. The
// order is the whole organization's, not what one caller may read or one page shows, so a
// project looks the same to everyone, on every page and filter, and keeps its swatch when
// projects are created after it. Deleting a project moves those created after it one place on.
func projectSwatches(projects []store.ProjectRef) map[string]views.Swatch {
	order := slices.Clone(projects)
	slices.SortFunc(order, func(a, b store.ProjectRef) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.Name, b.Name))
	})
	out := make(map[string]views.Swatch, len(order))
	for i, p := range order {
		out[p.Name] = swatchAt(i)
	}
	return out
}

// swatchOf is a project's swatch; one the organization does not know (deleted since the
// scheduler's cycle, say) gets one from a hash of its name, stable at least.
func swatchOf(swatches map[string]views.Swatch, project string) views.Swatch {
	if s, ok := swatches[project]; ok {
		return s
	}
	h := fnv.New32a()
	h.Write([]byte(project))
	return swatchAt(int(h.Sum32() % (paletteColors * palettePatterns)))
}
