#include "sim/stream.h"

#include <charconv>

namespace xackly {

namespace {

// [id, [k, v, ...] | nil]
std::optional<StreamEntry> ParseEntry(const Reply& r) {
  if (!r.is_array() || r.size() != 2 || !r[0].is_string()) return std::nullopt;
  StreamEntry e;
  e.id = r[0].str();
  if (r[1].is_nil()) {
    e.deleted = true;
    return e;
  }
  const Reply& fields = r[1];
  if (!fields.is_array() || fields.size() % 2 != 0) return std::nullopt;
  const std::vector<Reply>& kv = fields.elements();
  e.fields.reserve(kv.size() / 2);
  for (size_t i = 0; i < kv.size(); i += 2) {
    if (!kv[i].is_string() || !kv[i + 1].is_string()) return std::nullopt;
    e.fields.emplace_back(kv[i].str(), kv[i + 1].str());
  }
  return e;
}

bool AppendEntries(const Reply& list, std::vector<StreamEntry>& out) {
  if (!list.is_array()) return false;
  out.reserve(out.size() + list.size());
  for (const Reply& item : list.elements()) {
    auto e = ParseEntry(item);
    if (!e) return false;
    out.push_back(std::move(*e));
  }
  return true;
}

std::string TextOf(const Reply& r) {
  if (r.is_integer()) return std::to_string(r.integer());
  if (r.is_string() || r.is_status()) return r.str();
  return "";
}

}  // namespace

std::optional<StreamId> StreamId::Parse(std::string_view text) {
  size_t dash = text.find('-');
  StreamId id;
  if (dash == std::string_view::npos) {
    if (!ParseDecimal(text, &id.ms)) return std::nullopt;
    return id;
  }
  if (!ParseDecimal(text.substr(0, dash), &id.ms) || !ParseDecimal(text.substr(dash + 1), &id.seq)) {
    return std::nullopt;
  }
  return id;
}

std::string StreamId::ToString() const { return std::to_string(ms) + "-" + std::to_string(seq); }

std::string_view StreamEntry::Field(std::string_view name) const {
  for (const auto& [k, v] : fields) {
    if (k == name) return v;
  }
  return {};
}

std::optional<std::vector<StreamEntry>> ParseReadReply(const Reply& reply) {
  std::vector<StreamEntry> out;
  if (reply.is_nil()) return out;
  if (!reply.is_array()) return std::nullopt;
  for (const Reply& stream : reply.elements()) {
    if (!stream.is_array() || stream.size() != 2 || !stream[0].is_string()) return std::nullopt;
    if (!AppendEntries(stream[1], out)) return std::nullopt;
  }
  return out;
}

std::optional<std::vector<StreamEntry>> ParseRangeReply(const Reply& reply) {
  std::vector<StreamEntry> out;
  if (!AppendEntries(reply, out)) return std::nullopt;
  return out;
}

std::optional<AutoClaimReply> ParseAutoClaimReply(const Reply& reply) {
  if (!reply.is_array() || reply.size() < 2 || !reply[0].is_string()) return std::nullopt;
  AutoClaimReply out;
  out.next_cursor = reply[0].str();
  if (!AppendEntries(reply[1], out.entries)) return std::nullopt;
  if (reply.size() >= 3) {
    if (!reply[2].is_array()) return std::nullopt;
    for (const Reply& id : reply[2].elements()) {
      if (!id.is_string()) return std::nullopt;
      out.deleted_ids.push_back(id.str());
    }
  }
  return out;
}

std::optional<std::vector<PendingRow>> ParsePendingRows(const Reply& reply) {
  if (!reply.is_array()) return std::nullopt;
  std::vector<PendingRow> rows;
  for (const Reply& r : reply.elements()) {
    if (!r.is_array() || r.size() != 4 || !r[0].is_string() || !r[1].is_string() ||
        !r[2].is_integer() || !r[3].is_integer()) {
      return std::nullopt;
    }
    rows.push_back({r[0].str(), r[1].str(), r[2].integer(), r[3].integer()});
  }
  return rows;
}

std::optional<PendingSummary> ParsePendingSummary(const Reply& reply) {
  if (!reply.is_array() || reply.size() != 4 || !reply[0].is_integer()) return std::nullopt;
  PendingSummary s;
  s.count = reply[0].integer();
  if (s.count == 0) return s;
  if (!reply[1].is_string() || !reply[2].is_string() || !reply[3].is_array()) return std::nullopt;
  s.min_id = reply[1].str();
  for (const Reply& row : reply[3].elements()) {
    int64_t n = 0;
    if (!row.is_array() || row.size() != 2 || !row[0].is_string() || !row[1].is_string() ||
        !ParseDecimal(row[1].str(), &n)) {
      return std::nullopt;
    }
    s.per_consumer.emplace_back(row[0].str(), n);
  }
  return s;
}

std::optional<std::vector<std::vector<std::pair<std::string, std::string>>>> ParseInfoRecords(
    const Reply& reply) {
  if (!reply.is_array()) return std::nullopt;
  std::vector<std::vector<std::pair<std::string, std::string>>> out;
  for (const Reply& rec : reply.elements()) {
    if (!rec.is_array() || rec.size() % 2 != 0) return std::nullopt;
    std::vector<std::pair<std::string, std::string>> kv;
    for (size_t i = 0; i < rec.size(); i += 2) {
      if (!rec[i].is_string()) return std::nullopt;
      kv.emplace_back(rec[i].str(), TextOf(rec[i + 1]));
    }
    out.push_back(std::move(kv));
  }
  return out;
}

std::optional<StreamId> GroupLastDeliveredId(const Reply& xinfo_groups, std::string_view group) {
  auto records = ParseInfoRecords(xinfo_groups);
  if (!records) return std::nullopt;
  for (const auto& record : *records) {
    std::string_view name;
    std::string_view last;
    for (const auto& [k, v] : record) {
      if (k == "name") name = v;
      if (k == "last-delivered-id") last = v;
    }
    if (name == group) return StreamId::Parse(last);
  }
  return std::nullopt;
}

}  // namespace xackly
