package store

import (
	"strings"
	"unicode/utf8"
)

// Text copied from Kubernetes objects into the workload records and their history (names,
// the submitter annotation, reasons, messages) is bounded and sanitised here, in the one
// place every writer of those tables passes through (RecordWorkloads, AddWorkloadEvents):
// anyone who can create a Job chooses that text, and one value PostgreSQL refuses (a NUL, bytes
// that are not UTF-8, an entry too large for a btree index, whose limit is about 2.7 KB) would
// otherwise fail the whole batch of every workload's records. docs/security.md lists the caps.
const (
	// MaxNameBytes caps names and identifiers (UID, namespace, name, kind, API group, type,
	// category, project, department, priority, preemptibility, phase, node pool, node names,
	// actor): Kubernetes names are at most 253 bytes.
	MaxNameBytes = 253
	// MaxSubmitterBytes caps the submitter (the arbiter.dev/submitted-by annotation), which is
	// indexed: room for any subject Arbiter writes there (at most 500 characters, 4 bytes each
	// at most), below the index entry's limit of about 2.7 KB.
	MaxSubmitterBytes = 2000
	// MaxReasonBytes caps reasons, short CamelCase words in Kubernetes.
	MaxReasonBytes = 256
	// MaxMessageBytes caps messages.
	MaxMessageBytes = 4096
	// MaxFromBytes caps the sentences saying where a workload's priority and preemptibility
	// came from (the workloads table checks the same bound).
	MaxFromBytes = 512
)

// boundText drops NUL characters, replaces bytes that are not UTF-8 with U+FFFD and cuts the
// text to at most max bytes, at a character boundary.
func boundText(s string, max int) string {
	if strings.IndexByte(s, 0) >= 0 {
		s = strings.ReplaceAll(s, "\x00", "")
	}
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}

// bounded returns the record with all its text bounded (boundText).
func (r WorkloadRecord) bounded() WorkloadRecord {
	for _, f := range []*string{&r.UID, &r.Namespace, &r.Name, &r.Kind, &r.APIGroup, &r.TypeName, &r.CategoryName,
		&r.ProjectName, &r.DepartmentName, &r.PriorityName, &r.Preemptibility, &r.Phase, &r.NodePool} {
		*f = boundText(*f, MaxNameBytes)
	}
	r.Submitter = boundText(r.Submitter, MaxSubmitterBytes)
	r.Reason = boundText(r.Reason, MaxReasonBytes)
	r.Message = boundText(r.Message, MaxMessageBytes)
	r.PriorityFrom = boundText(r.PriorityFrom, MaxFromBytes)
	r.PreemptibilityFrom = boundText(r.PreemptibilityFrom, MaxFromBytes)
	r.EstimateBasis = boundText(r.EstimateBasis, MaxNameBytes)
	nodes := make([]string, len(r.Nodes))
	for i, n := range r.Nodes {
		nodes[i] = boundText(n, MaxNameBytes)
	}
	r.Nodes = nodes
	return r
}

// bounded returns the event with all its text bounded (boundText).
func (e WorkloadEvent) bounded() WorkloadEvent {
	for _, f := range []*string{&e.WorkloadUID, &e.Kind, &e.Actor, &e.PreemptorUID} {
		*f = boundText(*f, MaxNameBytes)
	}
	e.Reason = boundText(e.Reason, MaxReasonBytes)
	e.Message = boundText(e.Message, MaxMessageBytes)
	return e
}

// OnRecordSkipped sets what is told of each workload record or event that RecordWorkloads
// skips because the database refuses it even bounded (what is "record" or "event", uid the
// workload's): the server logs it and counts it in arbiter_workload_rows_skipped_total. It
// is told once per skipped row, after the rest of the batch is written.
func (s *Store) OnRecordSkipped(fn func(what, uid string, err error)) {
	s.hooksMu.Lock()
	defer s.hooksMu.Unlock()
	s.skipped = fn
}

func (s *Store) reportSkipped(what, uid string, err error) {
	s.hooksMu.Lock()
	fn := s.skipped
	s.hooksMu.Unlock()
	if fn != nil {
		fn(what, uid, err)
	}
}
