package store

import (
	"context"
	"errors"
	"math"
	"time"

	"github.com/arbiterhq/arbiter/scheduler"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// Bounds of a node pool's time-based fair share (S28). The window reaches back at most 90
// days, as far as the usage history keeps hourly figures; kValue 100 already lets past use
// decide nearly alone.
const (
	MinFairnessWindowSeconds = 60
	MaxFairnessWindowSeconds = 90 * 24 * 3600
	MaxFairnessKValue        = 100
)

// NodePoolFairness is a node pool's time-based fair share (S28). A pool nobody set has it off,
// with the defaults.
type NodePoolFairness struct {
	NodePoolID      uuid.UUID `db:"node_pool_id"`
	Enabled         bool      `db:"enabled"`
	WindowSeconds   int64     `db:"window_seconds"`
	HalfLifeSeconds int64     `db:"half_life_seconds"`
	KValue          float64   `db:"k_value"`
	UpdatedAt       time.Time `db:"updated_at"` // zero while nobody set it
	UpdatedBy       string    `db:"updated_by"`
}

// defaultFairness is what a pool nobody set has.
func defaultFairness(pool uuid.UUID) NodePoolFairness {
	return NodePoolFairness{NodePoolID: pool, WindowSeconds: int64(scheduler.DefaultFairnessWindow / time.Second),
		HalfLifeSeconds: int64(scheduler.DefaultFairnessHalfLife / time.Second), KValue: scheduler.DefaultFairnessKValue}
}

// Scheduling is the setting as the scheduler reads it.
func (f NodePoolFairness) Scheduling() scheduler.TimeBasedFairness {
	return scheduler.TimeBasedFairness{Enabled: f.Enabled, Window: time.Duration(f.WindowSeconds) * time.Second,
		HalfLife: time.Duration(f.HalfLifeSeconds) * time.Second, KValue: f.KValue}
}

// NodePoolFairnessUpdate holds the fields to change; those not Set keep their values. A null
// value is refused: every field has a value.
type NodePoolFairnessUpdate struct {
	Enabled         Optional[bool]
	WindowSeconds   Optional[int64]
	HalfLifeSeconds Optional[int64]
	KValue          Optional[float64]
}

// NodePoolFairness returns a pool's setting (the defaults when nobody set it); NotFound
// without the pool.
func (s *Store) NodePoolFairness(ctx context.Context, pool uuid.UUID) (NodePoolFairness, error) {
	return nodePoolFairness(ctx, s.pool, pool, "")
}

// NodePoolFairnesses returns the settings of the pools somebody set, by pool.
func (s *Store) NodePoolFairnesses(ctx context.Context) (map[uuid.UUID]NodePoolFairness, error) {
	rows, err := s.pool.Query(ctx, `SELECT * FROM node_pool_time_fairness`)
	all, err := scanAll[NodePoolFairness](rows, err)
	if err != nil {
		return nil, err
	}
	m := make(map[uuid.UUID]NodePoolFairness, len(all))
	for _, f := range all {
		m[f.NodePoolID] = f
	}
	return m, nil
}

// nodePoolFairness reads a pool's setting; with lock, under the pool's row lock (lock is the
// locking clause).
func nodePoolFairness(ctx context.Context, db querier, pool uuid.UUID, lock string) (NodePoolFairness, error) {
	rows, err := db.Query(ctx, `SELECT id FROM node_pools WHERE id = $1 `+lock, pool)
	if _, err := scanOne[struct {
		ID uuid.UUID `db:"id"`
	}](rows, err, "node pool "+pool.String()); err != nil {
		return NodePoolFairness{}, err
	}
	rows, err = db.Query(ctx, `SELECT * FROM node_pool_time_fairness WHERE node_pool_id = $1`, pool)
	f, err := scanOne[NodePoolFairness](rows, err, "the time-based fair share of node pool "+pool.String())
	if errors.Is(err, ErrNotFound) {
		return defaultFairness(pool), nil
	}
	return f, err
}

// SetNodePoolFairness changes a pool's time-based fair share, audited as a change of the pool.
func (s *Store) SetNodePoolFairness(ctx context.Context, pool uuid.UUID, u NodePoolFairnessUpdate, by Actor) (NodePoolFairness, error) {
	var after NodePoolFairness
	err := s.changeConfig(ctx, "node_pools", by.entry("update", "node-pool", pool.String(), ""), func(tx pgx.Tx, audit *AuditEntry) error {
		// the pool's row lock orders concurrent changes: each keeps the fields the others set
		before, err := nodePoolFairness(ctx, tx, pool, "FOR NO KEY UPDATE")
		if err != nil {
			return err
		}
		if after, err = applyFairness(before, u); err != nil {
			return err
		}
		err = tx.QueryRow(ctx, `
			INSERT INTO node_pool_time_fairness (node_pool_id, enabled, window_seconds, half_life_seconds, k_value, updated_by)
			VALUES ($1, $2, $3, $4, $5, $6)
			ON CONFLICT (node_pool_id) DO UPDATE SET enabled = $2, window_seconds = $3, half_life_seconds = $4, k_value = $5,
			  updated_at = now(), updated_by = $6
			RETURNING updated_at, updated_by`, pool, after.Enabled, after.WindowSeconds, after.HalfLifeSeconds, after.KValue, by.Subject).
			Scan(&after.UpdatedAt, &after.UpdatedBy)
		if err != nil {
			return err
		}
		if err := tx.QueryRow(ctx, `SELECT name FROM node_pools WHERE id = $1`, pool).Scan(&audit.EntityName); err != nil {
			return err
		}
		recordChange(audit.Changes, "timeBasedFairness.enabled", before.Enabled, after.Enabled)
		recordChange(audit.Changes, "timeBasedFairness.windowSeconds", before.WindowSeconds, after.WindowSeconds)
		recordChange(audit.Changes, "timeBasedFairness.halfLifeSeconds", before.HalfLifeSeconds, after.HalfLifeSeconds)
		recordChange(audit.Changes, "timeBasedFairness.kValue", before.KValue, after.KValue)
		return nil
	})
	return after, err
}

// applyFairness is the setting u makes of before, or the refusal naming the first field wrong.
func applyFairness(before NodePoolFairness, u NodePoolFairnessUpdate) (NodePoolFairness, error) {
	after := before
	for _, f := range []struct {
		name string
		set  bool
		null bool
	}{{"enabled", u.Enabled.Set, u.Enabled.Value == nil}, {"windowSeconds", u.WindowSeconds.Set, u.WindowSeconds.Value == nil},
		{"halfLifeSeconds", u.HalfLifeSeconds.Set, u.HalfLifeSeconds.Value == nil}, {"kValue", u.KValue.Set, u.KValue.Value == nil}} {
		if f.set && f.null {
			return before, InvalidField(f.name, "%s cannot be null; leave it out to keep its value", f.name)
		}
	}
	if u.Enabled.Set {
		after.Enabled = *u.Enabled.Value
	}
	if u.WindowSeconds.Set {
		after.WindowSeconds = *u.WindowSeconds.Value
	}
	if u.HalfLifeSeconds.Set {
		after.HalfLifeSeconds = *u.HalfLifeSeconds.Value
	}
	if u.KValue.Set {
		after.KValue = *u.KValue.Value
	}
	if after.WindowSeconds < MinFairnessWindowSeconds || after.WindowSeconds > MaxFairnessWindowSeconds {
		return before, InvalidField("windowSeconds", "windowSeconds %d is out of range; past use counts over a window of %d seconds (a minute) to %d (90 days)",
			after.WindowSeconds, MinFairnessWindowSeconds, MaxFairnessWindowSeconds)
	}
	if h := after.HalfLifeSeconds; h != 0 && (h < MinFairnessWindowSeconds || h > MaxFairnessWindowSeconds) {
		return before, InvalidField("halfLifeSeconds", "halfLifeSeconds %d is out of range; use 0 (use anywhere in the window counts fully) or %d to %d seconds",
			h, MinFairnessWindowSeconds, MaxFairnessWindowSeconds)
	}
	if k := after.KValue; math.IsNaN(k) || k < 0 || k > MaxFairnessKValue {
		return before, InvalidField("kValue", "kValue %g is out of range; use 0 (past use changes nothing) to %d (past use nearly decides alone); 1 is the default", k, MaxFairnessKValue)
	}
	return after, nil
}
