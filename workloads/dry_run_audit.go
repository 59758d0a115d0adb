package workloads

import (
	"context"
	"crypto/sha256"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/arbiterhq/arbiter/scheduler"
	"github.com/arbiterhq/arbiter/store"
)

// A dry run whose answer names workloads that would be preempted or reclaimed for it tells the
// caller about other people's work, and is how one would plan to take GPUs from them; such an
// answer is on record (docs/security.md "Audit"). The row is the action "dry-run" on a
// workload, by the caller, named as the submission would be, with in its changes the project
// (name and id), the outcome, victimCount and victims: "namespace/name" of at most
// maxAuditedVictims of them.
//
// The Submit page asks again each time the form changes, so the same answer comes many times
// while one types: an answer already audited for the same caller, project, outcome and
// victims within victimAuditWindow is not audited again.

const (
	// maxAuditedVictims bounds the victims one row names; victimCount says how many there were.
	maxAuditedVictims = 20
	// victimAuditWindow is how long an audited answer is not audited again.
	victimAuditWindow = 10 * time.Minute
	// maxVictimAuditsRemembered bounds the answers remembered; past it the expired are
	// forgotten, and if none has expired, all are (at worst an answer is audited twice).
	maxVictimAuditsRemembered = 4096
)

// victimAudits remembers when each answer naming victims was last audited, by a hash of the
// caller, project, outcome and victims.
type victimAudits struct {
	mu   sync.Mutex
	seen map[[sha256.Size]byte]time.Time
}

func newVictimAudits() *victimAudits {
	return &victimAudits{seen: map[[sha256.Size]byte]time.Time{}}
}

// due says whether the answer key was not audited within the window before now.
func (v *victimAudits) due(key [sha256.Size]byte, now time.Time) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	at, ok := v.seen[key]
	return !ok || now.Sub(at) >= victimAuditWindow
}

// audited remembers that the answer key was audited at now.
func (v *victimAudits) audited(key [sha256.Size]byte, now time.Time) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if len(v.seen) >= maxVictimAuditsRemembered {
		for k, at := range v.seen {
			if now.Sub(at) >= victimAuditWindow {
				delete(v.seen, k)
			}
		}
		if len(v.seen) >= maxVictimAuditsRemembered {
			clear(v.seen)
		}
	}
	v.seen[key] = now
}

// auditVictims writes the audit row of a dry run whose answer p names victims (nothing when it
// names none, or when this answer was audited lately). A row that cannot be written refuses
// the answer (unavailable): an answer naming victims is not given off the record.
func (s *Service) auditVictims(ctx context.Context, who Caller, sub Submission, p scheduler.Prediction) error {
	if len(p.Victims) == 0 || s.audit == nil {
		return nil
	}
	caller := SubmitterOf(who.Identity)
	outcome := string(p.Outcome)
	ids := make([]string, 0, len(p.Victims))
	names := make([]string, 0, min(len(p.Victims), maxAuditedVictims))
	for _, v := range p.Victims {
		ids = append(ids, v.WorkloadID)
		if len(names) < maxAuditedVictims {
			names = append(names, v.Namespace+"/"+v.Name)
		}
	}
	slices.Sort(ids)
	key := sha256.Sum256([]byte(strings.Join(append([]string{caller, sub.Project.ID.String(), outcome}, ids...), "\x00")))
	now := time.Now()
	if !s.victims.due(key, now) {
		return nil
	}
	a := who.Actor
	entry := store.AuditEntry{
		Subject: a.Subject, SubjectType: a.SubjectType, SourceIP: a.SourceIP, RequestID: a.RequestID,
		HTTPMethod: a.HTTPMethod, Action: "dry-run", EntityType: "workload", EntityName: sub.RequestedName,
		Result: "success", HTTPStatus: http.StatusOK,
		Changes: map[string]any{"project": sub.Project.Name, "projectId": sub.Project.ID.String(), "outcome": outcome,
			"victimCount": len(p.Victims), "victims": names},
	}
	if err := s.audit.RecordAudit(ctx, entry); err != nil {
		s.log.Warn("dry run naming victims not answered: its audit row was not written", "request_id", a.RequestID, "err", err)
		return &store.Error{Kind: store.ErrUnavailable, RetryAfter: dryRunRetryAfter,
			Message: "the dry run would evict other workloads, and such answers are recorded in the audit log, which cannot be written now; try again shortly"}
	}
	s.victims.audited(key, now)
	return nil
}
