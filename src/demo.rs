//! `serve --demo`: on an empty database, three users, a team, folders and sample documents,
//! created through the same actor path as any client's ops. The address to open, the logins
//! and the tokens are printed once.

use std::net::SocketAddr;
use std::time::Instant;

use anyhow::Context as _;

use docsync_actors::ask::ask_renewing;
use docsync_actors::collab::block::{Author, BlockType};
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

/// How a sample bullet looks: a plain bullet, a heading, or a todo (open or done).
#[derive(Clone, Copy)]
enum Look {
    Plain,
    Heading,
    Todo,
    Done,
}
use Look::{Done, Heading, Plain, Todo};

/// A sample outline: (depth, look, text) in document order.
type Outline = &'static [(usize, Look, &'static str)];

/// For a person: the editor, working together, offline and history — each tried on the spot.
const WELCOME: Outline = &[
    (0, Plain, "This is an outline: every line is a bullet, and bullets nest. #welcome"),
    (1, Plain, "Type anywhere. Enter starts a new bullet, Tab indents it, Shift+Tab outdents it."),
    (1, Plain, "Alt+Shift+↑/↓ — or drag the dot — moves a bullet with everything under it."),
    (1, Plain, "Ctrl+↑/↓ folds and unfolds; click a dot to zoom into a bullet, Alt+← to zoom out."),
    (1, Todo, "Ctrl+Enter turns a bullet into a todo — tick this one"),
    (1, Plain, "**bold**, *italic*, `code`, [links](https://example.org) and #tags show when you leave the bullet."),
    (1, Plain, "Press ? to see every key; Escape, then Tab, takes you out of the outline."),
    (0, Heading, "Working together"),
    (1, Plain, "Everyone's typing shows live. A bullet someone is typing in carries their name and is theirs until they leave it."),
    (1, Plain, "If two people change one bullet anyway (one of them offline, say), nothing is lost: the other text is kept right below as a conflict copy, with Accept and Discard."),
    (1, Plain, "Share (top right) gives a person or a team view or edit access; a folder passes its access on to what is in it."),
    (0, Heading, "Offline and history"),
    (1, Plain, "Offline? Keep typing. It is kept on this device and sent when you are back — even days later."),
    (1, Plain, "⋯ → History and versions (Alt+Shift+H): name a version, compare it with now, restore all of it or chosen bullets."),
    (1, Plain, "Alt+H shows who wrote what in the bullet you are in. A deleted document waits in the Trash on the home page."),
];

/// For a team: notes of a meeting, with todos and a link to another document.
const TEAM_NOTES: Outline = &[
    (0, Heading, "Weekly meeting"),
    (1, Done, "Agree on the date of the spring release"),
    (1, Todo, "Bob: write the upgrade notes #release"),
    (1, Todo, "Carol: check the screenshots in the guide"),
    (0, Heading, "Ideas #ideas"),
    (
        1,
        Plain,
        "A template for meeting notes: zoom into this bullet and copy it (Ctrl+C) as a start",
    ),
    (
        1,
        Plain,
        "Link a document by typing two brackets: [[ — then pick one from the list",
    ),
];

/// For a project: what is done, under way and next, folded by stage.
const ROADMAP: Outline = &[
    (0, Heading, "Now"),
    (
        1,
        Todo,
        "Import from Workflowy, Dynalist and Logseq exports",
    ),
    (1, Todo, "Faster first paint of very long outlines"),
    (0, Heading, "Next"),
    (1, Plain, "Sign-on with the company's identity provider"),
    (1, Plain, "Share a single bullet with a guest"),
    (0, Heading, "Done"),
    (1, Done, "History and versions"),
    (1, Done, "Works offline for days"),
];

/// For integrators: the HTTP API in five bullets, each one a request to try.
const INTEGRATORS: Outline = &[
    (0, Plain, "Everything the editor does is plain HTTP under /api/v1; the contract is /api/v1/openapi.json."),
    (1, Plain, "Authenticate with a token: `Authorization: Bearer …` (`docsync user token NAME`; the demo printed one for each login)."),
    (1, Plain, "`GET /api/v1/docs` lists what you may read; `GET /api/v1/docs/{id}/snapshot` gives a document's bullets with their versions."),
    (1, Plain, "`POST /api/v1/docs/{id}/sync` sends ops (insert, set_content, move, delete, …) with your clientId; each op has an opId, so a retry is applied once."),
    (1, Plain, "`GET /api/v1/docs/{id}/markdown` reads a document back as Markdown; `GET /api/v1/search?q=` finds bullets."),
    (0, Plain, "Live: a WebSocket or Server-Sent Events on /api/v1/docs/{id}/events only say \"something changed\"; the data always comes from /sync."),
    (0, Plain, "A stale text never overwrites: it comes back as a conflict copy, as in the editor. See docs/api.md."),
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
                ("For integrators: the HTTP API", None),
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
    for ((doc_id, _), outline) in docs.iter().zip([WELCOME, TEAM_NOTES, ROADMAP, INTEGRATORS]) {
        seed_blocks(state, doc_id, alice, outline).await?;
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
        println!("    {doc_id}  {title:<30} {path}");
    }
    println!("  sample document: {}", docs[0].0);
    println!(
        "  try: curl -H 'Authorization: Bearer {}' {url}api/v1/docs/{}/markdown",
        users[0].1, docs[0].0
    );
    println!();
    Ok(())
}

async fn seed_blocks(
    state: &AppState,
    doc_id: &str,
    alice: &accounts::User,
    outline: Outline,
) -> anyhow::Result<()> {
    let doc = DocId::parse(doc_id)?;
    // Keys in document order: each bullet sorts after the ones before it among its siblings.
    let keys = n_keys_between(None, None, outline.len())?;
    let mut ops = Vec::new();
    let mut parents: Vec<String> = Vec::new();
    for (i, (depth, look, text)) in outline.iter().enumerate() {
        let (block_type, checked) = match look {
            Plain => (None, None),
            Heading => (Some(BlockType::H2), None),
            Todo => (Some(BlockType::Todo), Some(false)),
            Done => (Some(BlockType::Todo), Some(true)),
        };
        let id = new_id("blk_");
        parents.truncate(*depth);
        ops.push(Op {
            op_id: new_id("op_"),
            kind: OpKind::Insert {
                block_id: id.clone(),
                parent_id: parents.last().cloned(),
                order_key: keys[i].clone(),
                content: text.to_string(),
                block_type,
                checked,
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
        reach: docsync_actors::storage::roles::Reach::Document,
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
