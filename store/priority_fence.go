package store

import "fmt"

// dictionaryRange is the top and bottom of the priority dictionary, read with a department or
// project so that its priority offset can be judged (S25) without another query.
type dictionaryRange struct {
	TopPriorityName     *string `db:"top_priority_name"`
	TopPriorityValue    *int    `db:"top_priority_value"`
	BottomPriorityValue *int    `db:"bottom_priority_value"`
}

const dictionaryRangeSQL = `(SELECT name FROM workload_priorities ORDER BY value DESC, name LIMIT 1) AS top_priority_name,
	       (SELECT max(value) FROM workload_priorities) AS top_priority_value,
	       (SELECT min(value) FROM workload_priorities) AS bottom_priority_value`

// PriorityWarning is empty unless the unit's offset lifts all its work above the top of the
// dictionary (very-high, as seeded): then even its least important work goes before every
// sibling's most important, past deserved quota. YuniKorn's design asks for such a warning
// rather than a cap, as negative priorities may need large offsets too.
func PriorityWarning(kind, policy string, offset int, r dictionaryRange) string {
	if r.TopPriorityValue == nil || r.TopPriorityName == nil || offset <= 0 {
		return ""
	}
	lowest := offset // a fenced unit's queue priority is its offset
	if policy == PriorityOpen && r.BottomPriorityValue != nil {
		lowest = *r.BottomPriorityValue + offset
	}
	if lowest <= *r.TopPriorityValue {
		return ""
	}
	return fmt.Sprintf("priorityOffset %d gives this %s a queue priority of at least %d, above %s (%d): past deserved quota its work goes before all of its siblings' work, whatever their priorities",
		offset, kind, lowest, *r.TopPriorityName, *r.TopPriorityValue)
}

// PriorityWarning is the department's offset warning (S25), empty when there is none.
func (d Department) PriorityWarning() string {
	return PriorityWarning("department", d.PriorityPolicy, d.PriorityOffset, d.dictionaryRange)
}

// PriorityWarning is the project's offset warning (S25), empty when there is none.
func (p Project) PriorityWarning() string {
	return PriorityWarning("project", p.PriorityPolicy, p.PriorityOffset, p.dictionaryRange)
}
