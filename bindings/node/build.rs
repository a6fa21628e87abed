//! Links the addon as Node loads it (napi-build's platform flags).
fn main() {
    napi_build::setup();
}
