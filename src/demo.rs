//! `serve --demo`: on an empty database, two users and a sample document, created through
//! the same actor path as any client's ops. Credentials are printed once.

use std::time::Instant;

use anyhow::Context as _;

use docsync_actors::collab::block::Author;
use docsync_actors::collab::op::{Op, OpKind};
use docsync_actors::collab::order_key::n_keys_between;
use docsync_actors::document::{Caller, Sync};
use docsync_actors::registry::Open;
use docsync_actors::storage::accounts::{self, new_id};
use docsync_actors::storage::documents;
use docsync_actors::storage::log::Precheck;
use docsync_actors::storage::roles::Role;

use crate::http::AppState;

const SAMPLE: &[(usize, &str)] = &[
    (0, "Welcome to docsync — a shared outline. Every bullet is a block. #welcome"),
    (1, "Click a bullet to own it for 20 s; others see a lock and edit the rest."),
    (1, "If two people change the same bullet anyway, nothing is lost: the later text appears as a conflict copy below."),
    (0, "Try it with curl — see the README #howto"),
    (1, "POST /api/v1/docs/{id}/sync with ops and your clientId"),
    (1, "GET /api/v1/docs/{id}/markdown to read it back"),
];

pub async fn seed(state: &AppState) -> anyhow::Result<()> {
    let now = state.clock.now_ms();
    let existing = state.storage.read(accounts::count_users).await?;
    if existing > 0 {
        println!(
            "demo: the database already has users; create tokens with `docsync user token NAME`"
        );
        return Ok(());
    }
    let created = state
        .storage
        .write(move |c| {
            let alice = accounts::create_user(c, "alice", "Alice", true, now)?;
            let bob = accounts::create_user(c, "bob", "Bob", false, now)?;
            let ta = accounts::create_token(c, &alice.id, "demo", now)?;
            let tb = accounts::create_token(c, &bob.id, "demo", now)?;
            let doc = new_id("doc_");
            documents::create(c, &doc, &alice.id, "Welcome to docsync", None, now)?;
            Ok((alice, bob, ta, tb, doc))
        })
        .await?;
    let (alice, _bob, token_a, token_b, doc_id) = created;
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
    let addr = state
        .registry
        .send(Open {
            doc_id: doc_id.clone(),
        })
        .await?;
    addr.send(Sync {
        caller: Caller {
            client_id: String::new(),
            author: Author {
                user_id: alice.id.clone(),
                name: alice.display_name.clone(),
            },
            role: Role::Owner,
            shared: false,
        },
        last_seq: 0,
        ops,
        hold: None,
        precheck: Precheck::default(),
        precheck_at: Instant::now(),
    })
    .await?
    .map_err(|e| anyhow::anyhow!("{e}"))
    .context("seeding the sample document")?;
    println!("demo: created users and a sample document");
    println!("  alice (owner of the sample)  token: {token_a}");
    println!("  bob                          token: {token_b}");
    println!("  sample document: {doc_id}");
    println!("  try: curl -H 'Authorization: Bearer {token_a}' http://HOST/api/v1/docs/{doc_id}/markdown");
    Ok(())
}
