//! A [`Mail`] -> exactly one [`Kind`] with the facts it states.
//!
//! The ladder, strongest evidence first (see [`classify`]): what the robot
//! sends (build summary, perf/functional report, build report, generated
//! fix patch, retest), then an LKP reply with a fix column, then what
//! humans send (commands, test requests, fix patches, discussion), and
//! everything else is unrelated. A message that quotes a report keeps its
//! own kind and carries the quoted report's facts in
//! [`Classified::report`].
//!
//! Classification never fails: unrecognised input is `Unrelated`, and what
//! could not be read is listed in `problems`. Pure: no I/O, no clock.

pub mod build_error;
mod fields;
pub mod fix;
pub mod json;
pub mod lifecycle;
pub mod num;
pub mod outcome;
pub mod report;
pub mod request;
pub mod retest;
pub mod subject;
pub mod table;
pub mod text;

use serde::Serialize;
use std::sync::LazyLock;

use std::borrow::Cow;

use crate::commands::{self, CommandLine};
use crate::mail::{Mail, quote};
use crate::text::{Needles, contains_ci, strip_signature};
use build_error::{BuildFacts, BuildSummary};
use fix::FixPosted;
use outcome::Outcome;
use report::{CommitRef, Headline, ReportFacts, Template};
use request::TestRequest;
use retest::Retest;
use subject::SubjectFacts;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    PerfRegression,
    PerfImprovement,
    Functional,
    Build,
    BuildSummary,
    RetestResult,
    TestRequest,
    Command,
    FixPosted,
    Discussion,
    Unrelated,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::PerfRegression => "perf-regression",
            Kind::PerfImprovement => "perf-improvement",
            Kind::Functional => "functional",
            Kind::Build => "build",
            Kind::BuildSummary => "build-summary",
            Kind::RetestResult => "retest-result",
            Kind::TestRequest => "test-request",
            Kind::Command => "command",
            Kind::FixPosted => "fix-posted",
            Kind::Discussion => "discussion",
            Kind::Unrelated => "unrelated",
        }
    }

    pub const ALL: [Kind; 11] = [
        Kind::PerfRegression,
        Kind::PerfImprovement,
        Kind::Functional,
        Kind::Build,
        Kind::BuildSummary,
        Kind::RetestResult,
        Kind::TestRequest,
        Kind::Command,
        Kind::FixPosted,
        Kind::Discussion,
        Kind::Unrelated,
    ];

    /// A report the robot sends on its own: it opens a case (or, for a
    /// build summary, is recorded).
    pub fn is_report(self) -> bool {
        matches!(
            self,
            Kind::PerfRegression | Kind::PerfImprovement | Kind::Functional | Kind::Build | Kind::BuildSummary
        )
    }
}

/// Who sent a message, as far as classification cares.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Sender {
    /// The kernel test robot (any spelling of its name, or lkp@intel.com).
    Robot,
    /// A member of the LKP team writing as themselves.
    LkpTeam,
    /// lkpbot itself.
    Bot,
    Human,
    /// A text dump with no address.
    Unknown,
}

/// Who is who. The defaults know the robot and the LKP team members seen
/// on the lists; deployments extend them in the config file.
#[derive(Clone, Debug)]
pub struct ClassifyConfig {
    pub robot_addresses: Vec<String>,
    pub lkp_team: Vec<String>,
    /// Mail from these domains with a retest table counts as LKP's.
    pub lkp_domains: Vec<String>,
    pub bot_addresses: Vec<String>,
}

impl Default for ClassifyConfig {
    fn default() -> Self {
        let s = |v: &[&str]| v.iter().map(|x| (*x).to_string()).collect();
        ClassifyConfig {
            robot_addresses: s(&["lkp@intel.com", "fengguang.wu@intel.com"]),
            lkp_team: s(&[
                "oliver.sang@intel.com",
                "yujie.liu@intel.com",
                "beibei.si@intel.com",
                "rong.a.chen@intel.com",
                "xiaolong.ye@intel.com",
                "philip.li@intel.com",
                "lkp@lists.01.org",
                "yidingx.liu@intel.com",
                "fengwei.yin@intel.com",
                "ying.huang@intel.com",
                "feng.tang@intel.com",
                "aaron.lu@intel.com",
                "lizhijian@fujitsu.com",
                "zhengjun.xing@linux.intel.com",
                "carel.si@intel.com",
            ]),
            lkp_domains: s(&["intel.com", "linux.intel.com"]),
            bot_addresses: Vec::new(),
        }
    }
}

