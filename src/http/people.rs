//! People, invitations, teams and the audit log, for admins (PROTOCOL §9): the web app's
//! admin pages stand on these. Every security change writes its audit row in the same
//! storage call.

use actix_web::{web, HttpRequest, HttpResponse};
use serde::{Deserialize, Serialize};
use serde_json::json;

use docsync_actors::collab::validate::fixed::{MAX_TEAM_MEMBERS, SMALL_BODY_BYTES};
use docsync_actors::storage::accounts;
use docsync_actors::storage::audit::{self, actions, AuditFilter, AuditRow};
use docsync_actors::storage::invites::{self, Invite, InviteKind};
use docsync_actors::storage::people::{self, Account, Transferred};
use docsync_actors::storage::sharing;
use docsync_actors::storage::StorageError;

use super::accounts::hash_on_pool;
use super::admin::admin;
use super::audited::Actor;
use super::auth::Credentials;
use super::body::read_json;
use super::error::ApiError;
use super::state::AppState;
use crate::auth::{names, password};

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct PeopleQuery {
    /// Only people whose name or display name contains this (any case).
    #[serde(default)]
    q: Option<String>,
}

#[derive(Serialize, utoipa::ToSchema)]
pub(crate) struct PeopleList {
    people: Vec<Account>,
}

