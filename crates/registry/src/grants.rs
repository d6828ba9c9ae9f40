//! The registry's grants, settled by every `init`: nobody but the owner of the tables has any
//! right on them; readers get `SELECT` through [`READER_ROLE`], publishers `EXECUTE` on the
//! registry's own functions through [`PUBLISHER_ROLE`]; a superuser's objects belong to
//! [`OWNER_ROLE`], so the `SECURITY DEFINER` functions never run as a superuser.

use std::fmt::Write as _;

use crate::error::RegistryError;

/// The role that owns the registry's tables and functions when a superuser runs `init`: the
/// `SECURITY DEFINER` functions then run with its rights, never a superuser's.
pub const OWNER_ROLE: &str = "skillet_owner";
/// The group role whose members read (search, install, follow).
pub const READER_ROLE: &str = "skillet_reader";
/// The group role whose members publish and yank (through the functions) and read.
pub const PUBLISHER_ROLE: &str = "skillet_publisher";
/// The functions publishers call; nothing else is granted to anyone.
const PUBLISHER_FUNCTIONS: &[&str] = &[
    "skillet_publish(text, text, integer, text, text[], integer[], integer, text[], vector, \
     text[], boolean[], bytea[])",
    "skillet_yank(text, text, integer)",
    "skillet_claim_owner(text)",
    "skillet_set_owner_role(text, name)",
];

/// The registry's relations and functions (in the schema `init` runs in), each as a statement
/// prefix `TABLE x` / `SEQUENCE x` / `FUNCTION f(args)`.
const OBJECTS_SQL: &str = "
SELECT CASE c.relkind WHEN 'S' THEN 'SEQUENCE ' ELSE 'TABLE ' END || c.oid::regclass::text, \
       c.relowner, c.relacl \
FROM pg_class c \
WHERE c.relnamespace = {S}::oid AND c.relname LIKE 'skillet\\_%' \
  AND c.relkind IN ('r', 'p', 'S', 'v', 'm') \
UNION ALL \
SELECT 'FUNCTION ' || p.oid::regprocedure::text, p.proowner, p.proacl \
FROM pg_proc p \
WHERE p.pronamespace = {S}::oid AND p.proname LIKE 'skillet\\_%'";

/// [`OBJECTS_SQL`] and, for each table, the rights granted on its columns (a `REVOKE ALL` on
/// the table takes those too).
const GRANTED_SQL: &str = "
SELECT 'TABLE ' || c.oid::regclass::text, c.relowner, a.attacl \
FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid \
WHERE c.relnamespace = {S}::oid AND c.relname LIKE 'skillet\\_%' \
  AND a.attacl IS NOT NULL";

