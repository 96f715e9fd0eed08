//! The scenarios: which exist, which `--scenario` selects, and running one.

mod bullet_shares;
mod cluster;
mod cluster_fanout;
mod compaction;
pub mod fanout;
mod feed;
mod history;
mod hostile;
mod hot_doc;
mod idle_actors;
mod idle_subscribers;
mod many_docs;
mod snapshot;
pub mod typists;
mod versions;
mod wakeup;
mod webhooks;

use std::time::Duration;

use anyhow::Result;
use clap::ValueEnum;

use crate::channel::Channel;
use crate::client::Api;
use crate::server::Launcher;
use crate::stats::Line;

use self::fanout::FanoutPlan;

/// Subscriber counts of the `wakeup` scenario.
const WAKE_SUBSCRIBERS: [usize; 2] = [2, 100];

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ScenarioArg {
    All,
    #[value(alias = "hot_doc")]
    Hot,
    #[value(alias = "many_docs")]
    Many,
    #[value(alias = "snapshot_10k")]
    Snapshot,
    #[value(alias = "idle_actors")]
    Idle,
    #[value(alias = "idle_subscribers")]
    IdleSubscribers,
    Wakeup,
    Fanout,
    Compaction,
    History,
    Versions,
    Hostile,
    Typists,
    Cluster,
    #[value(alias = "cluster_fanout")]
    ClusterFanout,
    #[value(alias = "bullet_shares")]
    Bullets,
    Feed,
    Webhooks,
}

#[derive(Clone, Copy, Debug)]
pub enum Scenario {
    HotDoc,
    ManyDocs,
    Snapshot10k,
    IdleActors,
    IdleSubscribers(Channel),
    /// Channel and number of subscribers.
    Wakeup(Channel, usize),
    /// Channel, readers, offered edits per second.
    Fanout(Channel, usize, u32),
    Compaction,
    /// A bullet's history on a document with a long log.
    History,
    /// Versions of a 10,000-bullet document: keeping one, its size, comparing two, restoring.
    Versions,
    /// What one user can do to everyone else (placement, tags, logins, write budget).
    Hostile,
    /// Many people typing at once in one document: sending rule, keys per second each.
    Typists(typists::Rule, u32),
    /// Cluster mode on PostgreSQL: 1, 2 and 3 nodes, and failover after `kill -9`.
    Cluster,
    /// 100 readers on a node that does not own the document (2 nodes), by this channel.
    ClusterFanout(Channel),
    /// A 10,000-bullet document with 100 shared bullets: the owner's costs, a guest's snapshot.
    BulletShares,
    /// Fan-out to 100 WebSocket readers, this many of them bullet guests of the writer's bullet.
    BulletFanout(usize),
    /// The change feed read from the start: 100,000 entries in 10 documents.
    Feed,
    /// A webhook draining 1,000,000 entries while editors run, then edit → webhook latency.
    Webhooks,
}

