package store

// MergeQuotas is the quota list current becomes when in is patched onto it (Run:ai's PATCH of
// a unit's resources): a pool in names has its quota replaced by in's, a pool in does not name
// keeps its own, a pool only in names is added. A pool is matched by id, or by name when in
// names it by name. The result keeps current's order, with the added pools after it.
func MergeQuotas(current []Quota, in []QuotaInput) []QuotaInput {
	names := func(q Quota, i QuotaInput) bool {
		if i.NodePoolID != nil {
			return *i.NodePoolID == q.NodePoolID
		}
		return i.NodePoolName == q.NodePoolName
	}
	out := make([]QuotaInput, 0, len(current)+len(in))
	used := make([]bool, len(in))
	for _, q := range current {
		kept := true
		for k, i := range in {
			if names(q, i) {
				if !used[k] {
					out = append(out, i)
				}
				used[k], kept = true, false
			}
		}
		if kept {
			id, limit, weight := q.NodePoolID, q.Limit, q.OverQuotaWeight
			keep := QuotaInput{NodePoolID: &id, Deserved: q.Deserved, OverQuotaWeight: &weight}
			if limit != NoLimit {
				keep.Limit = &limit
			}
			out = append(out, keep)
		}
	}
	for k, i := range in {
		if !used[k] {
			out = append(out, i)
		}
	}
	return out
}
