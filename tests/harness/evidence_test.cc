// Evidence before green (issue 28): a check's fault model is what the file
// says merged with the defaults key by key, a site the file names must be
// one the protocol visits, a green needs every reachable site of the model
// to have fired (or says it did not, with its own exit code), and a
// script's default model follows what the script does.
#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "harness/exit_codes.h"
#include "harness/files.h"
#include "reports/report.h"
#include "tests/harness/test_util.h"

namespace xackly {
namespace {

// No dedupe: the effect, then XACK. A crash after the effect and before
// the XACK runs it twice. Its one SQL statement is an INSERT (a visited
// request that changes state), it never sends EVAL.
const std::string kNoDedupe = PollingConsumer(R"lua(
      w:sql("INSERT INTO seen(event_id) VALUES (?)", e.fields.event_id)
      w:effect(e.fields.event_id, "external", {entry = e})
      w:redis("XACK", w.stream, w.group, e.id)
)lua",
                                              R"lua(  w:sql("CREATE TABLE IF NOT EXISTS seen(event_id TEXT)")
)lua");

// XACK first, then the effect: a failing effect is simply dropped, no
// retry and no dead letter (ack-first).
const std::string kAcksFirst = PollingConsumer(R"lua(
      w:redis("XACK", w.stream, w.group, e.id)
      w:effect(e.fields.event_id, "external", {entry = e})
)lua",
                                              "");

// SQL dedupe, effect and mark in one transaction; when the effect fails
// (outcome "failed": a poison event), `on_failure` runs after the ROLLBACK.
std::string FailingEffectConsumer(const std::string& on_failure) {
  return R"lua(
local function handle(w, e)
  if e.deleted then w:redis("XACK", w.stream, w.group, e.id) return end
  local event = e.fields.event_id
  if not w:sql("BEGIN").ok then return end
  local mark = w:sql("INSERT OR IGNORE INTO processed(event_id) VALUES (?)", event)
  if not mark.ok then return end
  if mark.changes == 1 then
    local ran, outcome = w:effect(event, "sql", {entry = e})
    if not ran then
      w:sql("ROLLBACK")
      if outcome ~= "failed" then return end
)lua" + on_failure + R"lua(
      return
    end
    if not w:sql("COMMIT").ok then return end
  else
    w:sql("ROLLBACK")
  end
  w:redis("XACK", w.stream, w.group, e.id)
end

function consumer(w)
  for _, e in ipairs(w:read("0")) do handle(w, e) end
  while true do
    local r = w:redis("XAUTOCLAIM", w.stream, w.group, w.consumer, 30000, "0-0", "COUNT", 10)
    if not xackly.is_error(r) then
      for _, e in ipairs(xackly.entries(r[2])) do handle(w, e) end
    end
    local batch = w:read(">")
    if #batch == 0 then w:park(2000) end
    for _, e in ipairs(batch) do handle(w, e) end
  end
end
)lua";
}

// Correct: dead-letters an event whose effect fails.
const std::string kDeadLetters = FailingEffectConsumer(R"lua(
      local saved = w:redis("XADD", "events:dlq", "*", "source_id", e.id, "event_id", event)
      if xackly.is_error(saved) then return end
      w:redis("XACK", w.stream, w.group, e.id)
)lua");

// Broken: gives up on an event whose effect fails by acking it, so a
// poison event is lost without a trace.
const std::string kAcksAFailedEffect = FailingEffectConsumer(R"lua(
      w:redis("XACK", w.stream, w.group, e.id)
)lua");

// Retries a failing effect forever (the claim pass takes it again): no
// path that only poison takes, so poison is not added (it would only leave
// the event pending).
const std::string kRetriesForever = FailingEffectConsumer("");

struct Checked {
  CommandOutput run;
  report::CheckReport row;  // from report.json (empty when none was written)
};