impl ClassifyConfig {
    pub fn sender(&self, mail: &Mail) -> Sender {
        let email = mail.from_email();
        if let Some(e) = &email {
            if self.bot_addresses.iter().any(|b| b.eq_ignore_ascii_case(e)) {
                return Sender::Bot;
            }
            if self.robot_addresses.iter().any(|b| b.eq_ignore_ascii_case(e)) {
                return Sender::Robot;
            }
        }
        if mail.from_name().is_some_and(is_robot_name) {
            return Sender::Robot;
        }
        match email {
            Some(e) if self.lkp_team.iter().any(|b| b.eq_ignore_ascii_case(&e)) => Sender::LkpTeam,
            Some(_) => Sender::Human,
            None if mail.from.is_some() => Sender::Human,
            None => Sender::Unknown,
        }
    }

    fn in_lkp_domain(&self, mail: &Mail) -> bool {
        mail.from_email()
            .and_then(|e| e.rsplit_once('@').map(|(_, d)| d.to_string()))
            .is_some_and(|d| self.lkp_domains.iter().any(|x| x.eq_ignore_ascii_case(&d)))
    }
}

/// "kernel test robot", "kbuild test robot", and the typos seen in real
/// archives ("kernel test rboot", "kernel test robt").
pub fn is_robot_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    let words: Vec<&str> = lower.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).collect();
    let [first, "test", last] = words.as_slice() else { return false };
    let first_ok = ["kernel", "kbuild"].iter().any(|w| crate::text::edit_distance(first, w) <= 1);
    first_ok && crate::text::edit_distance(last, "robot") <= 2
}

/// The result of classifying one message.
#[derive(Clone, Debug)]
pub struct Classified {
    pub kind: Kind,
    pub sender: Sender,
    /// The message's own report (report kinds only).
    pub own_report: Option<Box<ReportFacts>>,
    pub build: Option<Box<BuildFacts>>,
    pub build_summary: Option<Box<BuildSummary>>,
    /// The report this message quotes or answers (other kinds).
    pub report: Option<Box<ReportFacts>>,
    pub retests: Vec<Retest>,
    /// For a retest result: what its prose says, tables aside.
    pub prose_verdict: Option<crate::model::Verdict>,
    /// For a retest result: what it found (a fix judged, the regression
    /// confirmed, still present in a later tree, or a result it does not
    /// give).
    pub outcome: Option<Outcome>,
    pub test_request: Option<TestRequest>,
    /// A developer says they tried and could not reproduce the reported
    /// problem (the reply stays discussion; the case's event notes it).
    pub cannot_reproduce: bool,
    pub commands: Vec<CommandLine>,
    pub fix: Option<FixPosted>,
    pub subject: SubjectFacts,
    pub problems: Vec<String>,
    /// The unquoted lines of the body as the mail has them
    /// (`mail::quote::unquoted`), when classifying read them: computed
    /// once per message and handed on, so threading does not read the
    /// body again. `thread::Incoming::new` takes it.
    pub own_text: Option<String>,
    /// What the mail says happened to a patch or commit outside any
    /// report's thread (an applied notice, a commit notification, a pull
    /// request or its merge, a stable backport, a revert), whatever its
    /// kind: threading ties it to cases, or not.
    pub lifecycle: Option<lifecycle::Signal>,
}

impl Classified {
    /// The report facts this message states or refers to.
    pub fn any_report(&self) -> Option<&ReportFacts> {
        self.own_report.as_deref().or(self.report.as_deref())
    }

    /// The commit this message is about: its own report's, its build
    /// report's, or the quoted report's.
    pub fn commit(&self) -> Option<&CommitRef> {
        self.own_report
            .as_ref()
            .and_then(|r| r.commit.as_ref())
            .or_else(|| self.build.as_ref().and_then(|b| b.commit.as_ref()))
            .or_else(|| self.report.as_ref().and_then(|r| r.commit.as_ref()))
    }
}

