//! `serve --demo`: on an empty database, three users, a team, folders and sample documents,
//! created through the same actor path as any client's ops. The address to open, the logins
//! and the tokens are printed once.

use std::net::SocketAddr;
use std::time::Instant;

use anyhow::Context as _;

use docsync_actors::ask::ask_renewing;
use docsync_actors::collab::block::Author;
use docsync_actors::collab::op::{Op, OpKind};
use docsync_actors::collab::order_key::n_keys_between;
use docsync_actors::collab::validate::DocId;
use docsync_actors::document::{Caller, DocError, Sync};
use docsync_actors::storage::accounts::{self, new_id};
use docsync_actors::storage::documents;
use docsync_actors::storage::roles::Role;
use docsync_actors::storage::sharing::{self, Access, Share, ShareKind};

use crate::auth::password;
use crate::http::state::AppState;

const SAMPLE: &[(usize, &str)] = &[
    (0, "Welcome to docsync — a shared outline. Every bullet is a block. #welcome"),
    (1, "Click a bullet to own it for 20 s; others see a lock and edit the rest."),
    (1, "If two people change the same bullet anyway, nothing is lost: the later text appears as a conflict copy below."),
    (0, "Try it with curl — see the README #howto"),
    (1, "POST /api/v1/docs/{id}/sync with ops and your clientId"),
    (1, "GET /api/v1/docs/{id}/markdown to read it back"),
];

/// Demo accounts: (name, display name, password, admin, role on the sample document — the
/// shares that give it are set up in `seed`).
const USERS: &[(&str, &str, &str, bool, &str)] = &[
    ("alice", "Alice", "alice-demo-pw", true, "owner, admin"),
    ("bob", "Bob", "bob-demo-pw", false, "editor"),
    ("carol", "Carol", "carol-demo-pw", false, "viewer"),
];

/// The URL a person on this machine opens: the real listening address, with an unspecified
/// bind address (`0.0.0.0`, `::`) replaced by loopback, which browsers can open.
pub fn browser_url(addr: SocketAddr) -> String {
    let mut addr = addr;
    if addr.ip().is_unspecified() {
        addr.set_ip(match addr {
            SocketAddr::V4(_) => std::net::Ipv4Addr::LOCALHOST.into(),
            SocketAddr::V6(_) => std::net::Ipv6Addr::LOCALHOST.into(),
        });
    }
    format!("http://{addr}/")
}