#[utoipa::path(
    get,
    path = "/api/v1/admin/users",
    tag = "admin",
    summary = "Everyone with an account (admins)",
    params(PeopleQuery),
    responses(
        (status = 200, description = "people, by display name", body = PeopleList),
        (status = 401, description = "no valid credentials", body = crate::http::error::ErrorBody),
        (status = 403, description = "not an admin, or a token without scope `admin`", body = crate::http::error::ErrorBody),
    ),
)]
pub async fn list_people(
    state: web::Data<AppState>,
    creds: Credentials,
    query: web::Query<PeopleQuery>,
) -> Result<HttpResponse, ApiError> {
    admin(&state, &creds).await?;
    let mut all = state.storage.read(people::list_people).await?;
    if let Some(q) = query.q.as_deref().map(str::to_lowercase) {
        all.retain(|p| {
            p.name.to_lowercase().contains(&q) || p.display_name.to_lowercase().contains(&q)
        });
    }
    Ok(HttpResponse::Ok().json(PeopleList { people: all }))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct NewPerson {
    name: String,
    #[serde(default)]
    display_name: Option<String>,
    #[serde(default)]
    admin: bool,
    /// None: the answer carries a link for the person to choose their own (7 days).
    #[serde(default)]
    password: Option<String>,
}

/// A link to hand on: its path on this server (`/invite/…`); the secret in it is shown once.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct LinkMade {
    invite: Invite,
    link: String,
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PersonCreated {
    person: Account,
    /// A password-reset link when no password was given.
    set_password: Option<LinkMade>,
}

const SET_PASSWORD_HOURS: i64 = 7 * 24;

#[utoipa::path(
    post,
    path = "/api/v1/admin/users",
    tag = "admin",
    summary = "Create a person (admins); without a password, a link to choose one",
    request_body = NewPerson,
    responses(
        (status = 201, description = "created", body = PersonCreated),
        (status = 401, description = "no valid credentials", body = crate::http::error::ErrorBody),
        (status = 403, description = "not an admin, or a token without scope `admin`", body = crate::http::error::ErrorBody),
        (status = 409, description = "`conflict`: the name is taken (in any case)", body = crate::http::error::ErrorBody),
        (status = 503, description = "`busy`: every password check is taken; try again (`Retry-After`)", body = crate::http::error::ErrorBody),
    ),
)]
pub async fn create_person(
    state: web::Data<AppState>,
    creds: Credentials,
    req: HttpRequest,
    payload: web::Payload,
) -> Result<HttpResponse, ApiError> {
    let me = admin(&state, &creds).await?;
    let body: NewPerson = read_json(&req, payload, SMALL_BODY_BYTES).await?;
    names::check_user_name(&body.name).map_err(ApiError::BadRequest)?;
    let display = body.display_name.unwrap_or_else(|| body.name.clone());
    names::check_display_name(&display).map_err(ApiError::BadRequest)?;
    let phc = match body.password {
        Some(pw) => {
            password::check_new(&pw, &body.name)
                .map_err(|e| ApiError::BadRequest(e.to_string()))?;
            Some(hash_on_pool(&state, pw).await?)
        }
        None => None,
    };
    let (actor, now) = (Actor::of(&state, &req, Some(&me)), state.clock.now_ms());
    let (name, is_admin) = (body.name, body.admin);
    let (person, link) = state
        .storage
        .write(move |c| {
            let user = accounts::create_user(c, &name, display.trim(), is_admin, now)?;
            let link = match phc {
                Some(phc) => {
                    accounts::set_password_hash(c, &user.id, &phc)?;
                    None
                }
                None => {
                    let kind = InviteKind::Reset {
                        user_id: user.id.clone(),
                    };
                    let expires = now + SET_PASSWORD_HOURS * 3_600_000;
                    Some(invites::create(c, kind, &me.name, expires, 1, now)?)
                }
            };
            audit::record(
                c,
                now,
                &actor.event(
                    actions::USER_CREATED,
                    format!("user:{}", user.name),
                    json!({"admin": is_admin, "by": "admin"}),
                ),
            )?;
            if let Some((invite, _)) = &link {
                let detail =
                    json!({"kind": "reset", "user": user.name, "expiresAt": invite.expires_at});
                let event = actor.event(
                    actions::INVITE_CREATED,
                    format!("invite:{}", invite.invite_id),
                    detail,
                );
                audit::record(c, now, &event)?;
            }
            if is_admin {
                audit::record(
                    c,
                    now,
                    &actor.event(
                        actions::ADMIN_GRANTED,
                        format!("user:{}", user.name),
                        json!({}),
                    ),
                )?;
            }
            let person = people::person(c, &user.id)?
                .ok_or_else(|| StorageError::NotFound(user.id.clone()))?;
            Ok((person, link))
        })
        .await?;
    Ok(HttpResponse::Created().json(PersonCreated {
        person,
        set_password: link.map(|(invite, secret)| LinkMade {
            invite,
            link: format!("/invite/{secret}"),
        }),
    }))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct PersonPatch {
    #[serde(default)]
    display_name: Option<String>,
    #[serde(default)]
    admin: Option<bool>,
    /// false deactivates: every session, token and open stream of theirs ends at once.
    #[serde(default)]
    active: Option<bool>,
}

#[utoipa::path(
    patch,
    path = "/api/v1/admin/users/{id}",
    tag = "admin",
    summary = "Change a person: display name, admin, active (admins)",
    params(("id" = String, Path, description = "The user's ID")),
    request_body = PersonPatch,
    responses(
        (status = 200, description = "the person, changed", body = Account),
        (status = 401, description = "no valid credentials", body = crate::http::error::ErrorBody),
        (status = 403, description = "not an admin, or a token without scope `admin`", body = crate::http::error::ErrorBody),
        (status = 404, description = "no such user", body = crate::http::error::ErrorBody),
        (status = 409, description = "`conflict`: it would leave no active admin", body = crate::http::error::ErrorBody),
    ),
)]
pub async fn patch_person(
    state: web::Data<AppState>,
    creds: Credentials,
    req: HttpRequest,
    path: web::Path<String>,
    payload: web::Payload,
) -> Result<HttpResponse, ApiError> {
    let me = admin(&state, &creds).await?;
    let body: PersonPatch = read_json(&req, payload, SMALL_BODY_BYTES).await?;
    if let Some(d) = &body.display_name {
        names::check_display_name(d).map_err(ApiError::BadRequest)?;
    }
    let target = path.into_inner();
    let (actor, now) = (Actor::of(&state, &req, Some(&me)), state.clock.now_ms());
    let person = state
        .storage
        .write(move |c| {
            let before = people::person(c, &target)?
                .ok_or_else(|| StorageError::NotFound(format!("user {target}")))?;
            let who = format!("user:{}", before.name);
            let mut person = before.clone();
            if let Some(d) = body.display_name.as_deref().map(str::trim) {
                if d != before.display_name {
                    person = people::set_display_name(c, &target, d)?;
                    let detail = json!({"from": before.display_name, "to": d});
                    audit::record(c, now, &actor.event(actions::USER_RENAMED, &who, detail))?;
                }
            }
            if let Some(a) = body.admin.filter(|a| *a != before.is_admin) {
                person = people::set_admin(c, &target, a)?;
                let action = if a {
                    actions::ADMIN_GRANTED
                } else {
                    actions::ADMIN_REVOKED
                };
                audit::record(c, now, &actor.event(action, &who, json!({})))?;
            }
            match body.active {
                Some(false) => {
                    person = people::deactivate(c, &me.id, &target, now)?;
                    if before.active {
                        let event = actor.event(actions::USER_DEACTIVATED, &who, json!({}));
                        audit::record(c, now, &event)?;
                    }
                }
                Some(true) if !before.active => {
                    person = people::reactivate(c, &target)?;
                    let event = actor.event(actions::USER_REACTIVATED, &who, json!({}));
                    audit::record(c, now, &event)?;
                }
                _ => {}
            }
            Ok(person)
        })
        .await?;
    Ok(HttpResponse::Ok().json(person))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct Removal {
    /// Who gets their documents, folders and teams (an active person, not them).
    transfer_to: String,
}

#[derive(Serialize, utoipa::ToSchema)]
pub(crate) struct Removed {
    transferred: Transferred,
}

#[utoipa::path(
    delete,
    path = "/api/v1/admin/users/{id}",
    tag = "admin",
    summary = "Remove a person; what they owned goes to `transferTo` (admins)",
    params(("id" = String, Path, description = "The user's ID")),
    request_body = Removal,
    responses(
        (status = 200, description = "removed; what was handed on", body = Removed),
        (status = 401, description = "no valid credentials", body = crate::http::error::ErrorBody),
        (status = 403, description = "not an admin, or a token without scope `admin`", body = crate::http::error::ErrorBody),
        (status = 404, description = "no such user", body = crate::http::error::ErrorBody),
        (status = 409, description = "`conflict`: it would leave no active admin", body = crate::http::error::ErrorBody),
    ),
)]
pub async fn remove_person(
    state: web::Data<AppState>,
    creds: Credentials,
    req: HttpRequest,
    path: web::Path<String>,
    payload: web::Payload,
) -> Result<HttpResponse, ApiError> {
    let me = admin(&state, &creds).await?;
    let body: Removal = read_json(&req, payload, SMALL_BODY_BYTES).await?;
    let target = path.into_inner();
    let (actor, now) = (Actor::of(&state, &req, Some(&me)), state.clock.now_ms());
    let transferred = state
        .storage
        .write(move |c| {
            let (gone, moved) = people::remove(c, &me.id, &target, &body.transfer_to)?;
            let heir = people::person(c, &body.transfer_to)?.map(|p| p.name);
            let detail = json!({"transferTo": heir, "transferred": moved});
            let event = actor.event(actions::USER_DELETED, format!("user:{}", gone.name), detail);
            audit::record(c, now, &event)?;
            Ok(moved)
        })
        .await?;
    Ok(HttpResponse::Ok().json(Removed { transferred }))
}

