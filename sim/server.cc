#include "sim/server.h"

namespace xackly {

const char* PersistenceName(Persistence p) {
  switch (p) {
    case Persistence::kNone: return "none";
    case Persistence::kRdb: return "rdb";
    case Persistence::kAofAlways: return "aof-always";
  }
  return "none";
}

bool ParsePersistence(std::string_view name, Persistence* out) {
  if (name == "none") *out = Persistence::kNone;
  else if (name == "rdb") *out = Persistence::kRdb;
  else if (name == "aof-always") *out = Persistence::kAofAlways;
  else return false;
  return true;
}

std::string ServerVersion::ToString() const {
  return product + " " + std::to_string(major) + "." + std::to_string(minor) + "." +
         std::to_string(patch);
}

}  // namespace xackly
