// A primary and one replica, both real unmodified servers on the virtual
// clock, with the harness as the replication link between them
// (harness/replication_link.h). The replica receives the primary's writes
// only when the harness applies them: at a WAIT (all of them, so WAIT's
// answer is true), and at a failover (all but the last `lag`, the seed's
// choice). So which writes a failover drops is decided by the seed, never
// by how fast a kernel moved bytes: the same seed drops the same writes.
//
// What is modelled: asynchronous replicas that lag by whole writes, a
// promotion (a replica becomes the primary, the clients reconnect to it as
// a Sentinel-aware client does), and the old primary coming back empty as
// the new primary's replica.
//
// Several replicas (SetReplicaCount): one real replica process stands for
// the replica a failover promotes. The others are counted, not run: every
// replica receives the same writes in the same order, so what a failover
// keeps depends only on how far the promoted one got. They differ only
// while one lags (the replica-lag fault): the others still acknowledge
// (ConfirmByOtherReplicas records how far), and a failover promotes either
// the least-lagged (it has what they confirmed) or the lagging one (it has
// not). Clients write to and read from the primary only, so a replica that
// is never promoted is never seen. A WAIT finds every replica caught up
// and replies the replica count; a replica that lags while a WAIT waits
// (the replica-lag fault) is the simulator's: it answers a WAIT the others
// can satisfy, or one whose timeout ends within the lag, itself (the
// others' count), with nothing applied, and any other once the lag ends.
// Not modelled: split brain (the old primary accepting writes after the
// promotion), Sentinel's own election, a lag measured in bytes or
// milliseconds, two replicas lagging at once, WAITAOF.
//
// The replica's copy is applied as a client of it (as kHarnessUser): the
// propagated commands (XCLAIM ... FORCE JUSTID LASTID, XGROUP SETID ...
// ENTRIESREAD, PXAT, DEL of an expired key) are ordinary commands, and the
// replica's keys expire on the same virtual clock as the primary's.
#pragma once

#include <memory>

#include "harness/redis_server.h"
#include "harness/replication_link.h"
#include "sim/server.h"

namespace xackly {

class ReplicatedServer : public ServerControl {
 public:
  // Starts the primary and the replica (RedisServer::Start, each with
  // ReplicationConfigLines()) and links them. Fails as RedisServer::Start,
  // or with the link's error.
  static Result<std::unique_ptr<ReplicatedServer>> Start(const RedisServerOptions& options);

  // Connections to the current primary. The protocol's answer WAIT
  // numreplicas timeout themselves: the replica is brought up to date (the
  // harness applies every write read so far) and WAIT replies the replica
  // count.
  Result<std::unique_ptr<Connection>> Connect() override;
  Result<std::unique_ptr<Connection>> ConnectHarness() override;
  void SetClockMs(int64_t epoch_ms) override;
  int64_t ClockMs() const override { return primary_->ClockMs(); }
  // Resets both servers; what the link read before is discarded.
  Status Reset(int64_t start_epoch_ms) override;
  // Restarts the primary; the replica is then seeded again from what the
  // primary kept (a real replica would full-resync), with a new link.
  Status CrashAndRestart() override;
  Persistence persistence() const override { return primary_->persistence(); }
  const ServerVersion& version() const override { return primary_->version(); }
  int replicas() const override { return replicas_; }
  // How many replicas the next case has (1 after Start). REQUIRES: n >= 1
  void SetReplicaCount(int n) { replicas_ = n; }
  Status ConfirmByOtherReplicas() override;
  Result<FailoverOutcome> Failover(int lag, bool to_lagging) override;

  // Applies every write the primary made so far to the replica (what a WAIT
  // waits for).
  Status CatchUp();
  // CatchUp for a protocol's WAIT: a failure is also kept for
  // TakeWaitFailure (the protocol only sees an error reply).
  Status AnswerWait();
  Status Replicate() override { return CatchUp(); }

  // After the replica has caught up (CatchUp), what it holds that the
  // primary does not: "" when both hold the same, else up to three
  // differences, each naming the key and both sides. Compared: every key of
  // database 0 with its type, its value and whether it has a TTL (not how
  // long: the same absolute expiry on both); a stream as its entries, each
  // group's last-delivered ID and its PEL (ID, consumer, delivery count;
  // not idle times, consumers without pending entries or entries-read,
  // which the replication stream need not carry). A difference is the
  // servers' (replication) finding, never the protocol's verdict: the
  // caller makes it a harness failure. Fails when a read fails.
  Result<std::string> Divergence();

  // Both servers still run (RedisServer::CheckRunning).
  Status CheckRunning();
  // The first failure of the link while answering a WAIT since the last
  // call (ok if none), cleared: the case it happened in has no verdict
  // (CaseExecutor::Run makes it a harness failure).
  Status TakeWaitFailure();
  bool clock_out_of_range() const {
    return primary_->clock_out_of_range() || replica_->clock_out_of_range();
  }
  RedisServer& primary() { return *primary_; }
  RedisServer& replica() { return *replica_; }

 private:
  ReplicatedServer(std::unique_ptr<RedisServer> primary, std::unique_ptr<RedisServer> replica)
      : primary_(std::move(primary)), replica_(std::move(replica)) {}
  // Empties the replica, copies the primary's keys into it (DUMP/RESTORE
  // with their TTLs) and opens a new link from the primary's current
  // offset.
  Status Resync();
  // Reads the link up to the primary's current replication offset.
  Status ReadLink();
  // Applies `n` writes from the front of the link's queue to the replica.
  Status Apply(size_t n);

  std::unique_ptr<RedisServer> primary_;
  std::unique_ptr<RedisServer> replica_;
  std::unique_ptr<ReplicationLink> link_;
  int replicas_ = 1;
  // How many of the link's unapplied writes (from the front) the replicas
  // other than the lagging one hold (ConfirmByOtherReplicas); 0 with one
  // replica.
  size_t confirmed_by_others_ = 0;
  Status wait_failure_;  // see TakeWaitFailure
};

}  // namespace xackly
