// The business channel: one request to the business side (an SQL statement
// or dedupe step on the SQL store, a call to the external service) with its
// reply, behind one interface, and the fault-injecting wrapper around it:
// the same seam for business requests that sim/connection.h and
// sim/lossy_connection.h are for Redis.
//
// Fault model (LossyBusiness), as for Redis requests:
//   lost-request  the request never reaches the store or the service:
//                 nothing executes, the caller times out.
//   lost-reply    the request executes (a statement runs, an effect lands
//                 on the ledger); its reply is lost and the caller times
//                 out, not knowing whether it ran.
// What a correct protocol must tolerate: a timeout says nothing about the
// outcome; a retry must be safe either way.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "sim/faults.h"
#include "sim/status.h"
#include "sim/step.h"

namespace xackly {

class SqlStore;
class ExternalService;

// Who sends a business request, and what the world knows about it.
struct BusinessCall {
  int owner = 0;           // the incarnation (its transaction, its store lock)
  int64_t now_ms = 0;
  std::string actor;       // for the effect ledger's record
  bool poison = false;     // the event's effect always fails
  bool script = false;     // a protocol script: its effects carry their own key and TTL
  bool idempotency_key = false;  // a built-in protocol's external service dedupes by event id
};

// A business request and its reply, as the trace shows them.
struct BusinessReply {
  std::string request;
  std::string result;
};

class BusinessChannel {
 public:
  virtual ~BusinessChannel() = default;
  // Executes business step `s` (an Op on Channel::kSql or kExternal): sets
  // s.outcome (and s.sql for a statement) and returns the request and its
  // result. A non-ok Status (kTimeout) is a request or reply lost on the
  // way (LossyBusiness); the store itself answers every request.
  // REQUIRES: InfoOf(s.op).channel is kSql or kExternal
  virtual Result<BusinessReply> Call(const BusinessCall& call, Step& s) = 0;
};

// The SQL store and the external service themselves.
class StoreChannel final : public BusinessChannel {
 public:
  // REQUIRES: both outlive the channel.
  StoreChannel(SqlStore* store, ExternalService* external) : store_(store), external_(external) {}
  Result<BusinessReply> Call(const BusinessCall& call, Step& s) override;

 private:
  SqlStore* store_;
  ExternalService* external_;
};

// Loses a request or a reply when armed (see the fault model above).
class LossyBusiness final : public BusinessChannel {
 public:
  // REQUIRES: target outlives the wrapper.
  explicit LossyBusiness(BusinessChannel* target) : target_(target) {}

  // The next Call loses its request (PointEffect::kLoseRequest) or its reply
  // (kLoseReply); kNone: it goes through.
  // REQUIRES: effect is kNone, kLoseRequest or kLoseReply
  void LoseNext(PointEffect effect) { armed_ = effect; }

  // With a loss armed: kLoseRequest runs nothing and returns kTimeout;
  // kLoseReply runs the request, keeps its reply (hidden_reply()) and
  // returns kTimeout. Without one: forwards.
  Result<BusinessReply> Call(const BusinessCall& call, Step& s) override;

  // The reply a lost-reply fault hid from the caller (the last one).
  const std::optional<BusinessReply>& hidden_reply() const { return hidden_; }

 private:
  BusinessChannel* target_;
  PointEffect armed_ = PointEffect::kNone;
  std::optional<BusinessReply> hidden_;
};

}  // namespace xackly
