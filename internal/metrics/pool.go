package metrics

import (
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
)

// dbPoolCollector reads the database pool's counters at scrape time (pgxpool keeps them;
// copying them into gauges on a timer would only make them stale).
type dbPoolCollector struct {
	pool                             *pgxpool.Pool
	acquired, idle, total, max, wait *prometheus.Desc
	emptyAcquires                    *prometheus.Desc
}

// DBPool makes the collector of a pgx pool's usage: arbiter_db_pool_connections by state
// (acquired, idle, total), arbiter_db_pool_max_connections, and the acquires that had to
// wait for a connection (the sign of an exhausted pool).
func DBPool(pool *pgxpool.Pool) prometheus.Collector {
	conns := "arbiter_db_pool_connections"
	return &dbPoolCollector{
		pool:          pool,
		acquired:      prometheus.NewDesc(conns, "Database connections by state: acquired (in use), idle, total (both, and those being opened).", nil, prometheus.Labels{"state": "acquired"}),
		idle:          prometheus.NewDesc(conns, "Database connections by state: acquired (in use), idle, total (both, and those being opened).", nil, prometheus.Labels{"state": "idle"}),
		total:         prometheus.NewDesc(conns, "Database connections by state: acquired (in use), idle, total (both, and those being opened).", nil, prometheus.Labels{"state": "total"}),
		max:           prometheus.NewDesc("arbiter_db_pool_max_connections", "The most connections the database pool opens.", nil, nil),
		emptyAcquires: prometheus.NewDesc("arbiter_db_pool_empty_acquires_total", "Connection acquires that found no idle connection and had to wait for one.", nil, nil),
		wait:          prometheus.NewDesc("arbiter_db_pool_acquire_wait_seconds_total", "Time spent waiting for a connection, summed over the acquires that waited.", nil, nil),
	}
}

func (c *dbPoolCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.acquired, c.idle, c.total, c.max, c.emptyAcquires, c.wait} {
		ch <- d
	}
}

func (c *dbPoolCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.pool.Stat()
	ch <- prometheus.MustNewConstMetric(c.acquired, prometheus.GaugeValue, float64(s.AcquiredConns()))
	ch <- prometheus.MustNewConstMetric(c.idle, prometheus.GaugeValue, float64(s.IdleConns()))
	ch <- prometheus.MustNewConstMetric(c.total, prometheus.GaugeValue, float64(s.TotalConns()))
	ch <- prometheus.MustNewConstMetric(c.max, prometheus.GaugeValue, float64(s.MaxConns()))
	ch <- prometheus.MustNewConstMetric(c.emptyAcquires, prometheus.CounterValue, float64(s.EmptyAcquireCount()))
	ch <- prometheus.MustNewConstMetric(c.wait, prometheus.CounterValue, s.EmptyAcquireWaitTime().Seconds())
}
