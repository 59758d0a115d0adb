package store

import (
	"context"
	"errors"
	"time"

	"github.com/arbiterhq/arbiter/internal/listquery"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// WorkloadRecord is the scheduler's record of one workload (S24).
type WorkloadRecord struct {
	UID            string     `db:"uid"`
	Namespace      string     `db:"namespace"`
	Name           string     `db:"name"`
	Kind           string     `db:"kind"`
	APIGroup       string     `db:"api_group"`
	TypeName       string     `db:"type_name"`
	CategoryName   string     `db:"category_name"`
	ProjectID      *uuid.UUID `db:"project_id"`
	ProjectName    string     `db:"project_name"`
	DepartmentName string     `db:"department_name"`
	PriorityName   string     `db:"priority_name"`
	PriorityValue  int        `db:"priority_value"`
	Preemptibility string     `db:"preemptibility"`
	// PriorityFrom and PreemptibilityFrom say where each came from, a sentence a person reads
	// (scheduler.From); "" until the scheduler has resolved the workload.
	PriorityFrom       string     `db:"priority_from"`
	PreemptibilityFrom string     `db:"preemptibility_from"`
	Phase              string     `db:"phase"`
	Reason             string     `db:"reason"`
	Message            string     `db:"message"`
	QueuePosition      int        `db:"queue_position"`
	Gang               int        `db:"gang"`
	RequestedGPUs      int        `db:"requested_gpus"`
	AllocatedGPUs      int        `db:"allocated_gpus"`
	NodePool           string     `db:"node_pool"`
	Nodes              []string   `db:"nodes"`
	Preemptions        int        `db:"preemptions"`
	QueuedAt           time.Time  `db:"queued_at"`
	StartedAt          *time.Time `db:"started_at"`
	FinishedAt         *time.Time `db:"finished_at"`
	CreatedAt          time.Time  `db:"created_at"`
	UpdatedAt          time.Time  `db:"updated_at"`
	// Submitter is the subject of who submitted the workload through Arbiter (its top owner's
	// arbiter.dev/submitted-by annotation); empty for workloads created otherwise.
	Submitter string `db:"submitter"`
	// DepartmentID is the id of the department of the workload's project as it is now, and
	// PhaseUpdatedAt when its phase last changed (its last phase event); both are read, not
	// written (workloadColumns).
	DepartmentID   string    `db:"department_id"`
	PhaseUpdatedAt time.Time `db:"phase_updated_at"`
	// EstimatedStartAt and EstimateBasis are a waiting workload's start estimate, as the leader
	// last made it (RecordEstimates); EstimateBasis is "" when there is none yet.
	EstimatedStartAt *time.Time `db:"estimated_start_at"`
	EstimateBasis    string     `db:"estimate_basis"`
}

// WorkloadEvent is one entry of a workload's history.
type WorkloadEvent struct {
	ID          int64     `db:"id"`
	WorkloadUID string    `db:"workload_uid"`
	At          time.Time `db:"at"`
	Kind        string    `db:"kind"`
	Reason      string    `db:"reason"`
	Message     string    `db:"message"`
	Actor       string    `db:"actor"`
	// PreemptorUID names the workload a Preempted or Reclaimed event made room for; Borrowed is
	// the GPUs the victim's project used beyond its deserved quota just before a reclaim.
	PreemptorUID string `db:"preemptor_uid"`
	Borrowed     *int   `db:"borrowed_gpus"`
}

// WorkloadSpec is the list spec of workloads (docs/api.md "Workloads"), with Run:ai's names
// beside Arbiter's (workload_runai.go).
var WorkloadSpec = listquery.Spec{
	Fields: map[string]listquery.Field{
		"name":           {Kind: listquery.String, Column: "w.name", Sortable: true},
		"namespace":      {Kind: listquery.String, Column: "w.namespace", Sortable: true},
		"projectName":    {Kind: listquery.String, Column: "w.project_name", Sortable: true},
		"projectId":      {Kind: listquery.String, Column: "coalesce(w.project_id::text, '')", Sortable: true},
		"departmentName": {Kind: listquery.String, Column: "w.department_name", Sortable: true},
		"type":           {Kind: listquery.String, Column: "w.type_name", Sortable: true},
		"category":       {Kind: listquery.String, Column: "w.category_name", Sortable: true},
		"priorityValue":  {Kind: listquery.Int, Column: "w.priority_value", Sortable: true},
		"preemptible":    {Kind: listquery.Bool, Column: "(w.preemptibility = 'preemptible')", Sortable: true},
		"reason":         {Kind: listquery.String, Column: "w.reason", Sortable: true},
		"createdAt":      {Kind: listquery.Time, Column: "w.queued_at", Sortable: true},
		"queuePosition":  {Kind: listquery.Int, Column: "nullif(w.queue_position, 0)", Sortable: true},
		"requestedGpus":  {Kind: listquery.Int, Column: "w.requested_gpus", Sortable: true},
		"allocatedGpus":  {Kind: listquery.Int, Column: "w.allocated_gpus", Sortable: true},
		"pendingSeconds": {Kind: listquery.Int, Column: pendingSecondsSQL, Sortable: true},
		"submitter":      {Kind: listquery.String, Column: "w.submitter", Sortable: true},
		"nodePool":       {Kind: listquery.String, Column: "w.node_pool", Sortable: true},
		"waiting":        {Kind: listquery.Bool, Column: WaitingSQL, Sortable: false},
	},
	DefaultSort:  "createdAt",
	TieBreak:     "w.uid",
	SearchColumn: "w.name",
	Paged:        true,
}

// WaitingSQL is whether a workload waits to run: unfinished and pending, preempted and waiting
// to come back, or suspended by Arbiter until it is admitted. A Job its owner stopped is
// Suspended too, but the scheduler gives it neither a reason nor a queue position (it has no
// pods to place), so it waits for nobody. The Overview counts with this expression and the
// Workloads view filters with it (filterBy=waiting==true), so the two cannot disagree.
const WaitingSQL = `(w.finished_at IS NULL AND (w.phase IN ('Pending', 'Preempted') OR ` +
	`(w.phase = 'Suspended' AND (w.queue_position > 0 OR w.reason <> ''))))`

// pendingSecondsSQL is how long a workload has waited: until it started, or until now.
const pendingSecondsSQL = `CASE WHEN w.phase IN ('Pending', 'Suspended', 'Preempted') THEN extract(epoch FROM now() - w.queued_at)::bigint ELSE 0 END`

// Workloads lists workload records; finished ones (history) only when includeFinished.
func (s *Store) Workloads(ctx context.Context, q listquery.Query, includeFinished bool) ([]WorkloadRecord, *int, error) {
	return s.VisibleWorkloads(ctx, q, includeFinished, WorkloadScope{All: true})
}

// WorkloadRecord returns one workload by its top owner's UID.
func (s *Store) WorkloadRecord(ctx context.Context, uid string) (WorkloadRecord, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+workloadColumns+` FROM workloads w WHERE w.uid = $1`, uid)
	return scanOne[WorkloadRecord](rows, err, "workload "+uid)
}