#[derive(Deserialize, Default, utoipa::ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct ResetLinkBody {
    /// 1 to 720; default 24.
    #[serde(default)]
    expires_in_hours: Option<i64>,
}

fn hours(h: Option<i64>, default: i64) -> Result<i64, ApiError> {
    match h.unwrap_or(default) {
        h @ 1..=720 => Ok(h),
        _ => Err(ApiError::BadRequest("expiresInHours: from 1 to 720".into())),
    }
}

#[utoipa::path(
    post,
    path = "/api/v1/admin/users/{id}/reset-link",
    tag = "admin",
    summary = "A one-use link for a person to choose a new password (admins)",
    params(("id" = String, Path, description = "The user's ID")),
    request_body = ResetLinkBody,
    responses(
        (status = 201, description = "the link (shown once)", body = LinkMade),
        (status = 401, description = "no valid credentials", body = crate::http::error::ErrorBody),
        (status = 403, description = "not an admin, or a token without scope `admin`", body = crate::http::error::ErrorBody),
        (status = 404, description = "no such user", body = crate::http::error::ErrorBody),
        (status = 409, description = "`conflict`: the person is deactivated", body = crate::http::error::ErrorBody),
    ),
)]
pub async fn reset_link(
    state: web::Data<AppState>,
    creds: Credentials,
    req: HttpRequest,
    path: web::Path<String>,
    payload: web::Payload,
) -> Result<HttpResponse, ApiError> {
    let me = admin(&state, &creds).await?;
    let body: ResetLinkBody = read_json(&req, payload, SMALL_BODY_BYTES).await?;
    let h = hours(body.expires_in_hours, 24)?;
    let target = path.into_inner();
    let (actor, now) = (Actor::of(&state, &req, Some(&me)), state.clock.now_ms());
    let (invite, secret) = state
        .storage
        .write(move |c| {
            let person = people::person(c, &target)?
                .ok_or_else(|| StorageError::NotFound(format!("user {target}")))?;
            if !person.active {
                return Err(StorageError::Conflict(format!(
                    "{} is deactivated; reactivate them first",
                    person.name
                )));
            }
            let kind = InviteKind::Reset { user_id: target };
            let made = invites::create(c, kind, &me.name, now + h * 3_600_000, 1, now)?;
            let detail =
                json!({"kind": "reset", "user": person.name, "expiresAt": made.0.expires_at});
            let event = actor.event(
                actions::INVITE_CREATED,
                format!("invite:{}", made.0.invite_id),
                detail,
            );
            audit::record(c, now, &event)?;
            Ok(made)
        })
        .await?;
    Ok(HttpResponse::Created().json(LinkMade {
        invite,
        link: format!("/invite/{secret}"),
    }))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct NewInvite {
    /// `member` (default) or `admin`.
    #[serde(default)]
    role: Option<String>,
    /// 1 to 720.
    expires_in_hours: i64,
    /// 1 to 1000.
    max_uses: i64,
}

#[utoipa::path(
    post,
    path = "/api/v1/admin/invites",
    tag = "admin",
    summary = "Make an invitation link (admins)",
    request_body = NewInvite,
    responses(
        (status = 201, description = "the link (shown once)", body = LinkMade),
        (status = 401, description = "no valid credentials", body = crate::http::error::ErrorBody),
        (status = 403, description = "not an admin, or a token without scope `admin`", body = crate::http::error::ErrorBody),
    ),
)]
pub async fn create_invite(
    state: web::Data<AppState>,
    creds: Credentials,
    req: HttpRequest,
    payload: web::Payload,
) -> Result<HttpResponse, ApiError> {
    let me = admin(&state, &creds).await?;
    let body: NewInvite = read_json(&req, payload, SMALL_BODY_BYTES).await?;
    let admin_role = match body.role.as_deref() {
        None | Some("member") => false,
        Some("admin") => true,
        Some(_) => return Err(ApiError::BadRequest("role: member or admin".into())),
    };
    let h = hours(Some(body.expires_in_hours), 24)?;
    if !(1..=1000).contains(&body.max_uses) {
        return Err(ApiError::BadRequest("maxUses: from 1 to 1000".into()));
    }
    let (actor, now) = (Actor::of(&state, &req, Some(&me)), state.clock.now_ms());
    let (invite, secret) = state
        .storage
        .write(move |c| {
            let kind = InviteKind::Join { admin: admin_role };
            let made = invites::create(c, kind, &me.name, now + h * 3_600_000, body.max_uses, now)?;
            let detail = json!({
                "kind": "join",
                "role": made.0.role,
                "maxUses": body.max_uses,
                "expiresAt": made.0.expires_at,
            });
            let event = actor.event(
                actions::INVITE_CREATED,
                format!("invite:{}", made.0.invite_id),
                detail,
            );
            audit::record(c, now, &event)?;
            Ok(made)
        })
        .await?;
    Ok(HttpResponse::Created().json(LinkMade {
        invite,
        link: format!("/invite/{secret}"),
    }))
}

