//! Whether and how the bot answers a command mail: the bot-safety rules,
//! who may do what, rate limits, the fresh-mail window, a retest already
//! pending. One place for every rule, each named, each in the table test
//! below. Pure: the mail, what the store knows around it and `now` come
//! in as values; what to answer comes out as a [`Response`].
//!
//! What a command does to the case (its events) is decided in `act`
//! whether or not the bot answers: history is recorded for every mail,
//! answers only go to fresh ones.

use crate::case::CaseView;
use crate::case::Replayed;
use crate::classify::{ClassifyConfig, Kind};
use crate::commands::{self, Action, Command, CommandLine, Who};
pub use crate::model::Spent;
use crate::model::{MessageId, Verdict};
use crate::thread::Incoming;

/// Who may do what, and when the bot answers (from `[bot]` of the
/// config): the one policy both the history (`act::command_events`) and
/// the answers ([`respond`]) follow.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Policy {
    /// May close, reopen or rename any case (lower-cased addresses).
    pub maintainers: Vec<String>,
    /// The LKP team: may do the same.
    pub lkp_team: Vec<String>,
    /// The bot's own address, lower-cased.
    pub bot_address: String,
    /// Robots whose mail is never answered (the kernel test robot).
    pub robots: Vec<String>,
    pub fresh_hours: i64,
    /// Commands acted on per mail; the rest change nothing and the reply
    /// says they were ignored.
    pub max_commands: usize,
    /// Replies per hour to one sender (under `require`, one whose mail
    /// is not authenticated), and in one case (under `require`, to
    /// authenticated senders).
    pub replies_per_sender_hour: u32,
    pub replies_per_case_hour: u32,
    /// Under `require`: replies per hour to one authenticated sender, in
    /// one case to unauthenticated senders, and to all unauthenticated
    /// senders together. Counted apart, so forged mail cannot use up
    /// what authenticated senders get.
    pub authenticated_replies_per_sender_hour: u32,
    pub unauthenticated_replies_per_case_hour: u32,
    pub unauthenticated_replies_per_hour: u32,
    /// `[auth] dkim = "require"`: a sender that was verified and did not
    /// pass may not change a case, subscribe, or speak for the LKP team.
    pub require_auth: bool,
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            maintainers: Vec::new(),
            lkp_team: Vec::new(),
            bot_address: "lkpbot@example.org".into(),
            robots: vec!["lkp@intel.com".into()],
            fresh_hours: 48,
            max_commands: commands::MAX_COMMANDS,
            replies_per_sender_hour: 10,
            replies_per_case_hour: 20,
            authenticated_replies_per_sender_hour: 60,
            unauthenticated_replies_per_case_hour: 10,
            unauthenticated_replies_per_hour: 30,
            require_auth: false,
        }
    }
}

impl Policy {
    /// The LKP team as the classifier knows it (its members and the
    /// robot's addresses); no maintainers, the default knobs.
    pub fn from_classify(cfg: &ClassifyConfig) -> Policy {
        let mut lkp_team: Vec<String> =
            cfg.lkp_team.iter().chain(&cfg.robot_addresses).map(|a| a.to_lowercase()).collect();
        lkp_team.sort();
        lkp_team.dedup();
        Policy { lkp_team, robots: cfg.robot_addresses.clone(), ..Policy::default() }
    }

    /// Whether `sender` may close, reopen or rename `case`.
    pub fn may_change(&self, sender: Option<&str>, case: &CaseView) -> bool {
        let Some(s) = sender else { return false };
        self.maintainers.iter().chain(&self.lkp_team).chain(&case.facts.report_to).any(|a| a.eq_ignore_ascii_case(s))
    }

    /// Who the bot takes `m`'s sender for: the address its authentication
    /// vouches for (for a list that rewrites From, the original author a
    /// trusted ARC sealer recorded), else its From. Every "who may" check
    /// asks this, never From alone.
    pub fn sender<'a>(&self, m: &'a Incoming) -> Option<&'a str> {
        m.auth.author.as_deref().filter(|_| m.auth.is_authenticated()).or(m.from.as_deref())
    }

    /// Why `m`'s sender is not believed: under `require`, it was verified
    /// and did not pass (the reason, in words). `None`: believed (it
    /// passed, or was never verified and is judged by its From as history
    /// is, or `require` is off).
    pub fn unbelieved<'a>(&self, m: &'a Incoming) -> Option<&'a str> {
        let a = &m.auth;
        if !self.require_auth || !a.was_verified() || a.is_authenticated() {
            return None;
        }
        Some(if a.reason.is_empty() { "not authenticated" } else { a.reason.as_str() })
    }
}

/// The commands of a mail that count, and those beyond `max` (which
/// change nothing; the reply says so). The bot's own help lines quoted
/// back are neither: they are not asking.
pub fn counted(lines: &[CommandLine], max: usize) -> (Vec<&CommandLine>, Vec<&CommandLine>) {
    let mut asked: Vec<&CommandLine> = lines.iter().filter(|c| !commands::is_help_line(&c.line)).collect();
    let beyond = asked.split_off(max.min(asked.len()));
    (asked, beyond)
}