// WorkloadEvents returns a workload's history, oldest first.
func (s *Store) WorkloadEvents(ctx context.Context, uid string) ([]WorkloadEvent, error) {
	if _, err := s.WorkloadRecord(ctx, uid); err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, `SELECT * FROM workload_events WHERE workload_uid = $1 ORDER BY id`, uid)
	return scanAll[WorkloadEvent](rows, err)
}

// UnfinishedWorkloads returns the UIDs of records not yet finished (the scheduler's writer
// reads them at start, to finish those that ended while Arbiter was not running).
func (s *Store) UnfinishedWorkloads(ctx context.Context) (map[string]string, error) {
	rows, err := s.pool.Query(ctx, `SELECT uid, phase FROM workloads WHERE finished_at IS NULL`)
	if err != nil {
		return nil, classify(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var uid, phase string
		if err := rows.Scan(&uid, &phase); err != nil {
			return nil, classify(err)
		}
		out[uid] = phase
	}
	return out, classify(rows.Err())
}

// RecordWorkloads writes changed workload records and new events in one transaction. Records
// are upserted whole (the writer sends only those that changed); a Preempted or Reclaimed
// event counts one more preemption on its workload. Their text is bounded first (bounds.go).
//
// One row the database refuses (a value out of its allowed range) must not stop every
// workload's recording: when the batch fails so, it is written again row by row, each in a
// savepoint, and the rows refused are skipped and reported (OnRecordSkipped) once the rest is
// committed. Any other failure (the database unavailable) fails the whole call, for the writer
// to try again: nothing is skipped then.
func (s *Store) RecordWorkloads(ctx context.Context, records []WorkloadRecord, events []WorkloadEvent) error {
	if len(records) == 0 && len(events) == 0 {
		return nil
	}
	type row struct {
		what, uid string
		queue     func(b *pgx.Batch)
	}
	rows := make([]row, 0, len(records)+len(events))
	for _, r := range records {
		r := r.bounded()
		rows = append(rows, row{"record", r.UID, func(b *pgx.Batch) { queueRecord(b, &r) }})
	}
	for _, e := range events {
		e := e.bounded()
		rows = append(rows, row{"event", e.WorkloadUID, func(b *pgx.Batch) { queueEvent(b, e) }})
	}
	err := s.InTx(ctx, func(tx pgx.Tx) error {
		b := &pgx.Batch{}
		for _, r := range rows {
			r.queue(b)
		}
		return tx.SendBatch(ctx, b).Close()
	})
	if !errors.Is(err, ErrInvalid) {
		return err
	}
	type skip struct {
		what, uid string
		err       error
	}
	var skipped []skip
	err = s.InTx(ctx, func(tx pgx.Tx) error {
		skipped = nil
		for _, r := range rows {
			sp, err := tx.Begin(ctx) // a savepoint
			if err != nil {
				return err
			}
			b := &pgx.Batch{}
			r.queue(b)
			err = sp.SendBatch(ctx, b).Close()
			if err == nil {
				err = sp.Commit(ctx)
			}
			if err == nil {
				continue
			}
			if rerr := sp.Rollback(ctx); rerr != nil && !errors.Is(rerr, pgx.ErrTxClosed) {
				return rerr
			}
			if err = classify(err); !errors.Is(err, ErrInvalid) {
				return err
			}
			skipped = append(skipped, skip{r.what, r.uid, err})
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, sk := range skipped {
		s.reportSkipped(sk.what, sk.uid, sk.err)
	}
	return nil
}

// insertWorkloadSQL inserts one workload record from recordArgs; the caller says what a record
// already there means (ON CONFLICT).
const insertWorkloadSQL = `
				INSERT INTO workloads (uid, namespace, name, kind, api_group, type_name, category_name, project_id,
				    project_name, department_name, priority_name, priority_value, preemptibility, phase, reason,
				    message, queue_position, gang, requested_gpus, allocated_gpus, node_pool, nodes, queued_at,
				    started_at, finished_at, submitter, priority_from, preemptibility_from)
				VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17,$18,$19,$20,$21,$22,$23,$24,$25,$26,$27,$28)`

// recordArgs are insertWorkloadSQL's arguments, $1 to $28, then extra.
func recordArgs(r *WorkloadRecord, extra ...any) []any {
	if r.Nodes == nil {
		r.Nodes = []string{}
	}
	return append([]any{r.UID, r.Namespace, r.Name, r.Kind, r.APIGroup, r.TypeName, r.CategoryName, r.ProjectID,
		r.ProjectName, r.DepartmentName, r.PriorityName, r.PriorityValue, r.Preemptibility, r.Phase, r.Reason,
		r.Message, r.QueuePosition, r.Gang, r.RequestedGPUs, r.AllocatedGPUs, r.NodePool, r.Nodes, r.QueuedAt,
		r.StartedAt, r.FinishedAt, r.Submitter, r.PriorityFrom, r.PreemptibilityFrom}, extra...)
}

// queueRecord queues the upsert of one workload record (RecordWorkloads).
func queueRecord(b *pgx.Batch, r *WorkloadRecord) {
	b.Queue(insertWorkloadSQL+`
				ON CONFLICT (uid) DO UPDATE SET
				    namespace = excluded.namespace, name = excluded.name, kind = excluded.kind,
				    api_group = excluded.api_group, type_name = excluded.type_name, category_name = excluded.category_name,
				    -- a record of no project keeps the one a submission gave: the scheduler's
				    -- settings can lag a project made a moment before
				    project_id = coalesce(excluded.project_id, workloads.project_id),
				    project_name = CASE WHEN excluded.project_id IS NULL AND workloads.project_id IS NOT NULL
				                        THEN workloads.project_name ELSE excluded.project_name END,
				    department_name = CASE WHEN excluded.project_id IS NULL AND workloads.project_id IS NOT NULL
				                           THEN workloads.department_name ELSE excluded.department_name END,
				    priority_name = excluded.priority_name,
				    priority_value = excluded.priority_value, preemptibility = excluded.preemptibility,
				    priority_from = excluded.priority_from, preemptibility_from = excluded.preemptibility_from,
				    phase = excluded.phase, reason = excluded.reason, message = excluded.message,
				    queue_position = excluded.queue_position, gang = excluded.gang,
				    requested_gpus = excluded.requested_gpus, allocated_gpus = excluded.allocated_gpus,
				    node_pool = excluded.node_pool, nodes = excluded.nodes, queued_at = excluded.queued_at,
				    started_at = coalesce(excluded.started_at, workloads.started_at),
				    finished_at = excluded.finished_at, updated_at = now(),
				    -- the first submitter recorded stays: an annotation edited later does not move ownership
				    submitter = CASE WHEN workloads.submitter = '' THEN excluded.submitter ELSE workloads.submitter END,
				    -- a record from a cycle is of a workload in the cluster's active set: no longer
				    -- stopped by its owner, so its estimate is to come (RecordEstimates); one that
				    -- runs waits no more
				    estimated_start_at = CASE WHEN excluded.phase = 'Running' THEN NULL ELSE workloads.estimated_start_at END,
				    estimate_basis = CASE WHEN excluded.phase = 'Running' OR workloads.estimate_basis = $29 THEN ''
				                          ELSE workloads.estimate_basis END`,
		recordArgs(r, OwnerStoppedBasis)...)
}

// queueEvent queues the statements of one new event (RecordWorkloads).
func queueEvent(b *pgx.Batch, e WorkloadEvent) {
	at := e.At
	if at.IsZero() {
		at = time.Now()
	}
	actor := e.Actor
	if actor == "" {
		actor = "scheduler"
	}
	// A priority change made through the API is recorded with its actor when it is
	// made; the scheduler then sees the new label and reports the same change. Its
	// event is dropped when a person's PriorityChanged of the last ten minutes already
	// says it ("Changed priority from X to Y." begins "Changed priority from X to Y by
	// Z."), so the timeline shows the change once, with who made it.
	// The label is patched inside the person's transaction, which holds the workload's
	// row (AddWorkloadEvents): the scheduler can see it and get here before that commits.
	// Taking the row first waits for the person's change, and the insert, a statement
	// of its own, then sees it.
	if e.Kind == "PriorityChanged" && actor == "scheduler" {
		b.Queue(`SELECT 1 FROM workloads WHERE uid = $1 FOR UPDATE`, e.WorkloadUID)
	}
	b.Queue(`INSERT INTO workload_events (workload_uid, at, kind, reason, message, actor, preemptor_uid, borrowed_gpus)
			         SELECT $1::text, $2::timestamptz, $3::text, $4::text, $5::text, $6::text, $7::text, $8::integer
			         WHERE NOT ($3 = 'PriorityChanged' AND $6 = 'scheduler' AND EXISTS (
			           SELECT 1 FROM workload_events p
			           WHERE p.workload_uid = $1 AND p.kind = 'PriorityChanged' AND p.actor <> 'scheduler'
			             AND p.at > $2::timestamptz - interval '10 minutes'
			             AND starts_with(p.message, rtrim($5, '.') || ' ')))`,
		e.WorkloadUID, at, e.Kind, e.Reason, e.Message, actor, e.PreemptorUID, e.Borrowed)
	if e.Kind == "Preempted" || e.Kind == "Reclaimed" {
		b.Queue(`UPDATE workloads SET preemptions = preemptions + 1 WHERE uid = $1`, e.WorkloadUID)
	}
}

// Finish is how a workload ended: its final phase (Completed, Failed or Preempted) and when.
type Finish struct {
	Phase string
	At    time.Time
}

// FinishWorkloads marks records finished that the cluster no longer shows, with one event
// each. A record already finished is left as it is, and gets no second event: a finish
// written twice (a new leader finishing what its predecessor's last write also finished)
// is written once.
func (s *Store) FinishWorkloads(ctx context.Context, finished map[string]Finish) error {
	if len(finished) == 0 {
		return nil
	}
	return s.InTx(ctx, func(tx pgx.Tx) error {
		b := &pgx.Batch{}
		for uid, f := range finished {
			kind := f.Phase
			if f.Phase == "Preempted" {
				kind = "Failed"
			}
			b.Queue(`WITH done AS (
			             UPDATE workloads SET phase = $2, finished_at = $3, reason = '', message = '', queue_position = 0,
			                 allocated_gpus = 0, updated_at = now(), estimated_start_at = NULL, estimate_basis = ''
			             WHERE uid = $1 AND finished_at IS NULL
			             RETURNING uid)
			         INSERT INTO workload_events (workload_uid, at, kind, message) SELECT uid, $3, $4, $5 FROM done`,
				uid, f.Phase, f.At, kind, FinishMessage(f.Phase))
		}
		return tx.SendBatch(ctx, b).Close()
	})
}

// FinishMessage is the message of a workload's last event, by its final phase.
func FinishMessage(phase string) string {
	switch phase {
	case "Failed":
		return "The workload failed."
	case "Preempted":
		return "The workload was preempted and has no controller to bring it back (exit code 3006)."
	}
	return "The workload finished."
}

// ProjectRef is a project's name with the ids its access scope is made of.
type ProjectRef struct {
	ID           uuid.UUID `db:"id"`
	Name         string    `db:"name"`
	DepartmentID uuid.UUID `db:"department_id"`
	CreatedAt    time.Time `db:"created_at"` // the organization's order (project colours on the Nodes page)
}

// ProjectRefs lists every project's name, id and department (what deciding who may see which
// workloads needs, without quotas or policy).
func (s *Store) ProjectRefs(ctx context.Context) ([]ProjectRef, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, name, department_id, created_at FROM projects ORDER BY name`)
	return scanAll[ProjectRef](rows, err)
}

// ProjectNamed returns the project that has that name now, with its policy and quotas. A
// workload record's project is the one with its project id (Project), not this.
func (s *Store) ProjectNamed(ctx context.Context, name string) (Project, error) {
	return projectWhere(ctx, s.pool, `p.name = $1`, name, "project "+name)
}

// AddWorkloadEvents records a change people made to a workload (S9): its events in the
// workload's history (PriorityChanged, PreemptibilityChanged) and the audit row, in one
// transaction. apply, when not nil, makes the change itself (the label patch on the cluster)
// inside that transaction, so the history and the audit log hold only changes that were made:
// if apply fails nothing is written.
func (s *Store) AddWorkloadEvents(ctx context.Context, evs []WorkloadEvent, by Actor, changes map[string]Change, apply func(ctx context.Context) error) error {
	if len(evs) == 0 {
		return Invalid("a change of a workload records at least one event")
	}
	uid := evs[0].bounded().WorkloadUID
	return s.InTx(ctx, func(tx pgx.Tx) error {
		// The row is held until the change commits: the scheduler may see the new label before
		// then, and its own report of the change waits for this one (RecordWorkloads).
		var name string
		if err := tx.QueryRow(ctx, `SELECT name FROM workloads WHERE uid = $1 FOR UPDATE`, uid).Scan(&name); err != nil {
			if errors.Is(err, pgx.ErrNoRows) {
				return NotFound("workload %s was not found", uid)
			}
			return err
		}
		now := time.Now()
		for _, ev := range evs {
			ev := ev.bounded()
			if ev.WorkloadUID != uid {
				return Invalid("the events of one change are of one workload, not of %s and %s", uid, ev.WorkloadUID)
			}
			at := ev.At
			if at.IsZero() {
				at = now
			}
			actor := ev.Actor
			if actor == "" {
				actor = by.Subject
			}
			if _, err := tx.Exec(ctx, `INSERT INTO workload_events (workload_uid, at, kind, reason, message, actor) VALUES ($1, $2, $3, $4, $5, $6)`,
				ev.WorkloadUID, at, ev.Kind, ev.Reason, ev.Message, actor); err != nil {
				return err
			}
		}
		entry := by.entry("update", "workload", uid, name)
		for k, c := range changes {
			entry.Changes[k] = c
		}
		if err := insertAudit(ctx, tx, entry); err != nil {
			return err
		}
		if apply != nil {
			return apply(ctx)
		}
		return nil
	})
}

// RecordSubmission records a workload just created through the submission API, so that it is
// listed at once: its record, Pending (unless the scheduler has recorded it already), and the
// audit row, in one transaction. The scheduler's records replace it whole from then on.
func (s *Store) RecordSubmission(ctx context.Context, r WorkloadRecord, by Actor, changes map[string]any) error {
	return s.InTx(ctx, func(tx pgx.Tx) error {
		if r.Nodes == nil {
			r.Nodes = []string{}
		}
		if _, err := tx.Exec(ctx, `
			INSERT INTO workloads (uid, namespace, name, kind, api_group, type_name, category_name, project_id,
			    project_name, department_name, priority_name, priority_value, preemptibility, phase, gang,
			    requested_gpus, nodes, queued_at, submitter)
			VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17,$18,$19)
			ON CONFLICT (uid) DO NOTHING`,
			r.UID, r.Namespace, r.Name, r.Kind, r.APIGroup, r.TypeName, r.CategoryName, r.ProjectID,
			r.ProjectName, r.DepartmentName, r.PriorityName, r.PriorityValue, r.Preemptibility, r.Phase, r.Gang,
			r.RequestedGPUs, r.Nodes, r.QueuedAt, r.Submitter); err != nil {
			return err
		}
		entry := by.entry("create", "workload", r.UID, r.Name)
		entry.HTTPStatus = 202
		for k, v := range changes {
			entry.Changes[k] = v
		}
		return insertAudit(ctx, tx, entry)
	})
}

// RecordWorkloadAction records a person's stop or run of a workload (Run:ai's STOP and RUN): the
// event in its history, the record's phase and the audit row (action), in one transaction with
// apply, the change in the cluster; if apply fails nothing is written.
func (s *Store) RecordWorkloadAction(ctx context.Context, ev WorkloadEvent, phase string, by Actor, action string, apply func(ctx context.Context) error) error {
	return s.InTx(ctx, func(tx pgx.Tx) error {
		var name string
		// Stopped, it has no estimate until run again; run again, its estimate is to come.
		basis := ""
		if phase == "Suspended" {
			basis = OwnerStoppedBasis
		}
		err := tx.QueryRow(ctx, `UPDATE workloads SET phase = $2, reason = '', message = '', queue_position = 0, updated_at = now(),
		                         estimated_start_at = NULL, estimate_basis = $3
		                         WHERE uid = $1 RETURNING name`, ev.WorkloadUID, phase, basis).Scan(&name)
		if errors.Is(err, pgx.ErrNoRows) {
			return NotFound("workload %s was not found", ev.WorkloadUID)
		}
		if err != nil {
			return err
		}
		actor := ev.Actor
		if actor == "" {
			actor = by.Subject
		}
		if _, err := tx.Exec(ctx, `INSERT INTO workload_events (workload_uid, kind, reason, message, actor) VALUES ($1, $2, $3, $4, $5)`,
			ev.WorkloadUID, ev.Kind, ev.Reason, ev.Message, actor); err != nil {
			return err
		}
		entry := by.entry(action, "workload", ev.WorkloadUID, name)
		entry.HTTPStatus = 202
		if err := insertAudit(ctx, tx, entry); err != nil {
			return err
		}
		return apply(ctx)
	})
}

// StopWorkloads records workloads whose owner stopped them (a Job suspended by a person, not by
// Arbiter) as Suspended: their pods are gone, so nothing is allocated, queued or estimated. The event
// is written by whoever stopped them through Arbiter (RecordWorkloadAction).
func (s *Store) StopWorkloads(ctx context.Context, uids []string) error {
	if len(uids) == 0 {
		return nil
	}
	_, err := s.pool.Exec(ctx, `UPDATE workloads SET phase = 'Suspended', reason = '', message = '', queue_position = 0,
	                            allocated_gpus = 0, nodes = '{}', updated_at = now(), estimated_start_at = NULL, estimate_basis = $2
	                            WHERE uid = ANY($1) AND finished_at IS NULL`, uids, OwnerStoppedBasis)
	return classify(err)
}
