-- skillet registry, schema version 1. Works on PostgreSQL >= 13 with pgvector >= 0.6.2.

CREATE EXTENSION IF NOT EXISTS vector;

-- What this registry is: the model its vectors come from (a client with another model ranks
-- by words only rather than compare vectors of different spaces).
CREATE TABLE skillet_registry_meta (
    key text PRIMARY KEY,
    value text NOT NULL
);

-- One row per owner/name; head_seq is the last version's sequence number (0 before any).
CREATE TABLE skillet_skills (
    id bigserial PRIMARY KEY,
    owner text NOT NULL CHECK (owner ~ '^[a-z0-9]+(-[a-z0-9]+)*$' AND length(owner) <= 39),
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