// Writes `script` and a scenario (`expect`, then `faults` as the body of
// its [faults] table, "" for none) and runs `check` on it with `args`.
Checked CheckScript(const ScopedTempRoot& dir, const std::string& script, const std::string& expect,
                    const std::string& faults, std::vector<std::string> args = {}) {
  EXPECT_TRUE(WriteFileAtomically(dir.path() + "/consumer.lua", script).ok());
  std::string toml = "name = \"mine\"\nexpect = \"" + expect + "\"\nseed = 1\n\n[workload]\nworkers = 2\nevents = 6\n\n" +
                     "[protocol]\nscript = \"consumer.lua\"\n";
  if (!faults.empty()) toml += "\n[faults]\n" + faults + "\n";
  EXPECT_TRUE(WriteFileAtomically(dir.path() + "/mine.toml", toml).ok());
  std::vector<std::string> argv = {"check", "--scenario", dir.path() + "/mine.toml", "--out", dir.path() + "/out",
                                   "--format", "json,text"};
  argv.insert(argv.end(), args.begin(), args.end());
  Checked out;
  out.run = RunXackly(argv);
  if (Result<std::string> text = ReadFile(dir.path() + "/out/report.json"); text.ok()) {
    Result<report::Report> json = report::ParseJsonReport(*text);
    EXPECT_TRUE(json.ok()) << json.status().ToString();
    if (json.ok() && json->checks.size() == 1) out.row = json->checks[0];
  }
  return out;
}

std::vector<std::string> SitesOf(const report::CheckReport& k) {
  std::vector<std::string> sites = k.never_fired;
  for (const auto& [site, n] : k.fired_totals) sites.push_back(site);
  return sites;
}

bool Has(const std::vector<std::string>& sites, const std::string& site) {
  return std::find(sites.begin(), sites.end(), site) != sites.end();
}

TEST(EvidenceTest, NamingCrashPointsWithoutKindsKeepsTheDefaultKinds) {
  ScopedTempRoot dir;
  Checked c = CheckScript(dir, kNoDedupe, "duplicate", "crash_points = [\"after-effect\"]");
  EXPECT_EQ(c.run.exit_code, kExitOk) << c.run.output;
  EXPECT_FALSE(Contains(c.run.output, "NO faults")) << c.run.output;
  const std::vector<std::string> sites = SitesOf(c.row);
  // The file amended one key: the default kinds stay, crashes and stalls
  // at the one named point, lost requests and replies at visited requests.
  EXPECT_TRUE(Has(sites, "crash@after-effect")) << c.run.output;
  EXPECT_TRUE(Has(sites, "stall@after-effect")) << c.run.output;
  EXPECT_TRUE(Has(sites, "lost-reply@XACK")) << c.run.output;
  EXPECT_FALSE(Has(sites, "crash@before-XACK")) << "not named, so not in the model: " << c.run.output;
}

TEST(EvidenceTest, ASiteNoRunVisitsIsBadInputWithTheNearestSitesNamed) {
  ScopedTempRoot dir;
  Checked c = CheckScript(dir, kNoDedupe, "duplicate", "kinds = [\"crash\"]\ncrash_points = [\"after-xack\"]");
  EXPECT_EQ(c.run.exit_code, kExitUsage) << c.run.output;
  EXPECT_TRUE(Contains(c.run.output, "faults.crash_points")) << c.run.output;
  EXPECT_TRUE(Contains(c.run.output, "after-xack")) << c.run.output;
  EXPECT_TRUE(Contains(c.run.output, "did you mean 'after-XACK'")) << c.run.output;
}

TEST(EvidenceTest, AScriptSiteTheScriptNeverVisitsIsBadInputNamingWhatItVisits) {
  ScopedTempRoot dir;
  Checked c = CheckScript(dir, kNoDedupe, "duplicate", "kinds = [\"crash\"]\ncrash_points = [\"after-XDEL\"]",
                          {"--cases", "5"});
  EXPECT_EQ(c.run.exit_code, kExitUsage) << c.run.output;
  EXPECT_TRUE(Contains(c.run.output, "faults.crash_points: 'after-XDEL' is a site no probe and no case visited"))
      << c.run.output;
}

TEST(EvidenceTest, AnUnvisitedSiteWithNothingNearListsTheSitesTheRunsVisited) {
  ScopedTempRoot dir;
  Checked c = CheckScript(dir, kNoDedupe, "duplicate", "kinds = [\"crash\"]\ncrash_points = [\"point:after-charge\"]",
                          {"--cases", "5"});
  EXPECT_EQ(c.run.exit_code, kExitUsage) << c.run.output;
  EXPECT_TRUE(Contains(c.run.output, "(the runs visited: ")) << c.run.output;
  EXPECT_TRUE(Contains(c.run.output, "after-effect")) << c.run.output;
}