impl Scenario {
    pub fn name(self) -> &'static str {
        match self {
            Scenario::HotDoc => "hot_doc",
            Scenario::ManyDocs => "many_docs",
            Scenario::Snapshot10k => "snapshot_10k",
            Scenario::IdleActors => "idle_actors",
            Scenario::IdleSubscribers(_) => "idle_subscribers",
            Scenario::Wakeup(..) => "wakeup",
            Scenario::Fanout(..) => "fanout",
            Scenario::Compaction => "compaction",
            Scenario::History => "history",
            Scenario::Versions => "versions",
            Scenario::Hostile => "hostile",
            Scenario::Typists(..) => "typists",
            Scenario::Cluster => "cluster",
            Scenario::ClusterFanout(_) => "cluster_fanout",
            Scenario::BulletShares => "bullet_shares",
            Scenario::BulletFanout(_) => "bullet_fanout",
            Scenario::Feed => "feed",
            Scenario::Webhooks => "webhooks",
        }
    }

    /// An output line with `scenario` and, for scenarios with parameters, those (`channel`,
    /// `subscribers` / `readers`, `offered_edits_per_s`).
    pub fn line(self) -> Line {
        let line = Line::named(self.name());
        match self {
            Scenario::IdleSubscribers(channel) => line.with("channel", channel.name()),
            Scenario::Wakeup(channel, n) => {
                line.with("channel", channel.name()).with("subscribers", n)
            }
            Scenario::Fanout(channel, readers, rate) => line
                .with("channel", channel.name())
                .with("readers", readers)
                .with("offered_edits_per_s", rate),
            Scenario::Typists(rule, rate) => {
                line.with("rule", rule.name()).with("keys_per_s_each", rate)
            }
            Scenario::ClusterFanout(channel) => line.with("channel", channel.name()),
            _ => line,
        }
    }

    pub fn selected(arg: ScenarioArg, fanout: &FanoutPlan) -> Vec<Scenario> {
        let idle_subscribers = vec![
            Scenario::IdleSubscribers(Channel::WebSocket),
            Scenario::IdleSubscribers(Channel::LongPoll),
        ];
        let typists: Vec<Scenario> = typists::KEY_RATES
            .into_iter()
            .flat_map(|r| {
                [typists::Rule::Throttle100, typists::Rule::Batch300]
                    .map(|rule| Scenario::Typists(rule, r))
            })
            .collect();
        let cluster_fanouts = vec![
            Scenario::ClusterFanout(Channel::WebSocket),
            Scenario::ClusterFanout(Channel::Sse),
        ];
        let wakeups: Vec<Scenario> = Channel::ALL
            .into_iter()
            .flat_map(|c| WAKE_SUBSCRIBERS.map(|n| Scenario::Wakeup(c, n)))
            .collect();
        match arg {
            // idle_actors goes first: on a heap that earlier scenarios grew and freed, new
            // actors reuse freed memory and the RSS difference says little.
            ScenarioArg::All => [
                vec![Scenario::IdleActors],
                idle_subscribers,
                vec![Scenario::HotDoc, Scenario::ManyDocs, Scenario::Snapshot10k],
                wakeups,
                fanout.scenarios(),
                vec![
                    Scenario::Compaction,
                    Scenario::History,
                    Scenario::Versions,
                    Scenario::Hostile,
                    Scenario::BulletShares,
                    Scenario::BulletFanout(0),
                    Scenario::BulletFanout(50),
                    Scenario::Feed,
                    Scenario::Webhooks,
                ],
                typists.clone(),
                vec![Scenario::Cluster],
                cluster_fanouts.clone(),
            ]
            .concat(),
            ScenarioArg::Hot => vec![Scenario::HotDoc],
            ScenarioArg::Many => vec![Scenario::ManyDocs],
            ScenarioArg::Snapshot => vec![Scenario::Snapshot10k],
            ScenarioArg::Idle => vec![Scenario::IdleActors],
            ScenarioArg::IdleSubscribers => idle_subscribers,
            ScenarioArg::Wakeup => wakeups,
            ScenarioArg::Fanout => fanout.scenarios(),
            ScenarioArg::Compaction => vec![Scenario::Compaction],
            ScenarioArg::History => vec![Scenario::History],
            ScenarioArg::Versions => vec![Scenario::Versions],
            ScenarioArg::Hostile => vec![Scenario::Hostile],
            ScenarioArg::Typists => typists,
            ScenarioArg::Cluster => vec![Scenario::Cluster],
            ScenarioArg::ClusterFanout => cluster_fanouts,
            ScenarioArg::Bullets => vec![
                Scenario::BulletShares,
                Scenario::BulletFanout(0),
                Scenario::BulletFanout(50),
            ],
            ScenarioArg::Feed => vec![Scenario::Feed],
            ScenarioArg::Webhooks => vec![Scenario::Webhooks],
        }
    }
}

/// What scenarios work with: the main server's API and pid (None if it is not ours), a way
/// to start further servers (None with --target), and the soft open-file limit.
pub struct Env {
    pub api: Api,
    pub pid: Option<u32>,
    pub launcher: Option<Launcher>,
    pub duration: Duration,
    /// The fan-out writer's window.
    pub fanout_window: Duration,
    pub nofile: u64,
}

/// Runs one scenario; its figures as one output line.
pub async fn run(scenario: Scenario, env: &Env) -> Result<Line> {
    let (api, pid) = (&env.api, env.pid);
    match scenario {
        Scenario::HotDoc => hot_doc::run(api, env.duration, pid).await,
        Scenario::ManyDocs => many_docs::run(api, env.duration, pid).await,
        Scenario::Snapshot10k => snapshot::run(api, pid).await,
        Scenario::IdleActors => idle_actors::run(api, pid).await,
        Scenario::IdleSubscribers(channel) => idle_subscribers::run(env, channel).await,
        Scenario::Wakeup(channel, n) => wakeup::run(api, channel, n, pid).await,
        Scenario::Fanout(channel, readers, rate) => fanout::run(env, channel, readers, rate).await,
        Scenario::Compaction => compaction::run(env).await,
        Scenario::History => history::run(env).await,
        Scenario::Versions => versions::run(api).await,
        Scenario::Hostile => hostile::run(env).await,
        Scenario::Typists(rule, rate) => typists::run(api, rule, rate, env.duration, pid).await,
        Scenario::Cluster => cluster::run(env).await,
        Scenario::ClusterFanout(channel) => cluster_fanout::run(env, channel).await,
        Scenario::BulletShares => bullet_shares::run(env).await,
        Scenario::BulletFanout(guests) => fanout::run_with_guests(env, 100, guests).await,
        Scenario::Feed => feed::run(env).await,
        Scenario::Webhooks => webhooks::run(env).await,
    }
}
