// The counterexample story: the histories of the violating events merged in
// time order and told one sentence per step, from the history items and the
// trace lines they point to. Nothing here knows a protocol; every sentence
// comes from a HistoryKind, so a new protocol tells its own story.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "reports/model.h"
#include "sim/actor_name.h"
#include "sim/commands.h"
#include "sim/sites.h"
#include "sim/stream.h"
#include "reports/text_util.h"

namespace xackly::report {
namespace {

constexpr int64_t kRelativeTimeMs = 1000;  // gaps from here on read "5 s later"
constexpr int kCollapseRun = 3;            // identical steps in a row told once
constexpr size_t kStoryTail = 4;           // sentences kept after a "…" cut
constexpr size_t kSubjectsNamed = 3;       // "a, b, c and 2 more"

struct Subject {
  std::string event_id;
  std::string stream_id;  // empty for items about the event as a whole
  bool operator==(const Subject&) const = default;
};

// One step of the story: one history item, or the same item of several
// events (one XREADGROUP delivering two entries, one crash holding both).
struct Beat {
  HistoryKind kind = HistoryKind::kProduced;
  int64_t t_ms = 0;
  int64_t line = -1;
  std::string actor;
  std::string detail;
  int64_t value = 0;
  std::vector<Subject> subjects;
  std::string conclusion;    // " → duplicate of order:1 (2 effects)"
  bool expiry = false;       // synthetic: a done-record's TTL ran out here
  bool during_jump = false;  // an expiry that a clock jump leapt over
  bool skips = false;        // a delivery of a done event that neither ran the effect nor acked it
  bool start = false;        // synthetic: the trace shows `actor` (re)starting
  int repeats = 0;           // a collapsed run: this many more like the beat before
  int64_t first_t_ms = 0;    // for a collapsed run: when the run began
  HistoryItem facts{};       // the item's typed facts (site, sink, command...)
  std::string replaces;      // start beats: the name the worker had before, when renamed
  bool decisive = false;     // synthetic: a step that decided the holder's branch (DecisiveLines)
  std::string group;         // the consumer group (Violation::group) in a run of several; empty in a run of one
};

// " of group search-indexer" for a beat of a further group's event; "".
std::string OfGroup(const Beat& b) { return b.group.empty() ? "" : " of group " + b.group; }

bool IsProduce(HistoryKind k) {
  return k == HistoryKind::kProduced || k == HistoryKind::kProduceUnknown ||
         k == HistoryKind::kProduceLost;
}

bool IsDelivery(HistoryKind k) {
  return k == HistoryKind::kDelivered || k == HistoryKind::kRedelivered || k == HistoryKind::kClaimed;
}

// Whether the beat is about the whole run (its fault kind's descriptor).
bool IsRunWide(const HistoryItem& facts) {
  const FaultKindInfo* f = FaultOf(facts);
  return f != nullptr && f->run_wide;
}

// `text` with each "{name}" replaced by hole(name), holes filled left to
// right and only when present (filling one may have effects: Ids marks an
// entry as mentioned). REQUIRES: hole knows every name `text` uses.
std::string Fill(std::string_view text, const std::function<std::string(std::string_view)>& hole) {
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    const size_t open = text.find('{', i);
    const size_t close = open == std::string_view::npos ? open : text.find('}', open);
    if (close == std::string_view::npos) break;
    out.append(text.substr(i, open - i));
    out += hole(text.substr(open + 1, close - open - 1));
    i = close + 1;
  }
  if (i < text.size()) out.append(text.substr(i));
  return out;
}

// "persistence aof" for a restart item, or "".
std::string PersistenceNote(const HistoryItem& item) {
  return item.persistence.empty() ? "" : "persistence " + item.persistence;
}


const TraceLine* LineAt(const CaseReport& c, int64_t line) {
  if (line < 0 || line >= static_cast<int64_t>(c.trace.size())) return nullptr;
  return &c.trace[static_cast<size_t>(line)];
}

// The beats of one violating event: its history, with plain XADDs left out
// (unless the producer's side is part of the problem), cut after the effect
// that made a duplicate, plus the expiry of done-records that a later step
// outlived. `lanes`: the run's processes have handler lanes.
std::vector<Beat> EventBeats(const std::string& event_id, const std::vector<HistoryItem>& history,
                             const Violation* duplicate, const std::string& group, bool lanes) {
  size_t end = history.size();
  int effects = 0;
  if (duplicate != nullptr) {
    for (size_t i = 0; i < history.size(); ++i) {
      if (history[i].kind == HistoryKind::kEffect) {
        end = i + 1;
        ++effects;
      }
    }
    if (effects < 2) end = history.size();  // the ledger saw more than the history: no cut
  }
  const auto produces = std::count_if(history.begin(), history.end(),
                                      [](const HistoryItem& i) { return IsProduce(i.kind); });
  const bool tell_produce =
      produces > 1 || std::any_of(history.begin(), history.end(), [](const HistoryItem& i) {
        return i.kind == HistoryKind::kProduceUnknown || i.kind == HistoryKind::kProduceLost;
      });

  std::vector<Beat> beats;
  bool effect_before = false;
  for (size_t i = 0; i < end; ++i) {
    const HistoryItem& item = history[i];
    if (item.kind == HistoryKind::kEffect) effect_before = true;
    if (item.kind == HistoryKind::kProduced && !tell_produce) continue;
    Beat b{item.kind, item.t_ms, item.line, item.actor, item.detail, item.value, {}, "", false, false, false, false,
           0, item.t_ms};
    b.facts = item;
    b.group = group;
    // A redelivery of an event whose effect already ran, followed by
    // nothing but the next delivery (or the end): the handler found it done
    // and left the entry pending: the duplicate branch skipped XACK. In a
    // handler pool a claimed entry may wait in the process's own queue
    // while the next delivery comes: only nothing at all after it is a skip.
    if (IsDelivery(item.kind) && effect_before && !item.payload_missing) {
      b.skips = i + 1 == history.size() || (!lanes && IsDelivery(history[i + 1].kind));
    }
    if (!IsRunWide(item)) b.subjects.push_back({event_id, item.stream_id});
    if (duplicate != nullptr && effects >= 2 && i + 1 == end) {
      b.conclusion = fmt::format(" → duplicate of {} ({} effects)", ViolationSubject(*duplicate),
                                 std::max(duplicate->effect_count, effects));
    }
    beats.push_back(std::move(b));
  }
  if (beats.empty() && !history.empty()) {
    const HistoryItem& item = history.front();
    beats.push_back({item.kind, item.t_ms, item.line, item.actor, item.detail, item.value,
                     {{event_id, item.stream_id}}, "", false, false, false, false, 0, item.t_ms});
    beats.back().facts = item;
  }
  const int64_t last_t = beats.empty() ? 0 : beats.back().t_ms;
  std::vector<Beat> expiries;
  for (const Beat& b : beats) {
    if (b.kind != HistoryKind::kDedupeRecord || b.value <= 0 || b.t_ms + b.value > last_t) continue;
    Beat e = b;
    e.expiry = true;
    e.t_ms = b.t_ms + b.value;
    e.first_t_ms = e.t_ms;
    e.line = -1;
    e.subjects = {{event_id, ""}};
    expiries.push_back(std::move(e));
  }
  beats.insert(beats.end(), expiries.begin(), expiries.end());
  return beats;
}

// Time order; beats without a trace line after the lines of their instant;
// on one line, a run-wide cause (the restart) before its effects on events.
void SortByTime(std::vector<Beat>& beats) {
  std::stable_sort(beats.begin(), beats.end(), [](const Beat& a, const Beat& b) {
    const int64_t la = a.line < 0 ? std::numeric_limits<int64_t>::max() : a.line;
    const int64_t lb = b.line < 0 ? std::numeric_limits<int64_t>::max() : b.line;
    const int ra = IsRunWide(a.facts) ? 0 : 1;
    const int rb = IsRunWide(b.facts) ? 0 : 1;
    return std::tie(a.t_ms, la, ra) < std::tie(b.t_ms, lb, rb);
  });
}

// A clock jump's item is stamped at its end. A done-record that expired
// during the jump is told right after it, not before it at a time nobody
// lived through.
void PlaceExpiriesAfterJumps(std::vector<Beat>& beats) {
  for (const Beat& jump : beats) {
    if (jump.kind != HistoryKind::kClockJump || jump.value <= 0) continue;
    for (Beat& e : beats) {
      if (!e.expiry || e.t_ms < jump.t_ms - jump.value || e.t_ms >= jump.t_ms) continue;
      e.t_ms = e.first_t_ms = jump.t_ms;
      e.during_jump = true;
    }
  }
  SortByTime(beats);
}

// Beats of several events merged: one beat per (line, kind, actor), in time
// order.
std::vector<Beat> Merge(std::vector<Beat> all) {
  using Key = std::tuple<bool, int64_t, int64_t, int, std::string>;
  std::map<Key, size_t> index;
  std::vector<Beat> merged;
  for (Beat& b : all) {
    const Key key{b.expiry, b.line, b.line < 0 ? b.t_ms : 0, static_cast<int>(b.kind), b.actor};
    auto [it, fresh] = index.emplace(key, merged.size());
    if (fresh) {
      merged.push_back(std::move(b));
      continue;
    }
    Beat& into = merged[it->second];
    for (const Subject& s : b.subjects) {
      if (std::find(into.subjects.begin(), into.subjects.end(), s) == into.subjects.end()) {
        into.subjects.push_back(s);
      }
    }
    if (into.conclusion.empty()) into.conclusion = b.conclusion;
  }
  PlaceExpiriesAfterJumps(merged);
  return merged;
}

// A worker that crashed holding a violating event comes back (same name or
// a fresh one) on a lifecycle line of the trace. When no later beat of that
// worker slot tells it ("w1 starts again and re-reads…"), a beat of its own
// does: a replacement under a new name that never touches the event is the
// whole point of a stranded entry.
std::vector<Beat> AddStarts(const CaseReport& c, std::vector<Beat> beats) {
  std::vector<Beat> starts;
  for (const Beat& b : beats) {
    if (b.kind != HistoryKind::kCrash || b.line < 0) continue;
    for (int64_t l = b.line + 1; l < static_cast<int64_t>(c.trace.size()); ++l) {
      const TraceLine& t = c.trace[static_cast<size_t>(l)];
      if (t.event != LineEvent::kStart || Slot(t.actor) != Slot(b.actor)) {
        continue;
      }
      const bool told = std::any_of(beats.begin(), beats.end(), [&](const Beat& o) {
        return o.line > l && Slot(o.actor) == Slot(b.actor);
      });
      if (!told) {
        Beat start;
        start.kind = b.kind;
        start.t_ms = t.t_ms;
        start.first_t_ms = t.t_ms;
        start.line = l;
        start.actor = t.actor;
        start.replaces = t.replaces;
        start.start = true;
        starts.push_back(std::move(start));
      }
      break;
    }
  }
  beats.insert(beats.end(), starts.begin(), starts.end());
  SortByTime(beats);
  return beats;
}

// The decisive steps (DecisiveLines) that no beat tells yet: a failed
// COMMIT, a ROLLBACK, a lost reply, a write answered nil (SET NX) decide
// what the holder does next, and the story says them where they happened.
std::vector<Beat> AddDecisiveSteps(const CaseReport& c, std::vector<Beat> beats) {
  std::set<int64_t> told;
  for (const Beat& b : beats) told.insert(b.line);
  for (int64_t l : DecisiveLines(c)) {
    if (told.count(l) > 0) continue;
    const TraceLine& t = c.trace[static_cast<size_t>(l)];
    Beat step;
    step.kind = HistoryKind::kFault;
    step.t_ms = t.t_ms;
    step.first_t_ms = t.t_ms;
    step.line = l;
    step.actor = t.actor;
    step.decisive = true;
    step.detail = t.request + " -> " + t.reply;  // what Collapse compares
    beats.push_back(std::move(step));
  }
  SortByTime(beats);
  return beats;
}

// Runs of kCollapseRun or more beats that repeat the same step (same kind,
// actor and entries) are told once, then "repeats this N more times".
std::vector<Beat> Collapse(std::vector<Beat> beats) {
  const auto same = [](const Beat& a, const Beat& b) {
    return a.kind == b.kind && a.actor == b.actor && a.subjects == b.subjects && !a.expiry &&
           !b.expiry && !a.start && !b.start && a.conclusion.empty() && b.conclusion.empty() &&
           a.decisive == b.decisive && (!a.decisive || a.detail == b.detail);
  };
  std::vector<Beat> out;
  for (size_t i = 0; i < beats.size();) {
    size_t j = i + 1;
    while (j < beats.size() && same(beats[i], beats[j])) ++j;
    out.push_back(beats[i]);
    if (j - i >= kCollapseRun) {
      Beat run = beats[j - 1];
      run.repeats = static_cast<int>(j - i - 1);
      run.first_t_ms = beats[i].t_ms;
      out.push_back(std::move(run));
    } else {
      for (size_t k = i + 1; k < j; ++k) out.push_back(beats[k]);
    }
    i = j;
  }
  return out;
}

std::string JoinNames(const std::vector<std::string>& names) {
  std::vector<std::string> unique;
  for (const std::string& n : names) {
    if (std::find(unique.begin(), unique.end(), n) == unique.end()) unique.push_back(n);
  }
  std::string out;
  const size_t shown = unique.size() > kSubjectsNamed + 1 ? kSubjectsNamed : unique.size();
  for (size_t i = 0; i < shown; ++i) {
    if (i > 0) out += i + 1 == shown && shown == unique.size() ? " and " : ", ";
    out += unique[i];
  }
  if (shown < unique.size()) out += fmt::format(" and {} more", unique.size() - shown);
  return out;
}

// Tells the beats in order, keeping what each event went through so far.
class Teller {
 public:
  explicit Teller(const CaseReport& c) : c_(c), has_lanes_(c.handlers > 1) {}

