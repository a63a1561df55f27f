// A real consumer's connections as a client library treats them: one it
// closes before it reads a reply (a client-side timeout, a pool that drops
// a connection) takes nothing more, and the run goes on.
#include <string>

#include <gtest/gtest.h>

#include "harness/exit_codes.h"
#include "harness/files.h"
#include "tests/harness/test_util.h"

namespace xackly {
namespace {

// A one-worker run whose consumer sends PING on a connection of its own,
// runs `hang_up` (Python, the socket is `s`), then handles its events on
// another connection: the run must be judged ok, the PING in its trace.
void ExpectTheRunGoesOnAfter(const std::string& hang_up) {
  CommandOutput probe = RunProgram("/usr/bin/python3", {"-c", "import redis"});
  ASSERT_EQ(probe.exit_code, 0) << "needs /usr/bin/python3 with python3-redis (bash .ci/setup --tests): "
                                << probe.output;
  ScopedTempRoot dir;
  ASSERT_TRUE(WriteFileAtomically(dir.path() + "/hangs_up.py",
                                  PythonConsumer("            r.execute_command('XACKLY.EFFECT', fields[b'event_id'], "
                                                 "'KEY', fields[b'event_id'])\n"
                                                 "            r.xack(st, g, id)\n",
                                                 "s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)\n"
                                                 "s.connect(os.environ['REDIS_URL'][len('unix://'):])\n"
                                                 "s.sendall(b'*1\\r\\n$4\\r\\nPING\\r\\n')\n" +
                                                     hang_up))
                  .ok());
  ASSERT_TRUE(WriteFileAtomically(dir.path() + "/hangs_up.toml",
                                  "name = \"hangs-up\"\nexpect = \"ok\"\n[workload]\nworkers = 1\nevents = 2\n"
                                  "[protocol]\ncommand = [\"/usr/bin/python3\", \"hangs_up.py\"]\n"
                                  "[faults]\nkinds = []\n")
                  .ok());
  CommandOutput run = RunXackly({"run", "--scenario", dir.path() + "/hangs_up.toml", "--trace", dir.path() + "/t"});
  EXPECT_EQ(run.exit_code, kExitOk) << run.output;
  EXPECT_TRUE(Contains(run.output, "observed ok (expected ok): matched")) << run.output;
  Result<std::string> trace = ReadFile(dir.path() + "/t");
  ASSERT_TRUE(trace.ok());
  EXPECT_TRUE(Contains(*trace, "PING")) << *trace;
}

// The consumer closes the connection at once, so the front's reply meets a
// socket its peer has closed (EPIPE, not EAGAIN). The reply is dropped and
// the run is judged: the front once waited for the closed socket to take
// the reply, for ever.
TEST(RealConsumerConnectionTest, AConnectionClosedBeforeItsReplyTakesNothingAndTheRunGoesOn) {
  ExpectTheRunGoesOnAfter("s.close()\n");
}

// The consumer waits until the reply has arrived and closes the connection
// without reading it: on a Unix socket the front's side is then reset
// (recv fails with ECONNRESET) rather than closed. A reset is a close: what
// the connection sent before still counts, and the run goes on.
TEST(RealConsumerConnectionTest, AConnectionResetWithItsReplyUnreadIsAClose) {
  ExpectTheRunGoesOnAfter("select.select([s], [], [])\ns.close()\n");
}

}  // namespace
}  // namespace xackly
