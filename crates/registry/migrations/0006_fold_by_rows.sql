-- Folding the statistics' deltas in no longer holds up other publishes, and the statistics can
-- be recounted from the search table.
--
-- Schema 4 folded every 64 events, whatever they held, inside the publish that recorded the
-- 64th, under the events lock every publish waits for. A version may hold 65,536 words of its
-- own and 100,000 of its body, so 64 publishes of such versions left millions of delta rows, and
-- that fold outlasted the 30 s every other publish waits for a lock. Now:
--   * each publish records how many delta rows it appended, and the fold runs once 65,536 rows
--     (or 64 changes) are pending: a fold moves at most that plus one publish's own rows (at
--     most 462,144: every word of an old version out and of a new one in, in both tables);
--   * the fold runs before the events lock is taken (only its last statement, the totals, takes
--     it), under a lock of its own that another publish due to fold skips, so other publishes
--     wait for neither;
--   * no statement of a fold or a refresh has a plan that compares every word with every other
--     (schema 4's could: a fold of 130,000 words had not ended after 12 minutes);
--   * a word no skill holds any more leaves the statistics tables.

ALTER TABLE skillet_search_stats_deltas ADD COLUMN rows integer NOT NULL DEFAULT 0;

-- A word no skill holds any more leaves the statistics when the deltas are folded in (so churn
-- does not grow them for good: schema 4 kept a row of 0 for every word that ever came); the
-- partial indexes find those rows without reading the tables.
CREATE INDEX skillet_term_stats_unused ON skillet_term_stats (term) WHERE df = 0;
CREATE INDEX skillet_blend_term_stats_unused ON skillet_blend_term_stats (term) WHERE df = 0;
DELETE FROM skillet_term_stats WHERE df = 0;
DELETE FROM skillet_blend_term_stats WHERE df = 0;

-- Folds the deltas in: known words updated, new ones inserted (one statement would not do: a
-- CHECK sees an insert's row before its conflict), then the words that fell to 0 deleted. A new
-- word is one the table did not hold when the statement began (an index lookup); schema 4 asked
-- whether the update had returned it, which a plan could answer by scanning every updated word
-- for every folded one (seen: a fold of 130,000 words that had not ended after 12 minutes).
CREATE OR REPLACE FUNCTION skillet_fold_stats() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_catalog.set_config('skillet.schema', '4', true);
    WITH d AS (DELETE FROM skillet_term_deltas RETURNING term, delta),
    n AS (SELECT term, pg_catalog.sum(delta)::integer AS n FROM d GROUP BY term),
    u AS (UPDATE skillet_term_stats b SET df = b.df + n.n FROM n WHERE b.term = n.term)
    INSERT INTO skillet_term_stats (term, df)
        SELECT n.term, n.n FROM n WHERE NOT EXISTS (SELECT 1 FROM skillet_term_stats b WHERE b.term = n.term)
        ORDER BY n.term
        ON CONFLICT (term) DO UPDATE SET df = skillet_term_stats.df + EXCLUDED.df;
    DELETE FROM skillet_term_stats WHERE df = 0;
    WITH d AS (DELETE FROM skillet_blend_term_deltas RETURNING term, delta),
    n AS (SELECT term, pg_catalog.sum(delta)::integer AS n FROM d GROUP BY term),
    u AS (UPDATE skillet_blend_term_stats b SET df = b.df + n.n FROM n WHERE b.term = n.term)
    INSERT INTO skillet_blend_term_stats (term, df)
        SELECT n.term, n.n FROM n WHERE NOT EXISTS (SELECT 1 FROM skillet_blend_term_stats b WHERE b.term = n.term)
        ORDER BY n.term
        ON CONFLICT (term) DO UPDATE SET df = skillet_blend_term_stats.df + EXCLUDED.df;
    DELETE FROM skillet_blend_term_stats WHERE df = 0;
    WITH d AS (DELETE FROM skillet_search_stats_deltas RETURNING *)
    UPDATE skillet_search_stats s
        SET documents = s.documents + coalesce((SELECT pg_catalog.sum(documents) FROM d), 0),
            total_length = s.total_length + coalesce((SELECT pg_catalog.sum(total_length) FROM d), 0),
            blend_total_length = s.blend_total_length
                + coalesce((SELECT pg_catalog.sum(blend_total_length) FROM d), 0)
        WHERE s.id = 1;
END $$;

-- The fold's own lock (a row only the tables' owner can lock, as the events lock): a publish
-- that finds the deltas due folds them in before it takes the events lock, so no other publish
-- waits for a fold. Two due at once: one folds, the other goes on (SKIP LOCKED). Far past due
-- (1,024 changes or 1,048,576 rows: a fold held back by a transaction that keeps the lock), a
-- publish waits for the lock instead (and fails after the lock timeout), so the deltas a search
-- adds up stay bounded.
CREATE TABLE skillet_fold_lock (id integer PRIMARY KEY CHECK (id = 1));
INSERT INTO skillet_fold_lock VALUES (1);

CREATE FUNCTION skillet_fold_if_due() RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    v_changes bigint;
    v_rows bigint;
BEGIN
    SELECT pg_catalog.count(*), coalesce(pg_catalog.sum(rows), 0) INTO v_changes, v_rows
        FROM skillet_search_stats_deltas;
    IF v_changes < 64 AND v_rows < 65536 THEN
        RETURN;
    END IF;
    IF v_changes >= 1024 OR v_rows >= 1048576 THEN
        PERFORM 1 FROM skillet_fold_lock WHERE id = 1 FOR UPDATE;
    ELSE
        PERFORM 1 FROM skillet_fold_lock WHERE id = 1 FOR UPDATE SKIP LOCKED;
        IF NOT FOUND THEN
            RETURN;
        END IF;
    END IF;
    PERFORM skillet_fold_stats();
END $$;

-- Appends an event and notifies listeners, under the events lock (held to COMMIT, so events are
-- numbered in the order they commit). The deltas are folded in first when due, under the fold
-- lock (taken before the events lock, never after: the locks are always taken in that order).
CREATE OR REPLACE FUNCTION skillet_record_event(p_kind text, p_owner text, p_name text, p_seq integer)
RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    v_id bigint;
BEGIN
    PERFORM skillet_fold_if_due();
    PERFORM 1 FROM skillet_search_stats WHERE id = 1 FOR UPDATE;
    INSERT INTO skillet_events (kind, owner, name, seq) VALUES (p_kind, p_owner, p_name, p_seq)
        RETURNING id INTO v_id;
    PERFORM pg_catalog.pg_notify('skillet_registry', v_id::text);
    RETURN v_id;
END $$;

-- As in schema 4, with the rows appended counted in the change's delta row, and the words that
-- came and went found by one full join of the old words with the new (hashed or merged: a full
-- join has no plan that compares every word with every other, which schema 4's
-- `NOT (term = ANY (old words))` did once its plan was generic).
CREATE OR REPLACE FUNCTION skillet_refresh_search(p_skill bigint) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    v_had boolean;
    v_old_length integer := 0;
    v_old_blend integer := 0;
    v_old_terms text[];
    v_old_blend_terms text[];
    v_has boolean;
    v_version bigint;
    v_length integer := 0;
    v_blend integer := 0;
    v_rows integer;
    v_blend_rows integer;
BEGIN
    PERFORM pg_catalog.set_config('skillet.schema', '4', true);
    SELECT length, blend_length INTO v_old_length, v_old_blend
        FROM skillet_search WHERE skill_id = p_skill;
    v_had := FOUND;
    v_old_length := coalesce(v_old_length, 0);
    v_old_blend := coalesce(v_old_blend, 0);
    v_old_terms := ARRAY(SELECT term FROM skillet_terms WHERE skill_id = p_skill);
    v_old_blend_terms := ARRAY(SELECT term FROM skillet_blend_terms WHERE skill_id = p_skill);
    DELETE FROM skillet_terms WHERE skill_id = p_skill;
    DELETE FROM skillet_blend_terms WHERE skill_id = p_skill;
    SELECT v.id, v.length, v.length + pg_catalog.cardinality(v.body_terms)
        INTO v_version, v_length, v_blend
        FROM skillet_versions v WHERE v.skill_id = p_skill AND v.yanked_at IS NULL
        ORDER BY v.seq DESC LIMIT 1;
    v_has := FOUND;
    IF v_has THEN
        INSERT INTO skillet_search (skill_id, version_id, owner, name, seq, description, length,
                                    blend_length, embedding)
            SELECT s.id, v.id, s.owner, s.name, v.seq, v.description, v.length, v_blend, v.embedding
            FROM skillet_versions v JOIN skillet_skills s ON s.id = v.skill_id WHERE v.id = v_version
            ON CONFLICT (skill_id) DO UPDATE SET version_id = EXCLUDED.version_id,
                seq = EXCLUDED.seq, description = EXCLUDED.description, length = EXCLUDED.length,
                blend_length = EXCLUDED.blend_length, embedding = EXCLUDED.embedding;
        INSERT INTO skillet_terms (term, skill_id, tf, length)
            SELECT t.term, p_skill, t.tf, v.length
            FROM skillet_versions v, ROWS FROM (pg_catalog.unnest(v.terms), pg_catalog.unnest(v.term_counts)) AS t(term, tf)
            WHERE v.id = v_version;
        INSERT INTO skillet_blend_terms (term, skill_id, tf, length)
            SELECT w.term, p_skill, pg_catalog.sum(w.tf)::integer, v_blend
            FROM skillet_versions v, LATERAL (
                SELECT t.term, t.tf FROM ROWS FROM (pg_catalog.unnest(v.terms), pg_catalog.unnest(v.term_counts)) AS t(term, tf)
                UNION ALL SELECT b.term, 1 FROM pg_catalog.unnest(v.body_terms) AS b(term)) w
            WHERE v.id = v_version
            GROUP BY w.term;
    ELSE
        v_length := 0;
        v_blend := 0;
        DELETE FROM skillet_search WHERE skill_id = p_skill;
    END IF;
    INSERT INTO skillet_term_deltas (term, delta)
        SELECT coalesce(o.t, n.term), CASE WHEN o.t IS NULL THEN 1 ELSE -1 END
        FROM pg_catalog.unnest(v_old_terms) AS o(t)
        FULL JOIN (SELECT term FROM skillet_terms WHERE skill_id = p_skill) AS n ON n.term = o.t
        WHERE o.t IS NULL OR n.term IS NULL;
    GET DIAGNOSTICS v_rows = ROW_COUNT;
    INSERT INTO skillet_blend_term_deltas (term, delta)
        SELECT coalesce(o.t, n.term), CASE WHEN o.t IS NULL THEN 1 ELSE -1 END
        FROM pg_catalog.unnest(v_old_blend_terms) AS o(t)
        FULL JOIN (SELECT term FROM skillet_blend_terms WHERE skill_id = p_skill) AS n ON n.term = o.t
        WHERE o.t IS NULL OR n.term IS NULL;
    GET DIAGNOSTICS v_blend_rows = ROW_COUNT;
    INSERT INTO skillet_search_stats_deltas (documents, total_length, blend_total_length, rows)
        VALUES (v_has::integer - v_had::integer, v_length - v_old_length, v_blend - v_old_blend,
                v_rows + v_blend_rows);
END $$;

-- Recounts the collection's statistics from the search table (the deltas folded in first, under
-- the fold lock and the events lock, so no publish commits in between): what `init` runs to repair statistics a
-- fault left out of step. Returns how many figures were off (words in either table, and the
-- three totals).
CREATE FUNCTION skillet_recount_stats() RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    v_terms bigint;
    v_blend bigint;
    v_totals bigint;
