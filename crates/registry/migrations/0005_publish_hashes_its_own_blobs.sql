-- Publish and yank run at READ COMMITTED only (see the check in each).
--
-- A publish checks a stored blob against its hash (and repairs it) only for the blobs of the
-- version it publishes. Schema 3 wrote the check on the blob alone (`sha256(b.bytes) <>
-- b.sha256`), which a plan may evaluate while scanning the whole table before the join: on a
-- registry whose statistics were not yet gathered, the cached plan of a long-lived connection
-- hashed (and decompressed) every stored blob on every publish. Comparing with the digest given
-- (`<> u.d`, the same value once joined) can only be evaluated on joined rows.

-- Publishes a skill's files as its next version under an owner the caller may write under
-- (claimed for the caller when nobody holds it). The same content is the same version (a
-- vector it lacked is filled in). With `p_expect_seq` and another head, nothing is written and
-- r_seq is NULL (r_head says the head). Every file and the whole version are hashed here.
CREATE OR REPLACE FUNCTION skillet_publish(
    p_owner text, p_name text, p_expect_seq integer,
    p_description text, p_terms text[], p_term_counts integer[], p_length integer,
    p_body_terms text[], p_embedding vector,
    p_paths text[], p_executable boolean[], p_contents bytea[])
RETURNS TABLE (r_seq integer, r_hash bytea, r_created boolean, r_yanked boolean, r_head integer)
LANGUAGE plpgsql SECURITY DEFINER AS $$
DECLARE
    v_files integer := coalesce(pg_catalog.cardinality(p_paths), 0);
    v_skill bigint;
    v_head integer;
    v_digests bytea[];
    v_hash bytea;
    v_version bigint;
    v_seq integer;
    v_yanked boolean;
    v_no_vector boolean;