  std::string Tell(const Beat& b) {
    std::string time;
    // A clock jump is stamped at its end; it began `value` ms earlier.
    const int64_t began = b.kind == HistoryKind::kClockJump ? b.t_ms - std::max<int64_t>(b.value, 0) : b.t_ms;
    const std::optional<int64_t> prev_t_ms = prev_t_ms_;
    const int64_t gap = prev_t_ms_ ? began - *prev_t_ms_ : 0;
    if (prev_t_ms_ && gap >= kRelativeTimeMs && b.repeats == 0) {
      time = FormatDuration(gap) + " later ";
    }
    prev_t_ms_ = b.t_ms;
    if (b.repeats > 0) {
      return fmt::format("{} repeats this {} more {} over the next {}.", Who(b.actor), b.repeats,
                         b.repeats == 1 ? "time" : "times", FormatDuration(b.t_ms - b.first_t_ms));
    }
    if (b.start) {
      last_line_of_slot_[std::string(Slot(b.actor))] = b.line;
      stalled_.erase(b.actor);
      return time + b.actor + " " + StartPhrase(b.replaces) + ".";
    }
    if (b.decisive) {
      const TraceLine& t = *LineAt(c_, b.line);
      // "w2 waits 15 s for w1's transaction" already says where the time went.
      if (WaitedForATransaction(t) && gap - t.duration_ms < kRelativeTimeMs) time.clear();
      return time + DecisivePhrase(b.actor, t, CutWaitAfterMs(b.line)) + ".";
    }
    auto [restart, restart_t_ms] = Restart(b);
    const bool acts = !b.expiry && !IsRunWide(b.facts) && b.kind != HistoryKind::kRestartLoss &&
                      b.kind != HistoryKind::kFailoverLoss;
    if (acts && restart.empty() && stalled_.erase(b.actor) > 0) restart = "resumes";
    auto [subject, predicate] = Phrase(b);
    if (b.kind == HistoryKind::kStall) stalled_.insert(b.actor);
    if (b.line >= 0 && !b.actor.empty()) last_line_of_slot_[std::string(Slot(b.actor))] = b.line;
    if (restart_t_ms >= 0 && b.t_ms - restart_t_ms >= kRelativeTimeMs) {
      // "w1.2 starts (replacing w1); 20 s later it claims ...": the start
      // and the act are told at their own times, not as one moment.
      const int64_t before_start = prev_t_ms ? restart_t_ms - *prev_t_ms : 0;
      return fmt::format("{}{} {}; {} later it {}{}.",
                         before_start >= kRelativeTimeMs ? FormatDuration(before_start) + " later " : "", subject,
                         restart, FormatDuration(b.t_ms - restart_t_ms), predicate, b.conclusion);
    }
    std::string out = time + subject;
    if (!restart.empty()) out += " " + restart + " and";
    out += " " + predicate + b.conclusion + ".";
    return out;
  }

