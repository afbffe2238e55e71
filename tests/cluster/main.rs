//! More than one machine: agents in network namespaces merged exactly, and the Kubernetes manifests
//! against the real schema.
//!
//! One test binary per theme (fewer executables to link); each module is one
//! subject, named by what it tests.

mod distributed;
mod k8s_manifest;
