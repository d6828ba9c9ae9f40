-- Folding the statistics' deltas in holds up no other publish and stays bounded, the statistics
-- can be recounted without holding up anyone, and a yank raced by another of the same version
-- is no error.
--
-- Schema 4 folded every 64 changes, whatever they held, inside the publish that recorded the
-- 64th, under the events lock every publish waits for. A version may hold 65,536 words of its
-- own and 100,000 of its body, so such versions left hundreds of thousands of delta rows each,
-- and the fold outlasted the 30 s other publishes wait for a lock (or never ended: below). Now:
--   * a fold is due once 64 changes or 65,536 rows of either word table's deltas are pending
--     (counted with a bound, never more than that read);
--   * a publish due to fold does it before it takes the events lock, under a lock of its own
--     that another publish due skips; only far past due (4,096 changes or 1,048,576 rows) does a
--     publish wait for it, and that wait is for one fold, which is bounded: at most as many
--     rows of each word table's deltas as one publish can add (131,072 and 331,072), and the
--     totals;
--   * a fold keeps a word's count below 0 (a fault's) as a pending delta instead of dropping it,
--     so base and deltas always add up to what they did;
--   * a fold's statements are planned at each call, and every join in them is a lookup by a
--     key: schema 4's fold asked whether its own update had returned a word, which a plan could
--     answer by scanning every updated word for every folded one (a fold of 130,000 words had
--     not ended after 12 minutes), and its refresh compared every new word with every old one;
--   * a transaction that already recorded an event never waits for the fold's lock (it holds the
--     events lock, which a fold may be waiting for);
--   * no word's count is kept at 0: a word no skill holds leaves the statistics;
--   * skillet_recount_stats() compares the statistics (base and deltas, in one snapshot) with
--     the search table and appends the difference as deltas: exact, one recount at a time, and
--     no publish or search waits for it.

DELETE FROM skillet_term_stats WHERE df = 0;
DELETE FROM skillet_blend_term_stats WHERE df = 0;

-- The fold's own lock (row 1) and the recount's (row 2): rows only the tables' owner can lock,
-- as the events lock.
CREATE TABLE skillet_fold_lock (id integer PRIMARY KEY CHECK (id IN (1, 2)));
INSERT INTO skillet_fold_lock VALUES (1), (2);

