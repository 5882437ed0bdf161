//! Where another server is, as `servers = [...]` in config.toml and `berth attach --add`
//! name it: an absolute socket path, or `ssh://[user@]host[:port]`.

use std::path::{Path, PathBuf};

use serde::{de, Deserialize, Deserializer};

use crate::ssh_attach;

/// The most servers `servers` names.
pub const MAX_SERVERS: usize = 16;

/// Where another server is: its socket, or an SSH host whose server is forwarded here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerAddress {
    /// A socket on this machine.
    Socket(PathBuf),
    /// `ssh://[user@]host[:port]`.
    Ssh(ssh_attach::Target),
}

impl ServerAddress {
    /// Parses a config entry or `berth attach --add`'s argument: an absolute socket path or
    /// an `ssh://` address.
    pub fn parse(text: &str) -> Result<ServerAddress, String> {
        let text = text.trim();
        if text.starts_with("ssh://") {
            return ssh_attach::Target::parse(text)
                .map(ServerAddress::Ssh)
                .map_err(|e| e.to_string());
        }
        let path = Path::new(text);
        if !path.is_absolute() {
            return Err(format!(
                "{text:?} is neither an absolute socket path nor an ssh:// address"
            ));
        }
        // A socket path longer than sun_path cannot be connected to.
        if text.len() > 107 {
            return Err(format!("{text:?} is longer than a socket path can be (107 bytes)"));
        }
        Ok(ServerAddress::Socket(path.to_path_buf()))
    }

    /// The name its group goes by: the SSH host, or the socket's directory or file name.
    pub fn name(&self) -> String {
        match self {
            ServerAddress::Ssh(target) => target.destination.clone(),
            ServerAddress::Socket(path) => {
                let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned());
                let dir = path
                    .parent()
                    .and_then(|p| p.file_name())
                    .map(|s| s.to_string_lossy().into_owned());
                match (stem.as_deref(), dir) {
                    (Some("berth" | "sock" | "socket") | None, Some(dir)) => dir,
                    (Some(stem), _) => stem.to_owned(),
                    (None, None) => path.display().to_string(),
                }
            }
        }
    }

    /// The address as written in the config.
    pub fn to_text(&self) -> String {
        match self {
            ServerAddress::Socket(path) => path.display().to_string(),
            ServerAddress::Ssh(t) => match t.port {
                Some(port) => format!("ssh://{}:{port}", t.destination),
                None => format!("ssh://{}", t.destination),
            },
        }
    }
}

impl<'de> Deserialize<'de> for ServerAddress {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        ServerAddress::parse(&text).map_err(de::Error::custom)
    }
}

/// `servers`: at most [`MAX_SERVERS`] addresses, none twice.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct ServerList(pub Vec<ServerAddress>);

impl<'de> Deserialize<'de> for ServerList {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let list = Vec::<ServerAddress>::deserialize(d)?;
        if list.len() > MAX_SERVERS {
            return Err(de::Error::custom(format!(
                "{} servers named; a window links to at most {MAX_SERVERS}",
                list.len()
            )));
        }
        for (i, a) in list.iter().enumerate() {
            if list[..i].contains(a) {
                return Err(de::Error::custom(format!("{} is named twice", a.to_text())));
            }
        }
        Ok(ServerList(list))
    }
}

#[cfg(test)]
mod tests {
    use super::ServerAddress;

    #[test]
    fn addresses_parse_and_name_their_group() {
        let a = ServerAddress::parse("/run/user/1000/berth/berth.sock").unwrap();
        assert_eq!(a.name(), "berth");
        assert_eq!(ServerAddress::parse("/tmp/two/sock").unwrap().name(), "two");
        assert_eq!(ServerAddress::parse("/tmp/gpu.sock").unwrap().name(), "gpu");
        let ssh = ServerAddress::parse(" ssh://me@devbox:2222 ").unwrap();
        assert_eq!(ssh.name(), "me@devbox");
        assert_eq!(ssh.to_text(), "ssh://me@devbox:2222");
        for bad in ["relative.sock", "", "ssh://-oProxyCommand=x", &format!("/{}", "x".repeat(120))]
        {
            assert!(ServerAddress::parse(bad).is_err(), "{bad:?} parsed");
        }
    }
}