/// Classifies one message. Never fails, never panics.
pub fn classify(mail: &Mail, cfg: &ClassifyConfig) -> Classified {
    let mut c = classify_kind(mail, cfg);
    // A robot report or a retest result says nothing of a patch's fate
    // (a retest "applied the patch on commit X" to test it).
    if !c.kind.is_report() && c.kind != Kind::RetestResult {
        c.lifecycle = lifecycle::recognise(mail, c.sender);
    }
    c
}

/// The message's kind and the facts that come with it.
fn classify_kind(mail: &Mail, cfg: &ClassifyConfig) -> Classified {
    let sender = cfg.sender(mail);
    let mut c = Classified {
        kind: Kind::Unrelated,
        sender,
        own_report: None,
        build: None,
        build_summary: None,
        report: None,
        retests: Vec::new(),
        prose_verdict: None,
        outcome: None,
        test_request: None,
        cannot_reproduce: false,
        commands: Vec::new(),
        fix: None,
        subject: SubjectFacts::default(),
        problems: Vec::new(),
        own_text: None,
        lifecycle: None,
    };
    if sender == Sender::Bot {
        // Our own mail: recorded, never acted on.
        c.kind = Kind::Discussion;
        return c;
    }

    if sender == Sender::Human && plain_human_mail(mail, cfg, &mut c) {
        return c;
    }
    c.subject = subject::parse(&mail.subject);
    let body_cow = text::unflatten(&mail.body);
    let body: &str = &body_cow;

    let own_text = quote::unquoted(body);
    // Threading reads the lines as the mail has them: the same text,
    // unless the archive had flattened the report.
    c.own_text = Some(match &body_cow {
        Cow::Borrowed(_) => own_text.clone(),
        Cow::Owned(_) => quote::unquoted(&mail.body),
    });
    let robotish = matches!(sender, Sender::Robot | Sender::Unknown);

    if (robotish || sender == Sender::LkpTeam) && from_the_robot(mail, body, &own_text, &mut c) {
        return c;
    }

    c.report = quoted_report(body, &c.subject).map(Box::new);
    let own_clean = strip_signature(&own_text);
    // A developer who tried and could not reproduce the problem: the
    // reply stays what it is, and the case's event notes it.
    c.cannot_reproduce = sender == Sender::Human && outcome::says_it_cannot_reproduce(own_clean);
    if lkp_result(mail, cfg, own_clean, &mut c) {
        return c;
    }
    from_a_person(mail, cfg, body, &own_text, &mut c);
    c
}

/// A person's mail that does not mention the robot: unrelated list
/// traffic (the common case) or a command, decided without running the
/// extractors. Whether it was.
fn plain_human_mail(mail: &Mail, cfg: &ClassifyConfig, c: &mut Classified) -> bool {
    // One lower-cased copy serves every needle of both checks.
    let lower = mail.body.as_bytes().to_ascii_lowercase();
    if mentions_robot(mail, &lower, cfg) {
        return false;
    }
    // Nothing else is computed for it: no subject facts, no re-breaking.
    if commands::may_contain_lower(&lower) {
        let own = quote::unquoted(&mail.body);
        c.commands = commands::parse_unquoted(&own);
        c.own_text = Some(own);
    }
    if !c.commands.is_empty() {
        c.kind = Kind::Command;
    }
    true
}

