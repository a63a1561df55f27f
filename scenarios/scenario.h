// Scenarios: one run of xackly written down as a TOML file, so that a person
// can write a case, and every failing run can be replayed from the file it
// leaves behind. This layer parses and writes *strings*; it never opens a
// file (the harness reads files and passes their text and name).
//
// ============================================================================
// The scenario file format (TOML 1.0)
// ============================================================================
// Every key is optional except the protocol. Unknown keys and tables are
// errors (a typo never silently falls back to a default); every error is one
// line "file.toml:LINE: field.path: what was expected, got what".
//
// --- Top level (before any [table]) ---------------------------------------
//   protocol = "txn-dedupe"   A catalog protocol by name (`xackly protocols` shows
//                             them). Or leave this out and write an inline
//                             [protocol] table instead (below). One is required.
//   name = "..."              1..128 characters A-Z a-z 0-9 . _ - (not starting
//                             with . or -): replay files are <name>.replay.toml.
//                             Default: the file name without its extension
//                             (other characters made '_').
//   description = "..."       Free text.
//   origin = "..."            Free text: where the file came from, e.g. the
//                             command that wrote it.
//   expect = "duplicate:crash:after-effect"
//                             The verdict the run must produce: "<kind>" or
//                             "<kind>:<cause>", kind one of ok, duplicate, lost,
//                             pel-leak, stuck; the cause is a prefix a violation
//                             of that kind must carry ("ok" takes no cause) and
//                             must be one the oracle gives (KnownCauses in
//                             sim/verdict.h). Alternatives with |, combinations
//                             with +: "lost|stuck", "duplicate+pel-leak".
//                             Default: the protocol's own expectation ("ok" for
//                             an inline protocol without `base`).
//   seed = 17                 The seed every random choice derives from; an
//                             integer >= 0, or a decimal string for seeds above
//                             2^63-1 (TOML integers are signed 64-bit). Default 1.
//
// --- [server] --------------------------------------------------------------
//   persistence = "none"      none | rdb | aof-always: what survives a server
//                             restart fault. Default: the protocol's.
//   replicas = 0              0..4 replicas following the primary. With 1, a
//                             second real server is the primary's replica,
//                             linked by xackly so the seed decides how far
//                             it lags; `failover` faults (on by default)
//                             promote it, dropping the writes it had not
//                             received, and every client reconnects to it.
//                             WAIT makes the replica catch up and replies
//                             the replica count.
//                             With several, one lags at a time (replica-lag)
//                             while the others acknowledge WAIT, and a
//                             failover promotes the least-lagged or the
//                             lagging one (README, Replicas and failover).
//   producer_waits = true     With replicas: the built-in producer sends
//                             WAIT <replicas> 0 after each XADD and moves on
//                             only when every replica has it (it
//                             acknowledges its caller then). false: it moves on at the XADD's reply,
//                             so a failover can drop an event it already
//                             acknowledged (lost: failover). Without a
//                             replica, false is an error (it would do
//                             nothing).
//
// --- [workload] ------------------------------------------------------------
//   producers = 1             1..16
//   workers = 3               1..64 consumer workers (slots w1..wN)
//   handlers = 1              1..64 handler lanes per worker process
//                             (scripts only; all lanes add up to <= 64):
//                             each lane (w1, w1#2, w1#3 ...) runs the
//                             worker's function with its own connection,
//                             in the process's shared memory, under the
//                             process's consumer name (w.consumer), w.lane =
//                             1..handlers. A crash of one lane takes the
//                             whole process (and its memory) down and the
//                             replacement starts every lane; a stall stops
//                             every lane; a lost request or reply times out
//                             only its lane.
//   events = 10               1..100000 events to produce
//   restart_naming = "same"   same | fresh: a restarted worker keeps its
//                             consumer name or takes a new one. Default: the
//                             protocol's.
//   Defaults: 1 producer, 3 workers, 10 events.
//
// --- [[groups]]: more consumer groups on the stream (scripts only) --------
// The run's own group is "workers" (w.group), read by [workload] workers
// running consumer(w). Each [[groups]] table adds a group on the same
// stream, created at 0 before anything is produced, with workers of its
// own (slots after the run's group's: w4, w5 ... in the order listed):
//   name = "search-indexer"   the group's name: 1..64 printable characters,
//                             no spaces, not "workers", each group once
//   consumer = "indexer"      the script function its workers run, with
//                             w.group set to this group. Default "consumer".
//   workers = 2               1..64; all groups' workers add up to <= 64.
//                             Default 1.
// Each group's exactly-once is judged on its own: the effects of its
// workers count for it alone (a fan-out's two groups each run an event's
// effect once), and a violation names its group. A [[groups]] worker's
// w:effect of an entry it read through another group is an error.
//
// --- [timing] --------------------------------------------------------------
// Virtual milliseconds, integers; defaults as in sim/worker.h `Timing`.
// Limits (sim/limits.h), for these and every other duration in a file: at
// most one year (31536000000 ms) each; max_steps at most 10000000; counts
// (read_count, claim_count, trim_maxlen, dead_letter_after, scheduled_count,
// poison_count) at most 100000; and all of them added up (max_steps x
// step_ms, the fault phase, every interval, timeout, TTL and scheduled
// fault) at most 100 years.
//   step_ms = 1  effect_ms = 10  produce_every_ms = 5  restart_delay_ms = 5000
//   effect_spread_ms = 0 (each event's effect is shorter than effect_ms by
//   up to this much, drawn from the seed and the event; 0: all equal)
//   produce_burst = 1 (events a producer adds back to back before it waits
//   produce_burst x produce_every_ms; 1: evenly spaced)
//   reconnect_ms = 1000  quiet_window_ms = 0 (0: derived from the protocol)
//   max_steps = 0 (a step guard; 0: derived from the workload; reaching it
//   is a harness limit, exit 3, never a verdict)
//   fault_phase_ms: default the protocol's fault_phase_ms; 0: derived from
//   the workload.
//
// --- [protocol]: an inline, declarative protocol ----------------------------
//   base = "txn-dedupe"       Optional: start from this catalog protocol's
//                             settings (and its expect/[server]/[faults]/
//                             restart_naming defaults) and override them. The
//                             result is declarative: it runs `steps`, not the
//                             catalog's C++ handler.
//   name = "my-protocol"      Default: the scenario's name.
//   description = "..."
//   steps = ["begin", "mark-done", "effect", "commit", "ack"]
//                             The per-entry handler, in order. Required without
//                             `base`. Steps: ack (XACK), check-done (is the
//                             event recorded done? yes: duplicate branch),
//                             mark-done (record done; already recorded: duplicate
//                             branch), effect (the side effect), begin/commit
//                             (one atomic group: an SQL transaction, or one EVAL
//                             when every step inside is in Redis).
//   handler = "steps"         steps | c++. "c++": the handler that ran is C++
//                             code in someone's own test (a ProtocolDef
//                             cpp_handler other than a catalog protocol's,
//                             harness/embed.h), which no file can hold;
//                             `steps` then only documents it. The xackly
//                             executable refuses such a file (exit 2) rather
//                             than run the steps as if they were the handler;
//                             xackly::ReplayCaseFile (harness/embed.h) replays
//                             it with the handler from that test. WriteScenario
//                             writes it for such a protocol (HandlerFormOf).
//                             Not with `script`. Default "steps".
//   dedupe = "none"           none | sql | redis: where done-records live.
//   dedupe_ttl_ms = 0         Redis done-records expire after this; 0: never.
//   effect = "external"       external | sql | redis: where the effect lands.
//   idempotency_key = false   The external service dedupes by event id.
//   on_duplicate = "ack"      ack | skip: what the duplicate branch does.
//   fault_phase_ms = 0        0: derived from the workload.
//   [protocol.loop]
//     read_count = 10                 XREADGROUP COUNT (>= 1)
//     read_own_pending_at_start = true
//     claim = true                    periodic XAUTOCLAIM
//     claim_min_idle_ms = 30000       claim_count = 10 (>= 1)
//     claim_every_ms = 5000 (>= 1)    block_ms = 2000 (>= 1)
//     ack = "per-entry"               per-entry | batch (the loop acks a
//                                     whole batch; then no "ack" step)
//     on_deleted = "ack"              ack | skip: an entry whose payload is gone
//     dead_letter_after = 0           deliveries before dead-lettering; 0: never
//     dead_letter_order = "save-then-ack"   save-then-ack | ack-then-save
//   script = "my_consumer.lua"    A protocol script (Lua 5.4, docs/scripts.md),
//                             relative to this file: your consumer (and producer,
//                             janitor) with any Redis command. It replaces steps,
//                             the loop and the janitor; of their keys only the
//                             timers count (claim_min_idle_ms, claim_every_ms,
//                             block_ms, dedupe_ttl_ms: timers the script keeps
//                             where no command shows them).
//   command = ["python3", "consumer.py"]   Instead of `script`: your own
//                             consumer program, one process per worker, behind
//                             xackly's RESP front (docs/real-consumers.md); it
//                             starts in this file's directory. Of the loop's keys
//                             only the timers count, as for a script.
//   include = ["../common.lua"]   Only with `script`: Lua files (relative to this
//                             file) that run before the script, each as its own
//                             chunk (errors name that file), sharing its globals:
//                             code several scripts use, without a module system.
//   [protocol.params]             Only with `script`: options the script reads as
//     auto_ack = true             the chunk-local table `params` (params.auto_ack),
//     claim_every_ms = 5000       so one script serves several settings. Keys:
//     consumer = "shared"         [a-z_][a-z0-9_]*, values: string, integer, boolean.
//   [protocol.janitor]
//     trim = "none"                   none | maxlen | safe-minid | racy-minid
//     trim_maxlen = 0                 delete_idle_consumers = false
//     consumer_idle_ms = 10000        check_pending_before_delete = true
//     every_ms = 1000 (>= 1)
// For an inline protocol, `expect`, [server] persistence, [workload]
// restart_naming and [faults] are also the protocol's own defaults.
// The definition must pass ValidateProtocol (begin has a commit, dedupe
// steps have a dedupe store, ...).
//
// --- [faults]: the fault model a plan is drawn from --------------------------
// The model is the protocol's (a catalog protocol's, a base's; for an
// inline protocol without base, DefaultFaultModel (sim/protocol.h) of the
// operations it uses) merged with this table key by key: each key present
// overrides that one value, every other value stays (naming crash_points
// keeps the default kinds). Only `kinds = []` injects nothing, and the
// check's row says so. A protocol script's sites are what it visits: a
// base's site lists do not carry over to a script. A site named in
// crash_points or lost_sites that the protocol never visits is an error
// (for a script, found by running it: `check` exits 2 with the nearest
// sites it did visit).
//   kinds = ["crash", "lost-reply"]   crash, stall, lost-request, lost-reply,
//                             error-reply, replica-lag, xdel, xtrim, restart, save, delconsumer,
//                             clock-jump, store-outage, failover, poison
//   crash_points = ["after-effect"]   crash/stall sites; [] means all
//   lost_sites = ["XACK"]     lost-* sites; [] means the protocol's own requests
//                             (for a script or a C++ handler under `check`: every
//                             visited command or statement that can change state,
//                             docs/scripts.md; under `run`: XACK, XADD, COMMIT, EVAL)
//   crash_rate = 0.03         rates are probabilities 0..1 per visit, stored
//   stall_rate = 0.03         as parts per million (rounded to 1e-6)
//   lost_request_rate = 0.02  lost_reply_rate = 0.02
//   replica_lag_rate = 0.1    per WAIT visit (a run with replicas): one replica
//                             lags; WAIT n T for all of them answers one less
//                             (0 with one replica) after T ms, the writes
//                             unconfirmed; for fewer, the others answer at once
//   replica_lag_ms = 2000     WAIT n 0 for all answers this much later
//   error_reply_rate = 0.02   error_reply_target = "LOADING"  LOADING | READONLY |
//                             BUSY: the error; only a script's or a consumer
//                             command's own requests get one (not the built-in loop's)
//   stall_ms = 60000          scheduled_count = 1 (of each scheduled kind)
//   xdel_target = "pending"   unread | pending | acked
//   xtrim_target = "maxlen:2" maxlen:N | minid:last-delivered
//   clock_jump_ms = 120000    store_outage_ms = 3000    poison_count = 1
//   failover_target = "lag:1" lag:N (0..1000): the writes a failover's promoted
//                             replica misses (server.replicas >= 1), or
//                             lagging: every write no WAIT brought it
//
// --- [schedule]: an exact replay ------------------------------------------
//   faults = ["crash w1 after-effect #1", "poison event 3"]
//                             An explicit fault plan, one fault per string in
//                             FaultSpec's text form (sim/faults.h). Present
//                             (even empty): exactly these faults, nothing drawn
//                             (run, replay, explain; check draws its own
//                             faults per case and says so).
//                             A point fault's "#n" is its site's nth visit by
//                             that actor; with "@<time>ms" after it ("crash w1
//                             after-ack #1 @60000ms") the nth visit from that
//                             virtual time on (check draws both forms).
//   picks = "p1 w1 w1 w2"     Scheduling choices, one actor slot per step
//                             (p<n>, w<n>, w<n>#<k> for a handler lane, j1
//                             for the janitor), separated by white space;
//                             after the last, the seed decides. Point
//                             faults name a worker process (w<n>, any
//                             group's), never a lane.
//   trace_hash = "9ca6e72d056eda97"   16 hex digits: the replay must reproduce
//                             this trace hash.
//   server = "redis 7.0.15"   The server (name and version) the trace hash was
//                             recorded on; a replay on another server that
//                             diverges names both. Optional (older files lack it).
//   server_hashes = { "valkey 8.0.1" = "0c1f9e2a7d3b4c55" }
//                             The trace hashes recorded on other servers
//                             (tests/rerecord-corpus --server BIN adds one):
//                             a replay on a server named here must
//                             reproduce its hash. Optional.
// Point faults and picks must name actors this run has.
//
// --- [[embedded]]: the files a replay file carries (one table each) ------
//   path = "orders.lua"       the script or include, as [protocol] names it
//   from = "/src/orders.lua"  where it was read when the file was recorded
//   hash = "fnv1a64:..."      ContentHash of text; a text that does not match
//                             its hash (edited by hand) is an error
//   text = """..."""          the file's text: replay runs this copy, wherever
//                             the replay file lies (`replay --current` reads
//                             the file on disk instead, to re-judge it)
//
// scenarios/example.toml is a commented example; scenarios/catalog/ holds
// every catalog protocol in inline form.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "sim/simulation.h"
#include "sim/status.h"