TEST(EvidenceTest, SitesListedBesideNoKindsAreNotCalledUnvisited) {
  ScopedTempRoot dir;
  Checked c = CheckScript(dir, kNoDedupe, "ok", "kinds = []\ncrash_points = [\"after-effect\"]", {"--cases", "3"});
  EXPECT_EQ(c.run.exit_code, kExitOk) << c.run.output;
  EXPECT_TRUE(Contains(c.run.output, "no faults (as the file asks")) << c.run.output;
}

TEST(EvidenceTest, ABuiltInProtocolsUnvisitedSiteIsRefusedAtItsLine) {
  ScopedTempRoot dir;
  const std::string toml = "protocol = \"txn-dedupe\"\nexpect = \"ok\"\n\n[faults]\nkinds = [\"crash\"]\n"
                           "crash_points = [\"after-COMMIT\"]\n";
  ASSERT_TRUE(WriteFileAtomically(dir.path() + "/t.toml", toml).ok());
  CommandOutput run = RunXackly({"check", "--scenario", dir.path() + "/t.toml", "--cases", "2"});
  EXPECT_EQ(run.exit_code, kExitUsage) << run.output;
  EXPECT_TRUE(Contains(run.output, "t.toml:6")) << run.output;
  EXPECT_TRUE(Contains(run.output, "faults.crash_points[0]")) << run.output;
}

TEST(EvidenceTest, AnExplicitlyEmptyModelSaysSoInTheRow) {
  ScopedTempRoot dir;
  Checked c = CheckScript(dir, kNoDedupe, "ok", "kinds = []", {"--cases", "3"});
  EXPECT_EQ(c.run.exit_code, kExitOk) << c.run.output;
  EXPECT_TRUE(Contains(c.run.output, "no faults (as the file asks: kinds = [])")) << c.run.output;
  EXPECT_EQ(c.row.fault_model, "none (as the file asks)") << c.run.output;
  EXPECT_TRUE(c.row.fired_totals.empty()) << c.run.output;
}

TEST(EvidenceTest, GapsLeftAtTheCapAreNotAGreen) {
  ScopedTempRoot dir;
  // One case, and the cap at one case: the rule draws nothing more, and a
  // correct protocol's many reachable sites cannot all fire in one case.
  Checked c = CheckScript(dir, kDeadLetters, "ok", "", {"--cases", "1", "--coverage-cap", "1"});
  EXPECT_EQ(c.run.exit_code, kExitCoverageGaps) << c.run.output;
  EXPECT_FALSE(c.row.coverage_gaps.empty()) << c.run.output;
  EXPECT_TRUE(Contains(c.run.output, "matched with gaps")) << c.run.output;
  Checked allowed = CheckScript(dir, kDeadLetters, "ok", "", {"--cases", "1", "--coverage-cap", "1", "--allow-gaps"});
  EXPECT_EQ(allowed.run.exit_code, kExitOk) << allowed.run.output;
  EXPECT_TRUE(Contains(allowed.run.output, "matched (gaps allowed)")) << allowed.run.output;
}

// The cap counts all cases; one below --cases is a misreading (as if it
// counted extra cases), refused before anything runs.
TEST(EvidenceTest, ACoverageCapBelowTheCasesIsBadInput) {
  ScopedTempRoot dir;
  const std::string out = dir.path() + "/out";
  CommandOutput r =
      RunXackly({"check", "--protocol", "txn-dedupe", "--cases", "10", "--coverage-cap", "5", "--out", out});
  EXPECT_EQ(r.exit_code, kExitUsage) << r.output;
  EXPECT_TRUE(Contains(r.output, "--coverage-cap 5 is below --cases 10")) << r.output;
  EXPECT_FALSE(std::filesystem::exists(out)) << "nothing ran, nothing written";
}