#[derive(Serialize, utoipa::ToSchema)]
pub(crate) struct InviteList {
    invites: Vec<Invite>,
}

#[utoipa::path(
    get,
    path = "/api/v1/admin/invites",
    tag = "admin",
    summary = "Invitation and reset links, with who used them (admins)",
    responses(
        (status = 200, description = "links, newest first (never their secrets)", body = InviteList),
        (status = 401, description = "no valid credentials", body = crate::http::error::ErrorBody),
        (status = 403, description = "not an admin, or a token without scope `admin`", body = crate::http::error::ErrorBody),
    ),
)]
pub async fn list_invites(
    state: web::Data<AppState>,
    creds: Credentials,
) -> Result<HttpResponse, ApiError> {
    admin(&state, &creds).await?;
    let now = state.clock.now_ms();
    let invites = state.storage.read(move |c| invites::list(c, now)).await?;
    Ok(HttpResponse::Ok().json(InviteList { invites }))
}

#[utoipa::path(
    delete,
    path = "/api/v1/admin/invites/{id}",
    tag = "admin",
    summary = "Revoke a link (admins)",
    params(("id" = String, Path, description = "The invitation's ID")),
    responses(
        (status = 204, description = "revoked"),
        (status = 401, description = "no valid credentials", body = crate::http::error::ErrorBody),
        (status = 403, description = "not an admin, or a token without scope `admin`", body = crate::http::error::ErrorBody),
        (status = 404, description = "no such link, or revoked already", body = crate::http::error::ErrorBody),
    ),
)]
pub async fn revoke_invite(
    state: web::Data<AppState>,
    creds: Credentials,
    req: HttpRequest,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let me = admin(&state, &creds).await?;
    let id = path.into_inner();
    let (actor, now) = (Actor::of(&state, &req, Some(&me)), state.clock.now_ms());
    state
        .storage
        .write(move |c| {
            let invite = invites::revoke(c, &id, now)?;
            let event = actor.event(
                actions::INVITE_REVOKED,
                format!("invite:{}", invite.invite_id),
                json!({"kind": invite.kind}),
            );
            audit::record(c, now, &event)
        })
        .await?;
    Ok(HttpResponse::NoContent().finish())
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct AuditQuery {
    /// Only rows with a smaller `id` (the previous page's `next`).
    #[serde(default)]
    before: Option<i64>,
    /// 1 to 1000; default 100 (JSON lines: 1000 unless given).
    #[serde(default)]
    limit: Option<usize>,
    /// A user's ID or name.
    #[serde(default)]
    actor: Option<String>,
    /// An action (`login.failed`) or its first part (`login`).
    #[serde(default)]
    action: Option<String>,
    /// `jsonl`: the rows as JSON lines (a download), newest first.
    #[serde(default)]
    format: Option<String>,
}

#[derive(Serialize, utoipa::ToSchema)]
pub(crate) struct AuditPage {
    entries: Vec<AuditRow>,
    /// `before` for the next page; none when this was the last.
    next: Option<i64>,
}

#[utoipa::path(
    get,
    path = "/api/v1/admin/audit",
    tag = "admin",
    summary = "The audit log, newest first (admins); `format=jsonl` exports it",
    params(AuditQuery),
    responses(
        (status = 200, description = "a page of rows (or JSON lines)", body = AuditPage),
        (status = 401, description = "no valid credentials", body = crate::http::error::ErrorBody),
        (status = 403, description = "not an admin, or a token without scope `admin`", body = crate::http::error::ErrorBody),
    ),
)]
pub async fn audit_log(
    state: web::Data<AppState>,
    creds: Credentials,
    query: web::Query<AuditQuery>,
) -> Result<HttpResponse, ApiError> {
    admin(&state, &creds).await?;
    let q = query.into_inner();
    let lines = match q.format.as_deref() {
        None | Some("json") => false,
        Some("jsonl") => true,
        Some(_) => return Err(ApiError::BadRequest("format: json or jsonl".into())),
    };
    let limit = q.limit.unwrap_or(if lines { 1000 } else { 100 });
    if !(1..=1000).contains(&limit) {
        return Err(ApiError::BadRequest("limit: from 1 to 1000".into()));
    }
    let limit = limit as i64;
    let filter = AuditFilter {
        before: q.before,
        limit,
        actor: q.actor.filter(|a| !a.is_empty()),
        action: q.action.filter(|a| !a.is_empty()),
    };
    let rows = state.storage.read(move |c| audit::list(c, &filter)).await?;
    if lines {
        let mut out = String::new();
        for r in &rows {
            out.push_str(&serde_json::to_string(r).map_err(|e| ApiError::Internal(e.to_string()))?);
            out.push('\n');
        }
        return Ok(HttpResponse::Ok()
            .content_type("application/x-ndjson")
            .insert_header((
                "Content-Disposition",
                "attachment; filename=\"docsync-audit.jsonl\"",
            ))
            .body(out));
    }
    let next = (rows.len() as i64 == limit)
        .then(|| rows.last().map(|r| r.id))
        .flatten();
    Ok(HttpResponse::Ok().json(AuditPage {
        entries: rows,
        next,
    }))
}

