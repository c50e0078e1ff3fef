//! Test requests: someone asking the robot's people to run a test, the
//! report's test again or with a patch, branch or commit, whether or not
//! the mail is addressed to the bot; and what to test.
//!
//! A request is read one sentence at a time, by what the sentence does,
//! not by a list of phrases:
//!
//! - how it asks: a question to "you" ("could you ...", "would it be
//!   possible to ..."), an imperative ("please retest", "try this:"), a
//!   wish ("it would be nice to double check ..."), a question whether
//!   something fixes it ("does this fix it?", "is this already fixed by
//!   \<commit\>?"), an offer of a patch to try ("the attached patch could
//!   be used to see if it fixes things");
//! - what is to be done: a verb of testing (test, try, run, rerun, check,
//!   confirm, verify, reproduce, bisect, "give it a spin", "see if it
//!   helps"), with an object that is a run, not a question of fact
//!   ("check whether this is expected" asks nothing to be run);
//! - who is asked: the robot's people (by name, by greeting, or in a
//!   reply to them), not a developer the sentence or the mail names. A
//!   writer offering to test ("I can test it") asks nothing.
//!
//! Quoted lines, the signature and the body of a diff never count.

use regex::Regex;
use serde::Serialize;
use std::sync::LazyLock;

use super::text::{Sentence, sentences};
use crate::mail::Attachment;
use crate::text::strip_signature;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum TargetKind {
    LoreLink,
    InlineDiff,
    Attachment,
    GitBranch,
    Commit,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Target {
    pub kind: TargetKind,
    pub value: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TestRequest {
    /// The sentence that asks.
    pub phrase: String,
    pub targets: Vec<Target>,
}

/// Who the mail may be speaking to: lower-cased first names.
#[derive(Clone, Debug, Default)]
pub struct People {
    /// The robot's people: the LKP team, the robot's names.
    pub lkp: Vec<String>,
    /// Everyone else the mail is sent to, and whoever it answers.
    pub others: Vec<String>,
    /// The writer.
    pub sender: Option<String>,
    /// Whether the robot or one of its people is among the recipients.
    pub lkp_recipient: bool,
}

impl People {
    fn is_lkp(&self, name: &str) -> bool {
        let n = name.to_ascii_lowercase();
        ROBOT_WORDS.is_match(&n) || self.lkp.contains(&n)
    }

    fn is_other(&self, name: &str) -> bool {
        let n = name.to_ascii_lowercase();
        self.others.contains(&n) && !self.is_lkp(&n) && self.sender.as_deref() != Some(n.as_str())
    }
}

/// The first word of a display name or of an address's local part,
/// lower-cased: "Oliver Sang" and "oliver.sang@intel.com" give "oliver".
pub fn first_name(name_or_address: &str) -> Option<String> {
    let s = name_or_address.trim().trim_matches(['"', '\'']);
    let s = s.split('@').next().unwrap_or(s);
    // "Sang, Oliver" puts the first name last.
    let s = s.split_once(',').map_or(s, |(last, first)| if first.trim().is_empty() { last } else { first });
    let w = s.split(|c: char| !c.is_alphanumeric()).find(|w| !w.is_empty())?;
    (w.len() >= 2).then(|| w.to_lowercase())
}

/// Words that name the robot or its team.
static ROBOT_WORDS: LazyLock<Regex> = LazyLock::new(|| {
    crate::text::regex(r"(?i)\b(?:kernel[- ]test[- ]robot|kbuild[- ]test[- ]robot|test[- ]robot|build[- ]robot|robot|bot|lkp|0-?day|intel\s+folks)\b")
        .expect("static regex")
});

/// A verb of running a test, as the sentence uses it; some need an
/// object that makes it a run (see [`asks_for_a_run`]).
static VERB: LazyLock<Regex> = LazyLock::new(|| {
    crate::text::regex(concat!(
        r"(?i)\b(?P<verb>re-?test(?:ing)?|re-?run(?:ning)?|test(?:ing)?|try(?:ing)?|run(?:ning)?|",
        r"double[- ]?check(?:ing)?|check(?:ing)?|confirm|verify|reproduce|repro|recreate|bisect|measure|",
        r"benchmark|give\s+(?:it|this|that|them|these|(?:the|my|our|this|that)\s+(?:[\w-]+\s+)?[\w-]+)\s+a\s+",
        r"(?:try|test|shot|spin|go|whirl|run)|see\s+(?:if|whether)|get\s+(?:some\s+)?(?:numbers|data|results)|",
        r"(?:interesting|useful|helpful|good|nice|great)\s+to\s+(?:know|see)\s+(?:if|whether))\b"
    ))
    .expect("static regex")
});

/// A question put to "you" (or to anyone who can).
static ASKS_YOU: LazyLock<Regex> = LazyLock::new(|| {
    crate::text::regex(concat!(
        r"(?i)\b(?:(?:could|can|would|will)\s+(?:you|u|someone|somebody|anyone|anybody)\b|",
        r"(?:are|were)\s+you\s+(?:able|willing)\b|do\s+you\s+(?:mind|have\s+(?:time|cycles|a\s+chance))\b|",
        r"(?:is|would|will)\s+it\s+(?:be\s+)?possible\b|any\s+chance\b|",
        r"if\s+you(?:'re|\s+are|\s+were)?\s+(?:able|willing|could|can|have\s+(?:time|cycles))\b|",
        r"(?:i'?d|i\s+would|we'?d|we\s+would)\s+(?:really\s+|much\s+)?appreciate\b|",
        r"(?:it'?d|it\s+would|would|might|'d)\s+be\s+(?:nice|great|good|helpful|useful|interesting|appreciated)\b|",
        r"if\s+it\s+is\s+not\s+too\s+much\s+to\s+ask|you\s+(?:can|could|may|might)\s+(?:try|test|give|run))"
    ))
    .expect("static regex")
});

/// An imperative: the sentence opens with the verb, perhaps after a name
/// and "please", or "please" leads to it.
static IMPERATIVE: LazyLock<Regex> = LazyLock::new(|| {
    const VERBS: &str =
        r"(?:re-?test|re-?run|test|try|run|double[- ]?check|check|confirm|verify|reproduce|bisect|give)(?:ing)?\b";
    crate::text::regex(&format!(
        concat!(
            r"(?i)^\W*(?:(?:so|also|and|now|meanwhile|in\s+the\s+meantime|otherwise|alternatively|maybe|perhaps|",
            r"if\s+possible|when\s+you\s+have\s+time|ok|okay)\b[\s,]*)*(?:[A-Z][a-z]+,\s+|[A-Z][a-z]+\s+(?:please|kindly)\b\s*)?",
            r"(?:please|kindly|pls)?[\s,]*(?:(?:also|kindly|just|again)\s+)*(?:help\s+(?:to\s+|me\s+|us\s+|in\s+|with\s+)?)?",
            r"(?P<v1>{v})|\bplease\b[\s,]+(?:(?:also|kindly|help|do|just|again)\s+(?:to\s+|in\s+|with\s+)?){{0,2}}(?P<v2>{v})"
        ),
        v = VERBS
    ))
    .expect("static regex")
});

/// What an imperative's verb must be followed by to be one ("Test case 3
/// fails" is no imperative).
static IMPERATIVE_OBJECT: LazyLock<Regex> = LazyLock::new(|| {
    crate::text::regex(concat!(
        r"(?i)^[\w-]+\s*(?:$|[:?.!]|(?:it|this|that|these|those|them|the|my|our|your|a|an|with|without|on|again|",
        r"below|above|following|attached|out|v\d|next-|https?:|patch|branch|commit|and|if|whether|to\s+see|please|",
        r"both|either|latest|current)\b)"
    ))
    .expect("static regex")
});

/// A question whether something fixes it, or shows on a later tree.
static DOES_IT: LazyLock<Regex> = LazyLock::new(|| {
    crate::text::regex(concat!(
        r"(?i)\b(?:does|do|did|will|would|could|can|is|are|was)\s+(?:this|that|it|these|the\s+(?:[\w-]+\s+)?",
        r"(?:patch(?:es|set)?|fix|diff|change|series|branch|commit|version))\s+(?:\w+\s+){0,2}?",
        r"(?:fix|help|resolve|solve|cure|address|recover|make\s+(?:a|any)\s+difference|improve|reproduce|show|",
        r"happen|trigger)|\b(?:already\s+)?(?:fixed|addressed|resolved|solved)\s+by\b"
    ))
    .expect("static regex")
});

/// A patch offered to be tried: "the attached patch could be used to see
/// if it fixes things".
static OFFERED: LazyLock<Regex> = LazyLock::new(|| {
    crate::text::regex(
        r"(?i)\b(?:patch|diff|fix|change)\b.{0,40}\b(?:can|could|may|might)\s+be\s+(?:used|tried|tested|applied)\b.{0,20}\b(?:see|check|test|verify)\b",
    )
    .expect("static regex")
});

/// What makes "check", "confirm", "see if" a run: a fix judged or the
/// problem seen, or a thing to test named.
static RUN_OBJECT: LazyLock<Regex> = LazyLock::new(|| {
    crate::text::regex(concat!(
        r"(?i)\b(?:fix(?:es|ed)?|help(?:s|ed)?|resolve[sd]?|solve[sd]?|recover(?:s|ed)?|restore[sd]?|works?|",
        r"go(?:es)?\s+away|disappear(?:s|ed)?|gone|reproduc\w*|regress\w*|still|happens?|shows?|pass(?:es)?|fail\w*|",
        r"patch(?:es|set)?|diff|branch|commit|series|version|v\d+|tree|kernel|next-\d{8}|mainline|",
        r"test(?:s|case)?|benchmark|numbers|results?|issue|problem|warning|crash|machine|setup|platform|option)\b"
    ))
    .expect("static regex")
});

/// What makes "try" a test: trying a thing, not trying to do something
/// else ("try to explain").
static TRY_OBJECT: LazyLock<Regex> = LazyLock::new(|| {
    crate::text::regex(concat!(
        r"(?i)^(?:try(?:ing)?)\s+(?:to\s+(?:re-?)?(?:reproduce|repro|run|test|recreate|bisect|apply)\b|",
        r"(?:it|this|that|these|them|those|out|again|the|my|our|a|an|below|above|following|attached|with|on|v\d|",
        r"next-|https?://)|[:.]?$)"
    ))
    .expect("static regex")
});

/// Greetings: "Hi Oliver," at the top of the mail names who it is for.
static GREETING: LazyLock<Regex> = LazyLock::new(|| {
    crate::text::regex(
        r"(?i)^(?:hi|hello|hey|dear|greetings|morning)[\s,]+(?P<name>[a-z][\w.-]*(?:[ -]+[a-z][\w-]*)*)\s*[,!:.]*$",
    )
    .expect("static regex")
});

/// A name on its own line ("Oliver,") or opening a sentence ("Oliver, can
/// you ..."; "In the meantime, Oliver, can you ...").
static VOCATIVE: LazyLock<Regex> = LazyLock::new(|| {
    crate::text::regex(r"(?:^|,\s*|\.\s+)(?P<name>[A-Z][a-z]+|[Kk]ernel[- ]test[- ]robot|LKP|lkp)\b(?:,|\s+-|:)?\s+(?i:can|could|would|will|please|do|did|is|are|would)\b")
        .expect("static regex")
});
static NAME_LINE: LazyLock<Regex> =
    LazyLock::new(|| crate::text::regex(r"^(?P<name>[A-Z][a-z]+|[Kk]ernel[- ]test[- ]robot),$").expect("static regex"));

/// "On \<date\>, Oliver Sang wrote:", "Oliver Sang \<x@y\> 于2024年写道：",
/// "Oliver Sang \<x@y\> writes:": the mail answered.
static ATTRIBUTION: LazyLock<Regex> = LazyLock::new(|| {
    crate::text::regex(r"(?i)(?:^|,\s*)(?P<who>[^,<>]{2,60}?)\s*(?:<[^>]*>|\([^)]*\))?\s*(?:wrote|writes|写道|pisze|a écrit|schrieb|escribió)\s*[:：]?\s*$")
        .expect("static regex")
});

/// "Please find it attached", "please find a fixed patch attached".
static FIND_ATTACHED: LazyLock<Regex> = LazyLock::new(|| {
    crate::text::regex(r"(?i)\bplease\s+find\s+(?:it|them|attached|below|(?:the|a|an|my)\s+(?:[\w-]+\s+){0,2}?(?:patch|diff|fix|version|series))\b")
        .expect("static regex")
});

/// "but ...": the writer takes the suggestion back ("you could try this
/// patch but we decided it is not right").
static BUT: LazyLock<Regex> = LazyLock::new(|| crate::text::regex(r"(?i)\bbut\b").expect("static regex"));

/// A writer speaking of their own plans: "I can test it", "let me try".
static SELF: LazyLock<Regex> = LazyLock::new(|| {
    crate::text::regex(r"(?i)\b(?:i|we)\s*(?:'ll|'d|can|will|would|could|shall|may|might|am\s+going\s+to|plan\s+to)\b|\blet\s+me\b|\bfor\s+(?:us|me)\s+to\b")
        .expect("static regex")
});

/// Whom a sentence is put to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Addressee {
    Lkp,
    Other,
    Unknown,
}

/// Reads a test request from `own`, a mail's unquoted text (the signature
/// and what follows it are left out, but a diff after the signature is a
/// thing to test).
pub fn extract(own: &str, attachments: &[Attachment], people: &People) -> Option<TestRequest> {
    let prose = strip_signature(own);
    let sents = sentences(prose);
    let mut targets = targets(prose, attachments);
    if targets.iter().all(|t| t.kind != TargetKind::InlineDiff) && has_diff(&own[prose.len()..]) {
        targets.push(Target { kind: TargetKind::InlineDiff, value: "inline".into() });
    }
    let greeting = greeting(&sents, people);
    let attributions = attributions(&sents, people);
    for (i, s) in sents.iter().enumerate() {
        if attributions.iter().any(|a| a.0 == s.start) {
            continue;
        }
        let previous = i.checked_sub(1).map(|p| sents[p].text.as_str());
        let to = addressee(s, greeting, &attributions, people);
        // "Please find it attached": a patch sent back to the robot's
        // people, to test what they were asked to.
        let to_lkp = to == Addressee::Lkp || to == Addressee::Unknown && people.lkp_recipient;
        let sends_a_patch = to_lkp && !targets.is_empty() && FIND_ATTACHED.is_match(&s.text);
        if !sends_a_patch && !asks_for_a_run(&s.text, previous, !targets.is_empty()) {
            continue;
        }
        // Nobody of the robot's is asked, or could even read it.
        if to == Addressee::Other || to == Addressee::Unknown && !people.lkp_recipient && !ROBOT_WORDS.is_match(prose) {
            continue;
        }
        let phrase = s.text.chars().take(300).collect();
        return Some(TestRequest { phrase, targets });
    }
    None
}

/// Words that say how a run went or should go: what "check if", "see
/// whether", "confirm that" must be about to ask for a run.
static FIXWORDS: LazyLock<Regex> = LazyLock::new(|| {
    crate::text::regex(concat!(
        r"(?i)\b(?:fix(?:es|ed)?|help(?:s|ed)?|resolve[sd]?|solve[sd]?|recover(?:s|ed)?|restore[sd]?|works?|",
        r"go(?:es)?\s+away|disappear\w*|gone|reproduc\w*|regress\w*|still|happen\w*|shows?\s+up|pass(?:es)?|",
        r"fail\w*|improve[sd]?|make\s+(?:a|any)\s+difference|the\s+case)\b"
    ))
    .expect("static regex")
});

/// The object of "check", "confirm", "verify": whether something fixes
/// it, or a thing to test.
static CHECK_OBJECT: LazyLock<Regex> = LazyLock::new(|| {
    crate::text::regex(concat!(
        r"(?i)^[\w-]+(?:\s+check)?(?:\s+(?:it|this|that|again))?\s+(?:(?:if|whether|that)\b|",
        r"(?:out\s+)?(?:the|this|that|my|our|these|your)\s+(?:[\w-]+\s+){0,2}?(?:patch|fix|diff|branch|commit|series|",
        r"version|kernel|tree|change)(?:es|s)?\b|(?:on|with|against|too|as\s+well)\b|",
        r"(?:it|this|that|the\s+[\w-]+)\s+(?:\w+\s+)?(?:fix(?:es)?|helps?|resolves?|works?|solves?|recovers?)\b)"
    ))
    .expect("static regex")
});

/// "know if we see a regression": a run described, not a question of fact.
static KNOW_IF: LazyLock<Regex> = LazyLock::new(|| {
    crate::text::regex(r"(?i)(?:know|see)\s+(?:if|whether)\s+(?:we|you|it|this|that|the\s+[\w-]+)\s+(?:\w+\s+)?(?:see|get|reproduce|show|still|regress\w*|fix\w*|help\w*|resolve\w*|work\w*)")
        .expect("static regex")
});

/// "that would be great", "I'd appreciate it": what makes "if you are
/// able to test it" a request and not a condition.
static APPRAISAL: LazyLock<Regex> = LazyLock::new(|| {
    crate::text::regex(r"(?i)\b(?:would|'d)\s+be\s+(?:great|nice|good|helpful|useful|appreciated|awesome|much\s+appreciated)|appreciate|thanks?\b|thank\s+you|let\s+(?:me|us)\s+know")
        .expect("static regex")
});

/// At most this many words between the asking words and the verb:
/// "could you please kindly help to test".
const MAX_GAP_WORDS: usize = 8;

/// Whether `s` asks for a test to be run. `previous` is the sentence
/// before it, which may name what "it" is; `has_target` whether the mail
/// gives something to test.
fn asks_for_a_run(s: &str, previous: Option<&str>, has_target: bool) -> bool {
    if OFFERED.is_match(s) {
        return true;
    }
    // A question: it ends with a question mark, or opens like one and
    // ends with a colon ("Is this already fixed by:" and the commit).
    static OPENS_A_QUESTION: LazyLock<Regex> = LazyLock::new(|| {
        crate::text::regex(r"(?i)^\W*(?:is|was|are|has|have|does|do|did|could|would|can|will)\b").expect("static regex")
    });
    let t = s.trim_end();
    let question = t.ends_with('?') || t.ends_with(':') && OPENS_A_QUESTION.is_match(s);
    if question && DOES_IT.is_match(s) && (has_target || names_a_tree(s) || NAMES_A_FIX.is_match(s)) {
        return true;
    }
    let asks = ASKS_YOU.find(s);
    let imperative = IMPERATIVE
        .captures(s)
        .and_then(|c| c.name("v1").or(c.name("v2")))
        .filter(|v| IMPERATIVE_OBJECT.is_match(&s[v.start()..]));
    if asks.is_none() && imperative.is_none() {
        return false;
    }
    let asking = asks.map(|m| m.as_str().to_ascii_lowercase()).unwrap_or_default();
    // "if you are able to recreate it, then ...": a condition, not a request.
    static THEN: LazyLock<Regex> = LazyLock::new(|| crate::text::regex(r"(?i)\bthen\b").expect("static regex"));
    if asking.starts_with("if") && asks.is_some_and(|m| THEN.is_match(&s[m.end()..])) {
        return false;
    }
    // "if you are able to test it" asks only when it is welcome; "you
    // could try" only with something to try.
    if asking.starts_with("if") && imperative.is_none() && !APPRAISAL.is_match(s) {
        return false;
    }
    let from = asks.map_or_else(|| imperative.map_or(0, |v| v.start()), |m| m.start());
    for v in VERB.captures_iter(&s[from..]) {
        let Some(verb) = v.name("verb") else { continue };
        let at = from + verb.start();
        let between = &s[from..at];
        if SELF.is_match(between)
            || asks.is_some_and(|m| s.get(m.end()..at).unwrap_or("").split_whitespace().count() > MAX_GAP_WORDS)
        {
            continue;
        }
        let word = verb.as_str().to_ascii_lowercase();
        let rest = &s[at..];
        if is_a_noun(&s[..at], rest) {
            continue;
        }
        let ok = if word.starts_with("try") {
            TRY_OBJECT.is_match(rest) || has_target && rest.len() <= 12
        } else if word.starts_with("check") || word.starts_with("double") || word == "confirm" || word == "verify" {
            // "confirm that it's not the case" takes its fix from the
            // sentence before.
            CHECK_OBJECT.is_match(rest)
                && (FIXWORDS.is_match(rest) && !rest.contains("the case")
                    || NAMES_A_FIX.is_match(rest)
                    || rest.contains("the case") && previous.is_some_and(|p| FIXWORDS.is_match(p)))
        } else if word.starts_with("see") || word.contains(" to ") {
            KNOW_IF.is_match(rest) || word.starts_with("see") && FIXWORDS.is_match(rest)
        } else if word.starts_with("run") {
            RUN_OBJECT.is_match(rest)
        } else {
            true
        };
        if !ok {
            continue;
        }
        if asking.starts_with("you") && (BUT.is_match(rest) || !(has_target || NAMES_A_FIX.is_match(rest))) {
            continue;
        }
        return true;
    }
    false
}

/// "the test script", "a test run", "this test case": the verb's word
/// used as a noun.
fn is_a_noun(before: &str, from_verb: &str) -> bool {
    static DETERMINER: LazyLock<Regex> = LazyLock::new(|| {
        crate::text::regex(r"(?i)\b(?:the|a|an|this|that|these|those|my|your|our|their|his|her|its|each|every|any|some|another|one|same)\s*$")
            .expect("static regex")
    });
    static NOUN_AFTER: LazyLock<Regex> = LazyLock::new(|| {
        crate::text::regex(concat!(
            r"(?i)^[\w-]+\s+(?:script|case|cases|suite|results?|machine|box|boxes|report|robot|bot|setup|environment|",
            r"failures?|program|logs?|infrastructure|system|systems|coverage|harness|framework|time|runs?)\b"
        ))
        .expect("static regex")
    });
    // "request a re-test", "do another run": the noun is what is asked for.
    static ASKED_FOR: LazyLock<Regex> = LazyLock::new(|| {
        crate::text::regex(
            r"(?i)\b(?:request|do|run|perform|get|have|schedule|trigger|start|launch|queue|give)\s+\w+\s*$",
        )
        .expect("static regex")
    });
    (DETERMINER.is_match(before) && !ASKED_FOR.is_match(before)) || NOUN_AFTER.is_match(from_verb)
}

/// A thing to test the sentence names itself: a patch, a commit.
static NAMES_A_FIX: LazyLock<Regex> = LazyLock::new(|| {
    crate::text::regex(
        r"(?i)\b(?:patch(?:es|set)?|fix|diff|branch|commit\s+[0-9a-f]{7,40}|series|version|[0-9a-f]{12,40})\b",
    )
    .expect("static regex")
});

/// A later tree: "on a current 5.19-rc6 kernel", "on next-20250321",
/// "on the latest mainline".
fn names_a_tree(s: &str) -> bool {
    static TREE: LazyLock<Regex> = LazyLock::new(|| {
        crate::text::regex(r"(?i)\b(?:on|with|in)\s+(?:the\s+|a\s+)?(?:latest\s+|current\s+|recent\s+|newer\s+)?(?:mainline|upstream|linux-next|next-\d{8}|v?\d+\.\d+(?:-rc\d+)?|linus)")
            .expect("static regex")
    });
    TREE.is_match(s)
}

/// The greeting at the top: who the whole mail is for.
fn greeting(sents: &[Sentence], people: &People) -> Addressee {
    for s in sents.iter().take(3) {
        let name = GREETING
            .captures(&s.text)
            .or_else(|| NAME_LINE.captures(&s.text))
            .and_then(|c| c.name("name").map(|m| m.as_str().to_string()));
        if let Some(name) = name {
            let first = name.split_whitespace().next().unwrap_or(&name).to_string();
            if people.is_lkp(&name) || people.is_lkp(&first) {
                return Addressee::Lkp;
            }
            let generic = [
                "all",
                "everyone",
                "everybody",
                "folks",
                "guys",
                "there",
                "team",
                "both",
                "hi",
                "hello",
                "hey",
                "thanks",
                "sorry",
                "yes",
                "no",
                "ok",
                "okay",
                "well",
                "so",
                "hmm",
                "ah",
                "oh",
            ];
            if generic.contains(&first.to_ascii_lowercase().as_str()) {
                return Addressee::Unknown;
            }
            return Addressee::Other;
        }
    }
    Addressee::Unknown
}

/// The attribution lines in the mail ("On ..., X wrote:"), by offset, with
/// whom each names.
fn attributions(sents: &[Sentence], people: &People) -> Vec<(usize, Addressee)> {
    sents
        .iter()
        .filter_map(|s| {
            if !ends_like_an_attribution(&s.text) {
                return None;
            }
            let who = ATTRIBUTION.captures(&s.text)?.name("who")?.as_str().trim();
            // "On Wed, Dec 4, 2019 at 7:53 PM Dmitry Torokhov wrote:": the
            // name follows the date.
            let words: Vec<&str> = who.split_whitespace().collect();
            let after_date = words
                .iter()
                .rposition(|w| {
                    w.chars().any(|c| c.is_ascii_digit())
                        || w.eq_ignore_ascii_case("am")
                        || w.eq_ignore_ascii_case("pm")
                })
                .map_or(0, |i| i + 1);
            let who = words[after_date..].join(" ");
            let first = first_name(&who).unwrap_or_default();
            let to = if people.is_lkp(&who) || people.is_lkp(&first) {
                Addressee::Lkp
            } else if people.sender.as_deref() == Some(first.as_str()) || first.is_empty() {
                Addressee::Unknown
            } else {
                Addressee::Other
            };
            Some((s.start, to))
        })
        .collect()
}

/// Whether `sentence` ends as [`ATTRIBUTION`] needs it to, with its verb
/// and at most a colon: the pattern's own search, run on every sentence,
/// costs more than the rest of the request's reading, and few sentences
/// are attributions. (Looser than the pattern: it decides; a long s,
/// which `(?i)` takes for "s", lets the sentence through.)
fn ends_like_an_attribution(sentence: &str) -> bool {
    let t = sentence.trim_end().trim_end_matches([':', '：']).trim_end();
    ["wrote", "writes", "写道", "pisze", "crit", "schrieb", "bió", "biÓ"].iter().any(|w| {
        t.len() >= w.len() && t.is_char_boundary(t.len() - w.len()) && t[t.len() - w.len()..].eq_ignore_ascii_case(w)
    }) || crate::text::has_folding_letters(t)
}

/// Whom sentence `s` is put to: the name it calls, else the robot if it
/// names it, else the greeting, else the mail it answers.
fn addressee(s: &Sentence, greeting: Addressee, attributions: &[(usize, Addressee)], people: &People) -> Addressee {
    if let Some(name) = VOCATIVE.captures(&s.text).and_then(|c| c.name("name")) {
        if people.is_lkp(name.as_str()) {
            return Addressee::Lkp;
        }
        if people.is_other(name.as_str()) {
            return Addressee::Other;
        }
    }
    if ROBOT_WORDS.is_match(&s.text) {
        return Addressee::Lkp;
    }
    if greeting != Addressee::Unknown {
        return greeting;
    }
    attributions.iter().rev().find(|a| a.0 < s.start).map_or(Addressee::Unknown, |a| a.1)
}

static LORE: LazyLock<Regex> = LazyLock::new(|| {
    crate::text::regex(r"(?i)\bhttps?://(?:lore\.kernel\.org|lkml\.kernel\.org|patchwork\.kernel\.org|lkml\.org|patch\.msgid\.link)/\S+")
        .expect("static regex")
});
static GIT: LazyLock<Regex> = LazyLock::new(|| {
    crate::text::regex(r"\b((?:https?|git)://\S+?(?:\.git|/linux))/?[ \t]+([A-Za-z0-9][\w./+-]*)")
        .expect("static regex")
});
/// A branch as a web link: `https://github.com/u/linux/tree/fix-x`,
/// `.../linux.git/log/?h=fix-x`.
static GIT_WEB: LazyLock<Regex> = LazyLock::new(|| {
    crate::text::regex(
        r"\b(https?://\S+?)/(?:tree|log|commits)/?(?:\?h=|\?id=\S*?&h=)?([A-Za-z0-9][\w.+-]*(?:/[\w.+-]+)*)",
    )
    .expect("static regex")
});
static SHA: LazyLock<Regex> = LazyLock::new(|| crate::text::regex(r"\b[0-9a-f]{12,40}\b").expect("static regex"));

fn has_diff(text: &str) -> bool {
    text.contains("\ndiff --git ")
        || text.starts_with("diff --git ")
        || (text.contains("\n--- a/") && text.contains("\n+++ b/"))
}

/// Everything in the mail that names something to test.
pub fn targets(own: &str, attachments: &[Attachment]) -> Vec<Target> {
    let mut out = Vec::new();
    for m in LORE.find_iter(own) {
        // `http://lkml.kernel.org/r/<id@host>`: the brackets are not part
        // of the link.
        let v = m.as_str().trim_end_matches(['.', ',', ')', '>', ']']).replace(['<', '>'], "");
        out.push(Target { kind: TargetKind::LoreLink, value: v });
    }
    if has_diff(own) {
        out.push(Target { kind: TargetKind::InlineDiff, value: "inline".into() });
    }
    for a in attachments {
        let name = a.name.as_deref().unwrap_or("").to_ascii_lowercase();
        if name.ends_with(".patch")
            || name.ends_with(".diff")
            || a.content_type.contains("x-patch")
            || a.content_type.contains("x-diff")
        {
            out.push(Target {
                kind: TargetKind::Attachment,
                value: a.name.clone().unwrap_or_else(|| a.content_type.clone()),
            });
        }
    }
    for c in GIT.captures_iter(own).chain(GIT_WEB.captures_iter(own)) {
        let (Some(url), Some(branch)) = (c.get(1), c.get(2)) else { continue };
        let value = format!("{} {}", url.as_str(), branch.as_str().trim_end_matches(['.', ',', ')']));
        if !out.iter().any(|t| t.value == value) {
            out.push(Target { kind: TargetKind::GitBranch, value });
        }
    }
    let in_links: Vec<&str> = out.iter().map(|t| t.value.as_str()).collect();
    let mut shas = Vec::new();
    // `index a1b2c3d4e5f6..f6e5d4c3b2a1 100644` in a diff names blobs, not
    // commits.
    for line in own.lines().filter(|l| !l.starts_with("index ")) {
        for m in SHA.find_iter(line) {
            if !in_links.iter().any(|l| l.contains(m.as_str())) && !shas.contains(&m.as_str()) {
                shas.push(m.as_str());
            }
        }
    }
    out.extend(shas.into_iter().take(5).map(|s| Target { kind: TargetKind::Commit, value: s.to_string() }));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn people() -> People {
        People {
            lkp: vec!["oliver".into(), "yujie".into()],
            others: vec!["tian".into(), "luis".into()],
            sender: None,
            lkp_recipient: true,
        }
    }

    fn asks(text: &str) -> bool {
        extract(text, &[], &people()).is_some()
    }

    /// Only a sentence ending in an attribution's verb is searched for one.
    #[test]
    fn attribution_gate() {
        for yes in [
            "On Mon, Jan 1, 2024 at 9:00 AM Oliver Sang wrote:",
            "Oliver Sang <oliver.sang@intel.com> writes:",
            "Le lun., X a écrit :",
            "Am Mo., X schrieb:",
            "X 写道：",
        ] {
            assert!(ends_like_an_attribution(yes), "{yes}");
            assert!(ATTRIBUTION.is_match(yes), "{yes}");
        }
        for no in ["I wrote a fix for it.", "Thanks for the report"] {
            assert!(!ends_like_an_attribution(no), "{no}");
        }
    }

    #[test]
    fn asks_and_offers() {
        let r = extract("I may find the reason. Could you test this patch on\ntop of this patchset?\n\nhttp://lkml.kernel.org/r/<1522913236-15776-1-git-send-email-x@y>\n", &[], &people()).unwrap();
        assert!(r.phrase.starts_with("Could you test"));
        assert_eq!(r.targets[0].kind, TargetKind::LoreLink);
        assert!(!asks("I can test this patch tomorrow."));
        assert!(!asks("Thanks for the report."));
        assert!(asks("Please retest and provide feedback."));
        let r = extract("Please try the below patch\n\ndiff --git a/x b/x\n", &[], &people()).unwrap();
        assert_eq!(r.targets[0].kind, TargetKind::InlineDiff);
    }

    /// Requests phrased as questions, wishes and asides, and look-alikes
    /// that ask for nothing to be run.
    #[test]
    fn questions_and_asides() {
        let yes = [
            "Would you mind retesting with my branch?\nhttps://github.com/someone/linux/tree/fix-stats\n",
            "Could you give this a spin?\n\ndiff --git a/x b/x\n",
            "Can you check whether this fixes it?\nhttps://lore.kernel.org/all/20990101.1234-1-a@b.c/\n",
            "Can you, please, check if the following patch resolves the regression entirely?\n\ndiff --git a/x b/x\n",
            "could you help check if the patch above fixes the issue on your end?",
            "In the meantime, Oliver, can you please help in testing this patch?",
            "Would it be possible to request a re-test with the branch:\nhttps://github.com/someone/linux fix-stats\n",
            "Oliver, would you be able to test if the attached patch helps?",
            "is it possible to rerun test with following options to further analyze it?",
            "Try this:\n\ndiff --git a/x b/x\n",
            "It would be nice to double check this on the kernel-test-robot side as\nwell, to make sure it's not a false positive.",
            "Does this reproduce on a current 6.9-rc2 kernel?",
            "Oliver can you reproduce the warning on next-20990321 ?",
            "Can you confirm it fixes the problem?\n\ndiff --git a/x b/x\n",
            "Please let me know if you can test this version.\nhttps://lore.kernel.org/all/x@y/\n",
            "If you're able to test it that would be great, the diff is below.\n\ndiff --git a/x b/x\n",
            "Attached patch could be used to see if it fixes things.",
            "Does this fix it?\n----8<----\ndiff --git a/x b/x\n",
            "Hi kernel test robot,\n\nThere is an updated series available[1]. Please retest and provide feedback if any?\n",
            "Is this also already fixed by commit 0123456789ab (\"x: y\")?",
            "On Mon, 1 Jan 2024, Oliver Sang wrote:\n> failed to build\n\nSorry, I sent a stale diff. Please find a fixed patch attached.\n\ndiff --git a/x b/x\n",
            "If it is not too much to ask... It might be interesting to know if we see a regression\nwith scheduler none instead.",
        ];
        for a in yes {
            assert!(asks(a), "{a}");
        }
        let no = [
            "Can you check whether this is expected?",
            "Can you help me to find the test script source please.",
            "I'll check whether this fixes it tomorrow.\nhttps://lore.kernel.org/all/x@y/",
            "Luis, can you confirm if the symptoms match the original report?",
            "I will send a prototype in response on this email for which I will need your help in testing.",
            "Hello Tian,\n\nRQF_MQ_INFLIGHT is not cleared. Can you try the following patch?\n\ndiff --git a/x b/x\n",
            "You could try this patch but ...\n\nhttps://lore.kernel.org/all/x@y/\n\nwe decided this is not right.",
            "Could you fold that in or do you want me to send a new version?",
            "Tian - Please find the patch for the driver attached.\n\ndiff --git a/x b/x\n",
            "What's the failure rate of just running the test alone above?",
            "Let me try the reproducer and get back to you.",
            "Test case 3 fails with the patch applied.",
            "Please ignore this test failure, it is a known flake.",
        ];
        for n in no {
            assert!(!asks(n), "{n}");
        }
    }

    /// Whom a question is put to: the robot's people, or a developer.
    #[test]
    fn addressees() {
        let to_dev =
            "On Mon, 1 Jan 2024, Tian Lan wrote:\n> x\n\nCan you try the following patch?\n\ndiff --git a/x b/x\n";
        assert!(!asks(to_dev));
        let to_lkp = "On Mon, 1 Jan 2024, kernel test robot wrote:\n> x\n\nCan you try the following patch?\n\ndiff --git a/x b/x\n";
        assert!(asks(to_lkp));
        let named = "On Mon, 1 Jan 2024, Tian Lan wrote:\n> x\n\nOliver, can you try the following patch?\n\ndiff --git a/x b/x\n";
        assert!(asks(named));
        // Nobody of the robot's among the recipients, and the mail does
        // not name it: the question is for whoever it answers.
        let p = People { lkp_recipient: false, ..people() };
        assert!(extract("Can you try the following patch?\n\ndiff --git a/x b/x\n", &[], &p).is_none());
    }

    #[test]
    fn first_names() {
        assert_eq!(first_name("Oliver Sang").as_deref(), Some("oliver"));
        assert_eq!(first_name("oliver.sang@intel.com").as_deref(), Some("oliver"));
        assert_eq!(first_name("\"Li, Philip\"").as_deref(), Some("philip"));
    }

    #[test]
    fn branches_as_web_links() {
        let t = targets("my branch https://github.com/someone/linux/tree/fix-stats please", &[]);
        assert_eq!(
            t,
            [Target { kind: TargetKind::GitBranch, value: "https://github.com/someone/linux fix-stats".into() }]
        );
        let t = targets("https://git.kernel.org/pub/scm/linux/kernel/git/x/linux.git/log/?h=for-next/core", &[]);
        assert_eq!(t[0].value, "https://git.kernel.org/pub/scm/linux/kernel/git/x/linux.git for-next/core");
    }

    #[test]
    fn git_branch_and_sha() {
        let t = targets(
            "Can you run git://git.kernel.org/pub/scm/linux/kernel/git/x/linux.git fix-branch and 0123456789abcdef?",
            &[],
        );
        assert_eq!(t[0].kind, TargetKind::GitBranch);
        assert!(t[0].value.ends_with(" fix-branch"));
        assert_eq!(t[1], Target { kind: TargetKind::Commit, value: "0123456789abcdef".into() });
    }
}
