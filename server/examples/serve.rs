//! A headless Berth server without the window's crates, for measuring the server alone
//! (`scripts/bench --berth target/release/examples/serve`): `serve server` does what
//! `berth server` does, minus the logging setup, and builds in a fraction of the time.

use berth_server::{Server, ServerConfig};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // `scripts/bench` passes the `server` verb; anything else is a mistake.
    if let Some(arg) = std::env::args().nth(1).filter(|a| a != "server") {
        return Err(format!("usage: serve [server] (got {arg:?})").into());
    }
    let server = Server::bind(&ServerConfig::from_env())?;
    server.run_until_signal()?;
    Ok(())
}
