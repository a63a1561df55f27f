#include "harness/merge.h"

#include <map>
#include <set>

#include <fmt/format.h>

#include "harness/check.h"

namespace xackly {

namespace {

Status CheckShardSet(const std::vector<report::Report>& shards) {
  std::set<int> seen;
  int total = -1;
  for (const report::Report& r : shards) {
    int i = 0;
    int n = 0;
    if (!ParseShard(r.shard, &i, &n)) {
      return Status::InvalidArgument(fmt::format(
          "a report of command '{}' is not a shard (run `xackly check --shard I/N --format json`)", r.command));
    }
    if (total != -1 && n != total) {
      return Status::InvalidArgument(fmt::format("shards of {} and of {} do not belong together", total, n));
    }
    total = n;
    ++i;  // 1-based, as written
    if (!seen.insert(i).second) return Status::InvalidArgument(fmt::format("shard {}/{} is given twice", i, n));
  }
  std::string missing;
  for (int i = 1; i <= total; ++i) {
    if (seen.count(i) == 0) missing += (missing.empty() ? "" : ", ") + fmt::format("{}/{}", i, total);
  }
  if (!missing.empty()) return Status::InvalidArgument("missing shard(s): " + missing);
  return Status::Ok();
}

report::CheckReport MergeCheck(const std::vector<const report::CheckReport*>& parts) {
  report::CheckReport merged = *parts[0];
  const report::CheckReport* first_hit = nullptr;
  std::map<std::string, int> observed_votes;
  merged.undecided = false;  // the merged set decides every check
  merged.cases_run = 0;
  merged.cases_failed = 0;
  merged.cases_unjudged = 0;
  merged.cases_for_coverage = 0;
  std::set<std::string> gaps;  // a shard's gaps, less what any shard fired
  merged.other_violations.clear();
  merged.seconds = 0;
  FaultCoverage coverage;  // over every shard; a shard enabled the sites it fired and those it never did
  for (const report::CheckReport* p : parts) {
    merged.cases_run += p->cases_run;
    merged.cases_failed += p->cases_failed;
    merged.cases_unjudged += p->cases_unjudged;
    merged.cases_for_coverage += p->cases_for_coverage;
    gaps.insert(p->coverage_gaps.begin(), p->coverage_gaps.end());
    for (const auto& [cls, n] : p->other_violations) merged.other_violations[cls] += n;
    merged.seconds += p->seconds;
    FaultCoverage shard{p->fired_totals, {p->never_fired.begin(), p->never_fired.end()}};
    for (const auto& [site, n] : p->fired_totals) shard.enabled.insert(site);
    coverage.Add(shard);
    if (p->first_hit_case >= 0 && (first_hit == nullptr || p->first_hit_case < first_hit->first_hit_case)) {
      first_hit = p;
    }
    if (p->observed != "ok") observed_votes[p->observed]++;
  }
  merged.fired_totals = coverage.fired;
  merged.never_fired = coverage.NeverFired();
  std::erase_if(gaps, [&](const std::string& site) { return coverage.fired.count(site) > 0; });
  merged.coverage_gaps.assign(gaps.begin(), gaps.end());
  if (first_hit != nullptr) {
    merged.counterexample = first_hit->counterexample;
    merged.counterexample_size = first_hit->counterexample_size;
    merged.shrink_steps = first_hit->shrink_steps;
    merged.shrink_cut = first_hit->shrink_cut;
    merged.first_hit_case = first_hit->first_hit_case;
    merged.observed = first_hit->observed;
    merged.matched = first_hit->matched;
    // The unsharded search stops at its first failing case: every shard
    // ran all of its cases below that one, and none of them failed.
    merged.cases_run = first_hit->first_hit_case + 1;
    merged.cases_failed = 1;
    merged.other_violations.clear();
    merged.coverage_gaps.clear();  // a hit ends the search: no gap rule
  } else {
    // No shard found what the check looks for: the counterexample of another
    // violation (the first shard's that has one), so every violation counted
    // keeps a replay file.
    merged.counterexample.reset();
    merged.counterexample_size.clear();
    merged.shrink_steps = 0;
    merged.shrink_cut = false;
    for (const report::CheckReport* p : parts) {
      if (p->counterexample) {
        merged.counterexample = p->counterexample;
        merged.counterexample_size = p->counterexample_size;
        merged.shrink_steps = p->shrink_steps;
        merged.shrink_cut = p->shrink_cut;
        break;
      }
    }
    merged.first_hit_case = -1;
    merged.observed = "ok";
    int best = 0;
    for (const auto& [cls, n] : observed_votes) {
      if (n > best) {
        best = n;
        merged.observed = cls;
      }
    }
    merged.undecided = merged.cases_unjudged > 0;  // the unjudged cases may hold it (check_command.cc)
    merged.matched = merged.expected.IsOk() && observed_votes.empty() && !merged.undecided;
  }
  return merged;
}

}  // namespace

Result<report::Report> MergeReports(const std::vector<report::Report>& shards) {
  if (shards.empty()) return Status::InvalidArgument("nothing to merge");
  Status set = CheckShardSet(shards);
  if (!set.ok()) return set;
  const report::Report& first = shards[0];
  for (const report::Report& r : shards) {
    if (r.seed != first.seed) {
      return Status::InvalidArgument(fmt::format("shards of seed {} and seed {} do not belong together", first.seed, r.seed));
    }
    if (r.server_version != first.server_version) {
      // The same cases on another server are another search: replies (and
      // so traces and verdicts) may differ (a server matrix's columns).
      return Status::InvalidArgument(fmt::format(
          "shards {} and {} ran on different servers ({} and {}): their cases are not parts of one search; merge "
          "each server's shards separately",
          first.shard, r.shard, first.server_version, r.server_version));
    }
    if (const std::string d = first.search.DifferenceFrom(r.search); !d.empty()) {
      return Status::InvalidArgument(fmt::format(
          "shards {} and {} searched differently ({}): their cases are not parts of one search; run every shard "
          "with the same options",
          first.shard, r.shard, d));
    }
    if (r.checks.size() != first.checks.size()) {
      return Status::InvalidArgument(fmt::format("shard {} has {} checks, shard {} has {}", first.shard,
                                                 first.checks.size(), r.shard, r.checks.size()));
    }
  }
  report::Report merged = first;
  merged.command = "merge";
  merged.shard.clear();
  merged.options = first.options + fmt::format("; merged from {} shards", shards.size());
  merged.checks.clear();
  merged.all_matched = true;
  for (size_t c = 0; c < first.checks.size(); ++c) {
    std::vector<const report::CheckReport*> parts;
    for (const report::Report& r : shards) {
      const report::CheckReport& k = r.checks[c];
      if (k.name != first.checks[c].name || !(k.expected.ToString() == first.checks[c].expected.ToString())) {
        return Status::InvalidArgument(fmt::format("shard {} checks {} ({}) where shard {} checks {} ({})",
                                                   r.shard, k.name, k.expected.ToString(), first.shard,
                                                   first.checks[c].name, first.checks[c].expected.ToString()));
      }
      parts.push_back(&k);
    }
    merged.checks.push_back(MergeCheck(parts));
    merged.all_matched = merged.all_matched && merged.checks.back().matched;
  }
  return merged;
}

}  // namespace xackly
