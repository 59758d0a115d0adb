package scheduler

import (
	"slices"
	"strings"
)

// PriorityAlias is a priority class name of KAI Scheduler, or of Run:ai before its priority
// dictionary, that Arbiter reads as one of its dictionary's entries (S7), so that manifests
// written for KAI run unchanged. It carries the preemptibility KAI gives the class (S8): KAI
// counts a class of value 100 or more as non-preemptible. docs/scheduling.md gives the
// reasoning behind each entry.
type PriorityAlias struct {
	Name           string         // the class name, as KAI or Run:ai spell it
	Entry          string         // the dictionary entry it stands for
	Preemptibility Preemptibility // KAI's for that class
}

// priorityAliases, in the order of KAI's values (50, 75, 75, 100, 125).
var priorityAliases = []PriorityAlias{
	{Name: "train", Entry: "low", Preemptibility: Preemptible},
	{Name: "build-preemptible", Entry: "medium", Preemptibility: Preemptible},       // KAI's
	{Name: "interactive-preemptible", Entry: "medium", Preemptibility: Preemptible}, // Run:ai's before 2.22
	{Name: "build", Entry: "high", Preemptibility: NonPreemptible},
	{Name: "inference", Entry: "very-high", Preemptibility: NonPreemptible},
}

// PriorityAliases lists the aliases (a copy: callers may keep it).
func PriorityAliases() []PriorityAlias { return slices.Clone(priorityAliases) }

// alias is an alias the catalog resolves: its entry is in the dictionary.
type alias struct {
	PriorityAlias
	priority Priority
}

// indexAliases keeps the aliases whose entry is in the dictionary; a dictionary entry of the
// same name as an alias is the entry.
func (c *Catalog) indexAliases() {
	c.aliases = make(map[string]alias, len(priorityAliases))
	var names []string
	for _, a := range priorityAliases {
		p, ok := c.priorities[a.Entry]
		if _, shadowed := c.priorities[a.Name]; !ok || shadowed {
			continue
		}
		c.aliases[a.Name] = alias{PriorityAlias: a, priority: p}
		names = append(names, a.Name)
	}
	c.aliasNames = strings.Join(names, ", ")
}

// lookup finds a priority name in the dictionary, else among the aliases (nil for an entry).
func (c *Catalog) lookup(name string) (Priority, *alias, bool) {
	if p, ok := c.priorities[name]; ok {
		return p, nil, true
	}
	if a, ok := c.aliases[name]; ok {
		return a.priority, &a, true
	}
	return Priority{}, nil, false
}

// knownPriority reports whether a name is a dictionary entry or an alias of one.
func (c *Catalog) knownPriority(name string) bool {
	_, _, ok := c.lookup(name)
	return ok
}

// unknownValue is a value read in one or more places that it does not name anything: one
// mistake, however many places carry it, so one warning.
type unknownValue struct {
	value  string
	places []string
}

// noteUnknown adds a place where value was read to the unknown values.
func noteUnknown(unknown []unknownValue, value, place string) []unknownValue {
	for i := range unknown {
		if unknown[i].value == value {
			unknown[i].places = append(unknown[i].places, place)
			return unknown
		}
	}
	return append(unknown, unknownValue{value: value, places: []string{place}})
}