 private:
  struct EventState {
    bool effect = false;  // in the current delivery
    bool acked = false;   // in the current delivery
    int effects = 0;      // in the story so far
    int failures = 0;     // failed effect attempts so far
    bool dead_lettering = false;  // acked to be dead-lettered, payload not saved yet
    bool dead_lettered = false;   // the payload reached the dead-letter stream
    bool by_position = false;     // the current delivery is a plain XREAD (no PEL, no XACK)
  };

  // True when an event of `b` reaches the dead-letter stream after `b`.
  bool DeadLetteredLater(const Beat& b) const {
    for (const Subject& s : b.subjects) {
      auto it = c_.histories.find(s.event_id);
      if (it == c_.histories.end()) continue;
      for (const HistoryItem& item : it->second) {
        if (item.kind == HistoryKind::kDeadLettered && item.t_ms >= b.t_ms) return true;
      }
    }
    return false;
  }

  static std::string Who(const std::string& actor) {
    return DescribeActor(actor).role == ActorRole::kFaultInjector ? "an injected fault" : actor;
  }

  // What set off a run-wide fault: "the lag at p1's WAIT" for the failover
  // a replica lag brought about (its line names who met the lag, whose
  // last lagging request is the one), "an injected fault" otherwise.
  std::string RunWideCause(const Beat& b) const {
    const TraceLine* line = LineAt(c_, b.line);
    if (line == nullptr || line->brought_by.empty()) return "an injected fault";
    for (int64_t l = b.line - 1; const TraceLine* t = LineAt(c_, l); --l) {
      if (t->actor == line->brought_by && t->event == LineEvent::kReplicaLag && !t->argv.empty()) {
        return fmt::format("the lag at {}'s {}", t->actor, t->argv[0]);
      }
    }
    return fmt::format("a replica lag {} met", line->brought_by);
  }