/// What the store knows around a command mail, looked up by the engine.
#[derive(Clone, Debug, Default)]
pub struct World {
    pub now: i64,
    /// When the mail was fetched.
    pub fetched_at: i64,
    /// The case the mail's thread is, if it is in one.
    pub case: Option<CaseView>,
    /// Its events replayed (with this mail's): the verdict, the last
    /// activity.
    pub progress: Option<Replayed>,
    /// Whether the sender may close, reopen or rename that case.
    pub may_change: bool,
    /// A retest of the case the bot asked for and that is not answered:
    /// when, and for whom.
    pub pending_retest: Option<(i64, String)>,
    /// Replies of the last hour counted against the budgets of this
    /// sender's class (see [`Policy::budgets`]): to this sender, in this
    /// case, and (unauthenticated senders only) to all of them.
    pub to_sender: Spent,
    pub in_case: Spent,
    pub unauthenticated: Spent,
    /// The thread's recent messages (the bot's own left out), with this
    /// one, and those the bot stopped answering whenever they came.
    pub thread: Vec<Post>,
    /// The bot's recent mails in the thread that answer someone, oldest
    /// first.
    pub answers: Vec<BotMail>,
    /// The mail waits for an ancestor not here yet (it may still join a
    /// case).
    pub waiting: bool,
    /// Fresh mail is verified (`[auth]` is not `off`).
    pub verifying: bool,
}

/// A message of the thread, as the loop breaker sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Post {
    pub message_id: MessageId,
    pub from: Option<String>,
    /// When the bot fetched it (the bot's clock, as [`BotMail::at`]).
    pub at: i64,
    /// The mail it answers (looked up only where a loop is possible).
    pub in_reply_to: Option<MessageId>,
    /// The bot stopped answering its sender in this thread for a loop.
    pub looped: bool,
}

/// One of the bot's mails in the thread.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BotMail {
    pub message_id: MessageId,
    pub in_reply_to: Option<MessageId>,
    pub at: i64,
}

/// The budgets a reply is counted against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Budget {
    /// Replies to this sender in the hour.
    Sender,
    /// Replies in this case in the hour.
    Case,
    /// Replies to every unauthenticated sender in the hour.
    Unauthenticated,
}

/// Bot mails in a row a sender answers, each within [`LOOP_WINDOW`],
/// before the bot stops answering it in the thread.
pub const LOOP_ROUNDS: usize = 3;
/// Seconds within which an answer to the bot's mail counts toward a loop.
pub const LOOP_WINDOW: i64 = 600;
/// The window of every reply budget.
pub const BUDGET_WINDOW: i64 = 3600;

/// Why the bot says nothing to a mail. Each is a rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Silence {
    /// No command in it.
    NoCommand,
    /// The bot's own mail: answering it could loop.
    OwnMail,
    /// An automatic reply (`Auto-Submitted`, `X-Autoreply`,
    /// `Precedence: junk`, or `bulk`/`list` on mail no list delivered).
    AutoReply,
    /// A bounce (`MAILER-DAEMON`, an empty Return-Path, a delivery report).
    Bounce,
    /// Another robot.
    Robot,
    /// Older than the fresh-mail window (by Date or by fetch time).
    NotFresh,
    /// Every command is one of the bot's own help examples, quoted back.
    HelpText,
    /// In no thread the bot tracks, and not addressed to it.
    NotTracked,
    /// In no case yet, but an ancestor has not arrived: decide later.
    Undecided,
    /// A reply budget is used up (`budget`), until `until`; `tell`: the
    /// sender is told so, once (unless that would go over a budget
    /// itself). Its commands are recorded as not done.
    RateLimited { budget: Budget, until: i64, tell: bool },
    /// The sender answered the bot's last [`LOOP_ROUNDS`] mails in this
    /// thread, each within [`LOOP_WINDOW`], with no other mail between
    /// (another robot, say): the bot stops answering it in this thread,
    /// for good. Its commands are recorded as not done.
    Loop,
    /// Under `require`, fresh but never verified (stored as history by an
    /// import without `--act`, threaded now): who sent it is not known,
    /// and its commands were judged by From as history is.
    Unverified,
}

/// What the bot says about one command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answer {
    /// A retest is asked for (`target`: what to test, if named).
    RetestRequested {
        target: Option<String>,
    },
    /// One is pending already: asked at `since` by `by`.
    AlreadyRequested {
        since: i64,
        by: String,
    },
    /// The command changed the case as it says (resolve, invalid, ...).
    Done {
        what: String,
    },
    /// Only these may: the report's addressees, maintainers, LKP team.
    NotAllowed,
    /// The command needs an authenticated sender, and this mail's did not
    /// pass: why.
    NotAuthenticated {
        reason: String,
    },
    /// The command needs an argument.
    MissingArgument {
        usage: String,
    },
    /// The line or its argument is over its limit, or the argument is
    /// not what the command takes (a test target that is no URL, branch
    /// or SHA): nothing of it is done, nothing passed on.
    Invalid(commands::Invalid),
    /// Not a command; the nearest one, if a typo.
    Unknown {
        verb: String,
        nearest: Option<&'static str>,
    },
    /// The mail is in no case.
    CaseNotFound,
    /// The case's state (in the world), its latest retest verdict with
    /// the fix it judged, and when anything last happened in it.
    Status {
        verdict: Option<Verdict>,
        fix: Option<String>,
        last_activity: i64,
    },
    Help,
    /// The sender gets the weekly digest, these cases of it.
    Subscribed {
        filter: String,
    },
    Unsubscribed,
    /// The filter could not be read.
    BadFilter {
        why: String,
    },
    /// Beyond `max_commands`.
    Ignored,
}