/// Mail from the robot or the LKP team: a report, a build summary, a
/// build error, the robot's own fix patch. Whether it was one.
fn from_the_robot(mail: &Mail, body: &str, own_text: &str, c: &mut Classified) -> bool {
    let sender = c.sender;
    let robotish = matches!(sender, Sender::Robot | Sender::Unknown);
    if sender == Sender::Robot
        && c.subject.build_status.is_some()
        && let Some(s) = build_error::extract_summary(body, &c.subject)
    {
        c.kind = Kind::BuildSummary;
        c.build_summary = Some(Box::new(s));
        return true;
    }
    if (robotish || !mail.is_reply())
        && let Some(r) = report::extract(own_text, &c.subject)
    {
        c.kind = match (r.template, r.headline.as_ref().and_then(|h| h.direction)) {
            (Template::Functional, _) => Kind::Functional,
            (Template::Perf, Some(crate::model::Direction::Improvement)) => Kind::PerfImprovement,
            (Template::Perf, _) => Kind::PerfRegression,
        };
        check_report(&r, &mut c.problems);
        c.own_report = Some(Box::new(r));
        return true;
    }
    if sender == Sender::Robot {
        // The robot's generated patches ("... can be static", "fix
        // semicolon.cocci warnings") quote the build report they fix.
        if let Some(f) = fix::extract(&mail.subject, own_text, true, &[]) {
            c.kind = Kind::FixPosted;
            c.fix = Some(f);
            return true;
        }
    }
    if sender == Sender::Robot
        && (!mail.is_reply() || build_error::has_template(own_text))
        && let Some(b) = build_error::extract(body, &c.subject, &mail.subject)
    {
        c.kind = Kind::Build;
        c.build = Some(Box::new(b));
        return true;
    }
    if sender == Sender::Robot && !mail.is_reply() {
        // A report whose prose has no template sentence ("We reported
        // ... and report again FYI") still has the robot's subject.
        if let Some(r) = report::extract_by_subject(own_text, &c.subject) {
            c.kind = if r.template == Template::Functional { Kind::Functional } else { Kind::PerfRegression };
            if let Some(d) = r.headline.as_ref().and_then(|h| h.direction)
                && d == crate::model::Direction::Improvement
            {
                c.kind = Kind::PerfImprovement;
            }
            check_report(&r, &mut c.problems);
            c.problems.push("report: no template sentence; read by the subject".into());
            c.own_report = Some(Box::new(r));
            return true;
        }
    }
    false
}

/// A rerun's result from the robot's people (tables, a Tested-by, a
/// rerun said in words). Whether it was one.
fn lkp_result(mail: &Mail, cfg: &ClassifyConfig, own_clean: &str, c: &mut Classified) -> bool {
    let sender = c.sender;
    let lkp_like = matches!(sender, Sender::Robot | Sender::LkpTeam | Sender::Unknown)
        || cfg.in_lkp_domain(mail)
        || c.subject.tags.iter().any(|t| t.eq_ignore_ascii_case("LKP"))
        || mail.subject.starts_with("[LKP]");
    if !lkp_like {
        return false;
    }
    let tables = table::find_tables(own_clean);
    let ctx = c.report.as_deref().map(retest_context).unwrap_or_default();
    let retests = retest::extract(own_clean, &tables, &ctx);
    // What the reply says in words, outside its tables: LKP often
    // answers a retest in prose alone ("the issue still exists on
    // next-20250321", "confirmed the issue gone").
    let prose = retest::prose_only(own_clean, &tables);
    if !reads_as_a_result(mail, sender, own_clean, &tables, &retests, &prose) {
        return false;
    }
    let prose_verdict = retest::prose_verdict(&prose);
    c.prose_verdict = prose_verdict;
    c.problems.extend(retest_problems(&retests));
    let judged = outcome::judge(&outcome::Evidence {
        prose: &prose,
        tables: &tables,
        retests: &retests,
        prose_verdict,
        report: c.report.as_deref(),
        ctx: &ctx,
        attachments: &mail.attachments,
    });
    c.problems.extend(judged.problems);
    c.problems.dedup();
    // "The issue still exists" judges no fix when nothing was
    // applied: the outcome says what it found. A fix judged in
    // words states the verdict the prose gives.
    match &judged.outcome {
        Outcome::FixJudged { verdict, .. } if judged.by_prose => c.prose_verdict = Some(*verdict),
        Outcome::FixJudged { .. } | Outcome::ResultUnknown { .. } => {}
        _ => c.prose_verdict = None,
    }
    c.kind = Kind::RetestResult;
    c.retests = retests;
    c.retests.extend(judged.retests);
    c.outcome = Some(judged.outcome);
    true
}