namespace xackly {

// One [protocol.params] value.
using ScriptParam = std::variant<bool, int64_t, std::string>;

// [protocol] handler: what runs as an inline protocol's per-entry handler.
enum class HandlerForm : uint8_t {
  kSteps,  // "steps": its declarative step list (config.protocol runs as written)
  kCpp,    // "c++": C++ code outside the file; config.protocol's steps only document it
};

// One file a replay file carries ([[embedded]] in the file): a protocol
// script or an include, `path` as [protocol] names it, `from` the absolute
// path it was read from when recorded (what `replay --current` reads again
// when `path` is not found beside the replay file), its text, and
// ContentHash(text).
struct EmbeddedFile {
  std::string path;
  std::string from;
  std::string hash;
  std::string text;
};

// "fnv1a64:<16 hex digits>" of `text`: tells an edited or changed file from
// the one recorded (not a cryptographic digest).
std::string ContentHash(std::string_view text);

struct Scenario {
  std::string name;          // defaults to the source name's stem
  std::string description;
  // The catalog name when the file says protocol = "name"; empty for an
  // inline [protocol] (then config.protocol is declarative).
  std::string protocol_ref;
  // Fully resolved: protocol, expectation, seed, workload, timing, fault
  // model and explicit schedule. keep_trace is never set by a file.
  RunConfig config;
  std::optional<std::string> trace_hash;  // [schedule] trace_hash, lowercase
  std::optional<std::string> server;      // [schedule] server, e.g. "redis 7.0.15"
  // [schedule] server_hashes: the trace hashes recorded on other servers,
  // by server ("valkey 8.0.1" -> 16 lowercase hex digits), for a replay on
  // a server whose replies make the trace differ.
  std::map<std::string, std::string> server_hashes;
  std::string origin;        // free text, e.g. the command that wrote the file
  bool has_seed = false;      // the file sets `seed` (else config.seed is the default)
  bool has_workload = false;  // the file has a [workload] table
  // The file asks for no faults at all ([faults] kinds = []): its checks
  // say so in their rows ("none (as the file asks)").
  bool no_faults_asked = false;
  // [protocol.params] of a protocol script, by key (empty without a script).
  std::map<std::string, ScriptParam> script_params;
  // [protocol] include: Lua files run before the script, as the file names them.
  std::vector<std::string> script_includes;
  // [protocol] handler. kCpp: config.protocol has no cpp_handler (a file
  // cannot hold one) and must not run as it stands; whoever has the C++
  // handler puts it back (ReplayCase in harness/embed.h).
  HandlerForm handler = HandlerForm::kSteps;
  // [[embedded]]: the protocol script and include files the run read,
  // carried in its replay file so that it replays wherever it lies
  // (LoadScenarioFile runs these copies, not the files on disk).
  std::vector<EmbeddedFile> embedded;
  // Set by LoadScenarioFile with ReadScripts::kCurrent: the embedded files
  // whose file on disk differs now (their paths).
  std::vector<std::string> changed_files;
};

// The Lua text that gives a script its [protocol.params]: one line without a
// newline, `local params = {["key"] = value, ...}; ` (a key may be a Lua
// keyword), meant to be put in front of
// the script's first line (so its line numbers stay the same). Strings are
// written with decimal escapes, so no value can end the literal early.
std::string ScriptParamsPrelude(const std::map<std::string, ScriptParam>& params);
// One line without a newline that runs `text` as a chunk named `name` (its
// errors say name:line), to be put in front of the script's first line:
// `do local f, e = load("<text>", "@name", "t"); if not f then error(e, 0)
// end; f() end; `.
std::string ScriptIncludePrelude(std::string_view name, std::string_view text);

// Parses a scenario file's text. The text must be UTF-8 without NUL bytes. `source_name` (usually the file's path)
// prefixes every error and gives the default name (its stem). On success the
// config passes ValidateRunConfig. On failure returns kInvalidArgument with
// exactly one line "source:line: field.path: what was expected, got what".
Result<Scenario> ParseScenario(std::string_view text, std::string_view source_name);

// Writes `s` as a commented scenario file. A catalog reference is written as
// `protocol = "<name>"` plus only what differs from RunConfig::For(that
// protocol), except that seed, expect, [workload] and [schedule] are always
// written; an inline protocol is written in full.
//
// Round trip: ParseScenario(WriteScenario(s)) equals s (keep_trace aside)
// for every s that ParseScenario returns, and for any s with a non-empty
// name that passes ValidateRunConfig, names only actors its run has, and
// whose inline protocol's own defaults (expected, naming, persistence,
// faults) equal the run's. When they differ the file
// keeps the run's values, so it still replays the same run. A protocol_ref
// whose config.protocol is not that catalog protocol unchanged is written
// inline, for the same reason. An inline protocol whose handler is C++
// code (HandlerFormOf kCpp, or s.handler kCpp) is written with its steps
// and `handler = "c++"`, and comes back with handler kCpp and no
// cpp_handler.
std::string WriteScenario(const Scenario& s);

// kCpp when `p`'s handler is C++ code a file cannot hold: a cpp_handler
// that is none of the catalog's reference handlers (those send the same
// commands as their steps, a test checks it, so the steps stand for them).
HandlerForm HandlerFormOf(const ProtocolDef& p);

// The [protocol] tables WriteScenario writes for `p` as an inline protocol
// (steps, stores, policies, loop and janitor settings), without the handler
// form and the protocol's run defaults (expected, naming, persistence,
// faults), which a scenario's run settings replace: two protocols with equal
// texts and the same handler run alike.
std::string ProtocolText(const ProtocolDef& p);

// Scenario names: what `name` accepts (see the format above), so that
// "<name>.replay.toml" is one plain file name inside --out.
inline constexpr size_t kMaxScenarioNameChars = 128;
bool IsScenarioName(std::string_view name);
// `text` made a scenario name: cut to the limit, every character the set
// lacks (and a leading '.' or '-') becomes '_'; "scenario" for "". Returns a
// valid name unchanged.
std::string ScenarioNameFrom(std::string_view text);
// "<name>.replay.toml", the replay file of a scenario, with `name` made a
// scenario name first: always one plain file name.
std::string ReplayFileName(std::string_view name);
// Whether `path`'s file name has the form ReplayFileName gives
// ("....replay.toml"): a file xackly wrote, not one a user wrote.
bool IsReplayFileName(std::string_view path);

// A seed as scenario files (as a string) and --seed take it: decimal digits
// only, 0..2^64-1. False for anything else ("-1", "1e3", too large).
bool ParseSeed(std::string_view text, uint64_t* seed);

// The point faults of an explicit schedule and the picks name only actors
// `config` has. For runs whose actors changed after parsing (CLI
// overrides); the error names the schedule entry.
Status CheckScheduleFitsRun(const RunConfig& config);

}  // namespace xackly
