#include "sim/step.h"

namespace xackly {

const OpInfo& InfoOf(Op op) {
  static const OpInfo kInfo[] = {
      {"read-new", Channel::kRedis, "after-read", "XREADGROUP"},
      {"read-pending", Channel::kRedis, "after-pending-read", "XREADGROUP"},
      {"claim", Channel::kRedis, "after-claim", "XAUTOCLAIM"},
      {"delivery-counts", Channel::kRedis, nullptr, nullptr},
      {"ack", Channel::kRedis, "after-ack", "XACK"},
      {"create-group", Channel::kRedis, nullptr, nullptr},
      {"redis-check-done", Channel::kRedis, "after-dedupe-check", nullptr},
      {"redis-mark-done", Channel::kRedis, "after-mark", "SET"},
      {"redis-effect", Channel::kRedis, "after-effect", nullptr},
      {"redis-atomic", Channel::kRedis, "after-eval", "EVAL"},
      {"dead-letter", Channel::kRedis, "after-dead-letter", "XADD"},
      {"produce", Channel::kRedis, nullptr, "XADD"},
      {"trim", Channel::kRedis, nullptr, nullptr},
      {"group-info", Channel::kRedis, nullptr, nullptr},
      {"pending-summary", Channel::kRedis, nullptr, nullptr},
      {"consumer-info", Channel::kRedis, nullptr, nullptr},
      {"del-consumer", Channel::kRedis, nullptr, nullptr},
      {"sql-begin", Channel::kSql, nullptr, nullptr},
      {"sql-check-done", Channel::kSql, "after-dedupe-check", nullptr},
      {"sql-mark-done", Channel::kSql, "after-mark", nullptr},
      {"sql-effect", Channel::kSql, "after-effect", nullptr},
      {"sql-commit", Channel::kSql, "after-commit", "COMMIT"},
      {"sql-rollback", Channel::kSql, nullptr, nullptr},
      {"external-effect", Channel::kExternal, "after-effect", nullptr},
      {"park", Channel::kLocal, nullptr, nullptr},
      {"sleep", Channel::kLocal, nullptr, nullptr},
      {"checkpoint", Channel::kLocal, nullptr, nullptr},
      {"command", Channel::kRedis, nullptr, nullptr},
      {"sql", Channel::kSql, nullptr, nullptr},
      {"exit", Channel::kLocal, nullptr, nullptr},
      {"committed-effect", Channel::kSql, "after-effect", nullptr},
  };
  // One row per Op, in the enum's order: a new Op without its row (or a row
  // too many) does not compile.
  static_assert(sizeof(kInfo) / sizeof(kInfo[0]) == kOpCount, "InfoOf needs one row per Op");
  return kInfo[static_cast<size_t>(op)];
}

std::string VerbOf(std::string_view text) {
  size_t start = 0;
  while (start < text.size() && (text[start] == ' ' || text[start] == '\n' || text[start] == '\t')) ++start;
  std::string verb;
  for (size_t i = start; i < text.size(); ++i) {
    char c = text[i];
    bool word = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                c == '.' || c == '|';
    if (!word) break;
    verb += (c >= 'a' && c <= 'z') ? static_cast<char>(c - 'a' + 'A') : c;
  }
  return verb;
}

}  // namespace xackly