/// Makes the grants what they must be, on every `init`: a superuser's objects handed to
/// [`OWNER_ROLE`]; every right on the registry's tables, sequences and functions taken from
/// everyone but their owner; then `SELECT` on the tables to [`READER_ROLE`] and `EXECUTE` on
/// the four functions to [`PUBLISHER_ROLE`]. On the upgrade to schema 3, a role that had been
/// granted table rights directly (as the README said before) is made a member of the group
/// role it needs. Returns what it changed, in words.
pub(crate) async fn settle(
    tx: &tokio_postgres::Transaction<'_>,
    from: i32,
    schema: &Schema,
) -> Result<Vec<String>, tokio_postgres::Error> {
    let oid = schema.oid.to_string();
    let mut report = Vec::new();
    let superuser: bool = tx
        .query_one(
            "SELECT rolsuper FROM pg_roles WHERE rolname = current_user",
            &[],
        )
        .await?
        .get(0);
    if superuser {
        hand_to_owner_role(tx, &oid).await?;
    }
    let granted = tx
        .query(
            &format!(
                "SELECT o.object, CASE WHEN a.grantee OPERATOR(pg_catalog.=) 0::oid THEN 'PUBLIC' \
                   ELSE pg_catalog.quote_ident(pg_catalog.pg_get_userbyid(a.grantee)::text) END, \
                   a.grantee OPERATOR(pg_catalog.=) 0::oid, \
                   pg_catalog.pg_get_userbyid(a.grantee)::text, a.privilege_type \
                 FROM ({OBJECTS_SQL} UNION ALL {GRANTED_SQL}) AS o(object, owner, acl), \
                   pg_catalog.aclexplode(o.acl) a \
                 WHERE a.grantee <> o.owner ORDER BY 2, 1"
            )
            .replace("{S}", &oid),
            &[],
        )
        .await?;
    let mut held: std::collections::BTreeMap<
        String,
        (bool, String, std::collections::BTreeSet<String>),
    > = std::collections::BTreeMap::new();
    for row in &granted {
        let (object, quoted, public, name, privilege): (String, String, bool, String, String) =
            (row.get(0), row.get(1), row.get(2), row.get(3), row.get(4));
        tx.batch_execute(&format!("REVOKE ALL ON {object} FROM {quoted}"))
            .await?;
        let expected =
            (name == READER_ROLE && privilege == "SELECT" && !object.starts_with("FUNCTION"))
                || (name == PUBLISHER_ROLE && privilege == "EXECUTE");
        if !expected {
            let entry = held
                .entry(if public { "PUBLIC".into() } else { name })
                .or_insert_with(|| (public, quoted.clone(), std::collections::BTreeSet::new()));
            entry.2.insert(privilege);
        }
    }
    for (name, (public, grantee, privileges)) in &held {
        let privileges: Vec<&str> = privileges.iter().map(String::as_str).collect();
        let mut line = format!(
            "took {} on the registry's tables and functions from {name}",
            privileges.join(", ")
        );
        if from > 0 && from < 3 && !public && name != READER_ROLE && name != PUBLISHER_ROLE {
            let writes = privileges
                .iter()
                .any(|p| matches!(*p, "INSERT" | "UPDATE" | "DELETE"));
            let group = if writes { PUBLISHER_ROLE } else { READER_ROLE };
            tx.batch_execute(&format!("GRANT {group} TO {grantee}"))
                .await?;
            let _ = write!(line, " (made a member of {group} instead)");
        }
        report.push(line);
    }
    let tables = tx
        .query(
            &format!(
                "SELECT o.object FROM ({OBJECTS_SQL}) AS o(object, owner, acl) \
                 WHERE o.object LIKE 'TABLE %'"
            )
            .replace("{S}", &oid),
            &[],
        )
        .await?;
    for row in &tables {
        let object: String = row.get(0);
        tx.batch_execute(&format!("GRANT SELECT ON {object} TO {READER_ROLE}"))
            .await?;
    }
    tx.batch_execute(&format!(
        "GRANT USAGE ON SCHEMA {} TO {READER_ROLE}",
        schema.quoted
    ))
    .await?;
    for function in PUBLISHER_FUNCTIONS {
        tx.batch_execute(&format!(
            "GRANT EXECUTE ON FUNCTION {function} TO {PUBLISHER_ROLE}"
        ))
        .await?;
    }
    Ok(report)
}

/// The roles whose objects the registry may rely on: superusers, the user running `init`,
/// [`OWNER_ROLE`] and the database's owner (`pg_database_owner`, which owns `public`).
const TRUSTED_SQL: &str = "
SELECT r.oid FROM pg_catalog.pg_roles r \
WHERE r.rolsuper OR r.rolname = current_user OR r.rolname = 'skillet_owner' \
UNION SELECT d.datdba FROM pg_catalog.pg_database d WHERE d.datname = current_database() \
UNION SELECT 'pg_database_owner'::pg_catalog.regrole::pg_catalog.oid";

/// The objects of others in the registry's schema that its functions could be led to use: any
/// function or operator there that no trusted role owns (an overload of a built-in, as
/// `unnest(bytea[])`, would be picked over `pg_catalog`'s), a `skillet_*` relation someone else
/// made first (its triggers would run in `init`), a trigger on a `skillet_*` table that skillet
/// did not make.
const FOREIGN_SQL: &str = "
WITH s AS (SELECT {S}::oid AS oid), trusted AS ({TRUSTED}) \
SELECT 'function ' || p.oid::regprocedure::text FROM pg_catalog.pg_proc p, s \
WHERE p.pronamespace = s.oid AND p.proowner NOT IN (SELECT oid FROM trusted) \
  AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_depend d JOIN pg_catalog.pg_extension e \
                  ON e.oid = d.refobjid WHERE d.classid = 'pg_catalog.pg_proc'::regclass \
                  AND d.objid = p.oid AND d.deptype = 'e' AND e.extowner IN (SELECT oid FROM trusted)) \
UNION ALL \
SELECT 'operator ' || o.oid::regoperator::text FROM pg_catalog.pg_operator o, s \
WHERE o.oprnamespace = s.oid AND o.oprowner NOT IN (SELECT oid FROM trusted) \
  AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_depend d JOIN pg_catalog.pg_extension e \
                  ON e.oid = d.refobjid WHERE d.classid = 'pg_catalog.pg_operator'::regclass \
                  AND d.objid = o.oid AND d.deptype = 'e' AND e.extowner IN (SELECT oid FROM trusted)) \