  // "1-0 (order:1)" on first mention, "1-0" after; the event id when the
  // item names no entry.
  std::string Ids(const std::vector<Subject>& subjects) {
    std::vector<std::string> names;
    for (const Subject& s : subjects) {
      if (s.stream_id.empty()) {
        names.push_back(s.event_id);
      } else if (mentioned_.insert(s.stream_id).second && !s.event_id.empty()) {
        names.push_back(fmt::format("{} ({})", s.stream_id, s.event_id));
      } else {
        names.push_back(s.stream_id);
      }
    }
    return JoinNames(names);
  }

  static std::string Events(const std::vector<Subject>& subjects) {
    std::vector<std::string> names;
    for (const Subject& s : subjects) names.push_back(s.event_id);
    return JoinNames(names);
  }

  // Why a loss of entries no worker had read took events for good: "; no
  // worker had read it: w1 was down (it crashed at before-XREADGROUP,
  // 504 ms earlier)". A worker that had read an entry would have had its payload
  // (and done its effect) whatever became of the entry after. The workers
  // that were down (crashed, not started again) or stalled at the loss are
  // named from the trace; a loss of entries some worker had read: "".
  std::string NoWorkerReadIt(const Beat& b) {
    for (const Subject& s : b.subjects) {
      auto held = held_.find(s.event_id);
      if (held != held_.end() && !held->second.empty()) return "";
    }
    const std::string text = b.subjects.size() == 1 ? "; no worker had read it" : "; no worker had read them";
    if (b.line < 0 || b.line > static_cast<int64_t>(c_.trace.size())) return text;
    // Per worker process (its handler lanes share its fate: the lane the
    // fault fired in comes first, the others' lines follow at the same
    // instant), the crash or stall that took it away, if it is still away.
    std::map<int, const TraceLine*> workers;
    for (int64_t l = 0; l < b.line; ++l) {
      const TraceLine& t = c_.trace[static_cast<size_t>(l)];
      const ActorIdentity who = DescribeActor(t.actor);
      if (who.role != ActorRole::kWorker) continue;
      const TraceLine*& fault = workers[who.number];
      const bool away = t.event == LineEvent::kCrash || t.event == LineEvent::kStall;
      if (away && (fault == nullptr || fault->t_ms != t.t_ms || fault->event != t.event)) fault = &t;
      if (t.event == LineEvent::kStart) fault = nullptr;
    }
    std::vector<std::string> away;
    for (const auto& [number, fault] : workers) {
      if (fault == nullptr) continue;
      const TraceLine& f = *fault;
      if (f.event == LineEvent::kCrash) {
        away.push_back(fmt::format("{} was down (it crashed at {}, {} earlier)", f.actor, f.site,
                                   FormatDuration(b.t_ms - f.t_ms)));
      } else if (f.t_ms + f.duration_ms > b.t_ms) {
        away.push_back(fmt::format("{} was stalled at {} (a {} stall that began {} earlier)", f.actor, f.site,
                                   FormatDuration(f.duration_ms), FormatDuration(b.t_ms - f.t_ms)));
      }
    }
    return away.empty() ? text : text + ": " + JoinNames(away);
  }

  // The entries the subjects' events sit in, as delivered so far.
  std::string Held(const std::vector<Subject>& subjects) {
    std::vector<Subject> held;
    for (const Subject& s : subjects) held.push_back({s.event_id, held_[s.event_id]});
    return Ids(held);
  }

