//! Table-driven conflict matrix (filled in below).
