-- skillet registry, schema version 3: writes only through the registry's own functions.
--
-- Nobody but the tables' owner writes a table. Publishers get EXECUTE on four SECURITY DEFINER
-- functions (skillet_publish, skillet_yank, skillet_claim_owner, skillet_set_owner_role), which
-- check who calls them by session_user, set who published and when themselves, hash every file
-- and the whole version themselves, append the event and keep the search statistics right.
-- `skillet registry init` then takes every direct table right away from everyone else (see
-- schema.rs: the grants are settled on every init, not only by this migration).
--
-- Two group roles, cluster-wide like every role (created here when missing):
--   skillet_reader     SELECT on the tables searching, installing and following read;
--   skillet_publisher  that, and EXECUTE on the four functions.
-- A team grants membership (GRANT skillet_publisher TO alice), never table rights.

DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = 'skillet_reader') THEN
        BEGIN
            CREATE ROLE skillet_reader NOLOGIN;
        EXCEPTION WHEN duplicate_object OR unique_violation THEN
            NULL; -- another database's init made it at the same moment
        END;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = 'skillet_publisher') THEN
        BEGIN
            CREATE ROLE skillet_publisher NOLOGIN;
        EXCEPTION WHEN duplicate_object OR unique_violation THEN
            NULL;
        END;
    END IF;
    IF NOT pg_catalog.pg_has_role('skillet_publisher', 'skillet_reader', 'MEMBER') THEN
        GRANT skillet_reader TO skillet_publisher;
    END IF;
END $$;

-- The checks after the fact go: the functions are the only writers. What stays guards against
-- the owner's own mistakes: a version changes only by a yank, a missing vector or (schema 2) its
-- body's words, each once; its file list never; a blob only when its stored bytes no longer match
-- its hash and the new ones do (the publish function repairs it).
DROP TRIGGER IF EXISTS skillet_guard_version ON skillet_versions;
DROP FUNCTION IF EXISTS skillet_guard_version();
DROP FUNCTION IF EXISTS skillet_check_owner(bigint);
DROP TRIGGER IF EXISTS skillet_immutable ON skillet_blobs;

CREATE FUNCTION skillet_guard_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        RAISE EXCEPTION 'skillet: published versions are never deleted (yank hides one)'
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    IF (NEW.id, NEW.skill_id, NEW.seq, NEW.content_hash, NEW.description, NEW.terms,
        NEW.term_counts, NEW.length, NEW.published_by, NEW.published_at)
       IS DISTINCT FROM
       (OLD.id, OLD.skill_id, OLD.seq, OLD.content_hash, OLD.description, OLD.terms,
        OLD.term_counts, OLD.length, OLD.published_by, OLD.published_at)
       OR (OLD.yanked_at IS NOT NULL AND NEW.yanked_at IS DISTINCT FROM OLD.yanked_at)
       OR (OLD.embedding IS NOT NULL AND NEW.embedding IS DISTINCT FROM OLD.embedding)
       OR (OLD.body_terms IS NOT NULL AND NEW.body_terms IS DISTINCT FROM OLD.body_terms) THEN
        RAISE EXCEPTION 'skillet: a published version cannot be changed'
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER skillet_guard_version BEFORE UPDATE OR DELETE ON skillet_versions
    FOR EACH ROW EXECUTE FUNCTION skillet_guard_version();

CREATE FUNCTION skillet_guard_blob() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'UPDATE' AND NEW.sha256 = OLD.sha256
       AND pg_catalog.sha256(NEW.bytes) = NEW.sha256
       AND pg_catalog.sha256(OLD.bytes) <> OLD.sha256 THEN
        RETURN NEW;
    END IF;
    RAISE EXCEPTION 'skillet: skillet_blobs rows are never changed or deleted'
        USING ERRCODE = 'insufficient_privilege';
END $$;
CREATE TRIGGER skillet_guard_blob BEFORE UPDATE OR DELETE ON skillet_blobs
    FOR EACH ROW EXECUTE FUNCTION skillet_guard_blob();

CREATE OR REPLACE FUNCTION skillet_require_writer() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF coalesce(pg_catalog.current_setting('skillet.schema', true), '') <> '3' THEN
        RAISE EXCEPTION 'skillet: this registry is at schema 3, which this skillet does not write; upgrade skillet';
    END IF;
    RETURN NEW;
END $$;