  // ", before XACK" and friends: where the holder stood with the events.
  std::string Standing(const Beat& b) {
    const std::vector<Subject>& subjects = b.subjects;
    if (subjects.empty()) return "";
    bool all_effect_only = true, all_ack_only = true, all_neither = true, all_dead_lettering = true;
    bool all_by_position = true;
    for (const Subject& s : subjects) {
      const EventState& st = State(b, s);
      all_by_position = all_by_position && st.by_position;
      all_effect_only = all_effect_only && st.effect && !st.acked;
      all_ack_only = all_ack_only && st.acked && !st.effect;
      all_neither = all_neither && !st.effect && !st.acked;
      all_dead_lettering = all_dead_lettering && st.dead_lettering && !st.dead_lettered;
    }
    if (all_by_position) {  // a position-based reader: nothing to acknowledge
      return all_effect_only ? ", after the side effect of " + Events(subjects) + " and before its position passes it"
             : all_neither   ? ", holding " + Held(subjects) + " read and not yet processed"
                             : "";
    }
    if (all_dead_lettering) return ", after XACK and before the payload reaches the dead-letter stream";
    if (all_effect_only) return ", before XACK";
    if (all_ack_only) return ", after XACK and before the side effect";
    if (all_neither) return ", holding " + Held(subjects) + " unacknowledged";
    return "";
  }

  // How long after a lagging WAIT (line `l`) a failover cut it, before the
  // answer its line shows: its actor's next line is the cut's io-error,
  // within the wait. -1: it was answered.
  int64_t CutWaitAfterMs(int64_t l) const {
    const TraceLine* wait = LineAt(c_, l);
    if (wait == nullptr || wait->event != LineEvent::kReplicaLag) return -1;
    for (int64_t k = l + 1; const TraceLine* next = LineAt(c_, k); ++k) {
      if (next->actor != wait->actor) continue;
      const bool cut = next->event == LineEvent::kIoError && next->t_ms < wait->t_ms + wait->duration_ms;
      return cut ? next->t_ms - wait->t_ms : -1;
    }
    return -1;
  }

  // A decisive step, from its trace line: "w1 sends SET done:order:1 1 NX
  // and gets nil", "w1's COMMIT fails (error: ...)". `cut_after_ms` >= 0: a
  // lagging WAIT that a failover cut that long after it was sent.
  static std::string DecisivePhrase(const std::string& actor, const TraceLine& t, int64_t cut_after_ms = -1) {
    constexpr size_t kStepChars = 60;
    const std::string_view request = BusinessRequest(t);
    std::string step(request.substr(0, kStepChars));
    if (request.size() > kStepChars) step += "…";
    if (WaitedForATransaction(t)) {
      // The store runs one transaction at a time (sim/store.h).
      const std::string waited = fmt::format("{} waits {} for {}'s transaction to end", actor,
                                             FormatDuration(t.duration_ms), t.waited_for);
      TraceLine rest = t;
      rest.waited_for.clear();
      if (!IsDecisive(rest)) return fmt::format("{}, then sends {} ({})", waited, step, t.reply);
      return waited + "; then " + DecisivePhrase(actor, rest);
    }
    // The reply without the trace's fault note (" !replica-lag (...)").
    const std::string answer = t.reply.substr(0, t.reply.find(" !"));
    switch (t.event) {
      case LineEvent::kLostReply: return fmt::format("the reply to {}'s {} is lost (it ran; {} times out)", actor, step, actor);
      case LineEvent::kLostRequest: return fmt::format("{}'s {} is lost before it reaches its server", actor, step);
      case LineEvent::kErrorReply:
        return fmt::format("{}'s {} never reaches its server: it is answered {}", actor, step, answer);
      case LineEvent::kReplicaLag: {
        if (cut_after_ms >= 0) {
          return fmt::format("{}'s {} waits for a lagging replica and is cut by a failover {} later, before it "
                             "answers: the writes before it are not confirmed",
                             actor, step, FormatDuration(cut_after_ms));
        }
        // WAIT's answer (an integer, before the trace's note) against the
        // replicas it asked for.
        const std::string count = t.reply.substr(0, t.reply.find(' '));
        const std::optional<WaitRequest> asked = ParseWait(t.argv);
        int64_t answered = -1;
        const bool known = asked && ParseDecimal(count, &answered);
        const bool short_of = known ? answered < asked->replicas : count == "0";
        if (known && asked->replicas == 0) {
          return fmt::format("{}'s {} waits for no replica and is answered {} at once", actor, step, count);
        }
        if (t.duration_ms == 0 && !short_of) {  // several replicas: the others answered
          return fmt::format("{}'s {} is answered {} at once by the replicas that keep up; the lagging one has not "
                             "received the writes since it began to lag",
                             actor, step, count);
        }
        return fmt::format("{}'s {} waits {} for a lagging replica and is answered {}{}", actor, step,
                           FormatDuration(t.duration_ms), count,
                           short_of ? ": the writes before it are not confirmed" : "");
      }
      case LineEvent::kIoError: return fmt::format("{}'s {} fails: the connection died with the server", actor, step);
      case LineEvent::kNotSent: return fmt::format("{}'s {} is not sent ({})", actor, step, t.reply);
      // A crash or stall of the holder that no history item tells (it held
      // none of the violating events then): told as the fault it is, not
      // as its trace line.
      case LineEvent::kCrash: return fmt::format("{} crashes at {}", actor, t.site);
      case LineEvent::kStall:
        return fmt::format("{} stalls at {} for {}", actor, t.site, FormatDuration(t.duration_ms));
      default: break;
    }
    if (t.kind == LineKind::kRedis) return fmt::format("{} sends {} and gets {}", actor, step, t.reply);
    if (t.kind == LineKind::kSql && StatementVerb(request) == "ROLLBACK") {
      return fmt::format("{} rolls its transaction back ({} -> {})", actor, step, t.reply);
    }
    if (t.kind == LineKind::kSql || t.kind == LineKind::kExternal) {
      return fmt::format("{}'s {} fails ({})", actor, step, t.reply);
    }
    return fmt::format("{}: {} {}", actor, step, t.reply);
  }

