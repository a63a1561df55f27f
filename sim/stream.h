// Stream IDs and the shapes of stream replies (Redis 7.0), parsed into plain
// values. Used by protocol primitives to hand entries to consumer code, and
// separately by the oracle's observer, so that neither trusts the other.
#pragma once

#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/reply.h"

namespace xackly {

// Parses all of `s` as a decimal integer; false for "", trailing text or
// overflow.
template <typename Int>
bool ParseDecimal(std::string_view s, Int* out) {
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size();
}

struct StreamId {
  uint64_t ms = 0;
  uint64_t seq = 0;

  static std::optional<StreamId> Parse(std::string_view text);
  std::string ToString() const;
  // The smallest ID greater than this one.
  StreamId Next() const { return seq == UINT64_MAX ? StreamId{ms + 1, 0} : StreamId{ms, seq + 1}; }
  auto operator<=>(const StreamId&) const = default;
};

// One entry as a consumer sees it. `deleted` entries are pending IDs whose
// payload is gone (XDEL/XTRIM): XREADGROUP ... 0 returns them as [id, nil].
struct StreamEntry {
  std::string id;
  bool deleted = false;
  std::vector<std::pair<std::string, std::string>> fields;

  // The value of field `name`, or empty.
  std::string_view Field(std::string_view name) const;
  std::string_view event_id() const { return Field("event_id"); }
};

// XREADGROUP / XREAD reply: nil, or [[stream, [[id, fields|nil]...]]...].
// Entries of all streams, in reply order. Returns nullopt for a malformed reply
// (error replies included).
std::optional<std::vector<StreamEntry>> ParseReadReply(const Reply& reply);
// XRANGE reply: [[id, fields]...].
std::optional<std::vector<StreamEntry>> ParseRangeReply(const Reply& reply);

// XAUTOCLAIM reply: [next-cursor, [[id, fields]...], [deleted-id...]] (7.0),
// or the 6.2 form without the third element.
struct AutoClaimReply {
  std::string next_cursor;
  std::vector<StreamEntry> entries;
  std::vector<std::string> deleted_ids;
};
std::optional<AutoClaimReply> ParseAutoClaimReply(const Reply& reply);

// One row of the extended XPENDING form: [id, consumer, idle-ms, deliveries].
struct PendingRow {
  std::string id;
  std::string consumer;
  int64_t idle_ms = 0;
  int64_t deliveries = 0;
};
std::optional<std::vector<PendingRow>> ParsePendingRows(const Reply& reply);

// XPENDING summary form: [count, min, max, [[consumer, "n"]...]].
struct PendingSummary {
  int64_t count = 0;
  std::string min_id;  // empty when count == 0
  std::vector<std::pair<std::string, int64_t>> per_consumer;
};
std::optional<PendingSummary> ParsePendingSummary(const Reply& reply);

// XINFO GROUPS / XINFO CONSUMERS reply: an array of flat key/value arrays.
// Returns each record as (key, rendered-or-text value) pairs; integer values
// are decimal strings, nil values empty.
std::optional<std::vector<std::vector<std::pair<std::string, std::string>>>> ParseInfoRecords(
    const Reply& reply);

// The last-delivered-id of `group` in an XINFO GROUPS reply; nullopt when
// the group is not there (or the reply is an error, e.g. no such stream).
std::optional<StreamId> GroupLastDeliveredId(const Reply& xinfo_groups, std::string_view group);

}  // namespace xackly
