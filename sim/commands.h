// What xackly knows about a Redis command, in one table.
//
// Every place that asks "what does this command do" (may it change data,
// may it block, may a protocol script send it, where are its keys, which
// argument is a timer, how does a report draw it) reads the command's row
// here instead of keeping a list of its own. Lookups are case-insensitive
// by construction: a script that sends `xack` gets the row of XACK, and
// CanonicalizeCommand spells the command the way the table does before it is
// sent, traced or judged, so `xack` and `XACK` give one trace.
//
// A command the table does not know gets UnknownCommand(): it may change
// anything (the oracle reads the state back after it; the scheduler rereads
// the effect ledger), it does not block, and a script may send it. The
// server's ACL, not this table, is what keeps a script from the network and
// the server's administration (harness/redis_server.cc).
//
// A new command the oracle understands is a row here, its handling in
// sim/oracle_feed.cc, and a test.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace xackly {

// Redis's own command groups (COMMAND DOCS), as far as xackly needs them.
enum class CommandGroup : uint8_t {
  kStream,
  kString,
  kHash,
  kList,
  kSet,
  kSortedSet,
  kGeneric,      // keyspace: DEL, EXPIRE, RENAME, TYPE...
  kScripting,    // EVAL, FCALL, SCRIPT, FUNCTION
  kTransactions, // MULTI, EXEC, WATCH...
  kConnection,
  kServer,
  kPubSub,
  kOther,        // bitmaps, HyperLogLog, geo, and every command the table does not know
};

// How a report draws a command's trace line (the HTML timeline's glyph).
enum class ReportCategory : uint8_t { kRead, kAck, kClaim, kProduce, kDelete, kOther };
const char* ReportCategoryName(ReportCategory c);  // "read", "ack", "claim", "produce", "delete", "other"

// Why a protocol script may not send a command (sim/script_steps.h).
enum class ScriptRefusal : uint8_t {
  kAllowed,
  kBlocking,  // would block the single-threaded simulation (BLPOP, WAIT, ...)
  kHarness,   // controls the connection or the server the harness owns
};

// A timer a command names, which the quiet window and the search's ranges
// are sized by (sim/command_timers.h).
enum class TimerKind : uint8_t { kNone, kClaimThreshold, kKeyExpiry };

struct CommandInfo {
  std::string_view verb;  // uppercase; "XGROUP DELCONSUMER" for a subcommand's own row
  CommandGroup group = CommandGroup::kOther;
  bool known = true;      // false only for UnknownCommand()
  // May change data on the server. False for reads and for the commands
  // that only open, watch or discard a transaction.
  bool writes = false;
  // Replaces or removes a key whatever type it holds (SET, DEL, RENAME,
  // the *STORE commands): it may write a list although it is no list command.
  bool any_key_type = false;
  bool subcommands = false;  // argv[1] is a subcommand (XGROUP CREATE): part of the name
  bool runs_code = false;    // runs server-side code: EVAL, EVALSHA, FCALL and their _RO forms
  ScriptRefusal script = ScriptRefusal::kAllowed;
  ReportCategory category = ReportCategory::kOther;
  // Keys: argv[first_key] (0: none), and for a code-running command, its
  // numkeys argument at argv[numkeys_at] with the keys after it.
  uint8_t first_key = 0;
  uint8_t numkeys_at = 0;
  // Consumer-group arguments: argv[group_at] is the group, argv[consumer_at]
  // the consumer (0: none); the entry ids start at argv[ids_from] (0: none).
  uint8_t group_at = 0;
  uint8_t consumer_at = 0;
  uint8_t ids_from = 0;
  // A timer: the value at argv[timer_at] (0: none) in units of timer_unit_ms,
  // and/or the options EX (s), PX (ms) or IDLE (ms) anywhere from
  // argv[timer_options_from] (0: none).
  TimerKind timer = TimerKind::kNone;
  uint8_t timer_at = 0;
  uint16_t timer_unit_ms = 1;
  uint8_t timer_options_from = 0;

  // Whether running it may change a list (the Redis effect ledger is one):
  // a write to a list, to any key whatever its type, or code, a transaction
  // or a command the table does not know.
  bool MayWriteList() const;
};

// The row of `argv`'s command (a subcommand's own row when the table has
// one: XGROUP DELCONSUMER), whatever its case; UnknownCommand() for a
// command the table does not know. REQUIRES: !argv.empty()
const CommandInfo& CommandOf(std::span<const std::string> argv);
// The row of a bare verb ("xack", "XACK"), whatever its case.
const CommandInfo& CommandNamed(std::string_view verb);
const CommandInfo& UnknownCommand();
// Every row, sorted by verb (for tests and docs).
std::span<const CommandInfo> AllCommands();

// Spells argv[0] (and the subcommand of a command that has them) the way the
// table does: uppercase. Redis reads command names case-insensitively, so
// what runs is the same; the trace, the fault sites and the oracle then see
// one spelling.
void CanonicalizeCommand(std::vector<std::string>* argv);

// An argument's uppercase form ("block" -> "BLOCK"), for options.
std::string Upper(std::string_view word);

// WAIT numreplicas timeout, as the harness answers it in a run with
// replicas (harness/replicated_server.h) and the simulator times it.
struct WaitRequest {
  int64_t replicas = 0;
  int64_t timeout_ms = 0;  // 0: no timeout
};
// `argv` as a well-formed WAIT (the verb in any case, both arguments
// decimal integers >= 0); nullopt for any other command, and for a
// malformed WAIT, which the server answers itself.
std::optional<WaitRequest> ParseWait(std::span<const std::string_view> argv);
std::optional<WaitRequest> ParseWait(std::span<const std::string> argv);
// Whether argv has the option `word` (uppercase) after argv[0], in any case.
bool HasOption(std::span<const std::string> argv, std::string_view word);

// What the lost-request / lost-reply sites named by `verb` lose: true when
// a request of that name may change state (a Redis write, or an SQL
// statement other than SELECT and BEGIN). A lost read is only a reconnect.
bool SiteChangesState(std::string_view verb);

}  // namespace xackly
