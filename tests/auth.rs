//! Who a mail is from: DKIM (RSA and ed25519) signed here with test keys
//! (`fixtures/auth/`), verified with the keys pinned (never real DNS: the
//! resolver asks a closed port on 127.0.0.1); a list that rewrites From
//! and seals with ARC, trusted and not; hostile signatures (and, through
//! the engine, a maintainer's command whose signature cannot be verified
//! refused with the reason in its reply and on its event); and the result
//! on each event (`case --json`, the timeline), verified only for fresh
//! mail the bot acts on, and kept when a message is threaded again.

use std::path::Path;
use std::time::{Duration, Instant};

use lkpbot::auth::Verifier;
use lkpbot::model::{Auth, AuthMethod};
use mail_auth::arc::ArcSealer;
use mail_auth::common::crypto::{RsaKey, Sha256};
use mail_auth::common::headers::HeaderWriter;
use mail_auth::dkim::DkimSigner;
use mail_auth::{AuthenticatedMessage, AuthenticationResults, MessageAuthenticator, Parameters};

use crate::thread::block_on;
use crate::util::dkim::{NO_DNS, SIGNED, ed25519, keys_file, rsa, sign};

/// A verifier with the test keys pinned and no DNS.
fn verifier(trusted_arc: &[&str]) -> Verifier {
    let v = Verifier::new(
        &[NO_DNS.parse().unwrap()],
        trusted_arc.iter().map(|s| s.to_string()).collect(),
        Duration::from_secs(3),
    )
    .unwrap();
    v.keys().pin_file(&keys_file()).unwrap();
    v
}

fn message(from: &str, body: &str) -> String {
    format!(
        "From: {from}\r\nTo: list@vger.kernel.org\r\nSubject: Re: [linus:master] regression\r\n\
         Date: Mon, 30 Nov 2026 10:00:00 +0000\r\nMessage-ID: <m1@example.org>\r\n\r\n{body}\r\n"
    )
}

fn verify(v: &Verifier, raw: &str) -> Auth {
    block_on(v.verify(raw.as_bytes()))
}

fn assert_not(a: &Auth, reason: &str) {
    assert!(!a.is_authenticated(), "{a:?}");
    assert_eq!(a.label(), "none");
    assert!(a.reason.contains(reason), "reason {:?} does not say {reason:?}", a.reason);
}

#[test]
fn rsa_and_ed25519_signatures_pass() {
    let v = verifier(&[]);
    let text = message("Alice <alice@example.org>", "#lkp resolve");
    let a = verify(&v, &sign(rsa(), "example.org", "rsa", SIGNED, &text));
    assert_eq!(a.method, AuthMethod::Dkim("example.org".into()), "{a:?}");
    assert_eq!(a.author.as_deref(), Some("alice@example.org"));
    assert_eq!(a.label(), "dkim:example.org");
    let a = verify(&v, &sign(ed25519(), "example.org", "ed", SIGNED, &text));
    assert_eq!(a.label(), "dkim:example.org", "{a:?}");
    // A subdomain's From aligns with its parent's signature (relaxed).
    let text = message("<alice@linux.example.org>", "#lkp resolve");
    assert_eq!(verify(&v, &sign(rsa(), "example.org", "rsa", SIGNED, &text)).label(), "dkim:example.org");
}

#[test]
fn what_does_not_pass_says_why() {
    let v = verifier(&[]);
    let text = message("Alice <alice@example.org>", "please retest");
    let signed = sign(rsa(), "example.org", "rsa", SIGNED, &text);
    // A body changed after signing: mail-auth says Neutral, not Fail.
    assert_not(&verify(&v, &signed.replace("please retest", "#lkp resolve")), "the body changed after signing");
    assert_not(&verify(&v, &text), "no DKIM signature");
    // Another domain's good signature says nothing about From.
    assert_not(&verify(&v, &sign(rsa(), "other.org", "rsa", SIGNED, &text)), "not of From's domain");
    // A changed From breaks the signature.
    let forged = signed.replace("From: Alice <alice@example.org>", "From: Boss <boss@example.org>");
    assert_not(&verify(&v, &forged), "does not verify");
    // A signature that does not sign From, or only part of the body.
    assert_not(&verify(&v, &sign(rsa(), "example.org", "rsa", &["To", "Subject"], &text)), "does not sign From");
    let partial = DkimSigner::from_key(rsa())
        .domain("example.org")
        .selector("rsa")
        .headers(SIGNED.iter().copied())
        .body_length(true)
        .sign(text.as_bytes())
        .unwrap()
        .to_header()
        + &text
        + "#lkp resolve\r\n";
    // mail-auth refuses an l= signature outright.
    assert_not(&verify(&v, &partial), "l=");
    // Two From addresses: whose would it be?
    let two = sign(rsa(), "example.org", "rsa", SIGNED, &text.replace("To: ", "From: boss@example.org\r\nTo: "));
    assert_not(&verify(&v, &two), "more than one From");
}