-- A bigint as 8 bytes, least significant first (Rust's to_le_bytes).
CREATE FUNCTION skillet_le64(n bigint) RETURNS bytea LANGUAGE sql IMMUTABLE STRICT AS $$
    SELECT pg_catalog.decode(pg_catalog.string_agg(pg_catalog.substr(h, 15 - 2 * i, 2), '' ORDER BY i), 'hex')
    FROM (SELECT pg_catalog.lpad(pg_catalog.to_hex(n), 16, '0') AS h) x, pg_catalog.generate_series(0, 7) AS i
$$;

-- A version's content hash, as `bundle::content_hash` computes it: the domain, the number of
-- files, then for each file by its path's bytes: the path's length and bytes, whether it is
-- executable, its SHA-256.
CREATE FUNCTION skillet_content_hash(paths text[], executable boolean[], digests bytea[])
RETURNS bytea LANGUAGE sql IMMUTABLE AS $$
    SELECT pg_catalog.sha256(
        pg_catalog.convert_to(E'skillet-skill-v1\n', 'UTF8')
        || skillet_le64(pg_catalog.cardinality(paths)::bigint)
        || coalesce((
            SELECT pg_catalog.string_agg(
                skillet_le64(pg_catalog.octet_length(pg_catalog.convert_to(f.p, 'UTF8'))::bigint)
                || pg_catalog.convert_to(f.p, 'UTF8')
                || CASE WHEN f.x THEN '\x01'::bytea ELSE '\x00'::bytea END
                || f.d,
                ''::bytea ORDER BY pg_catalog.convert_to(f.p, 'UTF8'))
            FROM ROWS FROM (pg_catalog.unnest(paths), pg_catalog.unnest(executable), pg_catalog.unnest(digests)) AS f(p, x, d)), ''::bytea))
$$;

-- Refuses an owner or a name the registry does not take, in words (not a CHECK's SQLSTATE).
CREATE FUNCTION skillet_check_names(p_owner text, p_name text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    IF p_owner IS NULL OR p_owner !~ '^[a-z0-9]+(-[a-z0-9]+)*$' OR pg_catalog.length(p_owner) > 39 THEN
        RAISE EXCEPTION 'skillet: owner % is not valid: 1 to 39 lower-case letters a-z, digits and single hyphens', pg_catalog.quote_literal(coalesce(p_owner, ''))
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF p_owner IN ('admin', 'administrator', 'anthropic', 'api', 'claude', 'codex', 'global',
                   'official', 'openai', 'registry', 'root', 'skillet', 'skills', 'system') THEN
        RAISE EXCEPTION 'skillet: owner % is reserved', pg_catalog.quote_literal(p_owner)
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF p_name IS NULL OR p_name !~ '^[a-z0-9]+(-[a-z0-9]+)*$' OR pg_catalog.length(p_name) > 64 THEN
        RAISE EXCEPTION 'skillet: the registry takes skill names of 1 to 64 lower-case letters a-z, digits and single hyphens, and % is not one', pg_catalog.quote_literal(coalesce(p_name, ''))
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
END $$;

-- Whether the caller (session_user: the login role, never the function's owner) may write under
-- an owner; an owner nobody holds yet is claimed for the caller first when `claim`.
CREATE FUNCTION skillet_may_write(p_owner text, p_claim boolean) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    v_role name;
BEGIN
    IF p_claim THEN
        INSERT INTO skillet_owners (owner, role) VALUES (p_owner, session_user)
            ON CONFLICT (owner) DO NOTHING;
    END IF;
    SELECT role INTO v_role FROM skillet_owners WHERE owner = p_owner;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'skillet: the owner % has not been claimed', p_owner
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = v_role) THEN
        RAISE EXCEPTION 'skillet: the owner % belongs to the database role %, which no longer exists', p_owner, v_role
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    IF NOT pg_catalog.pg_has_role(session_user, v_role, 'MEMBER') THEN
        RAISE EXCEPTION 'skillet: the owner % belongs to the database role %, and % is not a member of it', p_owner, v_role, session_user
            USING ERRCODE = 'insufficient_privilege';
    END IF;
END $$;

-- Appends an event and notifies listeners. The statistics row's lock (the events lock: a row
-- lock, which only the tables' owner can take, never an advisory lock anyone connected could
-- hold) is held from here to COMMIT, so events are numbered in the order they commit: a
-- follower reading "after N" skips none.
CREATE FUNCTION skillet_record_event(p_kind text, p_owner text, p_name text, p_seq integer)
RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    v_id bigint;
BEGIN
    PERFORM 1 FROM skillet_search_stats WHERE id = 1 FOR UPDATE;
    INSERT INTO skillet_events (kind, owner, name, seq) VALUES (p_kind, p_owner, p_name, p_seq)
        RETURNING id INTO v_id;
    PERFORM pg_catalog.pg_notify('skillet_registry', v_id::text);
    RETURN v_id;
END $$;

-- Puts a skill's newest version that is not yanked into the search table (or takes the skill
-- out), with its words and the blend's; then, under the events lock (held to COMMIT), the
-- collection's statistics. Everything before the lock is this skill's own rows, so publishers
-- of different skills run side by side until then.
CREATE FUNCTION skillet_refresh_search(p_skill bigint) RETURNS void LANGUAGE plpgsql AS $$
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
    PERFORM pg_catalog.set_config('skillet.schema', '3', true);
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
    PERFORM 1 FROM skillet_search_stats WHERE id = 1 FOR UPDATE;
    UPDATE skillet_term_stats s SET df = s.df - 1 WHERE s.term = ANY (v_old_terms);
    UPDATE skillet_blend_term_stats s SET df = s.df - 1 WHERE s.term = ANY (v_old_blend_terms);
    IF v_has THEN
        INSERT INTO skillet_term_stats (term, df)
            SELECT term, 1 FROM skillet_terms WHERE skill_id = p_skill ORDER BY term
            ON CONFLICT (term) DO UPDATE SET df = skillet_term_stats.df + 1;
        INSERT INTO skillet_blend_term_stats (term, df)
            SELECT term, 1 FROM skillet_blend_terms WHERE skill_id = p_skill ORDER BY term
            ON CONFLICT (term) DO UPDATE SET df = skillet_blend_term_stats.df + 1;
    END IF;
    UPDATE skillet_search_stats
        SET documents = documents + (v_has::integer - v_had::integer),
            total_length = total_length + v_length - v_old_length,
            blend_total_length = blend_total_length + v_blend - v_old_blend
        WHERE id = 1;
END $$;

-- Publishes a skill's files as its next version under an owner the caller may write under
-- (claimed for the caller when nobody holds it). The same content is the same version (a
-- vector it lacked is filled in). With `p_expect_seq` and another head, nothing is written and
-- r_seq is NULL (r_head says the head). Every file and the whole version are hashed here.
CREATE FUNCTION skillet_publish(
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
        WHERE b.sha256 = u.d AND pg_catalog.sha256(b.bytes) <> b.sha256;
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
CREATE FUNCTION skillet_yank(p_owner text, p_name text, p_seq integer)
RETURNS TABLE (r_found boolean, r_changed boolean, r_latest integer)
LANGUAGE plpgsql SECURITY DEFINER AS $$
DECLARE
    v_skill bigint;
    v_already boolean;
BEGIN
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

-- Claims an owner nobody holds for the caller's login role; the role that holds it either way.
CREATE FUNCTION skillet_claim_owner(p_owner text) RETURNS name
LANGUAGE plpgsql SECURITY DEFINER AS $$
DECLARE
    v_role name;
BEGIN
    PERFORM skillet_check_names(p_owner, 'x');
    PERFORM skillet_may_write(p_owner, true);
    SELECT role INTO v_role FROM skillet_owners WHERE owner = p_owner;
    RETURN v_role;
END $$;

-- Hands an owner to another role (a team's group role): only a member of the role that holds
-- it may, and only to a role the caller is a member of too (nobody gives away what they could
-- not take back by mistake, or hands an owner to a role they do not belong to).
CREATE FUNCTION skillet_set_owner_role(p_owner text, p_role name) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER AS $$
BEGIN
    PERFORM skillet_may_write(p_owner, false);
    IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = p_role) THEN
        RAISE EXCEPTION 'skillet: there is no database role %', p_role
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    -- The registry's own roles take in every publisher (or every reader): an owner handed to one
    -- would be anyone's.
    IF p_role IN ('skillet_reader', 'skillet_publisher', 'skillet_owner')
       OR p_role LIKE 'pg\_%' THEN
        RAISE EXCEPTION 'skillet: % is not a team''s role (every publisher or reader is in it), so % cannot be handed to it', p_role, p_owner
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF NOT pg_catalog.pg_has_role(session_user, p_role, 'MEMBER') THEN
        RAISE EXCEPTION 'skillet: % is not a member of the database role %, so it cannot hand % to it', session_user, p_role, p_owner
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    UPDATE skillet_owners SET role = p_role WHERE owner = p_owner;
END $$;

-- Every function: nobody but the owner executes it, then publishers the four they call; the
-- definer functions resolve names in pg_catalog, then this schema, then pg_temp (never a
-- schema someone else may create objects in first).
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
GRANT EXECUTE ON FUNCTION
    skillet_publish(text, text, integer, text, text[], integer[], integer, text[], vector, text[], boolean[], bytea[]),
    skillet_yank(text, text, integer),
    skillet_claim_owner(text),
    skillet_set_owner_role(text, name)
    TO skillet_publisher;