  // "starts again" / "starts (replacing w1)".
  static std::string StartPhrase(const std::string& replaces) {
    return replaces.empty() ? "starts again" : "starts (replacing " + replaces + ")";
  }

  // "starts again" and the start's virtual time when the trace shows the
  // actor (re)starting since the story last saw its worker slot; {"", -1}
  // when it did not.
  std::pair<std::string, int64_t> Restart(const Beat& b) {
    if (b.line < 0 || b.actor.empty() || IsRunWide(b.facts) || b.expiry) return {"", -1};
    auto it = last_line_of_slot_.find(std::string(Slot(b.actor)));
    if (it == last_line_of_slot_.end()) return {"", -1};
    for (int64_t l = b.line - 1; l > it->second; --l) {
      const TraceLine* t = LineAt(c_, l);
      if (t == nullptr || t->event != LineEvent::kStart || t->actor != b.actor) continue;
      return {StartPhrase(t->replaces), t->t_ms};
    }
    return {"", -1};
  }

  // Whether `b`'s reader read under a consumer name other than its own
  // process's (a name every instance shares, as CAP's group-named consumer).
  static bool SharesAnotherName(const Beat& b) {
    if (b.facts.consumer.empty()) return false;
    const ActorIdentity id = DescribeActor(b.actor);
    if (id.role != ActorRole::kWorker) return false;
    return b.facts.consumer != ActorName(ActorRole::kWorker, id.number, id.incarnation, id.incarnation > 1);
  }

  std::string Delivery(const Beat& b, std::string text) {
    for (const Subject& s : b.subjects) {
      EventState& st = State(b, s);
      st.effect = false;
      st.acked = false;
      st.by_position = b.kind == HistoryKind::kReadByPosition;
      if (!s.stream_id.empty()) held_[s.event_id] = s.stream_id;
    }
    if (b.facts.payload_missing) {
      text += ", but its payload is gone (nil)";
    }
    if (b.skips) {
      text += told_skip_ ? ", and again finds " + Events(b.subjects) + " done and skips it without XACK"
                         : ", finds " + Events(b.subjects) +
                               " already done and skips it without XACK (the duplicate branch never acks, "
                               "so the entry stays pending)";
      told_skip_ = true;
    }
    return text;
  }

  // A fault's beat, told by its kind's descriptor (FaultKindInfo::story).
  std::pair<std::string, std::string> FaultPhrase(const Beat& b, const FaultKindInfo& fault) {
    const std::string who = fault.run_wide ? RunWideCause(b) : Who(b.actor);
    const std::string duration = b.value > 0 ? FormatDuration(b.value) : "";
    // A handler lane that went down (or stalled) with its process: what the
    // process held is told at the lane the fault fired in.
    if (!b.facts.fired_in.empty()) {
      return {who, fault.kind == FaultKind::kCrash
                       ? fmt::format("goes down with its process ({} crashed at {})", b.facts.fired_in, b.facts.site)
                       : fmt::format("stalls with its process ({} stalled at {}){}", b.facts.fired_in, b.facts.site,
                                     duration.empty() ? "" : " for " + duration)};
    }
    auto hole = [&](std::string_view name) -> std::string {
      auto unless_empty = [](const std::string& prefix, const std::string& value, const std::string& suffix = "") {
        return value.empty() ? std::string() : prefix + value + suffix;
      };
      if (name == "who") return who;
      if (name == "site") return b.facts.site;
      if (name == "ids") return Ids(b.subjects);
      if (name == "standing") return Standing(b);
      if (name == "for") return unless_empty(" for ", duration);
      if (name == "by") return unless_empty(" by ", duration);
      if (name == "with") return unless_empty(" with ", b.detail);
      if (name == "detail") return b.detail;
      if (name == "consumer") return unless_empty(" ", b.facts.consumer);
      if (name == "persistence") return unless_empty(" (", PersistenceNote(b.facts), ")");
      XACKLY_CHECK(false);  // a descriptor's story names an unknown hole
      return "";
    };
    return {who, Fill(fault.story, hole)};
  }

