-- skillet registry, schema version 1. Works on PostgreSQL >= 13 with pgvector >= 0.6.2.

CREATE EXTENSION IF NOT EXISTS vector;

-- What this registry is: the model its vectors come from (skillet embeds with this one only;
-- the vector column's 384 dimensions are its).
CREATE TABLE skillet_registry_meta (
    key text PRIMARY KEY,
    value text NOT NULL
);
INSERT INTO skillet_registry_meta VALUES ('embedding_model', 'sentence-transformers/all-MiniLM-L6-v2');

-- One row per owner/name; head_seq is the last version's sequence number (0 before any).
CREATE TABLE skillet_skills (
    id bigserial PRIMARY KEY,
    owner text NOT NULL CHECK (owner ~ '^[a-z0-9]+(-[a-z0-9]+)*$' AND length(owner) <= 39
        AND owner NOT IN ('admin', 'administrator', 'anthropic', 'api', 'claude', 'codex',
                          'global', 'official', 'openai', 'registry', 'root', 'skillet',
                          'skills', 'system')),
    name text NOT NULL CHECK (name ~ '^[a-z0-9]+(-[a-z0-9]+)*$' AND length(name) <= 64),
    head_seq integer NOT NULL DEFAULT 0 CHECK (head_seq >= 0),
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (owner, name)
);

-- File contents by their SHA-256, shared by every version that has them.
CREATE TABLE skillet_blobs (
    sha256 bytea PRIMARY KEY CHECK (length(sha256) = 32),
    bytes bytea NOT NULL
);

-- Immutable versions. The search fields are kept per version so a yank can put the previous
-- one back into the search table.
CREATE TABLE skillet_versions (
    id bigserial PRIMARY KEY,
    skill_id bigint NOT NULL REFERENCES skillet_skills (id),
    seq integer NOT NULL CHECK (seq >= 1),
    content_hash bytea NOT NULL CHECK (length(content_hash) = 32),
    description text NOT NULL,
    terms text[] NOT NULL,
    term_counts integer[] NOT NULL,
    length integer NOT NULL,
    embedding vector(384),
    published_by text NOT NULL DEFAULT session_user,
    published_at timestamptz NOT NULL DEFAULT now(),
    yanked_at timestamptz,
    UNIQUE (skill_id, seq),
    UNIQUE (skill_id, content_hash),
    CHECK (cardinality(terms) = cardinality(term_counts))
);

CREATE TABLE skillet_version_files (
    version_id bigint NOT NULL REFERENCES skillet_versions (id),
    path text NOT NULL,
    sha256 bytea NOT NULL REFERENCES skillet_blobs (sha256),
    size bigint NOT NULL,
    executable boolean NOT NULL,
    PRIMARY KEY (version_id, path)
);

-- What search reads: the newest version of each skill that is not yanked.
CREATE TABLE skillet_search (
    skill_id bigint PRIMARY KEY REFERENCES skillet_skills (id),
    version_id bigint NOT NULL REFERENCES skillet_versions (id),
    owner text NOT NULL,
    name text NOT NULL,
    seq integer NOT NULL,
    description text NOT NULL,
    length integer NOT NULL,
    embedding vector(384)
);
CREATE INDEX skillet_search_embedding ON skillet_search USING hnsw (embedding vector_cosine_ops);

-- skillet's own words index (its tokeniser and stemmer, BM25 in SQL), so a registry's word
-- scores are the ones a local library gives. A term's postings are read from the primary key
-- alone (it carries the count and the document's length), and each term's document frequency
-- is kept in step, so a search reads only the postings of its own terms.
CREATE TABLE skillet_terms (
    term text NOT NULL,
    skill_id bigint NOT NULL REFERENCES skillet_search (skill_id) ON DELETE CASCADE,
    tf integer NOT NULL CHECK (tf > 0),
    length integer NOT NULL,
    PRIMARY KEY (term, skill_id) INCLUDE (tf, length)
);
CREATE INDEX skillet_terms_skill ON skillet_terms (skill_id);
CREATE TABLE skillet_term_stats (
    term text PRIMARY KEY,
    df integer NOT NULL CHECK (df >= 0)
);

-- BM25's collection figures, kept in step by every publish and yank.
CREATE TABLE skillet_search_stats (
    id integer PRIMARY KEY CHECK (id = 1),
    documents bigint NOT NULL,
    total_length bigint NOT NULL
);
INSERT INTO skillet_search_stats VALUES (1, 0, 0);

-- The change feed: NOTIFY has no replay, so listeners catch up from here after a reconnect.
CREATE TABLE skillet_events (
    id bigserial PRIMARY KEY,
    kind text NOT NULL CHECK (kind IN ('publish', 'yank')),
    owner text NOT NULL,
    name text NOT NULL,
    seq integer NOT NULL,
    at timestamptz NOT NULL DEFAULT now()
);

-- Who may publish under an owner: the database role that first published there (a team
-- makes that a group role: UPDATE skillet_owners SET role = 'acme_publishers'). Enforced by
-- the database, not only by skillet, so another SQL client cannot publish or yank as someone
-- else.
CREATE TABLE skillet_owners (
    owner text PRIMARY KEY,
    role name NOT NULL
);

CREATE FUNCTION skillet_check_owner(skill bigint) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    who text;
    allowed name;
BEGIN
    SELECT owner INTO who FROM skillet_skills WHERE id = skill;
    INSERT INTO skillet_owners (owner, role) VALUES (who, session_user)
        ON CONFLICT (owner) DO NOTHING;
    SELECT role INTO allowed FROM skillet_owners WHERE owner = who;
    IF NOT pg_has_role(session_user, allowed, 'MEMBER') THEN
        RAISE EXCEPTION 'skillet: the owner % belongs to the database role %, and % is not a member of it',
            who, allowed, session_user USING ERRCODE = 'insufficient_privilege';
    END IF;
END $$;

-- A version is immutable: only a yank (once) and a missing vector (once) may change it.
CREATE FUNCTION skillet_guard_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM skillet_check_owner(NEW.skill_id);
        RETURN NEW;
    END IF;
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
       OR (OLD.embedding IS NOT NULL AND NEW.embedding IS DISTINCT FROM OLD.embedding) THEN
        RAISE EXCEPTION 'skillet: a published version cannot be changed'
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    IF NEW.yanked_at IS DISTINCT FROM OLD.yanked_at THEN
        PERFORM skillet_check_owner(NEW.skill_id);
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER skillet_guard_version BEFORE INSERT OR UPDATE OR DELETE ON skillet_versions
    FOR EACH ROW EXECUTE FUNCTION skillet_guard_version();

CREATE FUNCTION skillet_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'skillet: % rows are never changed or deleted', TG_TABLE_NAME
        USING ERRCODE = 'insufficient_privilege';
END $$;
CREATE TRIGGER skillet_immutable BEFORE UPDATE OR DELETE ON skillet_blobs
    FOR EACH ROW EXECUTE FUNCTION skillet_immutable();
CREATE TRIGGER skillet_immutable BEFORE UPDATE OR DELETE ON skillet_version_files
    FOR EACH ROW EXECUTE FUNCTION skillet_immutable();