/// A team as the admin pages show it: members with their names.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct AdminTeam {
    team_id: String,
    name: String,
    owner_id: String,
    members: Vec<TeamMember>,
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TeamMember {
    id: String,
    name: String,
    display_name: String,
}

#[derive(Serialize, utoipa::ToSchema)]
pub(crate) struct AdminTeamList {
    teams: Vec<AdminTeam>,
}

fn with_names(
    c: &mut docsync_actors::storage::Db,
    team: sharing::Team,
) -> Result<AdminTeam, StorageError> {
    let mut members = Vec::with_capacity(team.members.len());
    for id in &team.members {
        if let Some(u) = accounts::user_by_id(c, id)? {
            members.push(TeamMember {
                id: u.id,
                name: u.name,
                display_name: u.display_name,
            });
        }
    }
    members.sort_by_key(|m| m.display_name.to_lowercase());
    Ok(AdminTeam {
        team_id: team.team_id,
        name: team.name,
        owner_id: team.owner_id,
        members,
    })
}

#[utoipa::path(
    get,
    path = "/api/v1/admin/teams",
    tag = "admin",
    summary = "Every team with its members by name (admins)",
    responses(
        (status = 200, description = "teams, by name", body = AdminTeamList),
        (status = 401, description = "no valid credentials", body = crate::http::error::ErrorBody),
        (status = 403, description = "not an admin, or a token without scope `admin`", body = crate::http::error::ErrorBody),
    ),
)]
pub async fn list_teams(
    state: web::Data<AppState>,
    creds: Credentials,
) -> Result<HttpResponse, ApiError> {
    admin(&state, &creds).await?;
    let teams = state
        .storage
        .read(|c| {
            sharing::all_teams(c)?
                .into_iter()
                .map(|t| with_names(c, t))
                .collect::<Result<Vec<_>, _>>()
        })
        .await?;
    Ok(HttpResponse::Ok().json(AdminTeamList { teams }))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct TeamMembers {
    /// User IDs; the team's owner stays a member whatever this says.
    members: Vec<String>,
}

#[utoipa::path(
    put,
    path = "/api/v1/admin/teams/{id}/members",
    tag = "admin",
    summary = "Replace any team's members (admins)",
    params(("id" = String, Path, description = "The team's ID")),
    request_body = TeamMembers,
    responses(
        (status = 200, description = "the team now", body = AdminTeam),
        (status = 401, description = "no valid credentials", body = crate::http::error::ErrorBody),
        (status = 403, description = "not an admin, or a token without scope `admin`", body = crate::http::error::ErrorBody),
        (status = 404, description = "no such team", body = crate::http::error::ErrorBody),
    ),
)]
pub async fn put_team_members(
    state: web::Data<AppState>,
    creds: Credentials,
    req: HttpRequest,
    path: web::Path<String>,
    payload: web::Payload,
) -> Result<HttpResponse, ApiError> {
    admin(&state, &creds).await?;
    let body: TeamMembers = read_json(&req, payload, state.max_body()).await?;
    if body.members.len() > MAX_TEAM_MEMBERS {
        return Err(ApiError::BadRequest(format!(
            "members: at most {MAX_TEAM_MEMBERS}"
        )));
    }
    let id = path.into_inner();
    let team = state
        .storage
        .write(move |c| {
            let team = sharing::team(c, &id)?
                .ok_or_else(|| StorageError::NotFound(format!("team {id}")))?;
            sharing::set_members(c, &id, &team.owner_id, &body.members)?;
            let now = sharing::team(c, &id)?.ok_or_else(|| StorageError::NotFound(id.clone()))?;
            with_names(c, now)
        })
        .await?;
    Ok(HttpResponse::Ok().json(team))
}