  std::pair<std::string, std::string> Phrase(const Beat& b) {
    const std::string who = Who(b.actor);
    const TraceLine* line = LineAt(c_, b.line);
    if (const FaultKindInfo* fault = FaultOf(b.facts); fault != nullptr && *fault->story != '\0') {
      return FaultPhrase(b, *fault);
    }
    switch (b.kind) {
      case HistoryKind::kProduced: {
        std::vector<std::string> parts;
        for (const Subject& s : b.subjects) {
          mentioned_.insert(s.stream_id);
          parts.push_back(s.event_id + " as " + s.stream_id);
        }
        return {who, "adds " + JoinNames(parts) + " (XADD)"};
      }
      case HistoryKind::kProduceUnknown:
        return {who, fmt::format("adds {}, but the XADD reply is lost, so {} cannot know it did",
                                 Ids(b.subjects), who)};
      case HistoryKind::kProduceLost:
        return {who, "sends XADD for " + Events(b.subjects) + ", but the request is lost and never runs"};
      case HistoryKind::kDelivered:
        return {who, Delivery(b, "reads " + Ids(b.subjects) + " with XREADGROUP >" + OfGroup(b))};
      case HistoryKind::kReadByPosition:
        return {who, Delivery(b, "reads " + Ids(b.subjects) + " with XREAD from the position it keeps")};
      case HistoryKind::kRedelivered:
        if (SharesAnotherName(b)) {
          return {who, Delivery(b, "re-reads the pending list of consumer " + b.facts.consumer + ", " +
                                       Ids(b.subjects) + " (XREADGROUP 0" + OfGroup(b) +
                                       "; every process reading as " + b.facts.consumer +
                                       " shares that list, and another may hold it)")};
        }
        return {who, Delivery(b, (has_lanes_ ? "re-reads its process's pending " : "re-reads its own pending ") +
                                     Ids(b.subjects) + " (XREADGROUP 0" + OfGroup(b) +
                                     (has_lanes_ ? "; the process's other lanes may hold it)" : ")"))};
      case HistoryKind::kClaimed: {
        if (b.facts.payload_missing) {
          return {who, "runs XAUTOCLAIM, which reports " + Ids(b.subjects) +
                           " deleted and drops it from the PEL"};
        }
        std::string how = b.facts.command;
        bool justid = false;
        if (line != nullptr) {
          const std::vector<std::string>& w = line->argv;
          const CommandInfo& command = w.empty() ? UnknownCommand() : CommandOf(w);
          if (command.category == ReportCategory::kClaim && command.timer_at > 0 && w.size() > command.timer_at) {
            how = std::string(command.verb) + " min-idle " + w[command.timer_at];
          }
          justid = std::find(w.begin(), w.end(), "JUSTID") != w.end();
        }
        if (justid) {  // ownership only: nothing is delivered, so the entry is not this delivery's
          return {who, "takes over " + Ids(b.subjects) + " without reading it (" + how + " JUSTID" + OfGroup(b) +
                           ": ownership only, the payload is not delivered and the delivery count stays)"};
        }
        return {who, Delivery(b, "claims " + Ids(b.subjects) + " (" + how + OfGroup(b) + ")")};
      }
      case HistoryKind::kEffect: {
        bool again = false;
        for (const Subject& s : b.subjects) {
          EventState& st = State(b, s);
          again = again || st.effects > 0;
          st.effects++;
          st.effect = true;
        }
        if (again) return {who, "runs the side effect of " + Events(b.subjects) + " again"};
        const std::string& sink = b.facts.sink;
        return {who, "runs the side effect of " + Events(b.subjects) +
                         (sink.empty() ? "" : " (" + sink + ")")};
      }
      case HistoryKind::kEffectFailed:
        for (const Subject& s : b.subjects) State(b, s).failures++;
        return {who, fmt::format("tries the side effect of {}, but it fails ({})",
                                 Events(b.subjects), b.detail)};
      case HistoryKind::kDedupeRecord:
        if (b.expiry) {
          return {"the done-record of " + Events(b.subjects),
                  fmt::format("expires {}({} TTL)", b.during_jump ? "during the jump " : "",
                              FormatDuration(b.value))};
        }
        return {who, "records " + Events(b.subjects) + " as done" +
                         (b.value > 0 ? " with a " + FormatDuration(b.value) + " TTL" : "")};
      case HistoryKind::kAcked: {
        // An XACK of an event whose every attempt failed and whose effect
        // never ran is the first half of dead-lettering it (ack, then save).
        bool gives_up = true;
        int failures = 0;
        for (const Subject& s : b.subjects) {
          EventState& st = State(b, s);
          st.acked = true;
          gives_up = gives_up && st.failures > 0 && st.effects == 0 && !st.dead_lettered;
          failures = std::max(failures, st.failures);
          if (gives_up) st.dead_lettering = true;
        }
        if (gives_up && DeadLetteredLater(b)) {
          return {who, fmt::format("gives up on {} after {} and dead-letters it, acknowledging {} with XACK "
                                   "first (the payload is not saved yet)",
                                   Events(b.subjects), Count(failures, "failed attempt"), Ids(b.subjects))};
        }
        if (gives_up) {
          return {who, fmt::format("gives up on {} after {} and acknowledges {} with XACK before its payload "
                                   "is saved anywhere",
                                   Events(b.subjects), Count(failures, "failed attempt"), Ids(b.subjects))};
        }
        return {who, "acknowledges " + Ids(b.subjects) + " with XACK"};
      }
      case HistoryKind::kDeadLettered:
        for (const Subject& s : b.subjects) State(b, s).dead_lettered = true;
        return {who, "writes " + Events(b.subjects) + " to the dead-letter stream"};
      case HistoryKind::kRestartLoss: {
        const std::string why = PersistenceNote(b.facts);
        const std::string unread = NoWorkerReadIt(b);
        return {"the server restart", "loses " + Ids(b.subjects) + (why.empty() ? "" : " (" + why + ")") + unread};
      }
      case HistoryKind::kFailoverLoss: {
        const std::string unread = NoWorkerReadIt(b);
        return {"the failover",
                "loses " + Ids(b.subjects) + " (the promoted replica never received its XADD)" + unread};
      }
      default:
        break;
    }
    return {who, b.detail};
  }

