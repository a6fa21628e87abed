//! Reading record-linkage keys from files (filled in with the CLI).
