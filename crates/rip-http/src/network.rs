//! The network policy: which addresses a request may connect to, so that a crawl that
//! follows strangers' links and redirects cannot be sent into the machine's own networks
//! (`127.0.0.1`, the cloud metadata service at `169.254.169.254`, a LAN).
//!
//! # What is checked, and where
//!
//! The check is on the address connected to, after DNS resolution, in three places that
//! together cover every connection the [`Client`](crate::client::Client) opens:
//!
//! - **Names** are resolved by [`PolicyResolver`], the client's only resolver (reqwest's
//!   `dns_resolver` hook): it hands the connector only the allowed addresses, and fails
//!   with [`Denied`] when none is left. The connector connects to nothing but what the
//!   resolver returned, so a name that resolves (or rebinds) to a refused address cannot
//!   pass: there is no second lookup between the check and the connection.
//! - **IP literals** (`http://169.254.169.254/`) skip resolvers: the client checks them
//!   before sending ([`NetworkPolicy::check_url`]).
//! - **Every response** is checked once more on its connection's peer address
//!   (`remote_addr`) before its body is read: a belt to the braces above (a pooled
//!   connection, a path not thought of), which drops the response as [`Denied`].
//!
//! A proxy (`--proxy`) connects on our behalf, so the address it connects to is not seen
//! here: its own host is let through, targets written as IP literals are checked, and a
//! target's name is resolved through the policy first and refused when it resolves only to
//! refused addresses; the proxy may resolve it otherwise (a proxy is where to enforce its
//! own policy).
//!
//! # The rule
//!
//! For an address (an IPv4-mapped or NAT64 IPv6 address is read as its IPv4 address):
//! 1. in a `deny` network (`--deny-network`): refused;
//! 2. in an `allow` network (`--allow-network`): allowed;
//! 3. when guarded: in the network of a start URL ([`NetworkPolicy::admit_start`]):
//!    allowed; in a special-use block ([`special_block`]: loopback, private, link-local,
//!    unique-local, CGNAT, unspecified, multicast, broadcast and reserved): refused;
//! 4. else allowed.
//!
//! A refusal is the failure `network.denied` (`PERMANENT`, never retried) naming the
//! address and why.

use std::collections::HashSet;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::{Arc, LazyLock, RwLock};

pub use ipnet::IpNet;
use url::{Host, Url};

/// The policy's configuration (what `--allow-network`, `--deny-network` and the state
/// file's `network` say). The default is open: no guard, no lists; programs turn the guard on.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NetworkConfig {
    /// Refuse the special-use blocks, but for the networks of start URLs and `allow`.
    pub guard: bool,
    /// Networks always allowed (but for `deny`).
    pub allow: Vec<IpNet>,
    /// Networks always refused.
    pub deny: Vec<IpNet>,
    /// Names resolved without DNS, to these addresses (a hosts file of the policy's own;
    /// the addresses are checked as any other).
    pub hosts: Vec<(String, Vec<IpAddr>)>,
}

impl NetworkConfig {
    /// True when the policy lets everything through and resolves as the system does.
    pub fn is_open(&self) -> bool {
        !self.guard && self.allow.is_empty() && self.deny.is_empty() && self.hosts.is_empty()
    }
}

/// A connection the policy refused: the error code `network.denied`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("refused to connect to {addr} for `{host}`: {why} (hint: {hint})")]
pub struct Denied {
    /// The host as the URL names it.
    pub host: String,
    /// The address refused (the first, when a name resolved to several).
    pub addr: IpAddr,
    /// Why, e.g. `a loopback address (127.0.0.0/8)`.
    pub why: String,
    /// What would let it through.
    pub hint: String,
}

/// The error code of a [`Denied`].
pub const DENIED_CODE: &str = "network.denied";

/// The special-use blocks a guarded policy refuses, with their names.
static SPECIAL: LazyLock<Vec<(IpNet, &'static str)>> = LazyLock::new(|| {
    [
        ("0.0.0.0/8", "an unspecified address"),
        ("10.0.0.0/8", "a private address"),
        ("100.64.0.0/10", "a shared (CGNAT) address"),
        ("127.0.0.0/8", "a loopback address"),
        ("169.254.0.0/16", "a link-local address"),
        ("172.16.0.0/12", "a private address"),
        ("192.168.0.0/16", "a private address"),
        ("224.0.0.0/4", "a multicast address"),
        ("240.0.0.0/4", "a reserved or broadcast address"),
        ("::/128", "an unspecified address"),
        ("::1/128", "a loopback address"),
        ("fe80::/10", "a link-local address"),
        ("fc00::/7", "a unique-local address"),
        ("ff00::/8", "a multicast address"),
    ]
    .into_iter()
    .map(|(net, name)| (net.parse().expect("a valid block"), name))
    .collect()
});