TEST(EvidenceTest, AtTheDefaultsTheCoverageRuleFiresEveryReachableSite) {
  ScopedTempRoot dir;
  Checked c = CheckScript(dir, kDeadLetters, "ok", "");
  EXPECT_EQ(c.run.exit_code, kExitOk) << c.run.output;
  EXPECT_TRUE(c.row.coverage_gaps.empty()) << c.run.output;
  EXPECT_TRUE(c.row.never_fired.empty()) << c.run.output;
  EXPECT_GE(c.row.cases_run, 100) << c.run.output;
}

TEST(EvidenceTest, AScriptThatDeadLettersGetsPoisonByDefault) {
  ScopedTempRoot dir;
  Checked c = CheckScript(dir, kDeadLetters, "ok", "");
  EXPECT_EQ(c.run.exit_code, kExitOk) << c.run.output;
  EXPECT_TRUE(c.row.fired_totals.count("poison")) << c.run.output;
  EXPECT_TRUE(Contains(c.run.output, "dead-letters an event whose effect keeps failing")) << c.run.output;
  // The dead-letter XADD is a site of the model, and it fired.
  EXPECT_TRUE(c.row.fired_totals.count("lost-reply@XADD")) << c.run.output;
}

TEST(EvidenceTest, AScriptThatAcksAFailedEffectGetsPoisonAndLosesIt) {
  ScopedTempRoot dir;
  Checked c = CheckScript(dir, kAcksAFailedEffect, "lost", "");
  EXPECT_EQ(c.run.exit_code, kExitOk) << c.run.output;
  EXPECT_TRUE(c.row.fired_totals.count("poison")) << c.run.output;
  EXPECT_TRUE(Contains(c.run.output, "gives up on an event whose effect keeps failing (acked after 1 failed attempt"))
      << c.run.output;
}

TEST(EvidenceTest, AScriptThatRetriesAFailingEffectForeverIsNotGivenPoisonAndIsToldSo) {
  ScopedTempRoot dir;
  Checked c = CheckScript(dir, kRetriesForever, "ok", "", {"--cases", "30"});
  EXPECT_NE(c.run.exit_code, kExitVerdictMismatch) << "a poison event left pending is no bug of this design: "
                                           << c.run.output;
  EXPECT_FALSE(Has(SitesOf(c.row), "poison")) << c.run.output;
  EXPECT_TRUE(Contains(c.run.output, "poison is not in this check's model: the protocol retries a failing effect"))
      << c.run.output;
}

// An XACK before any attempt failed is no giving up on a failing effect:
// the probe must not call ack-first a dead-letter path (poison would only
// add an event its design loses anyway).
TEST(EvidenceTest, AScriptThatAcksBeforeItsEffectIsNotGivenPoison) {
  ScopedTempRoot dir;
  Checked c = CheckScript(dir, kAcksFirst, "lost", "", {"--cases", "20"});
  EXPECT_FALSE(Has(SitesOf(c.row), "poison")) << c.run.output;
}

TEST(EvidenceTest, AScriptThatNamesItsKindsIsNotGivenPoison) {
  ScopedTempRoot dir;
  Checked c = CheckScript(dir, kDeadLetters, "ok", "kinds = [\"crash\"]", {"--cases", "20"});
  EXPECT_NE(c.run.exit_code, kExitUsage) << c.run.output;
  EXPECT_FALSE(Has(SitesOf(c.row), "poison")) << c.run.output;
}

TEST(EvidenceTest, LostSitesAreTheRequestsTheScriptVisits) {
  ScopedTempRoot dir;
  Checked c = CheckScript(dir, kNoDedupe, "duplicate", "", {"--cases", "20"});
  EXPECT_EQ(c.run.exit_code, kExitOk) << c.run.output;
  const std::vector<std::string> sites = SitesOf(c.row);
  EXPECT_TRUE(Has(sites, "lost-request@INSERT")) << c.run.output;
  EXPECT_TRUE(Has(sites, "lost-reply@XACK")) << c.run.output;
  EXPECT_FALSE(Has(sites, "lost-reply@EVAL")) << "the script sends no EVAL: " << c.run.output;
  EXPECT_FALSE(Has(sites, "lost-reply@COMMIT")) << "the script sends no COMMIT: " << c.run.output;
}

}  // namespace
}  // namespace xackly