/// `addr`: where the server listens (printed for the browser and in the curl example).
pub async fn seed(state: &AppState, addr: SocketAddr) -> anyhow::Result<()> {
    let now = state.clock.now_ms();
    let existing = state.storage.read(accounts::count_users).await?;
    if existing > 0 {
        println!(
            "demo: the database already has users; create tokens with `docsync user token NAME`"
        );
        return Ok(());
    }
    let mut hashes = Vec::new();
    for (_, _, pw, _, _) in USERS {
        hashes.push(password::hash(pw)?);
    }
    let created = state
        .storage
        .write(move |c| {
            let mut users = Vec::new();
            for ((name, display, _, admin, _), phc) in USERS.iter().zip(hashes) {
                let u = accounts::create_user(c, name, display, *admin, now)?;
                accounts::set_password_hash(c, &u.id, &phc)?;
                let t = accounts::create_token(c, &u.id, "demo", now)?;
                users.push((u, t));
            }
            let (alice, bob, carol) = (&users[0].0.id, &users[1].0.id, &users[2].0.id);
            let team = sharing::create_team(c, "Writers", alice, now)?;
            sharing::set_members(c, &team.team_id, alice, std::slice::from_ref(bob))?;
            let space = sharing::create_folder(c, "Team space", alice, None, now)?;
            let projects =
                sharing::create_folder(c, "Projects", alice, Some(&space.folder_id), now)?;
            sharing::set_folder_shares(
                c,
                &space.folder_id,
                &[
                    Share {
                        kind: ShareKind::Team,
                        id: team.team_id.clone(),
                        access: Access::Write,
                    },
                    Share {
                        kind: ShareKind::User,
                        id: carol.clone(),
                        access: Access::Read,
                    },
                ],
            )?;
            let mut docs = Vec::new();
            for (title, folder) in [
                ("Welcome to docsync", None),
                ("Team notes", Some(space.folder_id.as_str())),
                ("Roadmap", Some(projects.folder_id.as_str())),
                ("Memo for the team", None),
            ] {
                let id = new_id("doc_");
                documents::create(c, &id, alice, title, folder, now)?;
                docs.push((id, title));
            }
            sharing::set_doc_shares(
                c,
                &docs[0].0,
                alice,
                &[
                    Share {
                        kind: ShareKind::User,
                        id: bob.clone(),
                        access: Access::Write,
                    },
                    Share {
                        kind: ShareKind::User,
                        id: carol.clone(),
                        access: Access::Read,
                    },
                ],
            )?;
            sharing::set_doc_shares(
                c,
                &docs[3].0,
                alice,
                &[Share {
                    kind: ShareKind::Team,
                    id: team.team_id.clone(),
                    access: Access::Read,
                }],
            )?;
            Ok((users, docs))
        })
        .await?;
    let (users, docs) = created;
    let alice = &users[0].0;
    for (doc_id, _) in &docs {
        seed_blocks(state, doc_id, alice).await?;
    }
    let url = browser_url(addr);
    println!("demo: created users, a team, folders and sample documents");
    println!();
    println!("  Web app: open {url} in a browser and log in, e.g. as alice / alice-demo-pw.");
    println!("  Logins (role on the sample document \"{}\"):", docs[0].1);
    for ((u, token), (_, _, pw, _, role)) in users.iter().zip(USERS) {
        println!(
            "    {:<6} password: {:<14} {:<14} API token: {token}",
            u.name, pw, role
        );
    }
    println!("  documents (owner alice):");
    let paths = [
        "bob: editor by direct share, carol: viewer by direct share",
        "in folder Team space: bob editor via team Writers, carol viewer via folder share",
        "in Team space/Projects: the same roles via the ancestor folder",
        "shared read-only with team Writers: bob viewer via team",
    ];
    for ((doc_id, title), path) in docs.iter().zip(paths) {
        println!("    {doc_id}  {title:<20} {path}");
    }
    println!("  sample document: {}", docs[0].0);
    println!(
        "  try: curl -H 'Authorization: Bearer {}' {url}api/v1/docs/{}/markdown",
        users[0].1, docs[0].0
    );
    println!();
    Ok(())
}

async fn seed_blocks(state: &AppState, doc_id: &str, alice: &accounts::User) -> anyhow::Result<()> {
    let doc = DocId::parse(doc_id)?;
    let keys = n_keys_between(None, None, SAMPLE.len())?;
    let mut ops = Vec::new();
    let mut parents: Vec<String> = Vec::new();
    for (i, (depth, text)) in SAMPLE.iter().enumerate() {
        let id = new_id("blk_");
        parents.truncate(*depth);
        ops.push(Op {
            op_id: new_id("op_"),
            kind: OpKind::Insert {
                block_id: id.clone(),
                parent_id: parents.last().cloned(),
                order_key: keys[i].clone(),
                content: text.to_string(),
                block_type: None,
                checked: None,
                language: None,
            },
        });
        parents.push(id);
    }
    let caller = Caller {
        client: None,
        author: Author {
            user_id: alice.id.clone(),
            name: alice.display_name.clone(),
        },
        role: Role::Owner,
        shared: false,
    };
    let sync = Sync::seed(caller.clone(), ops.clone(), Instant::now());
    // A brand-new actor distrusts pre-checks older than itself; ours is empty, so renewing
    // it is only a new time stamp.
    let renew = || {
        let fresh = Sync::seed(caller.clone(), ops.clone(), Instant::now());
        async move { Ok::<_, DocError>(fresh) }
    };
    ask_renewing(&state.registry, &doc, sync.clone(), renew)
        .await
        .map_err(|e| anyhow::anyhow!("{e}"))
        .context("seeding a sample document")?;
    Ok(())
}