/// The key is not pinned and DNS does not answer: not authenticated,
/// saying the key could not be fetched, within the time limit.
#[test]
fn a_dns_failure_is_not_authenticated() {
    let v = verifier(&[]);
    let text = message("Alice <alice@example.net>", "#lkp resolve");
    let start = Instant::now();
    let a = verify(&v, &sign(rsa(), "example.net", "rsa", SIGNED, &text));
    assert_not(&a, "could not be fetched");
    assert!(a.reason.contains("rsa._domainkey.example.net"), "{a:?}");
    assert!(start.elapsed() < Duration::from_secs(10), "{:?}", start.elapsed());
}

/// Hostile signatures: malformed, a key record that does not parse, too
/// many, and one over a 4 MiB message: a reason each, no panic.
#[test]
fn hostile_signatures_get_a_reason() {
    let v = verifier(&[]);
    v.keys().pin("bad._domainkey.example.org", "v=DKIM1; k=rsa; p=!!not base64!!");
    let text = message("Alice <alice@example.org>", "#lkp resolve");
    let malformed = format!("DKIM-Signature: v=1; a=rsa-sha256; d=example.org; b=\r\n{text}");
    assert_not(&verify(&v, &malformed), "malformed");
    let bad_key = sign(rsa(), "example.org", "bad", SIGNED, &text);
    assert_not(&verify(&v, &bad_key), "bad._domainkey.example.org");
    let mut many = text.clone();
    for _ in 0..9 {
        many = sign(rsa(), "example.org", "rsa", SIGNED, &many);
    }
    assert_not(&verify(&v, &many), "more than 8");
    let big =
        message("Alice <alice@example.org>", &format!("#lkp resolve\r\n{}", "x".repeat(78) + "\r\n").repeat(52_000));
    assert!(big.len() > 4 << 20);
    let start = Instant::now();
    let signed = sign(rsa(), "example.org", "rsa", SIGNED, &big);
    assert_eq!(verify(&v, &signed).label(), "dkim:example.org");
    assert_not(&verify(&v, &signed.replacen("xxxx", "yyyy", 1)), "the body changed");
    println!("a 4 MiB message signed and verified twice in {:?}", start.elapsed());
    for junk in ["", "\r\n\r\n", "DKIM-Signature:\r\n\r\n", "From: a@b\r\nARC-Seal: i=1; garbage\r\n\r\nx"] {
        assert!(!verify(&v, junk).is_authenticated(), "{junk:?}");
    }
}