UNION ALL \
SELECT 'table ' || c.oid::regclass::text || ' (owned by ' || pg_catalog.pg_get_userbyid(c.relowner) || ')' \
FROM pg_catalog.pg_class c, s \
WHERE c.relnamespace = s.oid AND c.relname LIKE 'skillet\\_%' AND c.relowner NOT IN (SELECT oid FROM trusted) \
UNION ALL \
SELECT 'trigger ' || t.tgname || ' on ' || t.tgrelid::regclass::text \
FROM pg_catalog.pg_trigger t JOIN pg_catalog.pg_class c ON c.oid = t.tgrelid, s \
WHERE c.relnamespace = s.oid AND c.relname LIKE 'skillet\\_%' AND NOT t.tgisinternal \
  AND (t.tgname NOT IN ('skillet_guard_version', 'skillet_guard_blob', 'skillet_immutable', \
                        'skillet_require_writer') \
       OR (SELECT f.proowner FROM pg_catalog.pg_proc f WHERE f.oid = t.tgfoid) \
          NOT IN (SELECT oid FROM trusted)) \
LIMIT 20";

/// What `init` checks before it creates or migrates anything: only trusted roles may create
/// objects in the schema (`PUBLIC`'s `CREATE`, the default in `public` before PostgreSQL 15, is
/// revoked here when this user may), and nothing of anyone else's lies there for the registry's
/// functions or `init` itself to run (see [`FOREIGN_SQL`]). The definer functions look names up
/// in this schema after `pg_catalog`; with these two facts nobody can put anything in their way.
pub(crate) async fn preflight(
    tx: &tokio_postgres::Transaction<'_>,
    schema: &Schema,
) -> Result<(), RegistryError> {
    let db = |error: tokio_postgres::Error| {
        RegistryError::from_db("the registry", &error).doing("initializing the registry")
    };
    let oid = schema.oid.to_string();
    let name = &schema.name;
    if !schema.owner_trusted {
        return Err(RegistryError::Refused(format!(
            "the schema {name:?}, where this session would create the registry, belongs to {}, \
             not to you, a superuser or the database's owner; nothing was changed\n  hint: \
             a schema named after a user is searched first (\"$user\"): create the registry in \
             one you own (options=-c search_path=NAME in the URL), or have that schema dropped",
            schema.owner
        )));
    }
    // In a savepoint: a user who may not revoke leaves the transaction usable.
    tx.batch_execute("SAVEPOINT skillet_schema")
        .await
        .map_err(db)?;
    let revoked = tx
        .batch_execute(&format!(
            "REVOKE CREATE ON SCHEMA {} FROM PUBLIC",
            schema.quoted
        ))
        .await;
    let settle = if revoked.is_ok() {
        "RELEASE SAVEPOINT skillet_schema"
    } else {
        "ROLLBACK TO SAVEPOINT skillet_schema"
    };
    tx.batch_execute(settle).await.map_err(db)?;
    let creators: Option<String> = tx
        .query_one(
            &format!(
                "SELECT pg_catalog.string_agg(DISTINCT CASE WHEN a.grantee OPERATOR(pg_catalog.=) 0::oid \
                   THEN 'PUBLIC' ELSE pg_catalog.pg_get_userbyid(a.grantee)::text END, ', ') \
                 FROM pg_catalog.pg_namespace n, pg_catalog.aclexplode(n.nspacl) a \
                 WHERE n.oid = {{S}}::oid AND a.privilege_type = 'CREATE' \
                   AND a.grantee NOT IN ({TRUSTED_SQL})"
            )
            .replace("{S}", &oid),
            &[],
        )
        .await
        .map_err(db)?
        .get(0);
    if let Some(creators) = creators {
        return Err(RegistryError::Refused(format!(
            "{creators} may create objects in the schema {name:?}, where the registry's \
             functions look names up; nothing was changed\n  hint: its owner runs REVOKE CREATE \
             ON SCHEMA {} FROM {creators} (PostgreSQL 15 and later do not grant it to PUBLIC), \
             then `skillet registry init` again",
            schema.quoted
        )));
    }
    let foreign: Vec<String> = tx
        .query(
            &FOREIGN_SQL
                .replace("{TRUSTED}", TRUSTED_SQL)
                .replace("{S}", &oid),
            &[],
        )
        .await
        .map_err(db)?
        .iter()
        .map(|row| row.get(0))
        .collect();
    if !foreign.is_empty() {
        return Err(RegistryError::Refused(format!(
            "the schema {name:?} holds what someone else made, which the registry's functions \
             or `init` could be led to run: {}; nothing was changed\n  hint: a superuser or \
             their owner drops them (or moves them to another schema), then `skillet registry \
             init` again",
            foreign.join(", ")
        )));
    }
    Ok(())
}

/// The schema `init` works in.
#[derive(Debug, Clone)]
pub(crate) struct Schema {
    /// Its name.
    pub name: String,
    /// Its name quoted as an identifier.
    pub quoted: String,
    /// Its oid.
    pub oid: u32,
    /// Who owns it.
    pub owner: String,
    /// Whether that is the user running `init`, a superuser or the database's owner.
    pub owner_trusted: bool,
}

