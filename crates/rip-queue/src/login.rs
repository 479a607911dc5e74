//! The credentials a broker is opened with: a user and password (or a token) in the broker's
//! URL, or in a credentials file.
//!
//! The NATS client reads no credentials from a URL, so they are taken out of it here and
//! given to the client apart: `nats://alice:s3cret@host:4222` connects to
//! `nats://host:4222` as the user `alice`. `nats://tok@host` is a token, as NATS' own tools
//! take it. Percent-escapes are decoded (a password with `@` or `:` is written `%40`, `%3A`).

use crate::QueueError;
use std::path::Path;

/// How the broker is asked to let us in.
#[derive(Clone, PartialEq, Eq)]
pub enum Login {
    /// No credentials.
    Anonymous,
    /// A user and password.
    User {
        /// The user, shown in messages.
        user: String,
        /// The password, never shown.
        password: String,
    },
    /// A token, never shown.
    Token(String),
}

impl std::fmt::Debug for Login {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.describe())
    }
}

impl Login {
    /// Who the broker is asked to let in, for messages: never the password or token.
    pub fn describe(&self) -> String {
        match self {
            Login::Anonymous => "no credentials".to_owned(),
            Login::User { user, .. } => format!("the user {user}"),
            Login::Token(_) => "a token".to_owned(),
        }
    }

    /// `options` with these credentials.
    pub(crate) fn apply(&self, options: async_nats::ConnectOptions) -> async_nats::ConnectOptions {
        match self.clone() {
            Login::Anonymous => options,
            Login::User { user, password } => options.user_and_password(user, password),
            Login::Token(token) => options.token(token),
        }
    }
}

/// Where the broker is and how to log in: the URLs (comma-separated) without credentials,
/// and the credentials of the URLs or of the file `creds` (not both).
pub(crate) fn login(url: &str, creds: Option<&Path>) -> Result<(String, Login), QueueError> {
    let mut from_url = Login::Anonymous;
    let mut servers = Vec::new();
    for one in url.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (server, login) = split_one(one)?;
        servers.push(server);
        if from_url == Login::Anonymous {
            from_url = login;
        } else if login != Login::Anonymous && login != from_url {
            return Err(QueueError::BrokerUrl {
                url: redact(url),
                reason: "its addresses carry different credentials: give them once".to_owned(),
            });
        }
    }
    let login = match creds {
        None => from_url,
        Some(_) if from_url != Login::Anonymous => {
            return Err(QueueError::BrokerUrl {
                url: redact(url),
                reason: "credentials are both in the URL and in a credentials file \
                         (--creds, RIP_BROKER_CREDS): give them once"
                    .to_owned(),
            });
        }
        Some(path) => from_file(path)?,
    };
    Ok((servers.join(","), login))
}

/// One address of the broker's URL without its credentials, and those credentials.
fn split_one(one: &str) -> Result<(String, Login), QueueError> {
    let scheme_end = one.find("://").map(|i| i + 3);
    let Some(at) = one.rfind('@').filter(|&at| at >= scheme_end.unwrap_or(0)) else {
        return Ok((one.to_owned(), Login::Anonymous));
    };
    let start = scheme_end.unwrap_or(0);
    let server = format!("{}{}", &one[..start], &one[at + 1..]);
    let secret = &one[start..at];
    let decode = |s: &str| {
        percent_encoding::percent_decode_str(s)
            .decode_utf8_lossy()
            .into_owned()
    };
    let login = match secret.split_once(':') {
        Some((user, password)) => Login::User {
            user: decode(user),
            password: decode(password),
        },
        None => Login::Token(decode(secret)),
    };
    Ok((server, login))
}

/// The credentials of a file whose first line is `user:password` or a token.
fn from_file(path: &Path) -> Result<Login, QueueError> {
    let text = std::fs::read_to_string(path).map_err(|source| QueueError::Credentials {
        path: path.display().to_string(),
        source,
    })?;
    let line = text.lines().map(str::trim).find(|l| !l.is_empty());
    Ok(match line.and_then(|l| l.split_once(':')) {
        Some((user, password)) => Login::User {
            user: user.to_owned(),
            password: password.to_owned(),
        },
        None => Login::Token(line.unwrap_or_default().to_owned()),
    })
}

/// `url` without the user, password or token before its `@`, for messages and logs.
pub fn redact(url: &str) -> String {
    url.split(',')
        .map(|one| match (one.find("://"), one.rfind('@')) {
            (Some(scheme), Some(at)) if at > scheme => {
                format!("{}***@{}", &one[..scheme + 3], &one[at + 1..])
            }
            (None, Some(at)) => format!("***@{}", &one[at + 1..]),
            _ => one.to_owned(),
        })
        .collect::<Vec<_>>()
        .join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(user: &str, password: &str) -> Login {
        Login::User {
            user: user.to_owned(),
            password: password.to_owned(),
        }
    }

    #[test]
    fn credentials_are_taken_out_of_the_url() {
        let (url, login) = login("nats://alice:s3cret@127.0.0.1:4223", None).unwrap();
        assert_eq!(url, "nats://127.0.0.1:4223");
        assert_eq!(login, user("alice", "s3cret"));
        let (url, login) = login_of("tls://tok@h:1,tls://tok@h2:2");
        assert_eq!(url, "tls://h:1,tls://h2:2");
        assert_eq!(login, Login::Token("tok".to_owned()));
        let (url, login) = login_of("127.0.0.1:4222");
        assert_eq!((url.as_str(), login), ("127.0.0.1:4222", Login::Anonymous));
    }

    fn login_of(url: &str) -> (String, Login) {
        login(url, None).unwrap()
    }

    #[test]
    fn escapes_in_a_password_are_decoded() {
        let (_, login) = login_of("nats://al%20ice:p%40ss%3Aw+rd@h:1");
        assert_eq!(login, user("al ice", "p@ss:w+rd"));
        assert!(!format!("{login:?}").contains("ss"), "{login:?}");
    }

    #[test]
    fn credentials_given_twice_are_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("creds");
        std::fs::write(&file, "bob:pw\n").unwrap();
        let both = login("nats://alice:s3cret@h:1", Some(&file)).unwrap_err();
        assert!(both.to_string().contains("give them once"), "{both}");
        assert!(!both.to_string().contains("s3cret"), "{both}");
        assert_eq!(
            login("nats://h:1", Some(&file)).unwrap().1,
            user("bob", "pw")
        );
        let two = login("nats://a:b@h:1,nats://c:d@h:2", None).unwrap_err();
        assert!(two.to_string().contains("different credentials"), "{two}");
    }
}