/// Whether an LKP-like mail reports a run: retest tables, a wide table,
/// the robot's Tested-by, a rerun said beside a table, an LKP engineer's
/// words of what a run found, or any reply of the robot's.
fn reads_as_a_result(
    mail: &Mail,
    sender: Sender,
    own_clean: &str,
    tables: &[table::Table],
    retests: &[retest::Retest],
    prose: &str,
) -> bool {
    let tested_by = own_clean.lines().any(|l| {
        let l = l.trim_start().to_ascii_lowercase();
        l.starts_with("tested-by:") && (l.contains("test robot") || l.contains("lkp@intel.com"))
    });
    let wide_table = tables.iter().any(|t| t.columns.len() >= 3);
    let reran = !tables.is_empty() && retest::says_it_reran(prose);
    // An LKP engineer's words alone: what a run found, read sentence
    // by sentence. Not for the whole domain: other engineers there
    // write the same words about their own tests.
    let lkp_words = matches!(sender, Sender::Robot | Sender::LkpTeam | Sender::Unknown)
        && mail.is_reply()
        && outcome::is_a_result(prose, &mail.attachments);
    !retests.is_empty() || wide_table || tested_by || reran || lkp_words || (sender == Sender::Robot && mail.is_reply())
}

/// What is doubtful in a result's tables: numbers and prose that
/// disagree, a table judged by another metric than the headline.
fn retest_problems(retests: &[retest::Retest]) -> Vec<String> {
    let mut problems = Vec::new();
    for r in retests {
        if r.prose_disagrees {
            problems.push(format!(
                "retest: numbers say {} but the prose says {}",
                r.verdict.map_or("nothing", |v| v.as_str()),
                r.prose_verdict.map_or("nothing", |v| v.as_str())
            ));
        }
        if r.metric_source != retest::MetricSource::Headline {
            problems.push(format!(
                "retest: table lacks the headline metric; judged by {} ({:?})",
                r.metric, r.metric_source
            ));
        }
    }
    problems
}

/// A person's mail about the robot's reports: a command, a fix posted,
/// a request to test, or discussion in a report's thread.
fn from_a_person(mail: &Mail, cfg: &ClassifyConfig, body: &str, own_text: &str, c: &mut Classified) {
    let sender = c.sender;
    if mail.auto_submitted.is_some() {
        c.problems.push("auto-submitted: not a human message".into());
        return;
    }
    let people = people(mail, cfg);
    if let Some(cmds) = some(commands::parse_unquoted(own_text)) {
        c.kind = Kind::Command;
        c.commands = cmds;
        c.test_request = request::extract(own_text, &mail.attachments, &people);
        return;
    }
    let lkp: Vec<String> = cfg.robot_addresses.iter().chain(&cfg.lkp_team).cloned().collect();
    if let Some(f) = fix::extract(&mail.subject, own_text, false, &lkp) {
        c.kind = Kind::FixPosted;
        c.fix = Some(f);
        return;
    }
    // The robot's people answer requests; they do not make them.
    if mail.is_reply()
        && matches!(sender, Sender::Human | Sender::Unknown)
        && let Some(r) = request::extract(own_text, &mail.attachments, &people)
    {
        c.kind = Kind::TestRequest;
        c.test_request = Some(r);
        return;
    }
    // A fix sent inline in a reply, with its subject, commit message and
    // the report's tags: posted, though not as a mail of its own.
    if mail.is_reply()
        && sender == Sender::Human
        && let Some(f) = fix::extract_inline(own_text, &lkp)
    {
        c.kind = Kind::FixPosted;
        c.fix = Some(f);
        return;
    }
    // An LKP engineer answering in a report's thread is discussing it,
    // whatever the reply quotes: the thread's ids say so.
    let lkp_in_report_thread =
        sender == Sender::LkpTeam && mail.ancestors().into_iter().any(|id| is_robot_report_id(id.as_str()));
    if c.report.is_some() || (mail.is_reply() && (is_robot_thread(mail, &c.subject, body) || lkp_in_report_thread)) {
        c.kind = Kind::Discussion;
    }
}

