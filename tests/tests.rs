//! The single integration-test binary. Each module tests one feature
//! through one helper; see `util` for the fixture and golden-file helpers.

mod util;

/// Every mail the bot writes, whole, against golden files.
mod answers;

/// Who a mail is from: DKIM and ARC, signed with test keys, never real DNS.
mod auth;
/// Reply budgets, recipients and the loop breaker: what the bot will not
/// answer, and how it says so.
mod budgets;
/// Golden tests: every fixture under `fixtures/classify/` against its
/// expected JSON, with LF and CRLF line ends.
mod classify;
/// The `lkpbot` binary: arguments, exit codes, output.
mod cli;
/// The real archive `../shared/corpus/lkp-threads.mbox`.
mod corpus;
/// `lkpbot run` against a private Dovecot, and following local sources.
mod daemon;
/// The weekly digest: golden texts, once per week and recipient, the corpus.
mod digest;
/// Hostile input: messages over the size cap, huge lines, empty files,
/// unreadable Maildir entries, 100,000 References.
mod hostile;
/// Message-IDs from raw header bytes: every fixture under `fixtures/ids/`
/// against its expected JSON, with LF and CRLF line ends.
mod ids;
/// `ingest` over the real archive, and the `ingest`/`cases`/`case` commands.
mod ingest;
/// The hand-labelled replies of `fixtures/labels/`: precision and recall of
/// the recognisers per kind.
mod labels;
/// The corpus's lifecycle mail: every labelled report reaches the state
/// of its strongest signal.
mod lifecycle;
/// Any arrival order, any split into imports: the same cases.
mod order;
/// Each mail sent once: two runs on one store, a killed sender, a server back.
mod outbox;
/// Several processes and store handles on one store file.
mod processes;
/// Random and mutated mail must never panic the parser or the classifier.
mod props;
/// public-inbox v2 inboxes followed by `run` and imported by `ingest`.
mod public_inbox;
/// The bot answering through a private Postfix into a private Dovecot.
mod replies;
/// The five seed mails the product started from.
mod seeds;
/// The store on a real SQLite file: migrations, uniqueness, kept bytes.
mod store;
/// Thread scenarios: small mboxes of report threads through the engine.
mod thread;
/// Architecture invariants (ARCHITECTURE.md, "Invariants").
mod tidy;
/// `[[trees]]`: git repositories built here, followed by `run --once`.
mod trees;
/// The dashboard and JSON API: in process, over HTTP, in a browser.
mod web;
