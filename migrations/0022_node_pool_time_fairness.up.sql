-- Time-based fair share (S28) of a node pool, set by admins: whether it is on, the window over
-- which past use counts, the half-life of its decay (0: no decay inside the window) and its
-- strength (KAI's kValue). A pool without a row has it off, with the defaults of
-- scheduler.DefaultFairness*; the row goes with its pool.
CREATE TABLE node_pool_time_fairness (
    node_pool_id      uuid PRIMARY KEY REFERENCES node_pools (id) ON DELETE CASCADE,
    enabled           boolean NOT NULL DEFAULT false,
    window_seconds    bigint NOT NULL CHECK (window_seconds BETWEEN 60 AND 7776000),
    half_life_seconds bigint NOT NULL CHECK (half_life_seconds = 0 OR half_life_seconds BETWEEN 60 AND 7776000),
    k_value           double precision NOT NULL CHECK (k_value >= 0 AND k_value <= 100),
    updated_at        timestamptz NOT NULL DEFAULT now(),
    updated_by        text NOT NULL
);