/// The answer to a command mail.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Response {
    pub outcomes: Vec<(CommandLine, Answer)>,
    /// Ask the retest backend to rerun (at most once per mail).
    pub request_retest: Option<Option<String>>,
}

/// Whether `a` is one of `list`.
fn among(a: Option<&str>, list: &[String]) -> bool {
    a.is_some_and(|a| list.iter().any(|x| x.eq_ignore_ascii_case(a)))
}

/// The bot-safety rules and the window, in order: the first that holds
/// silences the bot.
pub fn silence(m: &Incoming, w: &World, rules: &Policy) -> Option<Silence> {
    let s = &m.safety;
    let from = m.from.as_deref();
    if from.is_some_and(|f| f.eq_ignore_ascii_case(&rules.bot_address)) {
        return Some(Silence::OwnMail);
    }
    if s.auto_submitted || s.precedence.as_deref().is_some_and(|p| auto_precedence(p, s.list_copy)) {
        return Some(Silence::AutoReply);
    }
    let mailer_daemon = from.is_some_and(|f| {
        let local = f.split('@').next().unwrap_or("").to_ascii_lowercase();
        local == "mailer-daemon" || local == "postmaster"
    });
    if mailer_daemon || s.return_path.as_deref() == Some("") || s.delivery_report {
        return Some(Silence::Bounce);
    }
    if among(from, &rules.robots) || m.classified.sender == crate::classify::Sender::Robot {
        return Some(Silence::Robot);
    }
    if m.kind() != Kind::Command || m.classified.commands.is_empty() {
        return Some(Silence::NoCommand);
    }
    if !super::is_fresh(m.date, w.fetched_at, w.now, rules.fresh_hours) {
        return Some(Silence::NotFresh);
    }
    if m.classified.commands.iter().all(|c| commands::is_help_line(&c.line)) {
        return Some(Silence::HelpText);
    }
    if rules.require_auth && w.verifying && !m.auth.was_verified() {
        return Some(Silence::Unverified);
    }
    if w.case.is_none() {
        if w.waiting {
            return Some(Silence::Undecided);
        }
        // Unknown commands in a thread the bot does not track are other
        // people's business; a mail to the bot hears that its case is not
        // known.
        if !addressed_to(m, &rules.bot_address) {
            return Some(Silence::NotTracked);
        }
    }
    if looping(m, w) {
        return Some(Silence::Loop);
    }
    over_budget(m, w, rules)
}

impl Silence {
    /// Whether the bot decided not to act on the mail's commands (they
    /// are recorded as not done), rather than that it was not asked.
    pub fn withholds(self) -> bool {
        matches!(self, Silence::RateLimited { .. } | Silence::Loop)
    }
}

impl Policy {
    /// The hourly limits of the budgets `m` is counted against: to its
    /// sender, in its case, and to all unauthenticated senders (`None`:
    /// not counted). Under `require` an unauthenticated sender has
    /// budgets of its own; otherwise every sender has the same.
    pub fn budgets(&self, m: &Incoming) -> (u32, u32, Option<u32>) {
        if !self.require_auth {
            (self.replies_per_sender_hour, self.replies_per_case_hour, None)
        } else if self.unbelieved(m).is_some() {
            (
                self.replies_per_sender_hour,
                self.unauthenticated_replies_per_case_hour,
                Some(self.unauthenticated_replies_per_hour),
            )
        } else {
            (self.authenticated_replies_per_sender_hour, self.replies_per_case_hour, None)
        }
    }
}

/// The first budget `m` would go over, until when, and whether to tell
/// the sender: once an hour, not when the case was told already (a flood
/// from many senders hears it once), and not when the notice would go
/// over the budget of all unauthenticated senders itself.
fn over_budget(m: &Incoming, w: &World, rules: &Policy) -> Option<Silence> {
    let (sender, case, all) = rules.budgets(m);
    let rows = [
        (Budget::Sender, &w.to_sender, Some(sender)),
        (Budget::Case, &w.in_case, w.case.as_ref().map(|_| case)),
        (Budget::Unauthenticated, &w.unauthenticated, all),
    ];
    let (budget, spent, _) = rows.into_iter().find(|(_, spent, limit)| limit.is_some_and(|l| spent.sent >= l))?;
    let until = spent.oldest.unwrap_or(w.now) + BUDGET_WINDOW;
    let room_for_notice = all.is_none_or(|l| w.unauthenticated.sent < l);
    let tell = w.to_sender.notices == 0
        && (budget != Budget::Case || w.in_case.notices == 0)
        && budget != Budget::Unauthenticated
        && room_for_notice;
    Some(Silence::RateLimited { budget, until, tell })
}

