package web

import (
	"time"

	"github.com/arbiterhq/arbiter/store"
	"github.com/labstack/echo/v4"
)

// A node pool's time-based fair share (S28) on Arbiter's own API: anyone signed in reads it,
// as the node pools themselves; admins change it.

type fairnessRequest struct {
	Enabled         optional[bool]    `json:"enabled"`
	WindowSeconds   optional[int64]   `json:"windowSeconds"`
	HalfLifeSeconds optional[int64]   `json:"halfLifeSeconds"`
	KValue          optional[float64] `json:"kValue"`
}

var fairnessFields = []string{"enabled", "windowSeconds", "halfLifeSeconds", "kValue"}

func (r fairnessRequest) update() (store.NodePoolFairnessUpdate, error) {
	return store.NodePoolFairnessUpdate{Enabled: storeOptionalValue(r.Enabled), WindowSeconds: storeOptionalValue(r.WindowSeconds),
		HalfLifeSeconds: storeOptionalValue(r.HalfLifeSeconds), KValue: storeOptionalValue(r.KValue)}, nil
}

// fairnessAnswer is a pool's setting; updatedAt is null while nobody set it (the defaults).
type fairnessAnswer struct {
	NodePoolID      string     `json:"nodePoolId"`
	Enabled         bool       `json:"enabled"`
	WindowSeconds   int64      `json:"windowSeconds"`
	HalfLifeSeconds int64      `json:"halfLifeSeconds"`
	KValue          float64    `json:"kValue"`
	UpdatedAt       *time.Time `json:"updatedAt"`
	UpdatedBy       string     `json:"updatedBy,omitempty"`
}

func fairnessView(f store.NodePoolFairness) fairnessAnswer {
	a := fairnessAnswer{NodePoolID: f.NodePoolID.String(), Enabled: f.Enabled, WindowSeconds: f.WindowSeconds,
		HalfLifeSeconds: f.HalfLifeSeconds, KValue: f.KValue, UpdatedBy: f.UpdatedBy}
	if !f.UpdatedAt.IsZero() {
		at := f.UpdatedAt.UTC()
		a.UpdatedAt = &at
	}
	return a
}

func (h *nodePools) getFairness(c echo.Context) error {
	return getByID(c, "id", h.org.store.NodePoolFairness, fairnessView)
}

func (h *nodePools) putFairness(c echo.Context) error {
	return putByAdmin(c, "node-pool", "change a node pool's time-based fair share", fairnessFields, fairnessRequest.update,
		h.org.store.SetNodePoolFairness, fairnessView)
}
