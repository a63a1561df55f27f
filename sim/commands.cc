#include "sim/commands.h"

#include <algorithm>
#include <array>

#include "sim/stream.h"

namespace xackly {

namespace {

using G = CommandGroup;
using R = ReportCategory;
using S = ScriptRefusal;
using T = TimerKind;

constexpr CommandInfo Read(std::string_view verb, G group, uint8_t first_key = 1) {
  return {.verb = verb, .group = group, .first_key = first_key};
}
constexpr CommandInfo Write(std::string_view verb, G group, uint8_t first_key = 1) {
  return {.verb = verb, .group = group, .writes = true, .first_key = first_key};
}
// Replaces or removes its key whatever type it holds.
constexpr CommandInfo Overwrite(std::string_view verb, G group, uint8_t first_key = 1) {
  return {.verb = verb, .group = group, .writes = true, .any_key_type = true, .first_key = first_key};
}
constexpr CommandInfo Blocking(std::string_view verb, G group, uint8_t first_key = 1) {
  return {.verb = verb, .group = group, .writes = true, .script = S::kBlocking, .first_key = first_key};
}
constexpr CommandInfo Harness(std::string_view verb, G group) {
  return {.verb = verb, .group = group, .writes = true, .script = S::kHarness};
}
constexpr CommandInfo Code(std::string_view verb, bool writes) {
  return {.verb = verb, .group = G::kScripting, .writes = writes, .runs_code = true, .numkeys_at = 2};
}
constexpr CommandInfo Expiry(std::string_view verb, G group, uint8_t at, uint16_t unit_ms) {
  return {.verb = verb, .group = group, .writes = true, .any_key_type = true, .first_key = 1,
          .timer = T::kKeyExpiry, .timer_at = at, .timer_unit_ms = unit_ms};
}

// One row per command, sorted by verb (a static_assert checks it). Rows of
// subcommands read "XGROUP DELCONSUMER" and sort after their command.
constexpr auto kCommands = std::to_array<CommandInfo>({
    Harness("ACL", G::kServer),
    Write("APPEND", G::kString),
    Harness("AUTH", G::kConnection),
    Harness("BGREWRITEAOF", G::kServer),
    Harness("BGSAVE", G::kServer),
    Read("BITCOUNT", G::kOther),
    Write("BITFIELD", G::kOther),
    Read("BITFIELD_RO", G::kOther),
    Overwrite("BITOP", G::kOther, 2),
    Read("BITPOS", G::kOther),
    Blocking("BLMOVE", G::kList),
    Blocking("BLMPOP", G::kList, 3),  // BLMPOP timeout numkeys key ...
    Blocking("BLPOP", G::kList),
    Blocking("BRPOP", G::kList),
    Blocking("BRPOPLPUSH", G::kList),
    Blocking("BZMPOP", G::kSortedSet, 3),
    Blocking("BZPOPMAX", G::kSortedSet),
    Blocking("BZPOPMIN", G::kSortedSet),
    Harness("CLIENT", G::kConnection),
    Read("COMMAND", G::kServer, 0),
    Harness("CONFIG", G::kServer),
    Overwrite("COPY", G::kGeneric),
    Read("DBSIZE", G::kServer, 0),
    Harness("DEBUG", G::kServer),
    Write("DECR", G::kString),
    Write("DECRBY", G::kString),
    Overwrite("DEL", G::kGeneric),
    Read("DISCARD", G::kTransactions, 0),
    Read("DUMP", G::kGeneric),
    Read("ECHO", G::kConnection, 0),
    Code("EVAL", true),
    Code("EVALSHA", true),
    Code("EVALSHA_RO", false),
    Code("EVAL_RO", false),
    // EXEC runs what MULTI queued: anything.
    {.verb = "EXEC", .group = G::kTransactions, .writes = true},
    Read("EXISTS", G::kGeneric),
    Expiry("EXPIRE", G::kGeneric, 2, 1000),
    Overwrite("EXPIREAT", G::kGeneric),
    Read("EXPIRETIME", G::kGeneric),
    Harness("FAILOVER", G::kServer),
    Code("FCALL", true),
    Code("FCALL_RO", false),
    Harness("FLUSHALL", G::kServer),
    Harness("FLUSHDB", G::kServer),
    {.verb = "FUNCTION", .group = G::kScripting, .writes = true, .subcommands = true},
    Write("GEOADD", G::kOther),
    Read("GEODIST", G::kOther),
    Read("GEOHASH", G::kOther),
    Read("GEOPOS", G::kOther),
    Overwrite("GEORADIUS", G::kOther),
    Overwrite("GEORADIUSBYMEMBER", G::kOther),
    Read("GEOSEARCH", G::kOther),
    Overwrite("GEOSEARCHSTORE", G::kOther),
    Read("GET", G::kString),
    Read("GETBIT", G::kOther),
    Write("GETDEL", G::kString),
    {.verb = "GETEX", .group = G::kString, .writes = true, .first_key = 1, .timer = T::kKeyExpiry,
     .timer_options_from = 2},
    Read("GETRANGE", G::kString),
    Write("GETSET", G::kString),
    Write("HDEL", G::kHash),
    // HELLO 3 would switch the connection to RESP3, which the harness does not read.
    Harness("HELLO", G::kConnection),
    Read("HEXISTS", G::kHash),
    Read("HGET", G::kHash),
    Read("HGETALL", G::kHash),
    Write("HINCRBY", G::kHash),
    Write("HINCRBYFLOAT", G::kHash),
    Read("HKEYS", G::kHash),
    Read("HLEN", G::kHash),
    Read("HMGET", G::kHash),
    Write("HMSET", G::kHash),
    Read("HRANDFIELD", G::kHash),
    Read("HSCAN", G::kHash),
    Write("HSET", G::kHash),
    Write("HSETNX", G::kHash),
    Read("HSTRLEN", G::kHash),
    Read("HVALS", G::kHash),
    Write("INCR", G::kString),
    Write("INCRBY", G::kString),
    Write("INCRBYFLOAT", G::kString),
    Read("INFO", G::kServer, 0),
    Read("KEYS", G::kGeneric, 0),
    Read("LASTSAVE", G::kServer, 0),
    Read("LCS", G::kString),
    Read("LINDEX", G::kList),
    Write("LINSERT", G::kList),
    Read("LLEN", G::kList),
    Write("LMOVE", G::kList),
    Write("LMPOP", G::kList, 2),
    Write("LPOP", G::kList),
    Read("LPOS", G::kList),
    Write("LPUSH", G::kList),
    Write("LPUSHX", G::kList),
    Read("LRANGE", G::kList),
    Write("LREM", G::kList),
    Write("LSET", G::kList),
    Write("LTRIM", G::kList),
    {.verb = "MEMORY", .group = G::kServer, .subcommands = true},
    Read("MGET", G::kString),
    Overwrite("MIGRATE", G::kGeneric, 3),
    Harness("MODULE", G::kServer),
    Harness("MONITOR", G::kServer),
    Overwrite("MOVE", G::kGeneric),
    Overwrite("MSET", G::kString),
    Write("MSETNX", G::kString),
    Read("MULTI", G::kTransactions, 0),
    {.verb = "OBJECT", .group = G::kGeneric, .subcommands = true, .first_key = 2},
    Write("PERSIST", G::kGeneric),
    Expiry("PEXPIRE", G::kGeneric, 2, 1),
    Overwrite("PEXPIREAT", G::kGeneric),
    Read("PEXPIRETIME", G::kGeneric),
    Write("PFADD", G::kOther),
    Read("PFCOUNT", G::kOther),
    Write("PFMERGE", G::kOther),
    Read("PING", G::kConnection, 0),
    {.verb = "PSETEX", .group = G::kString, .writes = true, .any_key_type = true, .first_key = 1,
     .timer = T::kKeyExpiry, .timer_at = 2, .timer_unit_ms = 1},
    Harness("PSUBSCRIBE", G::kPubSub),
    Harness("PSYNC", G::kServer),
    Read("PTTL", G::kGeneric),
    Write("PUBLISH", G::kPubSub, 0),
    Harness("QUIT", G::kConnection),
    Read("RANDOMKEY", G::kGeneric, 0),
    Overwrite("RENAME", G::kGeneric),
    Overwrite("RENAMENX", G::kGeneric),
    Harness("REPLCONF", G::kServer),
    Harness("REPLICAOF", G::kServer),
    Harness("RESET", G::kConnection),
    Overwrite("RESTORE", G::kGeneric),
    Read("ROLE", G::kServer, 0),
    Write("RPOP", G::kList),
    Write("RPOPLPUSH", G::kList),
    Write("RPUSH", G::kList),
    Write("RPUSHX", G::kList),
    Write("SADD", G::kSet),
    Harness("SAVE", G::kServer),
    Read("SCAN", G::kGeneric, 0),
    Read("SCARD", G::kSet),
    {.verb = "SCRIPT", .group = G::kScripting, .subcommands = true},
    Read("SDIFF", G::kSet),
    Overwrite("SDIFFSTORE", G::kSet),
    Harness("SELECT", G::kConnection),
    {.verb = "SET", .group = G::kString, .writes = true, .any_key_type = true, .first_key = 1,
     .timer = T::kKeyExpiry, .timer_options_from = 3},
    Write("SETBIT", G::kOther),
    Expiry("SETEX", G::kString, 2, 1000),
    Write("SETNX", G::kString),
    Write("SETRANGE", G::kString),
    Harness("SHUTDOWN", G::kServer),
    Read("SINTER", G::kSet),
    Read("SINTERCARD", G::kSet, 2),
    Overwrite("SINTERSTORE", G::kSet),
    Read("SISMEMBER", G::kSet),
    Harness("SLAVEOF", G::kServer),
    Read("SMEMBERS", G::kSet),
    Read("SMISMEMBER", G::kSet),
    Write("SMOVE", G::kSet),
    Overwrite("SORT", G::kGeneric),
    Read("SORT_RO", G::kGeneric),
    Write("SPOP", G::kSet),
    Read("SRANDMEMBER", G::kSet),
    Write("SREM", G::kSet),
    Read("SSCAN", G::kSet),
    Harness("SSUBSCRIBE", G::kPubSub),
    Read("STRLEN", G::kString),
    Harness("SUBSCRIBE", G::kPubSub),
    Read("SUBSTR", G::kString),
    Read("SUNION", G::kSet),
    Overwrite("SUNIONSTORE", G::kSet),
    Harness("SWAPDB", G::kServer),
    Harness("SYNC", G::kServer),
    Read("TIME", G::kServer, 0),
    Read("TOUCH", G::kGeneric),
    Read("TTL", G::kGeneric),
    Read("TYPE", G::kGeneric),
    Overwrite("UNLINK", G::kGeneric),
    Read("UNWATCH", G::kTransactions, 0),
    Blocking("WAIT", G::kGeneric, 0),
    Blocking("WAITAOF", G::kGeneric, 0),
    Read("WATCH", G::kTransactions),
    {.verb = "XACK", .group = G::kStream, .writes = true, .category = R::kAck, .first_key = 1, .group_at = 2,
     .ids_from = 3},
    {.verb = "XADD", .group = G::kStream, .writes = true, .category = R::kProduce, .first_key = 1},
    {.verb = "XAUTOCLAIM", .group = G::kStream, .writes = true, .category = R::kClaim, .first_key = 1,
     .group_at = 2, .consumer_at = 3, .timer = T::kClaimThreshold, .timer_at = 4},
    {.verb = "XCLAIM", .group = G::kStream, .writes = true, .category = R::kClaim, .first_key = 1,
     .group_at = 2, .consumer_at = 3, .ids_from = 5, .timer = T::kClaimThreshold, .timer_at = 4},
    {.verb = "XDEL", .group = G::kStream, .writes = true, .category = R::kDelete, .first_key = 1, .ids_from = 2},
    {.verb = "XGROUP", .group = G::kStream, .writes = true, .subcommands = true, .first_key = 2},
    {.verb = "XGROUP DELCONSUMER", .group = G::kStream, .writes = true, .subcommands = true,
     .category = R::kDelete, .first_key = 2, .group_at = 3, .consumer_at = 4},
    {.verb = "XINFO", .group = G::kStream, .subcommands = true, .first_key = 2},
    Read("XLEN", G::kStream),
    {.verb = "XPENDING", .group = G::kStream, .first_key = 1, .group_at = 2, .timer = T::kClaimThreshold,
     .timer_options_from = 3},
    Read("XRANGE", G::kStream),
    Read("XREAD", G::kStream, 0),
    // XREADGROUP GROUP g consumer ... STREAMS key... id...: it delivers, so it writes.
    {.verb = "XREADGROUP", .group = G::kStream, .writes = true, .category = R::kRead, .group_at = 2,
     .consumer_at = 3},
    Read("XREVRANGE", G::kStream),
    Write("XSETID", G::kStream),
    {.verb = "XTRIM", .group = G::kStream, .writes = true, .category = R::kDelete, .first_key = 1},
    Write("ZADD", G::kSortedSet),
    Read("ZCARD", G::kSortedSet),
    Read("ZCOUNT", G::kSortedSet),
    Read("ZDIFF", G::kSortedSet, 2),
    Overwrite("ZDIFFSTORE", G::kSortedSet),
    Write("ZINCRBY", G::kSortedSet),
    Read("ZINTER", G::kSortedSet, 2),
    Read("ZINTERCARD", G::kSortedSet, 2),
    Overwrite("ZINTERSTORE", G::kSortedSet),
    Read("ZLEXCOUNT", G::kSortedSet),
    Write("ZMPOP", G::kSortedSet, 2),
    Read("ZMSCORE", G::kSortedSet),
    Write("ZPOPMAX", G::kSortedSet),
    Write("ZPOPMIN", G::kSortedSet),
    Read("ZRANDMEMBER", G::kSortedSet),
    Read("ZRANGE", G::kSortedSet),
    Read("ZRANGEBYLEX", G::kSortedSet),
    Read("ZRANGEBYSCORE", G::kSortedSet),
    Overwrite("ZRANGESTORE", G::kSortedSet),
    Read("ZRANK", G::kSortedSet),
    Write("ZREM", G::kSortedSet),
    Write("ZREMRANGEBYLEX", G::kSortedSet),
    Write("ZREMRANGEBYRANK", G::kSortedSet),
    Write("ZREMRANGEBYSCORE", G::kSortedSet),
    Read("ZREVRANGE", G::kSortedSet),
    Read("ZREVRANGEBYLEX", G::kSortedSet),
    Read("ZREVRANGEBYSCORE", G::kSortedSet),
    Read("ZREVRANK", G::kSortedSet),
    Read("ZSCAN", G::kSortedSet),
    Read("ZSCORE", G::kSortedSet),
    Read("ZUNION", G::kSortedSet, 2),
    Overwrite("ZUNIONSTORE", G::kSortedSet),
});

constexpr bool SortedByVerb() {
  for (size_t i = 1; i < kCommands.size(); ++i) {
    if (!(kCommands[i - 1].verb < kCommands[i].verb)) return false;
  }
  return true;
}
static_assert(SortedByVerb(), "kCommands must be sorted by verb, one row each (binary search)");

constexpr CommandInfo kUnknown = {.verb = "", .group = G::kOther, .known = false, .writes = true};

const CommandInfo* Find(std::string_view upper) {
  auto it = std::lower_bound(kCommands.begin(), kCommands.end(), upper,
                             [](const CommandInfo& row, std::string_view v) { return row.verb < v; });
  return it != kCommands.end() && it->verb == upper ? &*it : nullptr;
}

}  // namespace

const char* ReportCategoryName(ReportCategory c) {
  switch (c) {
    case ReportCategory::kRead: return "read";
    case ReportCategory::kAck: return "ack";
    case ReportCategory::kClaim: return "claim";
    case ReportCategory::kProduce: return "produce";
    case ReportCategory::kDelete: return "delete";
    case ReportCategory::kOther: return "other";
  }
  return "other";
}

bool CommandInfo::MayWriteList() const {
  if (!writes) return false;
  switch (group) {
    case G::kList:
    case G::kScripting:
    case G::kTransactions:
    case G::kServer:
    case G::kOther: return true;
    case G::kStream:
    case G::kString:
    case G::kHash:
    case G::kSet:
    case G::kSortedSet:
    case G::kGeneric:
    case G::kConnection:
    case G::kPubSub: return any_key_type || !known;
  }
  return true;
}

std::string Upper(std::string_view word) {
  std::string out(word);
  for (char& c : out) {
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  }
  return out;
}

bool HasOption(std::span<const std::string> argv, std::string_view word) {
  return std::any_of(argv.begin() + (argv.empty() ? 0 : 1), argv.end(),
                     [&](const std::string& a) { return a.size() == word.size() && Upper(a) == word; });
}

const CommandInfo& UnknownCommand() { return kUnknown; }

std::span<const CommandInfo> AllCommands() { return kCommands; }

const CommandInfo& CommandNamed(std::string_view verb) {
  const CommandInfo* row = Find(Upper(verb));
  return row != nullptr ? *row : kUnknown;
}

const CommandInfo& CommandOf(std::span<const std::string> argv) {
  const std::string verb = Upper(argv[0]);
  const CommandInfo* row = Find(verb);
  if (row == nullptr) return kUnknown;
  if (row->subcommands && argv.size() > 1) {
    if (const CommandInfo* sub = Find(verb + " " + Upper(argv[1]))) return *sub;
  }
  return *row;
}

void CanonicalizeCommand(std::vector<std::string>* argv) {
  if (argv->empty()) return;
  (*argv)[0] = Upper((*argv)[0]);
  if (argv->size() > 1 && CommandOf(*argv).subcommands) (*argv)[1] = Upper((*argv)[1]);
}

bool SiteChangesState(std::string_view verb) {
  // SQL statements that read or only open a transaction (a lost one is a
  // reconnect); every other SQL verb may write. SELECT, the Redis command,
  // is refused to scripts, so the name is the SQL verb's.
  const std::string upper = Upper(verb);
  if (upper == "SELECT" || upper == "BEGIN") return false;
  return CommandNamed(upper).writes;
}

namespace {

template <typename Arg>
std::optional<WaitRequest> ParseWaitOf(std::span<const Arg> argv) {
  WaitRequest w;
  if (argv.size() != 3 || argv[0].size() != 4 || Upper(argv[0]) != "WAIT") return std::nullopt;
  if (!ParseDecimal(std::string_view(argv[1]), &w.replicas) || w.replicas < 0) return std::nullopt;
  if (!ParseDecimal(std::string_view(argv[2]), &w.timeout_ms) || w.timeout_ms < 0) return std::nullopt;
  return w;
}

}  // namespace

std::optional<WaitRequest> ParseWait(std::span<const std::string_view> argv) { return ParseWaitOf(argv); }
std::optional<WaitRequest> ParseWait(std::span<const std::string> argv) { return ParseWaitOf(argv); }

}  // namespace xackly
