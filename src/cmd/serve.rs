//! `stampede serve`: placeholder until the target-server work lands.