BEGIN
    PERFORM pg_catalog.set_config('skillet.schema', '4', true);
    PERFORM 1 FROM skillet_fold_lock WHERE id = 1 FOR UPDATE;
    PERFORM 1 FROM skillet_search_stats WHERE id = 1 FOR UPDATE;
    PERFORM skillet_fold_stats();
    WITH r AS (SELECT term, pg_catalog.count(*)::integer AS n FROM skillet_terms GROUP BY term),
    off AS (SELECT coalesce(r.term, s.term) AS term, coalesce(r.n, 0) AS n
            FROM r FULL JOIN skillet_term_stats s ON s.term = r.term
            WHERE coalesce(r.n, 0) <> coalesce(s.df, 0)),
    fixed AS (INSERT INTO skillet_term_stats (term, df) SELECT term, n FROM off ORDER BY term
              ON CONFLICT (term) DO UPDATE SET df = EXCLUDED.df RETURNING 1)
    SELECT pg_catalog.count(*) INTO v_terms FROM fixed;
    WITH r AS (SELECT term, pg_catalog.count(*)::integer AS n FROM skillet_blend_terms GROUP BY term),
    off AS (SELECT coalesce(r.term, s.term) AS term, coalesce(r.n, 0) AS n
            FROM r FULL JOIN skillet_blend_term_stats s ON s.term = r.term
            WHERE coalesce(r.n, 0) <> coalesce(s.df, 0)),
    fixed AS (INSERT INTO skillet_blend_term_stats (term, df) SELECT term, n FROM off ORDER BY term
              ON CONFLICT (term) DO UPDATE SET df = EXCLUDED.df RETURNING 1)
    SELECT pg_catalog.count(*) INTO v_blend FROM fixed;
    WITH r AS (SELECT pg_catalog.count(*) AS documents,
                      coalesce(pg_catalog.sum(length), 0)::bigint AS total_length,
                      coalesce(pg_catalog.sum(blend_length), 0)::bigint AS blend_total_length
               FROM skillet_search),
    s AS (SELECT * FROM skillet_search_stats WHERE id = 1)
    SELECT (r.documents <> s.documents)::integer + (r.total_length <> s.total_length)::integer
           + (r.blend_total_length <> s.blend_total_length)::integer
        INTO v_totals FROM r, s;
    UPDATE skillet_search_stats s SET documents = r.documents, total_length = r.total_length,
            blend_total_length = r.blend_total_length
        FROM (SELECT pg_catalog.count(*) AS documents,
                     coalesce(pg_catalog.sum(length), 0)::bigint AS total_length,
                     coalesce(pg_catalog.sum(blend_length), 0)::bigint AS blend_total_length
              FROM skillet_search) r
        WHERE s.id = 1 AND v_totals > 0;
    DELETE FROM skillet_term_stats WHERE df = 0;
    DELETE FROM skillet_blend_term_stats WHERE df = 0;
    RETURN v_terms + v_blend + v_totals;
END $$;

-- Every function, as before (replacing a function clears its settings; a new one has PUBLIC's
-- EXECUTE): nobody but the owner executes it, and names resolve in pg_catalog, then this
-- schema, then pg_temp. The publishers' four keep their EXECUTE grant.
DO $$
DECLARE
    f regprocedure;
BEGIN
    FOR f IN SELECT p.oid::regprocedure FROM pg_catalog.pg_proc p
             WHERE p.proname LIKE 'skillet\_%' AND p.pronamespace = pg_catalog.to_regnamespace(current_schema())::oid
    LOOP
        EXECUTE pg_catalog.format('REVOKE ALL ON FUNCTION %s FROM PUBLIC', f);
        EXECUTE pg_catalog.format('ALTER FUNCTION %s SET search_path = pg_catalog, %I, pg_temp', f, current_schema());
    END LOOP;
END $$;