/// The special-use block `ip` is in, with its name (`None`: a public address).
pub fn special_block(ip: IpAddr) -> Option<(IpNet, &'static str)> {
    let ip = canonical(ip);
    SPECIAL.iter().find(|(net, _)| net.contains(&ip)).copied()
}

/// `ip`, or the IPv4 address an IPv6 one carries (IPv4-mapped `::ffff:a.b.c.d`, NAT64
/// `64:ff9b::a.b.c.d`): the address the packets end up at.
pub fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return IpAddr::V4(v4);
            }
            let s = v6.segments();
            if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
                let [a, b] = s[6].to_be_bytes();
                let [c, d] = s[7].to_be_bytes();
                return IpAddr::V4(Ipv4Addr::new(a, b, c, d));
            }
            ip
        }
        v4 => v4,
    }
}

/// The policy of one client: its configuration and the networks of the start URLs seen.
#[derive(Debug, Default)]
pub struct NetworkPolicy {
    cfg: NetworkConfig,
    started: RwLock<Vec<IpNet>>,
    /// Names of start URLs: their addresses are admitted as they are resolved.
    start_names: RwLock<HashSet<String>>,
}

impl NetworkPolicy {
    /// A policy of `cfg`, with no start URL yet.
    pub fn new(cfg: NetworkConfig) -> Self {
        Self {
            cfg,
            started: RwLock::new(Vec::new()),
            start_names: RwLock::new(HashSet::new()),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &NetworkConfig {
        &self.cfg
    }

    /// Whether `host` may be connected at `ip`.
    pub fn check(&self, host: &str, ip: IpAddr) -> Result<(), Denied> {
        let ip = canonical(ip);
        let denied = |why: String, hint: String| Denied {
            host: host.to_owned(),
            addr: ip,
            why,
            hint,
        };
        if let Some(net) = self.cfg.deny.iter().find(|n| n.contains(&ip)) {
            return Err(denied(
                format!("in {net}, denied by --deny-network"),
                "drop that --deny-network".to_owned(),
            ));
        }
        if !self.cfg.guard || self.cfg.allow.iter().any(|n| n.contains(&ip)) {
            return Ok(());
        }
        let Some((block, name)) = special_block(ip) else {
            return Ok(());
        };
        let started = self.started.read().unwrap_or_else(|e| e.into_inner());
        if started.iter().any(|n| n.contains(&ip)) {
            return Ok(());
        }
        Err(denied(
            format!("{name} ({block}), and no start URL is in that network"),
            format!("--allow-network {block} lets it through, if that is meant"),
        ))
    }

    /// Checks the host of `url` when it is an IP literal (which no resolver sees).
    pub fn check_url(&self, url: &Url) -> Result<(), Denied> {
        let ip = match url.host() {
            Some(Host::Ipv4(v4)) => IpAddr::V4(v4),
            Some(Host::Ipv6(v6)) => IpAddr::V6(v6),
            _ => return Ok(()),
        };
        self.check(url.host_str().unwrap_or_default(), ip)
    }

    /// Allows, from now on, the special-use block `ip` is in (a start URL's network: a
    /// crawl of a local site reaches the rest of it). A public address adds nothing.
    pub fn admit(&self, ip: IpAddr) {
        if let Some((block, _)) = special_block(ip) {
            let mut started = self.started.write().unwrap_or_else(|e| e.into_inner());
            if !started.contains(&block) {
                tracing::debug!(%block, "network policy: a start URL's network is allowed");
                started.push(block);
            }
        }
    }

    /// Allows the networks of start URL `url`: of its IP literal, or of every address its
    /// name resolves to, when it is resolved (no lookup here: what is admitted is what the
    /// connection will use).
    pub fn admit_start(&self, url: &Url) {
        if let Some(name) = self.admit_literal(url) {
            let known = self.start_names.read().unwrap_or_else(|e| e.into_inner());
            if !known.contains(&name) {
                drop(known);
                let mut names = self.start_names.write().unwrap_or_else(|e| e.into_inner());
                names.insert(name);
            }
        }
    }

    /// Allows the network of `url`'s IP literal; its host's name (lower case, no final dot)
    /// when it has a name instead. `None` too when the policy is off.
    fn admit_literal(&self, url: &Url) -> Option<String> {
        if !self.cfg.guard {
            return None;
        }
        match url.host()? {
            Host::Ipv4(v4) => self.admit(IpAddr::V4(v4)),
            Host::Ipv6(v6) => self.admit(IpAddr::V6(v6)),
            Host::Domain(name) => return Some(name.trim_end_matches('.').to_ascii_lowercase()),
        }
        None
    }

    /// Allows the network of `url` when its host says it without DNS: an IP literal, or
    /// `localhost` and its subdomains (loopback by definition, RFC 6761). A name that must
    /// be resolved admits nothing: what it resolves to may have changed since.
    pub fn admit_fixed(&self, url: &Url) {
        if let Some(name) = self.admit_literal(url)
            && (name == "localhost" || name.ends_with(".localhost"))
        {
            self.admit(IpAddr::V4(Ipv4Addr::LOCALHOST));
            self.admit(IpAddr::V6(std::net::Ipv6Addr::LOCALHOST));
        }
    }

    /// The addresses of `name`: from [`NetworkConfig::hosts`], else the system's resolver.
    pub async fn lookup(&self, name: &str) -> std::io::Result<Vec<IpAddr>> {
        let name = name.trim_end_matches('.');
        if let Some((_, addrs)) =
            (self.cfg.hosts.iter()).find(|(h, _)| h.eq_ignore_ascii_case(name))
        {
            return Ok(addrs.clone());
        }
        let found = tokio::net::lookup_host((name, 0)).await?;
        Ok(found.map(|a| a.ip()).collect())
    }

    /// The allowed addresses of `name`; [`Denied`] (the first refused) when it resolves
    /// to addresses and none is allowed.
    pub async fn resolve(&self, name: &str) -> Result<Vec<IpAddr>, ResolveError> {
        let all = self.lookup(name).await.map_err(ResolveError::Lookup)?;
        let start = (self.start_names.read().unwrap_or_else(|e| e.into_inner()))
            .contains(&name.trim_end_matches('.').to_ascii_lowercase());
        if start {
            all.iter().for_each(|ip| self.admit(*ip));
        }
        let mut first_denied = None;
        let mut allowed = Vec::with_capacity(all.len());
        for ip in all {
            match self.check(name, ip) {
                Ok(()) => allowed.push(ip),
                Err(d) => {
                    first_denied.get_or_insert(d);
                }
            }
        }
        match (allowed.is_empty(), first_denied) {
            (true, Some(d)) => Err(ResolveError::Denied(d)),
            _ => Ok(allowed),
        }
    }
}

/// Why a name gave no address to connect to.
#[derive(Debug, thiserror::Error)]
pub enum ResolveError {
    /// Every address it resolved to is refused.
    #[error(transparent)]
    Denied(Denied),
    /// It did not resolve.
    #[error("failed to lookup address information: {0}")]
    Lookup(#[source] std::io::Error),
}

/// The client's resolver: the system's (or [`NetworkConfig::hosts`]), keeping only the
/// addresses the policy allows. `exempt` (the proxy's host) is resolved unchecked.
#[derive(Debug, Clone)]
pub struct PolicyResolver {
    /// The policy.
    pub policy: Arc<NetworkPolicy>,
    /// A name let through unchecked: the proxy's.
    pub exempt: Option<String>,
}

impl reqwest::dns::Resolve for PolicyResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let me = self.clone();
        let name = name.as_str().to_owned();
        Box::pin(async move {
            let ips = if me.exempt.as_deref() == Some(name.as_str()) {
                me.policy.lookup(&name).await.map_err(ResolveError::Lookup)
            } else {
                me.policy.resolve(&name).await
            };
            let ips = ips.map_err(|e| -> Box<dyn std::error::Error + Send + Sync> {
                match e {
                    ResolveError::Denied(d) => Box::new(d),
                    lookup => Box::new(lookup),
                }
            })?;
            let addrs: reqwest::dns::Addrs =
                Box::new(ips.into_iter().map(|ip| SocketAddr::new(ip, 0)));
            Ok(addrs)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn guarded() -> NetworkPolicy {
        NetworkPolicy::new(NetworkConfig {
            guard: true,
            ..NetworkConfig::default()
        })
    }

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn a_guarded_policy_refuses_every_special_use_block() {
        let p = guarded();
        for a in [
            "127.0.0.1",
            "127.9.9.9",
            "169.254.169.254",
            "10.1.2.3",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "100.64.0.1",
            "0.0.0.0",
            "224.0.0.1",
            "255.255.255.255",
            "::",
            "::1",
            "fe80::1",
            "fd00::1",
            "ff02::1",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
            "64:ff9b::a00:1",
        ] {
            let err = p.check("h", ip(a)).expect_err(a);
            assert!(err.to_string().contains("--allow-network"), "{err}");
        }
        for a in [
            "198.51.100.10",
            "8.8.8.8",
            "172.32.0.1",
            "2001:db8::1",
            "::ffff:8.8.8.8",
        ] {
            p.check("h", ip(a)).expect(a);
        }
    }

    #[test]
    fn an_open_policy_allows_all_and_deny_wins_over_allow() {
        let open = NetworkPolicy::default();
        open.check("h", ip("127.0.0.1")).unwrap();
        let p = NetworkPolicy::new(NetworkConfig {
            guard: true,
            allow: vec!["10.0.0.0/8".parse().unwrap()],
            deny: vec![
                "10.0.0.5/32".parse().unwrap(),
                "8.8.0.0/16".parse().unwrap(),
            ],
            hosts: Vec::new(),
        });
        p.check("h", ip("10.0.0.4")).unwrap();
        let err = p.check("h", ip("10.0.0.5")).unwrap_err();
        assert!(err.why.contains("--deny-network"), "{err}");
        p.check("h", ip("8.8.8.8")).unwrap_err();
    }

    #[tokio::test]
    async fn a_start_url_allows_its_block_and_no_other() {
        let p = guarded();
        p.admit_start(&Url::parse("http://127.0.0.1:8080/").unwrap());
        p.check("h", ip("127.0.0.2")).unwrap();
        p.check("h", ip("::ffff:127.0.0.1")).unwrap();
        p.check("h", ip("10.0.0.1")).unwrap_err();
        p.check("h", ip("169.254.169.254")).unwrap_err();
        p.admit_start(&Url::parse("http://198.51.100.1/").unwrap());
        p.check("h", ip("192.168.0.1")).unwrap_err();
        // A start URL's name admits the networks it resolves to, once resolved.
        let p = NetworkPolicy::new(NetworkConfig {
            guard: true,
            hosts: vec![("wiki.lan".into(), vec![ip("192.168.1.5")])],
            ..NetworkConfig::default()
        });
        p.admit_start(&Url::parse("http://WIKI.lan./").unwrap());
        assert_eq!(p.resolve("wiki.lan").await.unwrap(), [ip("192.168.1.5")]);
        p.check("h", ip("192.168.7.7")).unwrap();
        p.check("h", ip("10.0.0.1")).unwrap_err();
    }

    #[tokio::test]
    async fn a_pages_name_admits_nothing_its_literal_or_localhost_does() {
        let p = NetworkPolicy::new(NetworkConfig {
            guard: true,
            hosts: vec![("rebind.test".into(), vec![ip("127.0.0.1")])],
            ..NetworkConfig::default()
        });
        p.admit_fixed(&Url::parse("http://rebind.test/page").unwrap());
        assert!(
            p.resolve("rebind.test").await.is_err(),
            "rebinding let through"
        );
        p.check("h", ip("127.0.0.1")).unwrap_err();
        p.admit_fixed(&Url::parse("http://10.1.2.3/page").unwrap());
        p.check("h", ip("10.200.0.1")).unwrap();
        p.admit_fixed(&Url::parse("http://app.localhost:8080/").unwrap());
        p.check("h", ip("127.0.0.1")).unwrap();
        p.check("h", ip("::1")).unwrap();
    }

    #[tokio::test]
    async fn a_name_is_resolved_to_its_allowed_addresses_only() {
        let p = NetworkPolicy::new(NetworkConfig {
            guard: true,
            hosts: vec![
                (
                    "mixed.test".into(),
                    vec![ip("127.0.0.1"), ip("198.51.100.7")],
                ),
                ("inside.test".into(), vec![ip("127.0.0.1")]),
            ],
            ..NetworkConfig::default()
        });
        assert_eq!(p.resolve("mixed.test").await.unwrap(), [ip("198.51.100.7")]);
        match p.resolve("inside.test").await {
            Err(ResolveError::Denied(d)) => {
                assert_eq!(d.addr, ip("127.0.0.1"));
                assert_eq!(d.host, "inside.test");
            }
            other => panic!("{other:?}"),
        }
    }
}
