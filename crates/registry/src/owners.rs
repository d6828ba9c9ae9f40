//! Who may publish under an owner: the database role recorded for it, changed only through the
//! registry's own functions and only by a member of that role (as npm and crates.io let only an
//! owner change an owner).

use crate::connect::Pools;
use crate::error::RegistryError;
use crate::prepare::check_owner;
use crate::publish::call_one;

/// Claims `owner` for this login role when nobody holds it; the role that holds it either way.
pub async fn claim(pools: &Pools, owner: &str) -> Result<String, RegistryError> {
    check_owner(owner)?;
    let row = call_one(
        pools,
        &format!("claiming {owner}"),
        "SELECT skillet_claim_owner($1)::text",
        &[&owner],
    )
    .await?;
    Ok(row.get(0))
}

/// Hands `owner` to the database role `role` (a team's group role); the caller must be a member
/// of the role that holds it now and of `role`.
pub async fn set_role(pools: &Pools, owner: &str, role: &str) -> Result<(), RegistryError> {
    check_owner(owner)?;
    // PostgreSQL's identifiers: at most 63 bytes (NAMEDATALEN - 1).
    if role.is_empty() || role.len() > 63 {
        return Err(RegistryError::BadName(format!(
            "{role:?} is not a database role's name\n  hint: a role is named by 1 to 63 bytes, \
             as `\\du` in psql lists them"
        )));
    }
    call_one(
        pools,
        &format!("handing {owner} to {role}"),
        "SELECT 1 FROM skillet_set_owner_role($1, $2::name)",
        &[&owner, &role],
    )
    .await?;
    Ok(())
}

/// The role that holds `owner`, if anyone does.
pub async fn role_of(pools: &Pools, owner: &str) -> Result<Option<String>, RegistryError> {
    let client = pools.read().await?;
    crate::schema::check(pools, &client).await?;
    client
        .query_opt(
            "SELECT role::text FROM skillet_owners WHERE owner = $1",
            &[&owner],
        )
        .await
        .map(|row| row.map(|row| row.get(0)))
        .map_err(|error| RegistryError::from_db(&pools.at, &error).doing("reading owners"))
}
