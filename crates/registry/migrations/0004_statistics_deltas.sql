-- Publishers of different skills no longer wait for each other over the collection's
-- statistics: each publish appends deltas (rows no other publish writes), a search adds them to
-- the base rows, and every 64 events they are folded in under the events lock.

-- A writer of the statistics says it writes schema 4 (a schema-3 skillet, which would not
-- know of the deltas, is told to upgrade: it refuses a newer schema before it writes).
CREATE OR REPLACE FUNCTION skillet_require_writer() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF coalesce(pg_catalog.current_setting('skillet.schema', true), '') <> '4' THEN
        RAISE EXCEPTION 'skillet: this registry is at schema 4, which this skillet does not write; upgrade skillet';
    END IF;
    RETURN NEW;
END $$;

-- The statistics' deltas: search adds them to the base rows (skillet_term_stats,
-- skillet_blend_term_stats, skillet_search_stats); skillet_fold_stats moves them in.
CREATE TABLE skillet_term_deltas (term text NOT NULL, delta integer NOT NULL);
CREATE INDEX skillet_term_deltas_term ON skillet_term_deltas (term) INCLUDE (delta);
CREATE TABLE skillet_blend_term_deltas (term text NOT NULL, delta integer NOT NULL);
CREATE INDEX skillet_blend_term_deltas_term ON skillet_blend_term_deltas (term) INCLUDE (delta);
CREATE TABLE skillet_search_stats_deltas (
    documents integer NOT NULL, total_length bigint NOT NULL, blend_total_length bigint NOT NULL);

-- Moves the committed deltas into the base rows, in one transaction (a search sees them in one
-- place or the other, never both). Two folds at once take disjoint rows: a delta row one of
-- them deleted is skipped by the other.
CREATE FUNCTION skillet_fold_stats() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_catalog.set_config('skillet.schema', '4', true);
    -- Known words updated, new ones inserted (a CHECK sees an insert's row before its conflict).
    WITH d AS (DELETE FROM skillet_term_deltas RETURNING term, delta),
    n AS (SELECT term, pg_catalog.sum(delta)::integer AS n FROM d GROUP BY term),
    u AS (UPDATE skillet_term_stats b SET df = b.df + n.n FROM n WHERE b.term = n.term RETURNING b.term)
    INSERT INTO skillet_term_stats (term, df)
        SELECT n.term, n.n FROM n WHERE NOT EXISTS (SELECT 1 FROM u WHERE u.term = n.term)
        ORDER BY n.term
        ON CONFLICT (term) DO UPDATE SET df = skillet_term_stats.df + EXCLUDED.df;
    -- Known words updated, new ones inserted (a CHECK sees an insert's row before its conflict).
    WITH d AS (DELETE FROM skillet_blend_term_deltas RETURNING term, delta),
    n AS (SELECT term, pg_catalog.sum(delta)::integer AS n FROM d GROUP BY term),
    u AS (UPDATE skillet_blend_term_stats b SET df = b.df + n.n FROM n WHERE b.term = n.term RETURNING b.term)
    INSERT INTO skillet_blend_term_stats (term, df)
        SELECT n.term, n.n FROM n WHERE NOT EXISTS (SELECT 1 FROM u WHERE u.term = n.term)
        ORDER BY n.term
        ON CONFLICT (term) DO UPDATE SET df = skillet_blend_term_stats.df + EXCLUDED.df;
    WITH d AS (DELETE FROM skillet_search_stats_deltas RETURNING *)
    UPDATE skillet_search_stats s
        SET documents = s.documents + coalesce((SELECT pg_catalog.sum(documents) FROM d), 0),
            total_length = s.total_length + coalesce((SELECT pg_catalog.sum(total_length) FROM d), 0),
            blend_total_length = s.blend_total_length
                + coalesce((SELECT pg_catalog.sum(blend_total_length) FROM d), 0)
        WHERE s.id = 1;
END $$;

-- Appends an event and notifies listeners. The statistics row's lock (the events lock: a row
-- lock, which only the tables' owner can take, never an advisory lock anyone connected could
-- hold) is held from here to COMMIT, so events are numbered in the order they commit: a
-- follower reading "after N" skips none.
CREATE OR REPLACE FUNCTION skillet_record_event(p_kind text, p_owner text, p_name text, p_seq integer)
RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    v_id bigint;
BEGIN
    PERFORM 1 FROM skillet_search_stats WHERE id = 1 FOR UPDATE;
    INSERT INTO skillet_events (kind, owner, name, seq) VALUES (p_kind, p_owner, p_name, p_seq)
        RETURNING id INTO v_id;
    -- Every 64 changes, the statistics' deltas are folded in (under this lock: one fold at a
    -- time), so a search adds up a few rows, never a history.
    IF (SELECT pg_catalog.count(*) FROM skillet_search_stats_deltas) >= 64 THEN
        PERFORM skillet_fold_stats();
    END IF;
    PERFORM pg_catalog.pg_notify('skillet_registry', v_id::text);
    RETURN v_id;
END $$;

-- Puts a skill's newest version that is not yanked into the search table (or takes the skill
-- out), with its words and the blend's, and appends the changes to the collection's statistics
-- as deltas. Nothing here is a row another publish of another skill writes, so publishers run
-- side by side; only the event (and, now and then, folding the deltas in) takes the events
-- lock.
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
    -- The collection's statistics move by deltas, appended (no row two publishes share), only
    -- for the words that came or went.
    INSERT INTO skillet_term_deltas (term, delta)
        SELECT t, -1 FROM pg_catalog.unnest(v_old_terms) AS t
        WHERE NOT EXISTS (SELECT 1 FROM skillet_terms n WHERE n.skill_id = p_skill AND n.term = t)
        UNION ALL
        SELECT n.term, 1 FROM skillet_terms n
        WHERE n.skill_id = p_skill AND NOT (n.term = ANY (v_old_terms));
    INSERT INTO skillet_blend_term_deltas (term, delta)
        SELECT t, -1 FROM pg_catalog.unnest(v_old_blend_terms) AS t
        WHERE NOT EXISTS (SELECT 1 FROM skillet_blend_terms n WHERE n.skill_id = p_skill AND n.term = t)
        UNION ALL
        SELECT n.term, 1 FROM skillet_blend_terms n
        WHERE n.skill_id = p_skill AND NOT (n.term = ANY (v_old_blend_terms));
    INSERT INTO skillet_search_stats_deltas (documents, total_length, blend_total_length)
        VALUES (v_has::integer - v_had::integer, v_length - v_old_length, v_blend - v_old_blend);
END $$;

-- Every function, as in schema 3 (replacing a function clears its settings): nobody but the
-- owner executes it, and names resolve in pg_catalog, then this schema, then pg_temp. The
-- publishers' four keep their EXECUTE grant (a replaced function keeps its rights).
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