/// Who a mail may be speaking to, for reading its requests: the robot's
/// people (the LKP team, the robot, whoever of them it is sent to), the
/// other recipients, and the writer.
fn people(mail: &Mail, cfg: &ClassifyConfig) -> request::People {
    let is_lkp = |a: &crate::mail::Address| {
        let e = a.email.as_deref().unwrap_or("");
        cfg.robot_addresses.iter().chain(&cfg.lkp_team).any(|x| x.eq_ignore_ascii_case(e))
            || contains_ci(e.as_bytes(), b"lkp")
            || contains_ci(e.as_bytes(), b"kbuild-all")
            || a.name.as_deref().is_some_and(is_robot_name)
    };
    let first = |a: &crate::mail::Address| {
        a.name.as_deref().and_then(request::first_name).or_else(|| a.email.as_deref().and_then(request::first_name))
    };
    let mut p = request::People {
        lkp: cfg.lkp_team.iter().chain(&cfg.robot_addresses).filter_map(|a| request::first_name(a)).collect(),
        sender: mail.from.as_ref().and_then(first),
        ..Default::default()
    };
    for a in mail.to.iter().chain(&mail.cc) {
        if is_lkp(a) {
            p.lkp_recipient = true;
            p.lkp.extend(first(a));
        } else {
            p.others.extend(first(a));
        }
    }
    // A text dump names no recipients, and a reply to a robot subject is
    // to the robot's people whoever it is sent to.
    p.lkp_recipient |= mail.to.is_empty() && mail.cc.is_empty() || mentions_robot_subject(&mail.subject);
    p
}

fn some<T>(v: Vec<T>) -> Option<Vec<T>> {
    (!v.is_empty()).then_some(v)
}

/// Cheap test for anything robot-related: the robot's name or address, its
/// report phrasing, its link lists, an LKP tag, a command to the bot, or
/// the robot or its people among the recipients.
fn mentions_robot(mail: &Mail, lower_body: &[u8], cfg: &ClassifyConfig) -> bool {
    static NEEDLES: LazyLock<Needles> = LazyLock::new(|| {
        Needles::new(&["test robot", "0day", "0-day", "we noticed", "%stddev"])
            .gated("lkp", &["lkp@intel.com", "lkp-robot", "oe-lkp", "#lkp"])
            .gated("kbuild", &["oe-kbuild", "kbuild-all"])
    });
    if mentions_robot_subject(&mail.subject) {
        return true;
    }
    NEEDLES.any_in(lower_body)
        || mail.to.iter().chain(&mail.cc).filter_map(|a| a.email.as_deref()).any(|e| {
            contains_ci(e.as_bytes(), b"lkp")
                || contains_ci(e.as_bytes(), b"oe-kbuild")
                || cfg.lkp_team.iter().any(|t| t.eq_ignore_ascii_case(e))
        })
}

/// `[linus:master] [mm] 01b9da291c: metric ...`, `[LKP] ...`: a robot
/// subject, even when a reply quotes nothing of the report.
fn mentions_robot_subject(subject: &str) -> bool {
    static ROBOT_SUBJECT: LazyLock<regex::Regex> = LazyLock::new(|| {
        crate::text::regex(r"(?i)\[lkp|lkp-robot|build (?:success|regression)|\] +[0-9a-f]{7,12}: ")
            .expect("static regex")
    });
    ROBOT_SUBJECT.is_match(subject)
}

/// A reply about a robot report that does not quote it: the subject is a
/// robot subject, or the text points at the report.
fn is_robot_thread(mail: &Mail, subj: &SubjectFacts, body: &str) -> bool {
    subj.short_sha.is_some()
        || subj.build_status.is_some()
        || subj.tags.iter().any(|t| t.eq_ignore_ascii_case("lkp") || t.eq_ignore_ascii_case("lkp-robot"))
        || mail.subject.to_ascii_lowercase().contains("[lkp")
        || contains_ci(body.as_bytes(), b"test robot")
        || contains_ci(body.as_bytes(), b"/oe-lkp/")
        || contains_ci(body.as_bytes(), b"/oe-kbuild-all/")
}

/// The Message-IDs the robot gives its reports: `202605121641.b6a60cb0-lkp@intel.com`,
/// `202211220854.48dad6fd-oliver.sang@intel.com` (the minute it was sent,
/// a hash, the sender at intel.com).
fn is_robot_report_id(id: &str) -> bool {
    static ID: LazyLock<regex::Regex> =
        LazyLock::new(|| crate::text::regex(r"^20\d{10}\.[0-9A-Za-z]{7,9}-[\w.]+@intel\.com$").expect("static regex"));
    ID.is_match(id)
}