/// Whether `m`'s sender is answering the bot in a loop in this thread:
/// its mail answers (In-Reply-To) the bot's last mail there, the mail
/// that one answered answers the bot's mail before it, and so for
/// [`LOOP_ROUNDS`] bot mails in a row, each answered within
/// [`LOOP_WINDOW`], nobody else writing in the thread meanwhile; or the
/// bot stopped answering it there before. Decided on the thread as
/// stored (the bot's mails and when each message was fetched, on the
/// bot's clock), so the order messages are threaded in does not matter.
pub fn looping(m: &Incoming, w: &World) -> bool {
    let Some(a) = m.from.as_deref() else { return false };
    let from_a = |p: &Post| p.from.as_deref().is_some_and(|f| f.eq_ignore_ascii_case(a));
    if w.thread.iter().any(|p| p.looped && from_a(p)) {
        return true;
    }
    // The answers, newest first: `m`, then each mail a bot mail answered.
    let (mut answer, mut parent, mut at) = (&m.message_id, m.ancestors.first(), w.fetched_at);
    let mut chain = vec![answer];
    let Some(last) = w.answers.len().checked_sub(1) else { return false };
    for round in 0..LOOP_ROUNDS {
        // The bot's mails in a row, newest first.
        let Some(bot) = last.checked_sub(round).and_then(|b| w.answers.get(b)) else { return false };
        if parent != Some(&bot.message_id) || at < bot.at || at - bot.at > LOOP_WINDOW {
            return false;
        }
        if round + 1 == LOOP_ROUNDS {
            // Nobody else wrote in the thread since the first of them.
            return !w.thread.iter().any(|p| !chain.contains(&&p.message_id) && p.at > bot.at && p.at < w.fetched_at);
        }
        let Some(prev) = bot.in_reply_to.as_ref().and_then(|id| w.thread.iter().find(|p| &p.message_id == id)) else {
            return false;
        };
        if !from_a(prev) {
            return false;
        }
        (answer, parent, at) = (&prev.message_id, prev.in_reply_to.as_ref(), prev.at);
        chain.push(answer);
    }
    false
}

/// Why the bot did not act on `m`, as its case records it and the log
/// says.
pub fn withheld_reason(silence: Silence, m: &Incoming, w: &World, rules: &Policy) -> String {
    match silence {
        Silence::Loop => format!(
            "loop: {} answered the bot's last {LOOP_ROUNDS} mails in this thread, each within {} minutes; \
             the bot does not answer it here any more",
            rules.sender(m).unwrap_or("the sender"),
            LOOP_WINDOW / 60
        ),
        Silence::RateLimited { budget, until, .. } => {
            format!("rate-limited: {}; try after {}", budget_used(budget, m, w, rules), hh_mm(until))
        }
        other => format!("{other:?}"),
    }
}

/// A used-up budget in words: "10 replies to alice@example.org in an
/// hour".
pub fn budget_used(budget: Budget, m: &Incoming, w: &World, rules: &Policy) -> String {
    let sender = rules.sender(m).unwrap_or("the sender");
    let (to_sender, in_case, all) = rules.budgets(m);
    let class = if rules.unbelieved(m).is_some() { "unauthenticated " } else { "" };
    let (n, what) = match budget {
        Budget::Sender => (to_sender, format!("replies to {sender}")),
        Budget::Case => {
            (in_case, format!("replies to {class}senders in case {}", w.case.as_ref().map_or(0, |c| c.id.0)))
        }
        Budget::Unauthenticated => (all.unwrap_or(0), "replies to unauthenticated senders".to_string()),
    };
    format!("{n} {what} in an hour")
}

/// `HH:MM UTC`.
pub fn hh_mm(t: i64) -> String {
    let s = crate::model::rfc3339(t);
    format!("{} UTC", s.get(11..16).unwrap_or("00:00"))
}

/// Whether a `Precedence` marks an automatic reply. A list stamps its
/// copy of every mail `bulk` or `list` (vger does), so on a copy with the
/// list's headers those say who delivered it, not who wrote it.
fn auto_precedence(precedence: &str, list_copy: bool) -> bool {
    match precedence {
        "junk" => true,
        "bulk" | "list" => !list_copy,
        _ => false,
    }
}

/// Whether the bot is among the mail's To and Cc.
pub fn addressed_to(m: &Incoming, bot: &str) -> bool {
    m.to.iter().chain(&m.cc).any(|a| a.eq_ignore_ascii_case(bot))
}

/// What the bot answers, or why it keeps silent: each counted command's
/// outcome by the command table, then those beyond `max_commands`,
/// ignored.
pub fn respond(m: &Incoming, w: &World, rules: &Policy) -> Result<Response, Silence> {
    if let Some(s) = silence(m, w, rules) {
        return Err(s);
    }
    let mut outcomes = Vec::new();
    let mut request_retest = None;
    let (counted, beyond) = counted(&m.classified.commands, rules.max_commands);
    for cl in counted {
        let outcome = outcome(m, w, rules, &cl.command, &mut request_retest);
        outcomes.push((cl.clone(), outcome));
    }
    outcomes.extend(beyond.into_iter().map(|cl| (cl.clone(), Answer::Ignored)));
    Ok(Response { outcomes, request_retest })
}

