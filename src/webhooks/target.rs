//! Where a webhook may point: an `http` or `https` URL with a host. People who are not
//! admins may not aim the server at itself or at private networks (a webhook is a request
//! the server makes on their behalf), unless `webhooks.allow_private_targets`.

use std::net::IpAddr;

/// Why `url` is not a receiver this caller may name, if it is not.
pub fn refuse(url: &str, may_reach_private: bool) -> Option<String> {
    if url.len() > 2048 {
        return Some("url: at most 2048 characters".into());
    }
    let Ok(parsed) = reqwest::Url::parse(url) else {
        return Some("url: an absolute http:// or https:// URL".into());
    };
    if !matches!(parsed.scheme(), "http" | "https") {
        return Some("url: an absolute http:// or https:// URL".into());
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Some(
            "url: no user name or password in it (the signature proves the sender)".into(),
        );
    }
    let Some(host) = parsed.host() else {
        return Some("url: it needs a host".into());
    };
    if may_reach_private {
        return None;
    }
    let private = match host {
        url::Host::Domain(d) => {
            let d = d.trim_end_matches('.').to_ascii_lowercase();
            d == "localhost" || d.ends_with(".localhost")
        }
        url::Host::Ipv4(ip) => is_private(IpAddr::V4(ip)),
        url::Host::Ipv6(ip) => is_private(IpAddr::V6(ip)),
    };
    private.then(|| {
        "url: this address is on this machine or a private network; only admins may send webhooks there"
            .into()
    })
}

/// Loopback, private, link-local, unspecified, broadcast and carrier-grade NAT addresses.
pub(crate) fn is_private(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_broadcast()
                // 100.64.0.0/10, carrier-grade NAT
                || (v4.octets()[0] == 100 && (v4.octets()[1] & 0xc0) == 64)
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_private(IpAddr::V4(v4));
            }
            let first = v6.segments()[0];
            v6.is_loopback()
                || v6.is_unspecified()
                || (first & 0xfe00) == 0xfc00 // unique local
                || (first & 0xffc0) == 0xfe80 // link local
        }
    }
}

#[cfg(test)]
mod tests {
    use super::refuse;

    #[test]
    fn receivers() {
        assert_eq!(refuse("https://hooks.example.com/docsync", false), None);
        assert_eq!(refuse("http://127.0.0.1:9000/x", true), None);
        for bad in [
            "ftp://example.com/",
            "not a url",
            "/relative",
            "https://u:p@example.com/",
        ] {
            assert!(refuse(bad, true).is_some(), "{bad}");
        }
        for private in [
            "http://localhost:8080/",
            "http://127.0.0.1/",
            "http://10.1.2.3/",
            "http://192.168.0.1/",
            "http://169.254.169.254/latest/meta-data",
            "http://[::1]/",
            "http://[fd00::1]/",
            "http://[::ffff:127.0.0.1]/",
            "http://100.64.0.1/",
        ] {
            assert!(refuse(private, false).is_some(), "{private}");
            assert_eq!(refuse(private, true), None, "{private}");
        }
    }
}
