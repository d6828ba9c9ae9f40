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
WHERE c.relnamespace = to_regnamespace(current_schema())::oid AND c.relname LIKE 'skillet\\_%' \
  AND c.relkind IN ('r', 'p', 'S', 'v', 'm') \
UNION ALL \
SELECT 'FUNCTION ' || p.oid::regprocedure::text, p.proowner, p.proacl \
FROM pg_proc p \
WHERE p.pronamespace = to_regnamespace(current_schema())::oid AND p.proname LIKE 'skillet\\_%'";

/// Makes the grants what they must be, on every `init`: a superuser's objects handed to
/// [`OWNER_ROLE`]; every right on the registry's tables, sequences and functions taken from
/// everyone but their owner; then `SELECT` on the tables to [`READER_ROLE`] and `EXECUTE` on
/// the four functions to [`PUBLISHER_ROLE`]. On the upgrade to schema 3, a role that had been
/// granted table rights directly (as the README said before) is made a member of the group
/// role it needs. Returns what it changed, in words.
pub(crate) async fn settle(
    tx: &tokio_postgres::Transaction<'_>,
    from: i32,
) -> Result<Vec<String>, tokio_postgres::Error> {
    let mut report = Vec::new();
    let superuser: bool = tx
        .query_one(
            "SELECT rolsuper FROM pg_roles WHERE rolname = current_user",
            &[],
        )
        .await?
        .get(0);
    if superuser {
        hand_to_owner_role(tx).await?;
    }
    let granted = tx
        .query(
            &format!(
                "SELECT o.object, CASE WHEN a.grantee = 0 THEN 'PUBLIC' \
                   ELSE quote_ident(pg_get_userbyid(a.grantee)) END, \
                   a.grantee = 0, pg_get_userbyid(a.grantee), a.privilege_type \
                 FROM ({OBJECTS_SQL}) AS o(object, owner, acl), aclexplode(o.acl) a \
                 WHERE a.grantee <> o.owner ORDER BY 2, 1"
            ),
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
            ),
            &[],
        )
        .await?;
    for row in &tables {
        let object: String = row.get(0);
        tx.batch_execute(&format!("GRANT SELECT ON {object} TO {READER_ROLE}"))
            .await?;
    }
    tx.batch_execute(&format!(
        "DO $$ BEGIN EXECUTE format('GRANT USAGE ON SCHEMA %I TO {READER_ROLE}', current_schema()); END $$"
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

/// Fails unless only the schema's owner may create objects in it: the definer functions look
/// names up there (after `pg_catalog`), so a function or operator someone else created there
/// could stand in for one of theirs. `PUBLIC`'s `CREATE` (the default in `public` before
/// PostgreSQL 15) is revoked here when this user may; otherwise its owner must.
pub(crate) async fn schema_not_open(
    tx: &tokio_postgres::Transaction<'_>,
) -> Result<(), RegistryError> {
    let db = |error: tokio_postgres::Error| RegistryError::from_db("the registry", &error);
    let schema: String = tx
        .query_one("SELECT current_schema()", &[])
        .await
        .map_err(db)?
        .get(0);
    let open = "SELECT EXISTS (SELECT 1 FROM pg_namespace n, aclexplode(n.nspacl) a \
                WHERE n.nspname = current_schema() AND a.grantee = 0 AND a.privilege_type = 'CREATE')";
    if !tx.query_one(open, &[]).await.map_err(db)?.get::<_, bool>(0) {
        return Ok(());
    }
    // In a savepoint: a user who may not revoke leaves the transaction usable.
    tx.batch_execute("SAVEPOINT skillet_schema")
        .await
        .map_err(db)?;
    let revoked = tx
        .batch_execute(
            "DO $$ BEGIN EXECUTE format('REVOKE CREATE ON SCHEMA %I FROM PUBLIC', current_schema()); END $$",
        )
        .await;
    let settle = if revoked.is_ok() {
        "RELEASE SAVEPOINT skillet_schema"
    } else {
        "ROLLBACK TO SAVEPOINT skillet_schema"
    };
    tx.batch_execute(settle).await.map_err(db)?;
    if tx.query_one(open, &[]).await.map_err(db)?.get::<_, bool>(0) {
        return Err(RegistryError::Refused(format!(
            "every database user may create objects in the schema {schema:?}, where the \
             registry's functions look names up; nothing was changed\n  hint: its owner runs \
             REVOKE CREATE ON SCHEMA {schema} FROM PUBLIC (PostgreSQL 15 and later do not grant \
             it), then `skillet registry init` again"
        )));
    }
    Ok(())
}

/// Hands the registry's tables, sequences and functions to [`OWNER_ROLE`] (made when missing).
async fn hand_to_owner_role(
    tx: &tokio_postgres::Transaction<'_>,
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
                 WHERE o.owner <> '{OWNER_ROLE}'::regrole"
            ),
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