/// What one command gets; the first retest of a mail is the one asked
/// for (`request_retest`).
fn outcome(
    m: &Incoming,
    w: &World,
    rules: &Policy,
    command: &Command,
    request_retest: &mut Option<Option<String>>,
) -> Answer {
    if let Some(why) = command.invalid() {
        return Answer::Invalid(why);
    }
    let verb = match command {
        Command::Unknown { verb } | Command::TooLong { verb, .. } => {
            return Answer::Unknown { verb: verb.clone(), nearest: commands::nearest_verb(verb) };
        }
        Command::Known { verb, .. } => *verb,
    };
    let arg = command.arg();
    if verb.action.needs_case() && w.case.is_none() {
        return Answer::CaseNotFound;
    }
    let unbelieved = rules.unbelieved(m).filter(|_| verb.who != Who::Anyone);
    match verb.action {
        Action::Help => Answer::Help,
        Action::Subscribe if unbelieved.is_some() => {
            Answer::NotAuthenticated { reason: unbelieved.unwrap_or_default().to_string() }
        }
        Action::Subscribe => match crate::case::SubscriptionFilter::parse(arg.unwrap_or("")) {
            Ok(f) => Answer::Subscribed { filter: f.describe() },
            Err(why) => Answer::BadFilter { why },
        },
        Action::Unsubscribe => Answer::Unsubscribed,
        Action::Status => {
            let p = w.progress.as_ref();
            let opened = w.case.as_ref().map_or(0, |c| c.facts.opened_at);
            Answer::Status {
                verdict: p.and_then(|p| p.verdict),
                fix: p.and_then(|p| p.fix_commit.clone()),
                last_activity: p.and_then(|p| p.last_activity).unwrap_or(opened),
            }
        }
        Action::Retest => match (&w.pending_retest, &request_retest) {
            (Some((since, by)), _) => Answer::AlreadyRequested { since: *since, by: by.clone() },
            (None, Some(_)) => Answer::AlreadyRequested { since: w.now, by: m.from.clone().unwrap_or_default() },
            (None, None) => {
                let target = arg.map(str::to_string);
                *request_retest = Some(target.clone());
                Answer::RetestRequested { target }
            }
        },
        Action::Change { .. } if verb.arg.is_some_and(|a| a.required) && arg.is_none() => {
            Answer::MissingArgument { usage: verb.syntax() }
        }
        Action::Change { .. } if verb.who == Who::Deciders && !w.may_change => Answer::NotAllowed,
        Action::Change { .. } if unbelieved.is_some() => {
            Answer::NotAuthenticated { reason: unbelieved.unwrap_or_default().to_string() }
        }
        Action::Change { .. } => Answer::Done { what: verb.done_text(arg) },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::case::{CaseFacts, CaseId, CaseKind, CaseState};
    use crate::model::MessageId;

    const NOW: i64 = 1_800_000_000;

    fn case() -> CaseView {
        CaseView {
            id: CaseId(3),
            state: CaseState::Reported,
            facts: CaseFacts {
                report_to: vec!["author@example.org".into()],
                ..CaseFacts::new(CaseKind::PerfRegression, "t".into(), MessageId::new("r@x").unwrap(), 0)
            },
        }
    }

    /// A command mail: `headers` added to a plain reply from `from`.
    fn mail(from: &str, headers: &str, body: &str, age_hours: i64) -> Incoming {
        let date =
            jiff::Timestamp::from_second(NOW - age_hours * 3600).unwrap().strftime("%a, %d %b %Y %H:%M:%S +0000");
        let raw = format!(
            "From: {from}\nTo: list@vger.kernel.org\nSubject: Re: x\nMessage-ID: <m@x>\nIn-Reply-To: <r@x>\nDate: {date}\n{headers}\n{body}\n"
        );
        let m = crate::mail::parse(raw.as_bytes());
        let c = crate::classify::classify(&m, &ClassifyConfig::default());
        Incoming::new(m, c)
    }

    /// The headers vger adds to its copy of every mail.
    const VGER: &str = "Sender: cgroups-owner@vger.kernel.org\nPrecedence: bulk\nList-ID: <cgroups.vger.kernel.org>\n\
                        X-Mailing-List: cgroups@vger.kernel.org\n";

    fn world() -> World {
        World { now: NOW, fetched_at: NOW, case: Some(case()), may_change: false, ..World::default() }
    }

    /// Every rule that silences the bot, one row each, and what passes.
    #[test]
    fn silences() {
        let rules = Policy { bot_address: "lkpbot@example.org".into(), ..Policy::default() };
        let not_tracked = World { case: None, ..world() };
        let waiting = World { case: None, waiting: true, ..world() };
        let spent = |sent: u32| Spent { sent, oldest: Some(NOW - 1800), notices: 0 };
        let busy = World { to_sender: spent(10), ..world() };
        let busy_case = World { in_case: spent(20), ..world() };
        let old_fetch = World { fetched_at: NOW - 49 * 3600, ..world() };
        let rows: Vec<(&str, Incoming, World, Option<Silence>)> = vec![
            ("a retest request", mail("dev@example.org", "", "please retest", 1), world(), None),
            ("no command", mail("dev@example.org", "", "looks good", 1), world(), Some(Silence::NoCommand)),
            ("the bot itself", mail("lkpbot@example.org", "", "#lkp status", 1), world(), Some(Silence::OwnMail)),
            (
                "an auto-reply",
                mail("dev@example.org", "Auto-Submitted: auto-replied\n", "#lkp status", 1),
                world(),
                Some(Silence::AutoReply),
            ),
            (
                "bulk mail",
                mail("dev@example.org", "Precedence: bulk\n", "#lkp status", 1),
                world(),
                Some(Silence::AutoReply),
            ),
            (
                "a list robot",
                mail("dev@example.org", "Precedence: list\n", "#lkp status", 1),
                world(),
                Some(Silence::AutoReply),
            ),
            (
                "junk",
                mail("dev@example.org", "Precedence: junk\n", "#lkp status", 1),
                world(),
                Some(Silence::AutoReply),
            ),
            (
                "an X-Autoreply",
                mail("dev@example.org", "X-Autoreply: yes\n", "#lkp status", 1),
                world(),
                Some(Silence::AutoReply),
            ),
            ("vger's copy", mail("dev@example.org", VGER, "#lkp status", 1), world(), None),
            (
                "a list copy, Precedence: list",
                mail("dev@example.org", "Precedence: list\nList-Post: <mailto:l@example.org>\n", "#lkp status", 1),
                world(),
                None,
            ),
            (
                "an auto-reply through a list",
                mail("dev@example.org", &format!("{VGER}Auto-Submitted: auto-replied\n"), "#lkp status", 1),
                world(),
                Some(Silence::AutoReply),
            ),
            (
                "junk through a list",
                mail("dev@example.org", "Precedence: junk\nList-Id: <l.example.org>\n", "#lkp status", 1),
                world(),
                Some(Silence::AutoReply),
            ),
            (
                "a bounce through a list",
                mail("MAILER-DAEMON@mx.example.org", VGER, "#lkp status", 1),
                world(),
                Some(Silence::Bounce),
            ),
            (
                "the bot through a list",
                mail("lkpbot@example.org", VGER, "#lkp status", 1),
                world(),
                Some(Silence::OwnMail),
            ),
            ("a bounce", mail("MAILER-DAEMON@mx.example.org", "", "#lkp status", 1), world(), Some(Silence::Bounce)),
            (
                "an empty return path",
                mail("dev@example.org", "Return-Path: <>\n", "#lkp status", 1),
                world(),
                Some(Silence::Bounce),
            ),
            (
                "a delivery report",
                mail(
                    "dev@example.org",
                    "MIME-Version: 1.0\nContent-Type: multipart/report; report-type=delivery-status; boundary=b\n",
                    "--b\n\n#lkp status\n--b--",
                    1,
                ),
                world(),
                Some(Silence::Bounce),
            ),
            ("the robot", mail("lkp@intel.com", "", "#lkp status", 1), world(), Some(Silence::Robot)),
            ("old by date", mail("dev@example.org", "", "#lkp status", 49), world(), Some(Silence::NotFresh)),
            ("old by fetch", mail("dev@example.org", "", "#lkp status", 1), old_fetch, Some(Silence::NotFresh)),
            (
                "the help quoted back",
                mail("dev@example.org", "", "#lkp invalid <reason>", 1),
                world(),
                Some(Silence::HelpText),
            ),
            (
                "a help line as the bot sends it",
                mail("dev@example.org", "", "  #lkp test <lore-link | git-url branch | sha>   test a fix", 1),
                world(),
                Some(Silence::HelpText),
            ),
            (
                "every help line, pasted",
                mail("dev@example.org", "", &commands::help_text(), 1),
                world(),
                Some(Silence::HelpText),
            ),
            (
                "no case, not to the bot",
                mail("dev@example.org", "", "#lkp frob", 1),
                not_tracked.clone(),
                Some(Silence::NotTracked),
            ),
            ("no case yet", mail("dev@example.org", "", "#lkp status", 1), waiting, Some(Silence::Undecided)),
            (
                "no case, to the bot",
                mail("dev@example.org", "Cc: LKP Bot <lkpbot@example.org>\n", "#lkp status", 1),
                not_tracked,
                None,
            ),
            (
                "a busy sender",
                mail("dev@example.org", "", "#lkp status", 1),
                busy,
                Some(Silence::RateLimited { budget: Budget::Sender, until: NOW + 1800, tell: true }),
            ),
            (
                "a busy case",
                mail("dev@example.org", "", "#lkp status", 1),
                busy_case,
                Some(Silence::RateLimited { budget: Budget::Case, until: NOW + 1800, tell: true }),
            ),
        ];
        for (what, m, w, want) in rows {
            assert_eq!(silence(&m, &w, &rules), want, "{what}");
        }
    }

    /// Which budget a sender is counted against, when it is used up,
    /// and whether the sender hears so: once, unless the notice would go
    /// over a budget itself.
    #[test]
    fn budgets() {
        let require = Policy { require_auth: true, ..Policy::default() };
        let record = Policy::default();
        let signed = {
            let mut m = mail("dev@example.org", "", "please retest", 1);
            m.auth = crate::model::Auth {
                method: crate::model::AuthMethod::Dkim("example.org".into()),
                author: Some("dev@example.org".into()),
                reason: String::new(),
            };
            m
        };
        let forged = {
            let mut m = mail("dev@example.org", "", "please retest", 1);
            m.auth = crate::model::Auth::none("no DKIM signature");
            m
        };
        let spent = |(sent, notices): (u32, u32)| Spent { sent, oldest: Some(NOW - 600), notices };
        let limited = |budget, tell| Some(Silence::RateLimited { budget, until: NOW + 3000, tell });
        use Budget::{Case, Sender, Unauthenticated};
        // (what, signed, policy, spent to the sender, in the case, to all
        // unauthenticated senders: (replies, notices), the budget over and
        // whether the sender is told).
        type Row<'a> = (&'a str, bool, &'a Policy, (u32, u32), (u32, u32), (u32, u32), Option<(Budget, bool)>);
        let rows: &[Row] = &[
            // A maintainer's twelve retests in a minute, signed: answered.
            ("signed, 12 sent", true, &require, (12, 0), (0, 0), (0, 0), None),
            ("signed, 60 sent", true, &require, (60, 0), (0, 0), (0, 0), Some((Sender, true))),
            ("forged, 10 sent", false, &require, (10, 0), (0, 0), (0, 0), Some((Sender, true))),
            ("forged, told already", false, &require, (11, 1), (0, 0), (0, 0), Some((Sender, false))),
            // A flood of forged senders uses up their case budget, not the
            // one of signed mail: the signed request is answered.
            ("signed, forged flood", true, &require, (0, 0), (19, 0), (0, 0), None),
            ("forged, case used up", false, &require, (0, 0), (10, 0), (0, 0), Some((Case, true))),
            ("forged, case told", false, &require, (0, 0), (10, 1), (0, 0), Some((Case, false))),
            ("forged, all used up", false, &require, (0, 0), (0, 0), (30, 3), Some((Unauthenticated, false))),
            ("forged, no room for a notice", false, &require, (10, 0), (0, 0), (30, 0), Some((Sender, false))),
            // Not under require: one budget for all, as before.
            ("record, 10 sent", true, &record, (10, 0), (0, 0), (0, 0), Some((Sender, true))),
        ];
        for &(what, is_signed, rules, to_sender, in_case, all, want) in rows {
            let m = if is_signed { &signed } else { &forged };
            let w =
                World { to_sender: spent(to_sender), in_case: spent(in_case), unauthenticated: spent(all), ..world() };
            assert_eq!(silence(m, &w, rules), want.and_then(|(b, tell)| limited(b, tell)), "{what}");
        }
        let w = World { to_sender: spent((10, 0)), ..world() };
        let why = withheld_reason(limited(Budget::Sender, true).unwrap(), &forged, &w, &require);
        assert_eq!(why, "rate-limited: 10 replies to dev@example.org in an hour; try after 08:50 UTC");
    }

    /// The loop breaker: the sender answered the bot's last three mails
    /// in the thread, each within ten minutes, nothing between; by the
    /// stored thread, whatever order it was threaded in.
    #[test]
    fn loops() {
        let id = |s: &str| MessageId::new(s).unwrap();
        let post = |s: &str, parent: &str, from: &str, at: i64| Post {
            message_id: id(s),
            from: Some(from.into()),
            at,
            in_reply_to: Some(id(parent)),
            looped: false,
        };
        let bot = |s: &str, answers: &str, at: i64| BotMail { message_id: id(s), in_reply_to: Some(id(answers)), at };
        // x asks; the bot answers (b1); the robot answers b1 (a1), the bot
        // answers a1 (b2), and so on; `m` (the robot's, at NOW) answers b3.
        let thread = || World {
            thread: vec![
                post("x@x", "r@x", "dev@example.org", NOW - 500),
                post("a1@x", "b1@x", "robot@example.net", NOW - 400),
                post("a2@x", "b2@x", "robot@example.net", NOW - 200),
                post("m@x", "b3@x", "robot@example.net", NOW),
            ],
            answers: vec![
                bot("b1@x", "x@x", NOW - 450),
                bot("b2@x", "a1@x", NOW - 300),
                bot("b3@x", "a2@x", NOW - 100),
            ],
            ..world()
        };
        let answer = |from: &str, parent: &str| {
            let mut m = mail(from, "", "#lkp status", 0);
            m.ancestors = vec![id(parent)];
            m
        };
        let m = answer("robot@example.net", "b3@x");
        assert!(looping(&m, &thread()));
        assert_eq!(silence(&m, &thread(), &Policy::default()), Some(Silence::Loop));
        // Someone else in between: a conversation, not a loop.
        let mut w = thread();
        w.thread.push(post("y@x", "r@x", "dev@example.org", NOW - 150));
        assert!(!looping(&m, &w));
        // Two rounds only.
        let mut w = thread();
        w.answers.remove(0);
        assert!(!looping(&m, &w));
        // Answers slower than ten minutes.
        let mut w = thread();
        w.thread[1].at = NOW - 450 + 601;
        assert!(!looping(&m, &w));
        // Another sender answering the last one.
        assert!(!looping(&answer("dev@example.org", "b3@x"), &thread()));
        // Not an answer to the bot's mail: someone sending commands in a
        // row, each to the thread.
        assert!(!looping(&answer("robot@example.net", "r@x"), &thread()));
        let mut w = thread();
        w.thread[2].in_reply_to = Some(id("r@x"));
        assert!(!looping(&m, &w));
        // The same second for an answer and the bot's next mail.
        let mut w = thread();
        w.thread[1].at = NOW - 300;
        assert!(looping(&m, &w));
        // Once stopped, the sender stays unanswered in the thread.
        let w = World {
            thread: vec![Post { looped: true, ..post("old@x", "b0@x", "robot@example.net", NOW - 90_000) }],
            ..world()
        };
        assert!(looping(&answer("robot@example.net", "r@x"), &w));
        assert!(!looping(&answer("dev@example.org", "r@x"), &w));
    }

    /// What each command gets, by who asks and what is pending.
    #[test]
    fn outcomes() {
        let rules = Policy::default();
        let may = World { may_change: true, ..world() };
        let pending = World { pending_retest: Some((NOW - 600, "first@example.org".into())), ..world() };
        let none = World { case: None, ..world() };
        let out = |body: &str, w: &World| -> Vec<Answer> {
            let m = mail("dev@example.org", "To: lkpbot@example.org\n", body, 1);
            respond(&m, w, &rules).unwrap().outcomes.into_iter().map(|(_, o)| o).collect()
        };
        assert_eq!(out("please retest", &world()), [Answer::RetestRequested { target: None }]);
        assert_eq!(
            out("#lkp test 0123456789ab", &world()),
            [Answer::RetestRequested { target: Some("0123456789ab".into()) }]
        );
        assert_eq!(
            out("please retest", &pending),
            [Answer::AlreadyRequested { since: NOW - 600, by: "first@example.org".into() }]
        );
        // Twice in one mail: asked once.
        assert_eq!(
            out("please retest\n#lkp retest please", &world())[1],
            Answer::AlreadyRequested { since: NOW, by: "dev@example.org".into() }
        );
        assert_eq!(out("#lkp resolve", &world()), [Answer::NotAllowed]);
        assert_eq!(out("#lkp resolve", &may), [Answer::Done { what: "marked resolved".into() }]);
        assert_eq!(out("#lkp invalid", &may), [Answer::MissingArgument { usage: "#lkp invalid <reason>".into() }]);
        assert_eq!(out("#lkp status", &world()), [Answer::Status { verdict: None, fix: None, last_activity: 0 }]);
        let replayed = World {
            progress: Some(Replayed {
                state: CaseState::RetestDone,
                verdict: Some(Verdict::Recovered),
                fix_commit: Some("0123456789abcdef".into()),
                fix_message_id: None,
                title: None,
                last_activity: Some(NOW - 3600),
            }),
            ..world()
        };
        assert_eq!(
            out("#lkp status", &replayed),
            [Answer::Status {
                verdict: Some(Verdict::Recovered),
                fix: Some("0123456789abcdef".into()),
                last_activity: NOW - 3600
            }]
        );
        assert_eq!(out("#lkp retset", &world()), [Answer::Unknown { verb: "retset".into(), nearest: Some("retest") }]);
        assert_eq!(out("#lkp status", &none), [Answer::CaseNotFound]);
        assert_eq!(out("#lkp help", &none), [Answer::Help]);
        let many = "#lkp status\n".repeat(3);
        let limited = Policy { max_commands: 2, ..Policy::default() };
        let m = mail("dev@example.org", "", &many, 1);
        let o = respond(&m, &world(), &limited).unwrap().outcomes;
        assert_eq!(o.last().map(|(_, o)| o), Some(&Answer::Ignored));
        // With `max_commands = 2`, the third is ignored whatever it is.
        let m = mail("dev@example.org", "", "#lkp status\n#lkp status\n#lkp resolve", 1);
        let o = respond(&m, &World { may_change: true, ..world() }, &limited).unwrap().outcomes;
        assert_eq!(o.last().map(|(_, o)| o), Some(&Answer::Ignored));
        // A help line pasted beside a real command is not a command: no
        // retest of "<lore-link | ...>", and nothing counted against the
        // limit.
        let m =
            mail("dev@example.org", "", "  #lkp test <lore-link | git-url branch | sha>   test a fix\n#lkp status", 1);
        let o = respond(&m, &world(), &limited).unwrap();
        assert_eq!(o.request_retest, None);
        assert_eq!(o.outcomes.len(), 1);
        // Under `require`, a sender that did not pass may not change a case
        // or subscribe, and hears why; a retest and the status are for
        // anyone.
        let require = Policy { require_auth: true, ..Policy::default() };
        let forged = |body: &str, w: &World| -> Vec<Answer> {
            let mut m = mail("dev@example.org", "", body, 1);
            m.auth = crate::model::Auth::none("no DKIM signature");
            respond(&m, w, &require).unwrap().outcomes.into_iter().map(|(_, o)| o).collect()
        };
        let refused = Answer::NotAuthenticated { reason: "no DKIM signature".into() };
        assert_eq!(forged("#lkp resolve", &may), std::slice::from_ref(&refused));
        assert_eq!(forged("#lkp subscribe", &world()), [refused]);
        assert_eq!(forged("#lkp resolve", &world()), [Answer::NotAllowed]);
        assert_eq!(forged("please retest", &world()), [Answer::RetestRequested { target: None }]);
        assert!(matches!(forged("#lkp status", &world())[..], [Answer::Status { .. }]));
        // Fresh, never verified, while verifying: stored as history, so not
        // answered.
        let verifying = World { verifying: true, ..world() };
        let m = mail("dev@example.org", "", "#lkp status", 1);
        assert_eq!(respond(&m, &verifying, &require), Err(Silence::Unverified));
        assert!(respond(&m, &verifying, &rules).is_ok());
        // A test target that is none, or a title over the limit: refused,
        // nothing passed on.
        let o = respond(&mail("dev@example.org", "", "#lkp test ; rm -rf / #", 1), &world(), &rules).unwrap();
        assert_eq!(o.request_retest, None);
        assert!(matches!(o.outcomes[..], [(_, Answer::Invalid(commands::Invalid::NotAccepted { .. }))]), "{o:?}");
        let long = format!("#lkp title {}", "x".repeat(250));
        assert_eq!(
            out(&long, &may),
            [Answer::Invalid(commands::Invalid::ArgTooLong { verb: "title", field: "text", max: 200, chars: 250 })]
        );
        // One retest request per mail, whatever it says.
        let m = mail("dev@example.org", "", "please retest\n#lkp test abcdef0123", 1);
        assert_eq!(respond(&m, &world(), &rules).unwrap().request_retest, Some(None));
    }
}
