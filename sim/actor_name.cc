#include "sim/actor_name.h"

namespace xackly {
namespace {

char RoleLetter(ActorRole role) {
  switch (role) {
    case ActorRole::kProducer: return 'p';
    case ActorRole::kWorker: return 'w';
    case ActorRole::kJanitor: return 'j';
    default: return '?';
  }
}

// Reads a positive decimal number at s[i...]; advances i. 0 when none.
int ReadNumber(std::string_view s, size_t& i) {
  int n = 0;
  const size_t begin = i;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9' && n < 100000000) n = n * 10 + (s[i++] - '0');
  return i == begin ? 0 : n;
}

}  // namespace

std::string ActorName(ActorRole role, int number, int incarnation, bool fresh_name, int lane) {
  std::string name = RoleLetter(role) + std::to_string(number);
  if (lane > 1) name += "#" + std::to_string(lane);
  if (fresh_name && incarnation > 1) name += "." + std::to_string(incarnation);
  return name;
}

ActorIdentity DescribeActor(std::string_view name) {
  ActorIdentity id;
  id.slot = name;
  if (name == kFaultActor) id.role = ActorRole::kFaultInjector;
  if (name == kSetupActor || name == kOracleActor) id.role = ActorRole::kHarness;
  if (name == kSimActor) id.role = ActorRole::kSimulator;
  if (id.role != ActorRole::kOther || name.size() < 2) return id;

  ActorRole role = ActorRole::kOther;
  for (ActorRole r : {ActorRole::kProducer, ActorRole::kWorker, ActorRole::kJanitor}) {
    if (name[0] == RoleLetter(r)) role = r;
  }
  size_t i = 1;
  const int number = ReadNumber(name, i);
  if (role == ActorRole::kOther || number < 1) return id;
  int lane = 1;
  if (role == ActorRole::kWorker && i < name.size() && name[i] == '#') {
    ++i;
    lane = ReadNumber(name, i);
    if (lane < 2) return id;
  }
  const size_t slot_end = i;
  int incarnation = 1;
  if (i < name.size() && name[i] == '.') {
    ++i;
    incarnation = ReadNumber(name, i);
    if (incarnation < 2) return id;
  }
  if (i != name.size()) return id;
  id.role = role;
  id.number = number;
  id.incarnation = incarnation;
  id.lane = lane;
  id.slot = name.substr(0, slot_end);
  return id;
}

const char* ActorRoleName(ActorRole role) {
  switch (role) {
    case ActorRole::kProducer: return "producer";
    case ActorRole::kWorker: return "worker";
    case ActorRole::kJanitor: return "janitor";
    case ActorRole::kFaultInjector: return "fault injection";
    case ActorRole::kHarness: return "harness";
    case ActorRole::kSimulator: return "simulator";
    case ActorRole::kOther: return "";
  }
  return "";
}

}  // namespace xackly