BEGIN
    -- At READ COMMITTED only: each statement then sees what committed before it, after the
    -- skill's row lock below is taken. A snapshot taken earlier (REPEATABLE READ, SERIALIZABLE)
    -- would read a search row a concurrent yank or publish has since changed, and the
    -- statistics' deltas, which no longer touch a shared row, would not fail it.
    IF pg_catalog.current_setting('transaction_isolation') <> 'read committed' THEN
        RAISE EXCEPTION 'skillet: the registry''s writes run at READ COMMITTED; this transaction is %', pg_catalog.current_setting('transaction_isolation')
            USING ERRCODE = 'invalid_transaction_state';
    END IF;
    PERFORM skillet_check_names(p_owner, p_name);
    IF v_files < 1 OR v_files > 512
       OR pg_catalog.cardinality(p_executable) IS DISTINCT FROM v_files
       OR pg_catalog.cardinality(p_contents) IS DISTINCT FROM v_files THEN
        RAISE EXCEPTION 'skillet: a version holds 1 to 512 files, each with a path, an executable flag and its bytes'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF EXISTS (SELECT 1 FROM ROWS FROM (pg_catalog.unnest(p_paths), pg_catalog.unnest(p_executable), pg_catalog.unnest(p_contents)) AS f(p, x, c)
               WHERE p IS NULL OR x IS NULL OR c IS NULL OR p = '' OR pg_catalog.octet_length(p) > 1024
                  OR p ~ '[\x01-\x1f\x7f-\x9f\\]'
                  OR pg_catalog.cardinality(pg_catalog.string_to_array(p, '/')) > 17
                  OR EXISTS (SELECT 1 FROM pg_catalog.unnest(pg_catalog.string_to_array(p, '/')) AS part(c)
                             WHERE part.c = '' OR part.c LIKE '.%'))
       OR (SELECT pg_catalog.count(DISTINCT pg_catalog.lower(p)) FROM pg_catalog.unnest(p_paths) AS p) <> v_files
       OR (('SKILL.md' = ANY (p_paths)) = ('skill.md' = ANY (p_paths)))
       OR EXISTS (SELECT 1 FROM pg_catalog.unnest(p_paths) AS a(p), pg_catalog.unnest(p_paths) AS b(p)
                  WHERE pg_catalog.starts_with(b.p, a.p || '/'))
       OR (SELECT pg_catalog.sum(pg_catalog.octet_length(c)) FROM pg_catalog.unnest(p_contents) AS c) > 33554432 THEN
        RAISE EXCEPTION 'skillet: a version''s files are relative paths without empty, hidden, . or .. parts, backslashes or control characters, each once (letter case aside), no file also a folder, one SKILL.md, 32 MiB in all'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF p_description IS NULL OR pg_catalog.length(p_description) > 4096
       OR p_terms IS NULL OR p_term_counts IS NULL
       OR p_length IS NULL OR p_length < 0 OR p_length > 65536
       OR p_length <> coalesce((SELECT pg_catalog.sum(n) FROM pg_catalog.unnest(p_term_counts) AS n), 0)
       OR pg_catalog.cardinality(p_terms) IS DISTINCT FROM pg_catalog.cardinality(p_term_counts)
       OR pg_catalog.cardinality(p_terms) > 100000 OR p_body_terms IS NULL
       OR pg_catalog.cardinality(p_body_terms) > 100000
       OR EXISTS (SELECT 1 FROM ROWS FROM (pg_catalog.unnest(p_terms), pg_catalog.unnest(p_term_counts)) AS t(term, n)
                  WHERE term IS NULL OR n IS NULL OR n < 1)
       OR EXISTS (SELECT 1 FROM pg_catalog.unnest(p_body_terms) AS b(term) WHERE term IS NULL) THEN
        RAISE EXCEPTION 'skillet: a version''s description (4096 characters at most), words and counts (65536 words at most, its length their sum) do not fit together'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    PERFORM skillet_may_write(p_owner, true);
    INSERT INTO skillet_skills (owner, name) VALUES (p_owner, p_name)
        ON CONFLICT (owner, name) DO NOTHING;
    SELECT id, head_seq INTO v_skill, v_head FROM skillet_skills
        WHERE owner = p_owner AND name = p_name FOR UPDATE;
    v_digests := ARRAY(SELECT pg_catalog.sha256(c) FROM pg_catalog.unnest(p_contents) WITH ORDINALITY AS u(c, i) ORDER BY i);
    v_hash := skillet_content_hash(p_paths, p_executable, v_digests);
    SELECT id, seq, yanked_at IS NOT NULL, embedding IS NULL
        INTO v_version, v_seq, v_yanked, v_no_vector
        FROM skillet_versions WHERE skill_id = v_skill AND content_hash = v_hash;
    IF FOUND THEN
        IF v_no_vector AND p_embedding IS NOT NULL THEN
            UPDATE skillet_versions SET embedding = p_embedding WHERE id = v_version;
            UPDATE skillet_search SET embedding = p_embedding WHERE version_id = v_version;
        END IF;
        RETURN QUERY SELECT v_seq, v_hash, false, v_yanked, v_head;
        RETURN;
    END IF;
    IF p_expect_seq IS NOT NULL AND p_expect_seq <> v_head THEN
        RETURN QUERY SELECT NULL::integer, v_hash, false, false, v_head;
        RETURN;
    END IF;
    IF v_head >= 2147483647 THEN
        RAISE EXCEPTION 'skillet: %/% has as many versions as a skill may have', p_owner, p_name
            USING ERRCODE = 'program_limit_exceeded';
    END IF;
    v_seq := v_head + 1;
    -- Blobs in digest order (two publishes sharing contents take their keys in one order), each
    -- stored under the hash computed here; a stored one that no longer matches is repaired.
    INSERT INTO skillet_blobs (sha256, bytes)
        SELECT DISTINCT ON (d) d, c FROM ROWS FROM (pg_catalog.unnest(v_digests), pg_catalog.unnest(p_contents)) AS u(d, c) ORDER BY d
        ON CONFLICT (sha256) DO NOTHING;
    UPDATE skillet_blobs b SET bytes = u.c
        FROM (SELECT DISTINCT ON (d) d, c FROM ROWS FROM (pg_catalog.unnest(v_digests), pg_catalog.unnest(p_contents)) AS x(d, c) ORDER BY d) u
        WHERE b.sha256 = u.d AND pg_catalog.sha256(b.bytes) <> u.d;
    INSERT INTO skillet_versions (skill_id, seq, content_hash, description, terms, term_counts,
                                  length, embedding, body_terms, published_by, published_at)
        VALUES (v_skill, v_seq, v_hash, p_description, p_terms, p_term_counts, p_length,
                p_embedding, p_body_terms, session_user, pg_catalog.now())
        RETURNING id INTO v_version;
    INSERT INTO skillet_version_files (version_id, path, sha256, size, executable)
        SELECT v_version, p, d, pg_catalog.octet_length(c), x
        FROM ROWS FROM (pg_catalog.unnest(p_paths), pg_catalog.unnest(v_digests), pg_catalog.unnest(p_contents), pg_catalog.unnest(p_executable)) AS f(p, d, c, x);
    UPDATE skillet_skills SET head_seq = v_seq WHERE id = v_skill;
    PERFORM skillet_refresh_search(v_skill);
    PERFORM skillet_record_event('publish', p_owner, p_name, v_seq);
    RETURN QUERY SELECT v_seq, v_hash, true, false, v_seq;
END $$;

-- Yanks a version of a skill under an owner the caller may write under. r_found false: no such
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
    SELECT k.id, v.yanked_at IS NOT NULL INTO v_skill, v_already
        FROM skillet_skills k JOIN skillet_versions v ON v.skill_id = k.id
        WHERE k.owner = p_owner AND k.name = p_name AND v.seq = p_seq FOR UPDATE OF k;
    IF NOT v_already THEN
        UPDATE skillet_versions SET yanked_at = pg_catalog.now()
            WHERE skill_id = v_skill AND seq = p_seq;
        PERFORM skillet_refresh_search(v_skill);
        PERFORM skillet_record_event('yank', p_owner, p_name, p_seq);
    END IF;
    RETURN QUERY SELECT true, NOT v_already,
        (SELECT pg_catalog.max(seq) FROM skillet_versions WHERE skill_id = v_skill AND yanked_at IS NULL);
END $$;

-- Every function, as before (replacing a function clears its settings): nobody but the owner
-- executes it, and names resolve in pg_catalog, then this schema, then pg_temp. The publishers'
-- four keep their EXECUTE grant (a replaced function keeps its rights).
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