/// Finds the schema this session creates in (its `search_path`'s first), then pins the
/// transaction's `search_path` to `pg_catalog` alone: nothing `init` itself runs before the
/// schema is checked can resolve to someone else's function or operator (an overload with a
/// closer type match would otherwise win over `pg_catalog`'s).
pub(crate) async fn pin(tx: &tokio_postgres::Transaction<'_>) -> Result<Schema, RegistryError> {
    let db = |error: tokio_postgres::Error| {
        RegistryError::from_db("the registry", &error).doing("initializing the registry")
    };
    let row = tx
        .query_one(
            "SELECT n.nspname::text, pg_catalog.quote_ident(n.nspname::text), n.oid, \
               pg_catalog.pg_get_userbyid(n.nspowner)::text, \
               (n.nspowner OPERATOR(pg_catalog.=) (SELECT r.oid FROM pg_catalog.pg_roles r \
                  WHERE r.rolname OPERATOR(pg_catalog.=) pg_catalog.current_user()) \
                OR n.nspowner OPERATOR(pg_catalog.=) (SELECT d.datdba FROM pg_catalog.pg_database d \
                  WHERE d.datname OPERATOR(pg_catalog.=) pg_catalog.current_database()) \
                OR n.nspowner OPERATOR(pg_catalog.=) 'pg_database_owner'::pg_catalog.regrole::pg_catalog.oid \
                OR (SELECT r.rolsuper FROM pg_catalog.pg_roles r WHERE r.oid OPERATOR(pg_catalog.=) n.nspowner)) \
             FROM pg_catalog.pg_namespace n \
             WHERE n.nspname OPERATOR(pg_catalog.=) pg_catalog.current_schema()",
            &[],
        )
        .await
        .map_err(db)?;
    tx.batch_execute("SET LOCAL search_path = pg_catalog, pg_temp")
        .await
        .map_err(db)?;
    Ok(Schema {
        name: row.get(0),
        quoted: row.get(1),
        oid: row.get(2),
        owner: row.get(3),
        owner_trusted: row.get(4),
    })
}

/// After the checks: the registry's schema (only trusted roles may create there, and nothing of
/// anyone else's is there) and `pg_catalog`, the schema first for the migrations' unqualified
/// names or `pg_catalog` first for the grants, which create nothing; then the schema `vector`
/// lives in when it is another.
pub(crate) async fn unpin(
    tx: &tokio_postgres::Transaction<'_>,
    schema: &Schema,
    catalog_first: bool,
) -> Result<(), tokio_postgres::Error> {
    let vector: Option<String> = tx
        .query_opt(
            "SELECT pg_catalog.quote_ident(n.nspname::text) FROM pg_catalog.pg_extension e \
             JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'vector'",
            &[],
        )
        .await?
        .map(|row| row.get(0));
    let extra = vector
        .filter(|v| *v != schema.quoted)
        .map(|v| format!("{v}, "))
        .unwrap_or_default();
    // The migrations create in the first schema named; the grants, which create nothing, look
    // `pg_catalog` up first.
    let path = if catalog_first {
        format!("pg_catalog, {}, {extra}pg_temp", schema.quoted)
    } else {
        format!("{}, pg_catalog, {extra}pg_temp", schema.quoted)
    };
    tx.batch_execute(&format!("SET LOCAL search_path = {path}"))
        .await
}

/// Hands the registry's tables, sequences and functions to [`OWNER_ROLE`] (made when missing).
async fn hand_to_owner_role(
    tx: &tokio_postgres::Transaction<'_>,
    oid: &str,
) -> Result<(), tokio_postgres::Error> {
    tx.batch_execute(&format!(
        "DO $$ BEGIN \
           IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{OWNER_ROLE}') THEN \
             BEGIN CREATE ROLE {OWNER_ROLE} NOLOGIN; \
             EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END; \
           END IF; END $$"
    ))
    .await?;
    let owned = tx
        .query(
            &format!(
                "SELECT o.object FROM ({OBJECTS_SQL}) AS o(object, owner, acl) \
                 WHERE o.owner OPERATOR(pg_catalog.<>) '{OWNER_ROLE}'::pg_catalog.regrole::oid"
            )
            .replace("{S}", oid),
            &[],
        )
        .await?;
    for row in &owned {
        let object: String = row.get(0);
        // Sequences owned by a column move with their table.
        let alter = if let Some(sequence) = object.strip_prefix("SEQUENCE ") {
            format!("ALTER TABLE {sequence} OWNER TO {OWNER_ROLE}")
        } else {
            format!("ALTER {object} OWNER TO {OWNER_ROLE}")
        };
        tx.batch_execute(&alter).await?;
    }
    Ok(())
}
