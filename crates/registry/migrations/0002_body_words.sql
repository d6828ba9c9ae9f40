-- skillet registry, schema version 2: the words of each version's body, each once, which the
-- hybrid blend weighs as a local library's does (`Matcher::with_bodies`); ranking by words
-- alone keeps each skill's own text. `skillet registry init` fills body_terms for the versions
-- published before (from their stored SKILL.md), indexes them, then makes the columns required.

ALTER TABLE skillet_versions ADD COLUMN body_terms text[];

-- The blend's words: a skill's own terms and counts, plus one for each of its body's terms;
-- kept like skillet_terms, with its own document frequencies and total length.
CREATE TABLE skillet_blend_terms (
    term text NOT NULL,
    skill_id bigint NOT NULL REFERENCES skillet_search (skill_id) ON DELETE CASCADE,
    tf integer NOT NULL CHECK (tf > 0),
    length integer NOT NULL,
    PRIMARY KEY (term, skill_id) INCLUDE (tf, length)
);
CREATE INDEX skillet_blend_terms_skill ON skillet_blend_terms (skill_id);
CREATE TABLE skillet_blend_term_stats (
    term text PRIMARY KEY,
    df integer NOT NULL CHECK (df >= 0)
);
ALTER TABLE skillet_search ADD COLUMN blend_length integer;
ALTER TABLE skillet_search_stats ADD COLUMN blend_total_length bigint NOT NULL DEFAULT 0;

-- Every change to what search reads updates this row: a writer must say it writes schema 2
-- (`SET LOCAL skillet.schema = '2'`). An older skillet that checked the schema just before this
-- migration committed would otherwise update the search table without the blend's words.
CREATE FUNCTION skillet_require_writer() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF coalesce(current_setting('skillet.schema', true), '') <> '2' THEN
        RAISE EXCEPTION 'skillet: this registry is at schema 2, which this skillet does not write; upgrade skillet';
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER skillet_require_writer BEFORE UPDATE ON skillet_search_stats
    FOR EACH ROW EXECUTE FUNCTION skillet_require_writer();

-- A version is immutable: only a yank (once), a missing vector (once) and, for versions
-- published before this schema, their body's words (once) may change it.
CREATE OR REPLACE FUNCTION skillet_guard_version() RETURNS trigger LANGUAGE plpgsql AS $$
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
       OR (OLD.embedding IS NOT NULL AND NEW.embedding IS DISTINCT FROM OLD.embedding)
       OR (OLD.body_terms IS NOT NULL AND NEW.body_terms IS DISTINCT FROM OLD.body_terms) THEN
        RAISE EXCEPTION 'skillet: a published version cannot be changed'
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    IF NEW.yanked_at IS DISTINCT FROM OLD.yanked_at THEN
        PERFORM skillet_check_owner(NEW.skill_id);
    END IF;
    RETURN NEW;
END $$;