  const CaseReport& c_;
  const bool has_lanes_;  // a handler pool's run: lanes share their process's consumer and PEL
  std::optional<int64_t> prev_t_ms_;
  std::set<std::string> mentioned_;
  // Where each group's handling of an event stands: a fan-out's groups each
  // handle it once, so one group's attempts are not another's.
  EventState& State(const Beat& b, const Subject& s) { return state_[{b.group, s.event_id}]; }
  std::map<std::pair<std::string, std::string>, EventState> state_;  // (group, event)
  std::map<std::string, std::string> held_;              // event → stream id delivered last
  std::map<std::string, int64_t> last_line_of_slot_;     // worker slot → last line told
  std::set<std::string> stalled_;                        // actors stalled and not yet seen again
  bool told_skip_ = false;                               // a skipped duplicate was explained once
};

std::string Conclusion(const Violation& v) {
  switch (v.kind) {
    case VerdictKind::kDuplicate:
      return fmt::format("→ duplicate of {} ({} effects): {}.", ViolationSubject(v), v.effect_count, v.cause);
    case VerdictKind::kLost:
      return fmt::format("→ {} is lost: {}.", ViolationSubject(v), v.cause);
    case VerdictKind::kPelLeak:
      return fmt::format("→ {} stays pending forever (pel-leak): {}.", ViolationSubject(v), v.cause);
    case VerdictKind::kStuck:
      return fmt::format("→ {} never settles (stuck): {}.", ViolationSubject(v, "the run"), v.cause);
    case VerdictKind::kOk:
      break;
  }
  return fmt::format("→ {}: {}.", VerdictKindName(v.kind), v.cause);
}

// Whether a trace line may have handed a pending entry over again: a claim
// (XCLAIM, XAUTOCLAIM), an XREADGROUP of pending entries (an ID, not >),
// server-side code (EVAL, FCALL: the trace does not show what it ran) or a
// command the table does not know, that the server ran (not refused).
bool MayRedeliver(const TraceLine& t) {
  if (t.kind != LineKind::kRedis || t.argv.empty() || t.reply.starts_with('-')) return false;
  const CommandInfo& info = CommandOf(t.argv);
  if (info.category == ReportCategory::kClaim || info.runs_code || !info.known) return true;
  if (info.verb != "XREADGROUP") return false;
  auto streams = std::find_if(t.argv.begin(), t.argv.end(), [](const std::string& w) { return Upper(w) == "STREAMS"; });
  if (streams == t.argv.end()) return false;
  const auto after = static_cast<size_t>(t.argv.end() - streams - 1);
  return std::any_of(t.argv.end() - static_cast<std::ptrdiff_t>(after / 2), t.argv.end(),
                     [](const std::string& id) { return id != ">"; });
}

// For an entry left pending (pel-leak, or stuck after a delivery): that
// nothing after its last step could have handed it over again, when the
// trace shows so. Empty when something could have (the story's steps then
// say what it did), or when the trace was not kept.
std::string NothingRedelivers(const CaseReport& c, const Violation& v) {
  if (v.kind != VerdictKind::kPelLeak && v.kind != VerdictKind::kStuck) return "";
  if (v.event_id.empty() || c.trace.empty()) return "";
  auto it = c.histories.find(HistoryKey(v));
  if (it == c.histories.end() || it->second.empty()) return "";
  const std::vector<HistoryItem>& history = it->second;
  if (std::none_of(history.begin(), history.end(), [](const HistoryItem& i) { return IsDelivery(i.kind); })) return "";
  int64_t last = -1;
  for (const HistoryItem& i : history) last = std::max(last, i.line);
  if (last < 0) return "";
  for (size_t l = static_cast<size_t>(last) + 1; l < c.trace.size(); ++l) {
    if (MayRedeliver(c.trace[l])) return "";
  }
  return fmt::format("After its last step above, nothing hands {} over again: no XCLAIM or XAUTOCLAIM, no "
                     "XREADGROUP of pending entries (an ID, not >), no EVAL or FCALL.",
                     ViolationSubject(v));
}

}  // namespace

std::vector<std::string> Story(const CaseReport& c) {
  std::vector<std::string> texts;
  for (StorySentence& s : StorySentences(c)) texts.push_back(std::move(s.text));
  return texts;
}

std::vector<StorySentence> StorySentences(const CaseReport& c) {
  using Kind = StorySentence::Kind;
  if (c.violations.empty()) return {};
  std::vector<Beat> all;
  std::set<std::string> told;
  std::set<std::string> concluded;  // duplicates that end on their effect
  for (const Violation& v : c.violations) {
    if (v.event_id.empty() || !told.insert(HistoryKey(v)).second) continue;
    auto it = c.histories.find(HistoryKey(v));
    if (it == c.histories.end()) continue;
    const Violation* dup = v.kind == VerdictKind::kDuplicate ? &v : nullptr;
    std::vector<Beat> beats = EventBeats(v.event_id, it->second, dup, v.group, c.handlers > 1);
    if (dup != nullptr && std::any_of(beats.begin(), beats.end(),
                                      [](const Beat& b) { return !b.conclusion.empty(); })) {
      concluded.insert(HistoryKey(v));
    }
    all.insert(all.end(), beats.begin(), beats.end());
  }
  std::vector<StorySentence> sentences;
  Teller teller(c);
  std::set<std::string> explained;  // events whose pending entry nothing hands over again
  for (const Beat& b : Collapse(AddDecisiveSteps(c, AddStarts(c, Merge(std::move(all)))))) {
    sentences.push_back({teller.Tell(b), b.conclusion.empty() ? Kind::kBeat : Kind::kVerdict});
  }
  for (const Violation& v : c.violations) {
    if (v.kind == VerdictKind::kDuplicate && concluded.count(HistoryKey(v)) > 0) continue;
    if (std::string why = NothingRedelivers(c, v); !why.empty() && explained.insert(HistoryKey(v)).second) {
      sentences.push_back({std::move(why), Kind::kBeat});
    }
    sentences.push_back({Conclusion(v), Kind::kVerdict});
  }
  for (StorySentence& s : sentences) s.text = ValidUtf8(s.text);
  if (sentences.size() > kMaxStorySentences) {
    const size_t head = kMaxStorySentences - kStoryTail - 1;
    std::vector<StorySentence> cut(sentences.begin(), sentences.begin() + head);
    cut.push_back({fmt::format("… ({} more steps)", sentences.size() - head - kStoryTail), Kind::kCut});
    cut.insert(cut.end(), sentences.end() - kStoryTail, sentences.end());
    sentences = std::move(cut);
  }
  return sentences;
}

}  // namespace xackly::report
