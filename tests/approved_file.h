// Approval tests' one comparison: a whole output against the copy of it a
// person read and approved (tests/reports/golden/, tests/harness/data/).
//
// A test that asserts one fact at a time misses the change nobody thought
// to assert; an approved copy catches every change, and the person who
// meant it approves it again:
//   XACKLY_UPDATE_GOLDEN=1 ctest --test-dir build -R 'GoldenTest|ScenarioRunsTest|CliOutputTest'
//   git diff tests/reports/golden/ tests/harness/data/   # is every change meant?
#pragma once

#include <string>

namespace xackly {

// Whether this run approves outputs instead of checking them: the
// environment's XACKLY_UPDATE_GOLDEN is "1".
bool UpdatingApprovedFiles();

// Checks `actual` against the approved file at `path`: one test failure
// when they differ, naming the file, the first line and column that differ,
// both lines there (control bytes escaped, an end of text said so) and both
// sizes, and the command that approves it; or when the file cannot be
// read. When UpdatingApprovedFiles(), writes `actual` to `path` instead
// when it differs, saying so on stdout (a failure to write is a test
// failure).
void ExpectMatchesApprovedFile(const std::string& path, const std::string& actual);

}  // namespace xackly
