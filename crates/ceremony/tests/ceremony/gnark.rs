//! Interoperability with gnark v0.15's `mpcsetup` through the harness in `interop/gnark/`
//! (built here with `go build`; Go and its module proxy are installed by `scripts/setup --test`).
//! A chain of contributions from both sides, mixed, each side verifying the other's files.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use lockstep_ceremony::Limits;
use lockstep_ceremony::phase1::{self, Phase1, Secrets, Srs};
use lockstep_shard::{Control, Pool};

pub(crate) fn harness() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../interop/gnark");
        let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("gnark-harness");
        let status = Command::new("go")
            .arg("build")
            .arg("-o")
            .arg(&out)
            .arg(".")
            .current_dir(&dir)
            .status()
            .expect("go is installed (scripts/setup --test)");
        assert!(status.success(), "building the gnark harness failed");
        out
    })
}

pub(crate) fn gnark(args: &[&str]) -> String {
    let output = Command::new(harness())
        .args(args)
        .output()
        .expect("harness runs");
    assert!(
        output.status.success(),
        "gnark-harness {args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

pub(crate) fn gnark_fails(args: &[&str]) -> String {
    let output = Command::new(harness())
        .args(args)
        .output()
        .expect("harness runs");
    assert!(
        !output.status.success(),
        "gnark-harness {args:?} accepted a bad chain"
    );
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn read(pool: &Pool, path: &Path) -> (Phase1, [u8; 32]) {
    let file = std::io::BufReader::new(std::fs::File::open(path).unwrap());
    Phase1::read(pool, &Control::new(), file, &Limits::default()).unwrap()
}

fn write(pool: &Pool, object: &Phase1, path: &Path) -> [u8; 32] {
    let file = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    object.write(pool, &Control::new(), file).unwrap()
}

pub(crate) fn s(path: &Path) -> &str {
    path.to_str().unwrap()
}

#[test]
fn initial_objects_are_identical() {
    let dir = tempfile::tempdir().unwrap();
    let pool = Pool::new(2).unwrap();
    for power in [1, 4] {
        let theirs = dir.path().join(format!("gnark-{power}"));
        gnark(&["new", "-power", &power.to_string(), "-out", s(&theirs)]);
        let ours = dir.path().join(format!("ours-{power}"));
        write(&pool, &Phase1::initial(power).unwrap(), &ours);
        assert_eq!(
            std::fs::read(&theirs).unwrap(),
            std::fs::read(&ours).unwrap(),
            "power {power}"
        );
        let n = 1u64 << power;
        assert_eq!(
            std::fs::metadata(&ours).unwrap().len(),
            phase1::phase1_len(n, 0)
        );
    }
}

#[test]
fn a_mixed_chain_verifies_on_both_sides_and_seals_identically() {
    let dir = tempfile::tempdir().unwrap();
    let pool = Pool::new(3).unwrap();
    let control = Control::new();
    let power = 5u32;
    let p = power.to_string();
    let path = |name: &str| dir.path().join(name);

    write(&pool, &Phase1::initial(power).unwrap(), &path("c0"));
    // gnark, ours, gnark, ours: four contributions, each side building on the other's file.
    gnark(&["contribute", "-in", s(&path("c0")), "-out", s(&path("c1"))]);
    let (c1, h1) = read(&pool, &path("c1"));
    let c2 = phase1::contribute(&pool, &control, c1, &h1, &Secrets::random(b"ours")).unwrap();
    let h2 = write(&pool, &c2, &path("c2"));
    let printed = gnark(&["contribute", "-in", s(&path("c2")), "-out", s(&path("c3"))]);
    let (c3, h3) = read(&pool, &path("c3"));
    assert_eq!(
        printed.trim(),
        hex::encode(h3),
        "gnark and we hash its file alike"
    );
    let c4 = phase1::contribute(&pool, &control, c3, &h3, &Secrets::random(b"")).unwrap();
    let h4 = write(&pool, &c4, &path("c4"));

    // gnark verifies the whole chain (ours and its own contributions).
    let chain: Vec<PathBuf> = (1..=4).map(|i| path(&format!("c{i}"))).collect();
    let mut args = vec!["verify", "-power", &p];
    args.extend(chain.iter().map(|c| s(c)));
    assert_eq!(gnark(&args).trim(), "ok");

    // We verify every link, gnark's included.
    let (mut previous, mut previous_hash) = read(&pool, &path("c0"));
    assert!(previous.is_initial());
    for link in &chain {
        let (next, hash) = read(&pool, link);
        phase1::verify_contribution(&pool, &control, &previous, &previous_hash, &next)
            .unwrap_or_else(|e| panic!("{}: {e}", link.display()));
        (previous, previous_hash) = (next, hash);
    }
    assert_eq!(previous_hash, h4);
    let _ = h2;

    // The seal: ours equals gnark's, and gnark accepts ours as the seal of the chain.
    let beacon = hex::decode("00112233445566778899aabbccddeeff").unwrap();
    let sealed = phase1::seal(&pool, &control, previous, &h4, &beacon).unwrap();
    let file = std::io::BufWriter::new(std::fs::File::create(path("sealed")).unwrap());
    sealed.write(&pool, &control, file).unwrap();
    gnark(&[
        "seal",
        "-in",
        s(&path("c4")),
        "-beacon",
        &hex::encode(&beacon),
        "-out",
        s(&path("gnark-sealed")),
    ]);
    assert_eq!(
        std::fs::read(path("sealed")).unwrap(),
        std::fs::read(path("gnark-sealed")).unwrap()
    );
    let mut args = vec!["verify", "-power", &p];
    let beacon_hex = hex::encode(&beacon);
    let sealed_path = path("sealed");
    args.extend(["-beacon", &beacon_hex, "-sealed", s(&sealed_path)]);
    args.extend(chain.iter().map(|c| s(c)));
    assert_eq!(gnark(&args).trim(), "ok");
    let (read_back, _) = Srs::read(
        &pool,
        &control,
        std::fs::File::open(path("sealed")).unwrap(),
        &Limits::default(),
    )
    .unwrap();
    assert_eq!(read_back, sealed);
}

#[test]
fn gnark_refuses_a_contribution_that_skips_a_step() {
    let dir = tempfile::tempdir().unwrap();
    let pool = Pool::new(2).unwrap();
    let control = Control::new();
    let path = |name: &str| dir.path().join(name);
    let c0 = Phase1::initial(3).unwrap();
    let h0 = write(&pool, &c0, &path("c0"));
    let c1 = phase1::contribute(&pool, &control, c0.clone(), &h0, &Secrets::random(b"")).unwrap();
    write(&pool, &c1, &path("c1"));
    // Made on c0 again, presented after c1.
    let skip = phase1::contribute(&pool, &control, c0, &h0, &Secrets::random(b"")).unwrap();
    write(&pool, &skip, &path("skip"));
    let message = gnark_fails(&["verify", "-power", "3", s(&path("c1")), s(&path("skip"))]);
    assert!(message.contains("challenge"), "{message}");
}

#[test]
fn the_initial_phase2_object_is_gnark_s() {
    let dir = tempfile::tempdir().unwrap();
    let pool = Pool::new(2).unwrap();
    for power in [6, 7] {
        let srs = crate::phase2::srs(power);
        let srs_path = dir.path().join(format!("srs-{power}"));
        let file = std::io::BufWriter::new(std::fs::File::create(&srs_path).unwrap());
        srs.write(&pool, &Control::new(), file).unwrap();
        for name in ["chain-60.r1cs", "chain-60-commit.r1cs"] {
            let r1cs = crate::phase2::circuit(name);
            let theirs = dir.path().join(format!("{name}-{power}.ph2"));
            let r1cs_path = crate::phase2::fixture_path(name);
            gnark(&[
                "p2init",
                "-r1cs",
                s(&r1cs_path),
                "-srs",
                s(&srs_path),
                "-out",
                s(&theirs),
            ]);
            // A phase 1 larger than the circuit needs is cut to its domain, as gnark's users do.
            let cut = srs.clone().truncated(r1cs.domain_power());
            let (ours, _) =
                lockstep_ceremony::phase2::initialize(&pool, &Control::new(), &r1cs, &cut).unwrap();
            assert!(
                crate::phase2::bytes(&ours) == std::fs::read(&theirs).unwrap(),
                "{name} on a 2^{power} phase 1: our initial phase 2 object differs from gnark's"
            );
        }
    }
}

fn read_phase2(pool: &Pool, path: &Path) -> (lockstep_ceremony::phase2::Phase2, [u8; 32]) {
    let file = std::io::BufReader::new(std::fs::File::open(path).unwrap());
    lockstep_ceremony::phase2::Phase2::read(pool, &Control::new(), file, &Limits::default())
        .unwrap()
}

fn write_phase2(pool: &Pool, object: &lockstep_ceremony::phase2::Phase2, path: &Path) -> [u8; 32] {
    let file = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    object.write(pool, &Control::new(), file).unwrap()
}

#[test]
fn a_mixed_phase2_chain_verifies_on_both_sides_and_seals_to_gnark_s_keys_that_prove() {
    use lockstep_ceremony::phase2::{self, Secrets};
    let dir = tempfile::tempdir().unwrap();
    let pool = Pool::new(2).unwrap();
    let control = Control::new();
    let srs = crate::phase2::srs(6);
    let srs_path = dir.path().join("srs");
    srs.write(
        &pool,
        &control,
        std::io::BufWriter::new(std::fs::File::create(&srs_path).unwrap()),
    )
    .unwrap();
    let beacon = "0badbeac0ffee0";
    for name in ["chain-60.r1cs", "chain-60-commit.r1cs"] {
        let r1cs_path = crate::phase2::fixture_path(name);
        let r1cs = crate::phase2::circuit(name);
        let (initial, evaluations) = phase2::initialize(&pool, &control, &r1cs, &srs).unwrap();
        let path = |i: usize| dir.path().join(format!("{name}.{i}.ph2"));
        let mut hashes = vec![write_phase2(&pool, &initial, &path(0))];
        let mut objects = vec![initial];
        // gnark, ours, gnark, ours.
        for i in 1..=4 {
            if i % 2 == 1 {
                gnark(&["p2contribute", "-in", s(&path(i - 1)), "-out", s(&path(i))]);
                let (object, hash) = read_phase2(&pool, &path(i));
                objects.push(object);
                hashes.push(hash);
            } else {
                let previous = objects[i - 1].clone();
                let secrets = Secrets::random(b"test", previous.sigma_g2.len());
                let next = phase2::contribute(&pool, &control, previous, &hashes[i - 1], &secrets)
                    .unwrap();
                hashes.push(write_phase2(&pool, &next, &path(i)));
                objects.push(next);
            }
            phase2::verify_contribution(
                &pool,
                &control,
                &objects[i - 1],
                &hashes[i - 1],
                &objects[i],
            )
            .unwrap_or_else(|e| panic!("{name}: we refuse contribution {i}: {e}"));
        }
        let (theirs_pk, theirs_vk) = (dir.path().join("gnark.pk"), dir.path().join("gnark.vk"));
        let chain: Vec<String> = (1..=4).map(|i| s(&path(i)).to_owned()).collect();
        let mut args = vec![
            "p2verify",
            "-r1cs",
            s(&r1cs_path),
            "-srs",
            s(&srs_path),
            "-beacon",
            beacon,
            "-pk",
            s(&theirs_pk),
            "-vk",
            s(&theirs_vk),
        ];
        args.extend(chain.iter().map(String::as_str));
        gnark(&args);
        let last = objects.pop().unwrap();
        let origin = phase2::Origin {
            initial: &objects[0],
            srs: &srs,
            evaluations: &evaluations,
        };
        let (pk, vk) = phase2::seal(
            &pool,
            &control,
            origin,
            last,
            &hashes[4],
            &hex::decode(beacon).unwrap(),
        )
        .unwrap();
        let (our_pk, our_vk) = (dir.path().join("ours.pk"), dir.path().join("ours.vk"));
        pk.write(
            &pool,
            &control,
            std::io::BufWriter::new(std::fs::File::create(&our_pk).unwrap()),
        )
        .unwrap();
        vk.write(
            &pool,
            &control,
            std::io::BufWriter::new(std::fs::File::create(&our_vk).unwrap()),
        )
        .unwrap();
        assert!(
            std::fs::read(&our_pk).unwrap() == std::fs::read(&theirs_pk).unwrap(),
            "{name}: our proving key differs from gnark's"
        );
        assert!(
            std::fs::read(&our_vk).unwrap() == std::fs::read(&theirs_vk).unwrap(),
            "{name}: our verifying key differs from gnark's"
        );
        // gnark proves with our key; gnark verifies with ours; a wrong public input is refused.
        let (proof, public) = (dir.path().join("proof"), dir.path().join("public"));
        let (_, other) = (dir.path().join("proof8"), dir.path().join("public8"));
        gnark(&[
            "prove",
            "-r1cs",
            s(&r1cs_path),
            "-constraints",
            "60",
            "-pk",
            s(&our_pk),
            "-x",
            "7",
            "-out",
            s(&proof),
            "-public",
            s(&public),
        ]);
        gnark(&[
            "gverify",
            "-vk",
            s(&our_vk),
            "-proof",
            s(&proof),
            "-public",
            s(&public),
        ]);
        gnark(&[
            "prove",
            "-r1cs",
            s(&r1cs_path),
            "-constraints",
            "60",
            "-pk",
            s(&our_pk),
            "-x",
            "8",
            "-out",
            s(&dir.path().join("proof8")),
            "-public",
            s(&other),
        ]);
        gnark_fails(&[
            "gverify",
            "-vk",
            s(&our_vk),
            "-proof",
            s(&proof),
            "-public",
            s(&other),
        ]);
    }
}

#[test]
fn an_r1cs_of_another_curve_is_named_as_such() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bn254.r1cs");
    gnark(&[
        "r1cs",
        "-constraints",
        "20",
        "-curve",
        "bn254",
        "-out",
        s(&path),
    ]);
    let bytes = std::fs::read(&path).unwrap();
    let error = lockstep_ceremony::r1cs::R1cs::read(&bytes[..]).unwrap_err();
    assert_eq!(
        error.to_string(),
        "R1CS over BN254 (scalar field 0x30644e72e131a029b85045b68181585d2833e84879b9709143e1f593f0000001), not BLS12-381"
    );
}