/// The report a reply quotes, else what its subject says of one.
fn quoted_report(body: &str, subj: &SubjectFacts) -> Option<ReportFacts> {
    let q = quote::quoted(body);
    if let Some(r) = report::extract(&q, subj) {
        return Some(r);
    }
    // Replies that do not quote the report still name it in the subject.
    let short = subj.short_sha.clone()?;
    let metric = subj.metric.clone();
    Some(ReportFacts {
        template: if metric.is_some() { Template::Perf } else { Template::Functional },
        commit: Some(CommitRef { sha: None, short: Some(short), subject: None }),
        tree: subj.tree.clone(),
        branch: subj.branch.clone(),
        tree_url: None,
        patch: None,
        testcase: metric.as_deref().and_then(|m| m.split('.').next()).map(str::to_string),
        test_machine: None,
        parameters: Default::default(),
        config: None,
        compiler: None,
        headline: metric.map(|m| Headline {
            metric: m,
            change_pct: subj.change_pct.filter(|_| subj.signed),
            direction: subj.direction,
            base: None,
            new: None,
            base_stddev_pct: None,
            new_stddev_pct: None,
            stated_change_pct: subj.change_pct,
        }),
        signatures: match (&subj.metric, &subj.what) {
            (None, Some(w)) if !w.contains(' ') => {
                vec![report::Signature { signature: w.clone(), base: None, bad: None }]
            }
            _ => Vec::new(),
        },
        also_impacts: Vec::new(),
        still_on: Vec::new(),
        tags: Default::default(),
        download_link: None,
        table: None,
    })
}

/// What a retest of `r` is judged by.
pub fn retest_context(r: &ReportFacts) -> retest::Context<'_> {
    retest::Context {
        headline: r
            .headline
            .as_ref()
            .map(|h| h.metric.as_str())
            .or_else(|| r.signatures.first().map(|s| s.signature.as_str())),
        other_metrics: r.also_impacts.iter().filter_map(|a| a.metric.as_deref()).collect(),
        testcase: r.testcase.as_deref(),
        bad_commit: r.commit.as_ref().and_then(|c| c.sha.as_ref().map(|s| s.as_str()).or(c.short.as_deref())),
        bad_subject: r.commit.as_ref().and_then(|c| c.subject.as_deref()),
    }
}

/// Re-reads the retests of a message against the report of the case it
/// belongs to, which knows more than what the reply quotes (the headline
/// metric, the commit's subject).
pub fn retests_for_report(mail: &Mail, report: &ReportFacts) -> Vec<Retest> {
    let body = text::unflatten(&mail.body);
    let own = quote::unquoted(&body);
    let own_clean = strip_signature(&own);
    let tables = table::find_tables(own_clean);
    retest::extract(own_clean, &tables, &retest_context(report))
}

/// Records what a report should state but does not.
fn check_report(r: &ReportFacts, problems: &mut Vec<String>) {
    if r.commit.as_ref().and_then(|c| c.sha.as_ref()).is_none() {
        problems.push("report: no full commit SHA".into());
    }
    if r.testcase.is_none() {
        problems.push("report: no testcase".into());
    }
    if r.template == Template::Perf {
        match &r.headline {
            None => problems.push("report: no headline metric".into()),
            Some(h) if h.base.is_none() => {
                problems.push(format!("report: headline metric {} not found in the comparison table", h.metric));
            }
            Some(_) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn robot_names() {
        assert!(is_robot_name("kernel test robot"));
        assert!(is_robot_name("kbuild test robot"));
        assert!(is_robot_name("kernel test rboot"));
        assert!(is_robot_name("Kernel Test Robot"));
        assert!(!is_robot_name("kernel test"));
        assert!(!is_robot_name("Oliver Sang"));
    }

    #[test]
    fn case_insensitive_search() {
        assert!(contains_ci(b"Reported-by: Kernel Test Robot", b"test robot"));
        assert!(!contains_ci(b"tes", b"test"));
        assert!(contains_ci(b"xx#LKP retest", b"#lkp"));
    }
}
