//! Which address a request comes from, for anything counted per client address (stream
//! limits; usable by the login throttle too). Forwarded headers are believed only from our
//! own proxies, and then only the part our proxies wrote.

use std::net::IpAddr;

use actix_web::http::header::HeaderMap;
use actix_web::HttpRequest;

use crate::config::Settings;

/// The client's address (per-address limits). Forwarded headers (`Forwarded`,
/// `X-Forwarded-For`) are believed only from a peer in `server.trusted_proxies` (or from
/// anyone with `auth.trust_forwarded_for`, the login throttle's switch): otherwise a client
/// could name a fresh address per request and never meet the limit.
///
/// In cluster mode a request another node forwarded (with the cluster secret) carries the
/// client's address as that node saw it: believed, so a client's streams count against the
/// client on the owner, not against the node that forwarded them.
/// `cluster_secret`: this node's, in cluster mode.
pub fn client_address(
    settings: &Settings,
    cluster_secret: Option<&str>,
    req: &HttpRequest,
) -> String {
    let peer = req.peer_addr().map(|a| a.ip());
    let trusted = &settings.server.trusted_proxies;
    let from_a_node =
        cluster_secret.is_some_and(|secret| crate::cluster::hop::from_a_node(req, secret));
    let believe = from_a_node
        || settings.auth.trust_forwarded_for
        || peer.is_some_and(|p| trusted.contains(&p));
    believe
        .then(|| forwarded_client(req.headers(), trusted))
        .flatten()
        .or(peer)
        .map_or_else(|| "unknown".into(), |ip| ip.to_string())
}

/// The client in a forwarded chain: the right-most address that is not one of our proxies.
/// Proxies append (nginx's `$proxy_add_x_forwarded_for`), so everything left of the last
/// proxy's entry was written by the client and is not believed — taking the first entry,
/// as `ConnectionInfo::realip_remote_addr` does, would let a client pick its address.
/// `Forwarded` wins over `X-Forwarded-For` when both are present. An entry that is not an
/// address (`unknown`, an obfuscated name) ends the walk: `None`, so the peer counts.
fn forwarded_client(headers: &HeaderMap, trusted: &[IpAddr]) -> Option<IpAddr> {
    let values = |name: &str| -> Vec<String> {
        headers
            .get_all(name)
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .map(|s| s.trim().to_string())
            .collect()
    };
    let forwarded: Vec<String> = values("forwarded")
        .iter()
        .filter_map(|element| {
            element.split(';').find_map(|pair| {
                let (k, v) = pair.trim().split_once('=')?;
                k.eq_ignore_ascii_case("for")
                    .then(|| v.trim().trim_matches('"').to_string())
            })
        })
        .collect();
    let chain = if forwarded.is_empty() {
        values("x-forwarded-for")
    } else {
        forwarded
    };
    for entry in chain.iter().rev() {
        let ip = parse_node(entry)?;
        if !trusted.contains(&ip) {
            return Some(ip);
        }
    }
    None
}

/// `1.2.3.4`, `1.2.3.4:5678`, `::1`, `[::1]` or `[::1]:5678`.
fn parse_node(s: &str) -> Option<IpAddr> {
    if let Ok(ip) = s.parse() {
        return Some(ip);
    }
    if let Some(rest) = s.strip_prefix('[') {
        return rest.split(']').next()?.parse().ok();
    }
    s.parse::<std::net::SocketAddr>().ok().map(|a| a.ip())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chain(pairs: &[(&str, &str)], trusted: &[&str]) -> Option<String> {
        let mut req = actix_web::test::TestRequest::default();
        for (k, v) in pairs {
            req = req.append_header((*k, *v));
        }
        let req = req.to_http_request();
        let trusted: Vec<IpAddr> = trusted.iter().map(|t| t.parse().unwrap()).collect();
        forwarded_client(req.headers(), &trusted).map(|ip| ip.to_string())
    }

    #[test]
    fn the_client_is_the_right_most_address_that_is_not_a_proxy() {
        let xff = "x-forwarded-for";
        // What the client wrote itself (left of the proxy's entry) is not believed.
        assert_eq!(
            chain(&[(xff, "203.0.113.1, 198.51.100.7")], &["127.0.0.1"]).as_deref(),
            Some("198.51.100.7")
        );
        // Two proxies of ours: skip both.
        assert_eq!(
            chain(&[(xff, "198.51.100.7, 10.0.0.2")], &["10.0.0.2"]).as_deref(),
            Some("198.51.100.7")
        );
        // Several header lines are one list.
        assert_eq!(
            chain(&[(xff, "203.0.113.1"), (xff, "198.51.100.8")], &[]).as_deref(),
            Some("198.51.100.8")
        );
        // Forwarded wins, with ports, quotes and IPv6 brackets.
        assert_eq!(
            chain(
                &[
                    (
                        "forwarded",
                        "for=203.0.113.1, for=\"[2001:db8::1]:4711\";proto=https"
                    ),
                    (xff, "198.51.100.9")
                ],
                &[]
            )
            .as_deref(),
            Some("2001:db8::1")
        );
        assert_eq!(
            chain(&[(xff, "1.2.3.4:80")], &[]).as_deref(),
            Some("1.2.3.4")
        );
        // Not an address, or only proxies: nothing believed (the peer counts).
        assert_eq!(chain(&[(xff, "unknown")], &[]), None);
        assert_eq!(chain(&[(xff, "10.0.0.2")], &["10.0.0.2"]), None);
        assert_eq!(chain(&[], &[]), None);
    }
}
