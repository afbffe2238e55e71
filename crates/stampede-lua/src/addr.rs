//! Server addresses as scripts see them: `wrk.lookup(host, service)` (every
//! address of a host, as getaddrinfo gives them), `wrk.connect(addr)` (can
//! a TCP connection be opened?), and the address userdata that prints
//! (`tostring`) as `ip:port`, as wrk's does (IPv6 without brackets: wrk's
//! getnameinfo output).

use mlua::{FromLua, IntoLua, Lua, MetaMethod, UserData, UserDataMethods, Value};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::Duration;

/// How long `wrk.connect` waits for the TCP handshake (wrk waits for the
/// kernel's own timeout; a script probing a dead address should not).
pub const CONNECT_PROBE_TIMEOUT: Duration = Duration::from_secs(2);

/// One address, as a Lua userdata.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LuaAddr(pub SocketAddr);

impl UserData for LuaAddr {
    fn add_methods<M: UserDataMethods<Self>>(methods: &mut M) {
        methods.add_meta_method(MetaMethod::ToString, |_, this, ()| {
            Ok(format!("{}:{}", this.0.ip(), this.0.port()))
        });
        methods.add_meta_method(MetaMethod::Eq, |_, this, other: LuaAddr| {
            Ok(this.0 == other.0)
        });
    }
}

impl FromLua for LuaAddr {
    fn from_lua(value: Value, _: &Lua) -> mlua::Result<LuaAddr> {
        match &value {
            Value::UserData(data) => Ok(*data.borrow::<LuaAddr>()?),
            other => Err(mlua::Error::runtime(format!(
                "`addr' expected, got {}",
                other.type_name()
            ))),
        }
    }
}

/// The port a service names: a number, or `http`/`https` (what wrk scripts
/// pass: `wrk.port or "http"`).
fn service_port(service: &str) -> Option<u16> {
    match service {
        "http" => Some(80),
        "https" => Some(443),
        number => number.parse().ok(),
    }
}

/// Every address of `host` for `service`, in the resolver's order. No
/// service (`wrk.lookup(host)`, or nil) is port 0, as getaddrinfo's NULL
/// service is in wrk: `127.0.0.1:0`.
pub(crate) fn lookup(host: &str, service: Option<&str>) -> Result<Vec<SocketAddr>, String> {
    let named = match service {
        Some(service) => format!("{host}:{service}"),
        None => host.to_string(),
    };
    let port = match service {
        Some(service) => service_port(service)
            .ok_or_else(|| format!("unable to resolve {named} unknown service"))?,
        None => 0,
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let addrs: Vec<SocketAddr> = (host, port)
        .to_socket_addrs()
        .map_err(|e| format!("unable to resolve {named} {e}"))?
        .collect();
    if addrs.is_empty() {
        return Err(format!("unable to resolve {named} no address"));
    }
    Ok(addrs)
}

/// `wrk.lookup` as scripts call it: a failure is raised as a plain Lua
/// string (`unable to resolve ...`, positioned at the caller like a C
/// library function's), which `pcall` catches as it is; an error returned
/// from a Rust function would reach the script as mlua's wrapped error,
/// `runtime error: ...` with a `[C]` traceback in its text.
const LOOKUP: &str = r#"
local resolve, error = ...
return function(host, service)
   local addrs, failure = resolve(host, service)
   if not addrs then error(failure, 2) end
   return addrs
end
"#;

/// Adds `wrk.lookup` and `wrk.connect` to the `wrk` table.
pub(crate) fn install(lua: &Lua, wrk: &mlua::Table) -> mlua::Result<()> {
    let resolve = lua.create_function(|lua, (host, service): (Value, Value)| {
        let text = |v: &Value| -> mlua::Result<Option<String>> {
            Ok(match lua.coerce_string(v.clone())? {
                Some(s) => Some(s.to_str()?.to_string()),
                None => None,
            })
        };
        let host = text(&host)?.unwrap_or_default();
        match lookup(&host, text(&service)?.as_deref()) {
            Ok(addrs) => {
                let table = lua.create_table_with_capacity(addrs.len(), 0)?;
                for addr in addrs {
                    table.push(LuaAddr(addr))?;
                }
                Ok((Value::Table(table), Value::Nil))
            }
            Err(failure) => Ok((Value::Nil, failure.into_lua(lua)?)),
        }
    })?;
    let error: mlua::Function = lua.globals().get("error")?;
    let lookup: mlua::Function = lua
        .load(LOOKUP)
        .set_name("=wrk.lookup")
        .call((resolve, error))?;
    wrk.set("lookup", lookup)?;
    wrk.set(
        "connect",
        lua.create_function(|_, addr: LuaAddr| {
            Ok(TcpStream::connect_timeout(&addr.0, CONNECT_PROBE_TIMEOUT).is_ok())
        })?,
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    #[test]
    fn lookup_and_connect_choose_a_live_address() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let lua = Lua::new();
        let wrk = lua.create_table().unwrap();
        install(&lua, &wrk).unwrap();
        lua.globals().set("wrk", wrk).unwrap();
        let (text, live): (String, bool) = lua
            .load(format!(
                r#"local addrs = wrk.lookup("127.0.0.1", "{port}")
                   return tostring(addrs[1]), wrk.connect(addrs[1])"#
            ))
            .eval()
            .unwrap();
        assert_eq!(text, format!("127.0.0.1:{port}"));
        assert!(live);
        drop(listener);
        let dead: bool = lua
            .load(format!(
                r#"return wrk.connect(wrk.lookup("127.0.0.1", "{port}")[1])"#
            ))
            .eval()
            .unwrap();
        assert!(!dead, "nothing listens any more");
    }

    #[test]
    fn services_and_ipv6_print_as_wrk() {
        assert_eq!(service_port("http"), Some(80));
        assert_eq!(service_port("8080"), Some(8080));
        assert_eq!(service_port("gopher"), None);
        assert_eq!(
            lookup("[::1]", Some("81")).unwrap()[0],
            "[::1]:81".parse().unwrap()
        );
        let lua = Lua::new();
        let addr = LuaAddr("[::1]:81".parse().unwrap());
        lua.globals().set("a", addr).unwrap();
        let text: String = lua.load("return tostring(a)").eval().unwrap();
        assert_eq!(text, "::1:81");
        let err = lookup("127.0.0.1", Some("gopher")).unwrap_err();
        assert_eq!(err, "unable to resolve 127.0.0.1:gopher unknown service");
    }
}
