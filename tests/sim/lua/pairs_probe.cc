// Prints the order in which `pairs` visits 200 string keys, in a fresh
// process: "sandbox" through xackly's LuaProcess, "raw" through a plain
// Lua 5.4 state. lua_sandbox_test runs it several times and compares.
#include <cstdio>
#include <cstring>
#include <string>

#include <lua.hpp>

#include "sim/lua/lua_process.h"

namespace {

constexpr const char* kScript = R"(
local t = {}
for i = 1, 200 do t["k" .. i] = i end
local order = {}
for k in pairs(t) do order[#order + 1] = k end
print(table.concat(order, " ") .. " ")
)";

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: pairs_probe sandbox|raw\n");
    return 2;
  }
  if (std::strcmp(argv[1], "raw") == 0) {
    lua_State* L = luaL_newstate();
    luaL_openlibs(L);
    int rc = luaL_dostring(L, kScript);
    lua_close(L);
    return rc == LUA_OK ? 0 : 1;
  }
  xackly::ProcessEnv env{xackly::Rng(1)};
  env.print = [](const std::string& line) { std::printf("%s\n", line.c_str()); };
  auto p = xackly::LuaProcess::Load({"probe.lua", kScript}, env);
  if (!p.ok()) {
    std::fprintf(stderr, "%s\n", p.status().ToString().c_str());
    return 1;
  }
  return 0;
}
