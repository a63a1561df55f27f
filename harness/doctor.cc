#include "harness/doctor.h"

#include <chrono>
#include <functional>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "harness/redis_server.h"

namespace xackly {

namespace {

constexpr char kEntry[] = "[\"1-1\", [\"f\", \"v\"]]";  // rendering of XADD <key> 1-1 f v

// Runs `argv` and compares the canonical rendering of its reply with
// `expected`; the Status says what was sent, what came back and what was due.
Status Expect(Connection& conn, std::initializer_list<std::string_view> argv,
              std::string_view expected) {
  std::string command;
  for (std::string_view arg : argv) {
    if (!command.empty()) command += ' ';
    AppendArg(command, arg);
  }
  Result<Reply> reply = conn.Call(argv);
  if (!reply.ok()) return Status::Internal(fmt::format("{}: {}", command, reply.status().ToString()));
  std::string got = reply->Render();
  if (got != expected) {
    return Status::Internal(fmt::format("`{}` replied {}, expected {}", command, got, expected));
  }
  return Status::Ok();
}

// Adds entry 1-1 to `key`, creates group g and delivers the entry to
// consumer c1 at the current virtual time.
Status DeliverOneEntry(Connection& conn, std::string_view key) {
  if (Status s = Expect(conn, {"XADD", key, "1-1", "f", "v"}, "\"1-1\""); !s.ok()) return s;
  if (Status s = Expect(conn, {"XGROUP", "CREATE", key, "g", "0"}, "+OK"); !s.ok()) return s;
  return Expect(conn, {"XREADGROUP", "GROUP", "g", "c1", "COUNT", "1", "STREAMS", key, ">"},
                fmt::format("[[\"{}\", [{}]]]", key, kEntry));
}

Status CheckTime(RedisServer& server, Connection& conn) {
  server.AdvanceClockMs(1'234);  // off a round second, so milliseconds show
  const int64_t now_ms = server.ClockMs();
  return Expect(conn, {"TIME"},
                fmt::format("[\"{}\", \"{}\"]", now_ms / 1000, (now_ms % 1000) * 1000));
}

Status CheckPendingIdle(RedisServer& server, Connection& conn) {
  if (Status s = DeliverOneEntry(conn, "doctor:idle"); !s.ok()) return s;
  server.AdvanceClockMs(60'000);
  const char kPending[] = "[[\"1-1\", \"c1\", 60000, 1]]";
  if (Status s = Expect(conn, {"XPENDING", "doctor:idle", "g", "-", "+", "10"}, kPending); !s.ok()) {
    return s;
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // real time must not count
  return Expect(conn, {"XPENDING", "doctor:idle", "g", "-", "+", "10"}, kPending);
}

Status CheckAutoclaim(RedisServer& server, Connection& conn) {
  if (Status s = DeliverOneEntry(conn, "doctor:claim"); !s.ok()) return s;
  server.AdvanceClockMs(60'000);
  // Not yet idle for 70 s: nothing is claimed (and nothing is reset).
  if (Status s = Expect(conn, {"XAUTOCLAIM", "doctor:claim", "g", "c2", "70000", "0-0"},
                        "[\"0-0\", [], []]");
      !s.ok()) {
    return s;
  }
  return Expect(conn, {"XAUTOCLAIM", "doctor:claim", "g", "c2", "50000", "0-0"},
                fmt::format("[\"0-0\", [{}], []]", kEntry));
}

// Redis expires a key when now > its expire time (db.c keyIsExpired), so a
// PX 10000 key is still there at exactly +10000 ms, with PTTL 0.
Status CheckKeyExpiry(RedisServer& server, Connection& conn) {
  if (Status s = Expect(conn, {"SET", "doctor:ttl", "v", "PX", "10000"}, "+OK"); !s.ok()) return s;
  server.AdvanceClockMs(9'999);
  if (Status s = Expect(conn, {"PTTL", "doctor:ttl"}, "1"); !s.ok()) return s;
  server.AdvanceClockMs(1);
  if (Status s = Expect(conn, {"PTTL", "doctor:ttl"}, "0"); !s.ok()) return s;
  if (Status s = Expect(conn, {"EXISTS", "doctor:ttl"}, "1"); !s.ok()) return s;
  server.AdvanceClockMs(1);
  return Expect(conn, {"EXISTS", "doctor:ttl"}, "0");
}

Result<std::unique_ptr<RedisServer>> StartServer(const DoctorOptions& options,
                                                 Persistence persistence) {
  RedisServerOptions server_options;
  server_options.server_path = options.server_path;
  server_options.persistence = persistence;
  server_options.prove_clock = false;  // the doctor reports each clock check itself
  return RedisServer::Start(server_options);
}

std::string CrashCheckName(Persistence persistence) {
  switch (persistence) {
    case Persistence::kNone:
      return "crash + restart with persistence none loses an acknowledged XADD";
    case Persistence::kRdb:
      return "crash + restart with persistence rdb keeps what SAVE wrote and loses later writes";
    case Persistence::kAofAlways:
      return "crash + restart with persistence aof-always keeps an acknowledged XADD";
  }
  return "";
}

// Starts a server of its own with `persistence`, writes, crashes it, restarts
// it and checks what survived.
Status CheckCrash(const DoctorOptions& options, Persistence persistence) {
  Result<std::unique_ptr<RedisServer>> server = StartServer(options, persistence);
  if (!server.ok()) return server.status();
  // The harness's own connection: SAVE is not the protocol's to send.
  Result<std::unique_ptr<Connection>> conn = (*server)->ConnectHarness();
  if (!conn.ok()) return conn.status();
  if (Status s = Expect(**conn, {"XADD", "doctor:s", "1-1", "f", "v"}, "\"1-1\""); !s.ok()) return s;
  if (persistence == Persistence::kRdb) {
    if (Status s = Expect(**conn, {"SAVE"}, "+OK"); !s.ok()) return s;
    if (Status s = Expect(**conn, {"XADD", "doctor:s", "2-1", "f", "v"}, "\"2-1\""); !s.ok()) return s;
  }
  if (Status s = (*server)->CrashAndRestart(); !s.ok()) return s;
  conn = (*server)->Connect();
  if (!conn.ok()) return conn.status();
  const std::string expected = persistence == Persistence::kNone ? "[]" : fmt::format("[{}]", kEntry);
  return Expect(**conn, {"XRANGE", "doctor:s", "-", "+"}, expected);
}

}  // namespace

bool RunDoctor(const DoctorOptions& options, std::FILE* out) {
  bool all_ok = true;
  auto report = [&](const std::string& check, const Status& status) {
    if (status.ok()) {
      fmt::print(out, "ok   {}\n", check);
    } else {
      fmt::print(out, "FAIL {}: {}\n", check, status.message());
      all_ok = false;
    }
    std::fflush(out);
  };

  const Persistence main_persistence = options.persistence.value_or(Persistence::kNone);
  Result<std::unique_ptr<RedisServer>> started = StartServer(options, main_persistence);
  if (!started.ok()) {
    report("server", started.status());
    return false;
  }
  RedisServer& server = **started;
  report(fmt::format("server {} is {} (persistence {}), virtual clock at {} ms", server.binary_path(),
                     server.version().ToString(), PersistenceName(main_persistence),
                     server.ClockMs()),
         Status::Ok());
  Result<std::unique_ptr<Connection>> conn = server.Connect();
  if (!conn.ok()) {
    report("connect", conn.status());
    return false;
  }

  using ClockCheck = std::function<Status(RedisServer&, Connection&)>;
  const std::vector<std::pair<std::string, ClockCheck>> clock_checks = {
      {"TIME equals the virtual clock", CheckTime},
      {"XPENDING idle is exactly the virtual time advanced (60000 after +60 s, unchanged by a "
       "real 200 ms sleep)",
       CheckPendingIdle},
      {"XAUTOCLAIM follows the virtual clock (min-idle 70000 claims nothing at idle 60000, "
       "50000 claims)",
       CheckAutoclaim},
      {"a PX 10000 key has PTTL 1 at +9999 ms, PTTL 0 at +10000 ms and is gone at +10001 ms",
       CheckKeyExpiry},
  };
  for (const auto& [name, check] : clock_checks) report(name, check(server, **conn));

  std::vector<Persistence> crash_modes = {Persistence::kNone, Persistence::kRdb,
                                          Persistence::kAofAlways};
  if (options.persistence.has_value()) crash_modes = {*options.persistence};
  for (Persistence persistence : crash_modes) {
    report(CrashCheckName(persistence), CheckCrash(options, persistence));
  }
  return all_ok;
}

}  // namespace xackly