/// Alice's signed mail through a list that rewrites From to itself,
/// keeps her in X-Original-From, tags the subject, adds a footer, and
/// seals the result with ARC (recording that her signature passed).
fn through_the_list(sealer_key: RsaKey<Sha256>, sealer: &str) -> String {
    let original = sign(rsa(), "example.org", "rsa", SIGNED, &message("Alice <alice@example.org>", "#lkp resolve"));
    let v = MessageAuthenticator::new(
        mail_auth::hickory_resolver::config::ResolverConfig::from_name_servers(vec![]),
        Default::default(),
    )
    .unwrap();
    let pinned = verifier(&[]);
    let arrived = AuthenticatedMessage::parse(original.as_bytes()).unwrap();
    let dkim = block_on(v.verify_dkim(Parameters::new(&arrived).with_txt_cache(pinned.keys())));
    assert_eq!(dkim[0].result(), &mail_auth::DkimResult::Pass);
    let results = AuthenticationResults::new(sealer).with_dkim_results(&dkim, "example.org");
    let (head, body) = original.split_once("\r\n\r\n").unwrap();
    let head = head
        .replace(
            "From: Alice <alice@example.org>",
            "From: Alice via List <list@lists.example.net>\r\nX-Original-From: Alice <alice@example.org>",
        )
        .replace("Subject: ", "Subject: [list] ");
    let rewritten = format!("{head}\r\n\r\n{body}-- \r\nlist footer\r\n");
    let message = AuthenticatedMessage::parse(rewritten.as_bytes()).unwrap();
    let arc = block_on(v.verify_arc(Parameters::new(&message).with_txt_cache(pinned.keys())));
    let set = ArcSealer::from_key(sealer_key)
        .domain(sealer)
        .selector("arc")
        .headers(["From", "To", "Subject", "Date", "Message-ID", "X-Original-From", "DKIM-Signature"])
        .seal(&message, &results, &arc)
        .unwrap();
    format!("{}{}{}", set.to_header(), results.to_header(), rewritten)
}

#[test]
fn a_list_rewritten_from_is_believed_only_through_a_trusted_seal() {
    let mail = through_the_list(rsa(), "lists.example.net");
    let a = verify(&verifier(&["lists.example.net"]), &mail);
    assert_eq!(a.method, AuthMethod::Arc("lists.example.net".into()), "{a:?}");
    assert_eq!(a.author.as_deref(), Some("alice@example.org"));
    assert_eq!(a.label(), "arc:lists.example.net");
    assert_not(&verify(&verifier(&["subspace.kernel.org"]), &mail), "trusted_arc does not name");
    assert_not(&verify(&verifier(&[]), &mail), "trusted_arc names no sealer");
    // The seal no longer matches the message once it is changed.
    let changed = mail.replace("list footer", "#lkp invalid");
    assert_not(&verify(&verifier(&["lists.example.net"]), &changed), "ARC chain");
}

const NOW: i64 = 1_796_000_000;

fn clock() -> i64 {
    NOW
}

fn date(t: i64) -> String {
    jiff::Timestamp::from_second(t).unwrap().strftime("%a, %d %b %Y %H:%M:%S +0000").to_string()
}

/// The robot's report, and replies to it (signed by `key` when given),
/// dated before [`NOW`].
fn report() -> String {
    report_at(NOW)
}

/// The report dated two hours before `now`.
fn report_at(now: i64) -> String {
    let r = String::from_utf8(crate::thread::fixture_messages("reply-chain")[0].clone()).unwrap();
    let (head, body) = r.split_once("\n\n").unwrap();
    let head: String = head.lines().filter(|l| !l.starts_with("Date:")).map(|l| format!("{l}\r\n")).collect();
    format!("Date: {}\r\n{head}\r\n{}", date(now - 7200), body.replace('\n', "\r\n"))
}

fn report_id() -> String {
    let r = lkpbot::mail::parse(report().as_bytes());
    r.message_id.to_string()
}

fn command(id: &str, from: &str, body: &str, signed: bool) -> String {
    command_at(NOW, id, from, body, signed)
}

/// A command replying to the report, dated a minute before `now`.
fn command_at(now: i64, id: &str, from: &str, body: &str, signed: bool) -> String {
    let text = format!(
        "From: {from}\r\nTo: author@example.org\r\nSubject: Re: report\r\nDate: {}\r\nMessage-ID: <{id}>\r\n\
         In-Reply-To: <{r}>\r\nReferences: <{r}>\r\n\r\n{body}\r\n",
        date(now - 60),
        r = report_id()
    );
    if signed {
        sign(rsa(), "example.org", "rsa", &["From", "To", "Subject", "Date", "Message-ID", "In-Reply-To"], &text)
    } else {
        text
    }
}

fn mbox(messages: &[String]) -> Vec<u8> {
    let mut out = Vec::new();
    for m in messages {
        out.extend_from_slice(b"From x@y Thu Jan  1 00:00:00 1970\n");
        out.extend_from_slice(m.replace("\r\n", "\n").as_bytes());
        out.extend_from_slice(b"\n");
    }
    out
}

