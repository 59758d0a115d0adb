-- The demo's thrash figures, from the workload history Arbiter keeps (workload_events): how many
-- evictions, per hour, whose preemptor was not admitted within 30 s, whose victim had been
-- admitted at most 1 s before, whose victim was admitted while its preemptor already
-- waited, and whose victim was admitted again within 1 s after it (an eviction that moved work
-- rather than stopping it: room elsewhere, or lower-priority work it evicts in turn), and whose
-- victim had been evicted already in the 3 minutes before (the same work taken away again and
-- again, BenchmarkThrash's evicted-again-3min; and in the minute before, evicted-again-1min). docs/demo.md ("Watching it thrash, or not") says how to run it against `make run`'s
-- private PostgreSQL:
--
--   psql -h ./.arbiter/postgres/socket -U postgres arbiter -f hack/thrash-figures.sql
WITH ev AS (
    SELECT e.workload_uid AS victim, e.preemptor_uid AS preemptor, e.at
    FROM workload_events e
    WHERE e.kind IN ('Preempted', 'Reclaimed') AND e.preemptor_uid <> ''
), span AS (
    SELECT min(at) AS first, max(at) AS last FROM workload_events
), facts AS (
    SELECT ev.*,
        (SELECT max(a.at) FROM workload_events a
          WHERE a.workload_uid = ev.victim AND a.kind = 'Admitted' AND a.at <= ev.at) AS victim_admitted,
        (SELECT max(q.at) FROM workload_events q
          WHERE q.workload_uid = ev.preemptor AND q.kind IN ('Queued', 'Preempted', 'Reclaimed') AND q.at <= ev.at) AS preemptor_waiting,
        (SELECT q.kind FROM workload_events q
          WHERE q.workload_uid = ev.preemptor AND q.kind IN ('Queued', 'Preempted', 'Reclaimed') AND q.at <= ev.at
          ORDER BY q.at DESC LIMIT 1) AS preemptor_waiting_kind,
        (SELECT min(a.at) FROM workload_events a
          WHERE a.workload_uid = ev.preemptor AND a.kind = 'Admitted' AND a.at >= ev.at) AS preemptor_admitted,
        (SELECT min(a.at) FROM workload_events a
          WHERE a.workload_uid = ev.victim AND a.kind = 'Admitted' AND a.at > ev.at) AS victim_back,
        (SELECT max(p.at) FROM ev p
          WHERE p.victim = ev.victim AND p.at < ev.at) AS victim_evicted_before
    FROM ev
)
SELECT
    round(extract(epoch FROM (SELECT last - first FROM span)) / 60, 1) AS minutes,
    count(*) AS evictions,
    round(count(*) / greatest(extract(epoch FROM (SELECT last - first FROM span)) / 3600, 1e-9)) AS evictions_per_hour,
    count(*) FILTER (WHERE at < (SELECT last FROM span) - interval '30 s'
        AND (preemptor_admitted IS NULL OR preemptor_admitted > at + interval '30 s')) AS preemptor_not_admitted_in_30s,
    count(*) FILTER (WHERE victim_admitted >= at - interval '1 s') AS victim_admitted_within_1s,
    -- a Queued event is at the workload's creation, which Kubernetes keeps to the second: a
    -- victim admitted within that second may have been admitted before the preemptor existed
    count(*) FILTER (WHERE victim_admitted >= preemptor_waiting
        + CASE WHEN preemptor_waiting_kind = 'Queued' THEN interval '1 s' ELSE interval '0' END) AS victim_admitted_while_preemptor_waited,
    count(*) FILTER (WHERE victim_back <= at + interval '1 s') AS victim_back_within_1s,
    count(*) FILTER (WHERE victim_evicted_before >= at - interval '3 min') AS victim_evicted_again_in_3min,
    count(*) FILTER (WHERE victim_evicted_before >= at - interval '1 min') AS victim_evicted_again_in_1min
FROM facts;
