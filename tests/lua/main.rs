//! wrk's Lua scripts run as wrk runs them: its examples, its hooks, real wrk side by side, over
//! HTTP/1.1 and HTTP/2.
//!
//! One test binary per theme (fewer executables to link); each module is one
//! subject, named by what it tests.

mod h2_scripts;
mod wrk_lua;
mod wrk_lua_h2;
mod wrk_lua_h2_nginx;
mod wrk_lua_peer;
mod wrk_lua_pipeline_responses;
mod wrk_lua_refusals;
mod wrk_lua_scripts;
mod wrk_lua_stop;
mod wrk_lua_stuck;
mod wrk_lua_traceback;
