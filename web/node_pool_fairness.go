package web

import (
	"context"
	"strconv"
	"time"

	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/views"
	"github.com/google/uuid"
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

// fairnessText is the Node pools page's sentence for a pool's setting: "" when off.
func fairnessText(f store.NodePoolFairness) string {
	if !f.Enabled {
		return ""
	}
	halfLife := "no decay"
	if f.HalfLifeSeconds > 0 {
		halfLife = "half-life " + spanText(f.HalfLifeSeconds)
	}
	return "time-based fair share: window " + spanText(f.WindowSeconds) + ", " + halfLife + ", kValue " + strconv.FormatFloat(f.KValue, 'g', 4, 64)
}

// spanText writes seconds in the largest unit that divides them (7 d, 90 min, 45 s).
func spanText(seconds int64) string {
	for _, u := range []struct {
		size int64
		name string
	}{{86400, " d"}, {3600, " h"}, {60, " min"}} {
		if seconds%u.size == 0 {
			return strconv.FormatInt(seconds/u.size, 10) + u.name
		}
	}
	return strconv.FormatInt(seconds, 10) + " s"
}

// withFairness gives the page's pools their time-based fair share.
func (h *nodePools) withFairness(ctx context.Context, pools []views.NodePool) ([]views.NodePool, error) {
	settings, err := h.org.store.NodePoolFairnesses(ctx)
	if err != nil {
		return nil, err
	}
	for i := range pools {
		if id, err := uuid.Parse(pools[i].ID); err == nil {
			pools[i].TimeFairness = fairnessText(settings[id])
		}
	}
	return pools, nil
}
