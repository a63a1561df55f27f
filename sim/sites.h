// Fault sites: the named places where a point fault fires, and the keys that
// coverage counts them by. Every site name is built and read here.
//
// Two families of sites:
//   crash points (crash, stall fire right after them): the built-in loop's
//     (after-read, after-effect, after-commit, ... AllCrashPoints), a script
//     command's before-CMD and after-CMD, an SQL statement's after-VERB, and
//     a script's own w:point("point:<name>");
//   request sites (lost-request, lost-reply fire on the request): the
//     built-in loop's (XACK, XADD, COMMIT, ... AllLostSites), a script
//     command's CMD, an SQL statement's VERB.
// A site key names a fault kind at a site, as reports count it:
// "crash@after-effect", "lost-reply@XACK"; a kind without sites is its name
// alone ("xdel").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace xackly {

enum class FaultKind : uint8_t;  // sim/faults.h
struct Step;                     // sim/step.h

enum class SiteFamily : uint8_t {
  kNone,        // scheduled and event faults: no site
  kCrashPoint,  // crash, stall
  kRequest,     // lost-request, lost-reply
};

// The built-in loop's crash points and request sites (what fault specs of a
// catalog or declarative protocol may name).
const std::vector<std::string>& AllCrashPoints();
const std::vector<std::string>& AllLostSites();

// The uppercase verb an SQL statement starts with, after any whitespace and
// comments ("/* done */ commit" -> "COMMIT", "insert or ignore ..." ->
// "INSERT"); "" when it starts with no word.
std::string StatementVerb(std::string_view sql);

// The sites of one step (a script's Redis command or SQL statement, a
// built-in loop's operation, a checkpoint):
// the crash point before it is sent (only a script's commands have one:
// "before-XACK"), "" for none;
std::string PointBefore(const Step& s);
// the crash point right after it ("after-XACK", "after-INSERT",
// "after-effect", a checkpoint's own name), "" for none;
std::string PointAfter(const Step& s);
// its request site ("XACK", "INSERT", "COMMIT"), "" for none.
std::string RequestSite(const Step& s);

// Whether `site` is a protocol script's site name in `family`: before-CMD /
// after-CMD (CMD an uppercase command or SQL verb) or point:<name>
// (lowercase letters, digits, - _ .) for crash points; CMD for requests.
bool IsScriptSiteName(std::string_view site, SiteFamily family);
// Whether `site` is a name w:point may take: a built-in crash point or
// point:<name>.
bool IsPointName(std::string_view site);
// Whether `site` names a site of `family` at all (built-in or a script's).
bool IsSiteName(std::string_view site, SiteFamily family);

// The Levenshtein distance between `a` and `b` (for "did you mean").
size_t EditDistance(std::string_view a, std::string_view b);

// The names among `candidates` closest to `site`, for "did you mean":
// those equal but for case first ("after-commit" -> "after-COMMIT"), else
// those within a few edits; at most three, closest first.
std::vector<std::string> NearestSites(std::string_view site, const std::vector<std::string>& candidates);

// `site` as a protocol script spells it, when only its case is wrong: the
// command upper-cased ("after-xack" -> "after-XACK", "commit" -> "COMMIT"),
// or "" when that is no script site of `family` either.
std::string AsScriptSite(std::string_view site, SiteFamily family);

// "crash@after-effect" for a kind with sites, "xdel" for one without.
std::string SiteKey(FaultKind kind, std::string_view site);
struct ParsedSiteKey {
  FaultKind kind;
  std::string site;  // "" for a kind without sites
};
// SiteKey's output read back; nullopt for a key that names no kind.
std::optional<ParsedSiteKey> ParseSiteKey(std::string_view key);

}  // namespace xackly