/// `ingest --act` with `[auth]` pinning the test keys: each event of the
/// case records how its sender was authenticated, in `case --json` and
/// on the timeline; the same archive without `--act` is history, and
/// records `none` everywhere.
#[test]
fn events_record_how_their_sender_was_authenticated() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("keys"), keys_file()).unwrap();
    // The binary reads the real clock: the mail is fresh now.
    let now =
        i64::try_from(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs()).unwrap();
    let mails = [
        report_at(now),
        command_at(now, "signed@example.org", "Alice <alice@example.org>", "#lkp status", true),
        command_at(now, "forged@example.org", "Alice <alice@example.org>", "#lkp status", false),
    ];
    std::fs::write(dir.path().join("list.mbox"), mbox(&mails)).unwrap();
    let cfg = dir.path().join("lkpbot.toml");
    std::fs::write(
        &cfg,
        format!(
            "[store]\npath = \"s.db\"\n[bot]\naddress = \"bot@example.org\"\nstale_days = 0\n[outbox]\ndir = \"dry\"\n\
             [auth]\nkeys_file = \"keys\"\nnameservers = [\"{NO_DNS}\"]\n"
        ),
    )
    .unwrap();
    let lkpbot = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_lkpbot"))
            .arg("--config")
            .arg(&cfg)
            .args(args)
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    let mbox_path = dir.path().join("list.mbox");
    lkpbot(&["ingest", "--act", mbox_path.to_str().unwrap()]);
    let case: serde_json::Value = serde_json::from_str(&lkpbot(&["case", "--json", "1"])).unwrap();
    let auth_of = |id: &str| {
        let e = case["events"].as_array().unwrap().iter().find(|e| e["message_id"] == id).unwrap().clone();
        (e["auth"].as_str().unwrap().to_string(), e["auth_reason"].as_str().unwrap_or("").to_string())
    };
    assert_eq!(auth_of("signed@example.org").0, "dkim:example.org", "{case}");
    let (label, reason) = auth_of("forged@example.org");
    assert_eq!((label.as_str(), reason.as_str()), ("none", "no DKIM signature"));
    // The report is not a command: not verified.
    assert_eq!(auth_of(&report_id()).0, "none");
    let timeline = lkpbot(&["case", "1"]);
    assert!(timeline.contains("alice@example.org (dkim:example.org)"), "{timeline}");
    assert!(timeline.contains("alice@example.org (none)"), "{timeline}");

    // History: the same mail imported without --act is not verified.
    let quiet = dir.path().join("history.db");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_lkpbot"))
        .args([
            "--config",
            cfg.to_str().unwrap(),
            "--db",
            quiet.to_str().unwrap(),
            "ingest",
            mbox_path.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_lkpbot"))
        .args(["--config", cfg.to_str().unwrap(), "--db", quiet.to_str().unwrap(), "case", "--json", "1"])
        .output()
        .unwrap();
    let case: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(case["events"].as_array().unwrap().iter().all(|e| e["auth"] == "none"), "{case}");
}

/// A signed command that arrives before its report waits; when the
/// report comes (to an engine whose verifier has no keys at all) the
/// command is threaded again, and answered, with the result stored when
/// it arrived.
#[test]
fn the_result_is_kept_when_a_message_is_threaded_again() {
    let cfg = lkpbot::config::Config::parse("[bot]\naddress = \"bot@example.org\"\n", Path::new("t.toml")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let with_keys = std::sync::Arc::new(verifier(&[]));
    let no_keys =
        std::sync::Arc::new(Verifier::new(&[NO_DNS.parse().unwrap()], vec![], Duration::from_secs(2)).unwrap());
    let log = crate::util::Log::default();
    let subscriber = tracing_subscriber::fmt().with_writer(log.clone()).with_ansi(false).finish();
    tracing::subscriber::with_default(subscriber, || {
        block_on(async {
            let store = lkpbot::store::Store::open(&dir.path().join("s.db")).await.unwrap();
            let mut settings = lkpbot::cli::acting_settings(&cfg, clock);
            settings.acting.as_mut().unwrap().auth = Some(with_keys);
            let mut engine = lkpbot::engine::Engine::new(store, settings);
            let cmd = command("early@example.org", "Alice <alice@example.org>", "#lkp status", true);
            engine.push(lkpbot::engine::Envelope::new(cmd.into_bytes(), NOW)).await.unwrap();
            engine.finish().await.unwrap();
            let store = engine.into_store();
            let mut settings = lkpbot::cli::acting_settings(&cfg, clock);
            settings.acting.as_mut().unwrap().auth = Some(no_keys);
            let mut engine = lkpbot::engine::Engine::new(store, settings);
            engine.push(lkpbot::engine::Envelope::new(report().into_bytes(), NOW)).await.unwrap();
            engine.finish().await.unwrap();
            let cases = engine.store().cases(lkpbot::case::CaseFilter::All, true).await.unwrap();
            assert_eq!(cases.len(), 1);
            let m = cases[0].messages.iter().find(|m| m.message_id.as_str() == "early@example.org").unwrap();
            assert_eq!(m.auth.label(), "dkim:example.org", "{m:?}");
        })
    });
    let text = log.text();
    let answered = text.lines().find(|l| l.contains("reply queued")).unwrap_or_else(|| panic!("no reply: {text}"));
    assert!(answered.contains("auth=dkim:example.org"), "{answered}");
}

/// Maintainers' `#lkp resolve`, signed, that cannot be verified: the key
/// cannot be fetched (DNS does not answer), the signature is malformed,
/// the key record does not parse. Each is refused, its reply saying why
/// (the key could not be fetched, ...) and what to do, each message
/// keeps the reason, and the case stays open; a good signature still
/// passes in the same batch.
#[test]
fn unverifiable_signatures_are_refused_saying_why() {
    let cfg = lkpbot::config::Config::parse(
        "[bot]\naddress = \"bot@example.org\"\nmaintainers = [\"boss@example.net\", \"boss@example.org\"]\n",
        Path::new("t.toml"),
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let v = verifier(&[]);
    v.keys().pin("bad._domainkey.example.org", "v=DKIM1; k=rsa; p=!!not base64!!");
    let headers = ["From", "To", "Subject", "Date", "Message-ID", "In-Reply-To"];
    let resolve = |id: &str, from: &str| command(id, from, "#lkp resolve", false);
    let no_dns = sign(rsa(), "example.net", "rsa", &headers, &resolve("dns@example.net", "Boss <boss@example.net>"));
    let malformed = format!(
        "DKIM-Signature: v=1; a=rsa-sha256; d=example.org; s=rsa; b=\r\n{}",
        resolve("malformed@example.org", "Boss <boss@example.org>")
    );
    let bad_key =
        sign(rsa(), "example.org", "bad", &headers, &resolve("badkey@example.org", "Boss <boss@example.org>"));
    let good = command("good@example.org", "Boss <boss@example.org>", "#lkp status", true);
    let (outbox, case) = block_on(async {
        let store = lkpbot::store::Store::open(&dir.path().join("s.db")).await.unwrap();
        let mut settings = lkpbot::cli::acting_settings(&cfg, clock);
        settings.acting.as_mut().unwrap().auth = Some(std::sync::Arc::new(v));
        let mut engine = lkpbot::engine::Engine::new(store, settings);
        for m in [report(), no_dns, malformed, bad_key, good] {
            engine.push(lkpbot::engine::Envelope::new(m.into_bytes(), NOW)).await.unwrap();
        }
        engine.finish().await.unwrap();
        let outbox = engine.store().due_mail(i64::MAX, 100).await.unwrap();
        let cases = engine.store().cases(lkpbot::case::CaseFilter::All, true).await.unwrap();
        (outbox, cases.into_iter().next().unwrap())
    });
    let reply_to = |id: &str| {
        let m = outbox
            .iter()
            .map(|m| lkpbot::mail::parse(&m.raw))
            .find(|m| m.in_reply_to.as_ref().is_some_and(|r| r.as_str() == id))
            .unwrap_or_else(|| panic!("no reply to {id}"));
        m.body.split_whitespace().collect::<Vec<_>>().join(" ")
    };
    for (id, why) in [
        ("dns@example.net", "the key rsa._domainkey.example.net could not be fetched"),
        ("malformed@example.org", "malformed"),
        ("badkey@example.org", "bad._domainkey.example.org"),
    ] {
        let text = reply_to(id);
        assert!(text.contains("Not done: I cannot tell that this mail is from its sender ("), "{id}: {text}");
        assert!(text.contains(why) && text.contains("DKIM signature passes"), "{id}: {text}");
        let m = case.messages.iter().find(|m| m.message_id.as_str() == id).unwrap();
        assert_eq!(m.auth.label(), "none");
        assert!(m.auth.reason.contains(why), "{id}: {:?}", m.auth);
        let e = case.events.iter().find(|e| e.message_id.as_ref().is_some_and(|m| m.as_str() == id)).unwrap();
        assert!(e.note.as_deref().unwrap_or("").contains(why), "{id}: {e:?}");
    }
    assert!(reply_to("good@example.org").contains("Case 1 is discussed"), "{}", reply_to("good@example.org"));
    assert_eq!(case.view.state, lkpbot::case::CaseState::Discussed, "{:?}", case.view.state);
}

/// Fresh lifecycle mail moves a case only from a sender who is believed:
/// a maintainer's "Applied to ..., thanks!" on the fix's cover letter,
/// forged (no signature), is kept as discussion saying why and the case
/// stays at fix-posted; the same notice signed moves it to fix-applied.
#[test]
fn a_forged_applied_notice_moves_no_case() {
    let cfg = lkpbot::config::Config::parse("[bot]\naddress = \"bot@example.org\"\n", Path::new("t.toml")).unwrap();
    // The report, the fix series (cover letter, two patches), a review and
    // its answer, then the maintainer's applied notice: all of this hour.
    let thread: Vec<String> = crate::thread::fixture_messages("whole-lifecycle")[..7]
        .iter()
        .enumerate()
        .map(|(i, raw)| {
            let text = String::from_utf8(raw.clone()).unwrap();
            let (head, body) = text.split_once("\n\n").unwrap();
            let head: String = head.lines().filter(|l| !l.starts_with("Date:")).map(|l| format!("{l}\r\n")).collect();
            let at = NOW - 3600 + 60 * i64::try_from(i).unwrap();
            format!("Date: {}\r\n{head}\r\n{}", date(at), body.replace('\n', "\r\n"))
        })
        .collect();
    let headers = ["From", "To", "Subject", "Date", "Message-ID", "In-Reply-To"];
    let applied_id = "20260602180000.eeee0015@example.org";
    assert!(thread[6].contains(applied_id), "the fixture's seventh mail is the applied notice");
    let state_after = |notice: String| {
        let dir = tempfile::tempdir().unwrap();
        let mails: Vec<String> = thread[..6].iter().cloned().chain([notice]).collect();
        block_on(async {
            let store = lkpbot::store::Store::open(&dir.path().join("s.db")).await.unwrap();
            let mut settings = lkpbot::cli::acting_settings(&cfg, clock);
            settings.acting.as_mut().unwrap().auth = Some(std::sync::Arc::new(verifier(&[])));
            let mut engine = lkpbot::engine::Engine::new(store, settings);
            for m in mails {
                engine.push(lkpbot::engine::Envelope::new(m.into_bytes(), NOW)).await.unwrap();
            }
            engine.finish().await.unwrap();
            let cases = engine.store().cases(lkpbot::case::CaseFilter::All, true).await.unwrap();
            let case = cases.into_iter().next().expect("the report's case");
            let note = case
                .events
                .iter()
                .find(|e| e.message_id.as_ref().is_some_and(|m| m.as_str() == applied_id))
                .map(|e| (e.kind, e.note.clone().unwrap_or_default()));
            (case.view.state, note)
        })
    };
    let (forged_state, forged_event) = state_after(thread[6].clone());
    assert_eq!(forged_state, lkpbot::case::CaseState::FixPosted, "{forged_event:?}");
    let (kind, note) = forged_event.expect("the forged notice is on the case");
    assert_eq!(kind, lkpbot::case::EventKind::Discussion);
    assert!(note.starts_with("fix-applied not taken") && note.contains("no DKIM signature"), "{note}");
    let (signed_state, signed_event) = state_after(sign(rsa(), "example.org", "rsa", &headers, &thread[6]));
    assert_eq!(signed_state, lkpbot::case::CaseState::FixApplied, "{signed_event:?}");
}