-- Folds one word table's deltas in, at most `p_rows` of them (any rows: a word's rows may be
-- split between folds, and a word's +1 and -1 may fall in different folds). Known words are updated, or deleted when they fall to 0; new ones
-- inserted (one statement would not do: a CHECK sees an insert's row before its conflict); a
-- word whose count would fall below 0 (its -1 folded before its +1, or a fault) keeps the
-- remainder as a pending delta, so base and deltas always add up to what they did, and a
-- recount's correction stays exact. Planned afresh at every call (EXECUTE), with the tables as
-- they are: a plan cached while the tables were small ran a nested loop over every row for
-- minutes. Every join here is a lookup by a key (a word, a row's ctid).
CREATE FUNCTION skillet_fold_words(p_deltas text, p_stats text, p_rows integer) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE pg_catalog.format(
        'WITH d AS (DELETE FROM %1$I WHERE ctid IN (SELECT ctid FROM %1$I LIMIT %3$s)
                    RETURNING term, delta),
         n AS (SELECT term, pg_catalog.sum(delta)::integer AS n FROM d GROUP BY term),
         s AS (SELECT n.term, n.n, b.df FROM n LEFT JOIN %2$I b ON b.term = n.term),
         z AS (DELETE FROM %2$I b USING s WHERE b.term = s.term AND s.df + s.n <= 0),
         u AS (UPDATE %2$I b SET df = s.df + s.n FROM s WHERE b.term = s.term AND s.df + s.n > 0),
         k AS (INSERT INTO %1$I (term, delta)
               SELECT term, coalesce(df, 0) + n FROM s WHERE coalesce(df, 0) + n < 0)
         INSERT INTO %2$I (term, df)
             SELECT term, n FROM s WHERE df IS NULL AND n > 0 ORDER BY term
             ON CONFLICT (term) DO UPDATE SET df = %2$I.df + EXCLUDED.df',
        p_deltas, p_stats, p_rows);
END $$;

-- Folds deltas in (under the fold lock): at most as many rows of each word table's as one
-- publish can add to it (131,072 of the words' own: 65,536 out and 65,536 in; 331,072 of the
-- blend's, with 100,000 of the body's each way), so a publish that waits and folds takes at
-- least what it added, and every pending change's totals.
CREATE OR REPLACE FUNCTION skillet_fold_stats() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_catalog.set_config('skillet.schema', '4', true);
    PERFORM skillet_fold_words('skillet_term_deltas', 'skillet_term_stats', 131072);
    PERFORM skillet_fold_words('skillet_blend_term_deltas', 'skillet_blend_term_stats', 331072);
    WITH d AS (DELETE FROM skillet_search_stats_deltas RETURNING *)
    UPDATE skillet_search_stats s
        SET documents = s.documents + coalesce((SELECT pg_catalog.sum(documents) FROM d), 0),
            total_length = s.total_length + coalesce((SELECT pg_catalog.sum(total_length) FROM d), 0),
            blend_total_length = s.blend_total_length
                + coalesce((SELECT pg_catalog.sum(blend_total_length) FROM d), 0)
        WHERE s.id = 1;
END $$;

-- Whether `p_changes` changes or `p_rows` rows of either word table's deltas are pending,
-- reading at most that many of each.
CREATE FUNCTION skillet_fold_due(p_changes integer, p_rows integer) RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT (SELECT pg_catalog.count(*) FROM (SELECT 1 FROM skillet_search_stats_deltas LIMIT p_changes) c) >= p_changes
        OR (SELECT pg_catalog.count(*) FROM (SELECT 1 FROM skillet_term_deltas LIMIT p_rows) r) >= p_rows
        OR (SELECT pg_catalog.count(*) FROM (SELECT 1 FROM skillet_blend_term_deltas LIMIT p_rows) r) >= p_rows
$$;

-- Folds when due (see the top of this file): skips when another fold holds the lock; waits for
-- it only far past due, and never in a transaction that already recorded an event (it holds
-- the events lock, which a fold holding the fold lock may be waiting for). The mark is a
-- setting any session may set too: it only keeps that session from waiting, never from
-- folding. Checks again once the lock is held.
CREATE FUNCTION skillet_fold_if_due() RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    v_may_wait boolean := pg_catalog.current_setting('skillet.recorded', true) IS DISTINCT FROM '1';
BEGIN
    IF NOT skillet_fold_due(64, 65536) THEN
        RETURN;
    END IF;
    PERFORM 1 FROM skillet_fold_lock WHERE id = 1 FOR UPDATE SKIP LOCKED;
    IF NOT FOUND THEN
        IF NOT v_may_wait OR NOT skillet_fold_due(4096, 1048576) THEN
            RETURN;
        END IF;
        PERFORM 1 FROM skillet_fold_lock WHERE id = 1 FOR UPDATE;
    END IF;
    IF skillet_fold_due(64, 65536) THEN
        PERFORM skillet_fold_stats();
    END IF;
END $$;

-- Appends an event and notifies listeners, under the events lock (held to COMMIT, so events are
-- numbered in the order they commit). Deltas due are folded in first (the fold lock is always
-- taken before the events lock, never after).
CREATE OR REPLACE FUNCTION skillet_record_event(p_kind text, p_owner text, p_name text, p_seq integer)
RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    v_id bigint;
BEGIN
    PERFORM skillet_fold_if_due();
    PERFORM 1 FROM skillet_search_stats WHERE id = 1 FOR UPDATE;
    PERFORM pg_catalog.set_config('skillet.recorded', '1', true);
    INSERT INTO skillet_events (kind, owner, name, seq) VALUES (p_kind, p_owner, p_name, p_seq)
        RETURNING id INTO v_id;
    PERFORM pg_catalog.pg_notify('skillet_registry', v_id::text);
    RETURN v_id;
END $$;

-- As in schema 4, with the words that came and went found by one full join of the old words
-- with the new (hashed or merged: a full join has no plan that compares every word with every
-- other, which schema 4's `NOT (term = ANY (old words))` did once its plan was generic).
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
    INSERT INTO skillet_term_deltas (term, delta)
        SELECT coalesce(o.t, n.term), CASE WHEN o.t IS NULL THEN 1 ELSE -1 END
        FROM pg_catalog.unnest(v_old_terms) AS o(t)
        FULL JOIN (SELECT term FROM skillet_terms WHERE skill_id = p_skill) AS n ON n.term = o.t
        WHERE o.t IS NULL OR n.term IS NULL;
    INSERT INTO skillet_blend_term_deltas (term, delta)
        SELECT coalesce(o.t, n.term), CASE WHEN o.t IS NULL THEN 1 ELSE -1 END
        FROM pg_catalog.unnest(v_old_blend_terms) AS o(t)
        FULL JOIN (SELECT term FROM skillet_blend_terms WHERE skill_id = p_skill) AS n ON n.term = o.t
        WHERE o.t IS NULL OR n.term IS NULL;
    INSERT INTO skillet_search_stats_deltas (documents, total_length, blend_total_length)
        VALUES (v_has::integer - v_had::integer, v_length - v_old_length, v_blend - v_old_blend);
END $$;

-- As in schema 5, the version read again once the skill is locked. Yanks a version of a skill under an owner the caller may write under. r_found false: no such
-- version. r_latest: the version search and install offer now.
CREATE OR REPLACE FUNCTION skillet_yank(p_owner text, p_name text, p_seq integer)
RETURNS TABLE (r_found boolean, r_changed boolean, r_latest integer)
LANGUAGE plpgsql SECURITY DEFINER AS $$
DECLARE
    v_skill bigint;
    v_already boolean;
BEGIN
    -- At READ COMMITTED only: each statement then sees what committed before it, after the
    -- skill's row lock below is taken. A snapshot taken earlier (REPEATABLE READ, SERIALIZABLE)
    -- would read a search row a concurrent yank or publish has since changed, and the
    -- statistics' deltas, which no longer touch a shared row, would not fail it.
    IF pg_catalog.current_setting('transaction_isolation') <> 'read committed' THEN
        RAISE EXCEPTION 'skillet: the registry''s writes run at READ COMMITTED; this transaction is %', pg_catalog.current_setting('transaction_isolation')
            USING ERRCODE = 'invalid_transaction_state';
    END IF;
    IF NOT EXISTS (SELECT 1 FROM skillet_skills k JOIN skillet_versions v ON v.skill_id = k.id
                   WHERE k.owner = p_owner AND k.name = p_name AND v.seq = p_seq) THEN
        RETURN QUERY SELECT false, false, NULL::integer;
        RETURN;
    END IF;
    -- Who may is checked before any row is locked.
    PERFORM skillet_may_write(p_owner, false);
    SELECT k.id INTO v_skill FROM skillet_skills k
        WHERE k.owner = p_owner AND k.name = p_name FOR UPDATE;
    -- Read after the lock, in a statement of its own: a yank of the same version that
    -- committed while this one waited is seen (one statement would keep its older snapshot of
    -- the version and yank it again, which the version's guard refuses).
    SELECT yanked_at IS NOT NULL INTO v_already FROM skillet_versions
        WHERE skill_id = v_skill AND seq = p_seq;
    IF NOT v_already THEN
        UPDATE skillet_versions SET yanked_at = pg_catalog.now()
            WHERE skill_id = v_skill AND seq = p_seq;
        PERFORM skillet_refresh_search(v_skill);
        PERFORM skillet_record_event('yank', p_owner, p_name, p_seq);
    END IF;
    RETURN QUERY SELECT true, NOT v_already,
        (SELECT pg_catalog.max(seq) FROM skillet_versions WHERE skill_id = v_skill AND yanked_at IS NULL);
END $$;

-- Compares the collection's statistics (base rows and pending deltas, read in one snapshot per
-- table) with the search table, and appends the difference as deltas: exact without a lock
-- (a change committed after the snapshot carries its own deltas; a fold moves rows between base
-- and deltas, leaving their sum). What `init` runs after an upgrade and on request, to repair
-- statistics a fault left out of step. Returns how many figures were off (words in either
-- table, and the totals as one).
CREATE OR REPLACE FUNCTION skillet_recount_stats() RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    v_terms bigint;
    v_blend bigint;
    v_totals bigint;
BEGIN
    -- One recount at a time (two would each add the same correction); folds and publishes go on.
    -- At READ COMMITTED only: a snapshot taken before the lock would miss the correction of
    -- the recount it waited for, and add it again.
    IF pg_catalog.current_setting('transaction_isolation') <> 'read committed' THEN
        RAISE EXCEPTION 'skillet: the recount runs at READ COMMITTED; this transaction is %', pg_catalog.current_setting('transaction_isolation')
            USING ERRCODE = 'invalid_transaction_state';
    END IF;
    PERFORM 1 FROM skillet_fold_lock WHERE id = 2 FOR UPDATE;
    WITH r AS (SELECT term, pg_catalog.count(*)::integer AS n FROM skillet_terms GROUP BY term),
    c AS (SELECT term, pg_catalog.sum(df)::integer AS n FROM (
              SELECT term, df FROM skillet_term_stats
              UNION ALL SELECT term, delta FROM skillet_term_deltas) x GROUP BY term),
    off AS (SELECT coalesce(r.term, c.term) AS term, coalesce(r.n, 0) - coalesce(c.n, 0) AS d
            FROM r FULL JOIN c ON c.term = r.term WHERE coalesce(r.n, 0) <> coalesce(c.n, 0)),
    added AS (INSERT INTO skillet_term_deltas (term, delta) SELECT term, d FROM off RETURNING 1)
    SELECT pg_catalog.count(*) INTO v_terms FROM added;
    WITH r AS (SELECT term, pg_catalog.count(*)::integer AS n FROM skillet_blend_terms GROUP BY term),
    c AS (SELECT term, pg_catalog.sum(df)::integer AS n FROM (
              SELECT term, df FROM skillet_blend_term_stats
              UNION ALL SELECT term, delta FROM skillet_blend_term_deltas) x GROUP BY term),
    off AS (SELECT coalesce(r.term, c.term) AS term, coalesce(r.n, 0) - coalesce(c.n, 0) AS d
            FROM r FULL JOIN c ON c.term = r.term WHERE coalesce(r.n, 0) <> coalesce(c.n, 0)),
    added AS (INSERT INTO skillet_blend_term_deltas (term, delta) SELECT term, d FROM off RETURNING 1)
    SELECT pg_catalog.count(*) INTO v_blend FROM added;
    WITH r AS (SELECT pg_catalog.count(*) AS documents,
                      coalesce(pg_catalog.sum(length), 0)::bigint AS total_length,
                      coalesce(pg_catalog.sum(blend_length), 0)::bigint AS blend_total_length
               FROM skillet_search),
    c AS (SELECT pg_catalog.sum(documents)::bigint AS documents,
                 pg_catalog.sum(total_length)::bigint AS total_length,
                 pg_catalog.sum(blend_total_length)::bigint AS blend_total_length
          FROM (SELECT documents, total_length, blend_total_length FROM skillet_search_stats
                UNION ALL SELECT documents, total_length, blend_total_length
                FROM skillet_search_stats_deltas) x),
    added AS (INSERT INTO skillet_search_stats_deltas (documents, total_length, blend_total_length)
              SELECT (r.documents - c.documents)::integer, r.total_length - c.total_length,
                     r.blend_total_length - c.blend_total_length
              FROM r, c
              WHERE (r.documents, r.total_length, r.blend_total_length)
                    IS DISTINCT FROM (c.documents, c.total_length, c.blend_total_length)
              RETURNING 1)
    SELECT pg_catalog.count(*) INTO v_totals FROM added;
    RETURN v_terms + v_blend + v_totals;
END $$;

-- The recount joins whole tables: hashed or merged, never a nested loop, which a plan made
-- while a table was small would choose and then run against every row of it.
ALTER FUNCTION skillet_recount_stats() SET enable_nestloop = off;

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
